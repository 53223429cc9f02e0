"""`init`: create a patch queue (patchq.toml, series, patches/), or make one of a folder
that already holds a quilt `series` (a recipe's, Debian's): its series is kept. A folder
holding exactly one recipe the build reads its patches from (formats.recipes: an RPM
spec, a BitBake recipe, a vcpkg portfile, a conda meta.yaml, a PKGBUILD) has it named
in patchq.toml (`recipe`), and its `patches/` adopted in the order that recipe applies
them."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.core.series import Series, make_entry
from patchq.formats import importers, recipes
from patchq.store.files import atomic_write, read_optional, read_regular
from patchq.store.patchrepo import CONFIG, PATCHES, SERIES


@dataclass(frozen=True, slots=True)
class InitOutcome:
    """The patch repo folder, and the patches of the series found there (None: there was
    no series); the patch files of `patches/` adopted into a new series, in order, and
    the files there that are not patches, with why."""

    root: Path
    kept: int | None
    adopted: tuple[str, ...] = ()
    skipped: tuple[importers.Skipped, ...] = field(default_factory=tuple)
    recipe: str | None = None  # the recipe found and named in patchq.toml


def init(root: Path, upstream: str | None, branch: str | None, target: str | None) -> InitOutcome:
    """Create the queue's files; refuse if a queue (patchq.toml) is already there. A
    `series` already there (a file, or a link inside the folder) is kept as it is."""
    root = root.resolve()
    if (root / CONFIG).exists() or (root / CONFIG).is_symlink():
        raise BadInputError(
            f"a patch queue already exists here ({CONFIG})",
            str(root / CONFIG),
            "edit it instead, or choose another folder",
        )
    series_path = root / SERIES
    kept: int | None = None
    if series_path.exists() or series_path.is_symlink():
        data = read_optional(series_path)
        if data is None:
            raise BadInputError("series is a symlink to nothing", str(series_path))
        text = data.decode("utf-8", "surrogateescape")
        kept = len(Series.parse(text, str(series_path)).patches)
    lines = ["# patchq configuration: see README.md for every key", ""]
    for key, value in (("upstream", upstream), ("branch", branch), ("target", target)):
        if value:
            lines.append(f"{key} = {json.dumps(value)}")
    recipe = _recipe(root)
    if recipe is not None:
        lines.append(f"recipe = {json.dumps(recipe)}  # kept in step with the series")
    lines += ["strip = 1", "fuzz = 0", "guards = []", ""]
    adopted: list[importers.Incoming] = []
    skipped: list[importers.Skipped] = []
    if kept is None:
        adopted, skipped = _adopt(root / PATCHES)
        if recipe is not None:
            adopted = _in_recipe_order(root, recipe, adopted)
    root.mkdir(parents=True, exist_ok=True)
    (root / PATCHES).mkdir(exist_ok=True)
    if kept is None:
        series = "".join(make_entry(i.name).raw for i in adopted)
        atomic_write(series_path, series.encode("utf-8", "surrogateescape"), root)
    atomic_write(root / CONFIG, "\n".join(lines).encode(), root)
    names = tuple(i.name for i in adopted)
    return InitOutcome(root, kept, names, tuple(skipped), recipe)


def _recipe(root: Path) -> str | None:
    """The one recipe among the folder's files, if there is exactly one."""
    if not root.is_dir():
        return None
    return recipes.detect(sorted(e.name for e in os.scandir(root) if e.is_file()))


def _in_recipe_order(
    root: Path, recipe: str, adopted: list[importers.Incoming]
) -> list[importers.Incoming]:
    """The adopted patches in the order the recipe applies them; those it does not name
    after, in name order."""
    text = read_regular(root / recipe).decode("utf-8", "surrogateescape")
    order = recipes.read(recipe, text, f"{PATCHES}/").names
    rank = {name: k for k, name in enumerate(order)}
    return sorted(adopted, key=lambda i: rank.get(i.name, len(rank)))


def _adopt(folder: Path) -> tuple[list[importers.Incoming], list[importers.Skipped]]:
    """The patch files already in `folder` (the queue's `patches/`, no series beside it),
    in sorted name order as a build of such a folder applies them; each is parsed, so a
    file that is not a patch is refused (exit 4) before anything is written."""
    if not folder.is_dir() or folder.is_symlink():
        return [], []
    kinds = [
        (e.name, "folder" if e.is_dir() else "file" if e.is_file() else "other")
        for e in os.scandir(folder)
    ]
    base = folder.resolve()

    def read(name: str) -> bytes:
        p = (folder / name).resolve()
        if base not in p.parents:
            raise BadInputError(f"patch {name!r} leads outside patches/", str(folder / name))
        return read_regular(p)

    if not any(kind == "file" and n.endswith(importers.PATCH_SUFFIXES) for n, kind in kinds):
        return [], []
    return importers.from_folder(kinds, read, str(folder), ())
