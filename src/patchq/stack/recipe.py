"""The recipe kept in step: every transaction that writes `series` writes the recipe too.

`recipe = "<file>"` in patchq.toml names the file the build reads its list of patches
from (formats.recipes). Whatever command changes the list or its order — `new`,
`import`, `delete`, `rename`, `fold`, `move`, `sink`, `float`, `guard`, a rebase that
upstreams or drops a patch — does so by writing `series` through the journal; `in_step`
adds the recipe's rewrite to that same plan, so it is written, recovered after a kill,
rolled back and undone with the series. A recipe that cannot be rewritten safely is
refused (exit 4) here, before the journal records anything.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from patchq.core.errors import BadInputError
from patchq.core.series import Series
from patchq.formats import recipes
from patchq.store.files import read_optional
from patchq.store.patchrepo import PATCHES, SERIES, PatchRepo

if TYPE_CHECKING:
    from patchq.stack.journal import Plan


def prefix(patch_root: Path, recipe: str) -> str:
    """How the recipe's folder reaches `patches/`: what may stand before a patch's name."""
    rel = os.path.relpath(patch_root / PATCHES, (patch_root / recipe).parent)
    return rel.replace(os.sep, "/") + "/"


def named(patch_root: Path) -> str | None:
    """The recipe patchq.toml names, where it is one patchq may write (a recipe's file
    name, inside the patch repo, not in `.git`): what a journal may name besides its own
    files."""
    try:
        rel = PatchRepo.open(patch_root).config.recipe
    except BadInputError:
        return None
    if rel is None or recipes.kind_of(rel) is None or rel.startswith("/"):
        return None
    parts = rel.split("/")
    if any(p in ("", ".", "..") or p.lower().rstrip(". ") == ".git" for p in parts):
        return None
    return rel


def in_step(patch_root: Path, plan: Plan) -> Plan:
    """`plan` with the recipe's rewrite added where it writes `series` and the recipe's
    list must change; `plan` itself otherwise."""
    new = plan.files.get(SERIES)
    if new is None:
        return plan
    repo = PatchRepo.open(patch_root)
    if repo.config.recipe is None:
        return plan
    rel = named(patch_root)
    if rel is None:
        raise BadInputError(
            f"`recipe` names {repo.config.recipe!r}, not a recipe file inside the patch repo",
            "patchq.toml",
            "name an RPM .spec, a BitBake .bb, portfile.cmake, meta.yaml, PKGBUILD or series",
        )
    if rel in plan.files:
        return plan
    path = patch_root / rel
    if path.resolve() == (patch_root / SERIES).resolve():
        return plan  # Debian's series is the recipe: in step by itself
    data = read_optional(path)
    if data is None:
        raise BadInputError(
            "the recipe patchq.toml names is missing", rel, "fix `recipe` in patchq.toml"
        )
    guards = repo.config.guards
    old = [e.name for e in repo.series.active(guards) if e.name is not None]
    series = Series.parse(new.decode("utf-8", "surrogateescape"), SERIES)
    names = tuple(e.name for e in series.active(guards) if e.name is not None)

    def read(name: str) -> bytes | None:
        staged = plan.files.get(f"{PATCHES}/{name}")
        return staged if staged is not None else read_optional(repo.patches_dir / name)

    text = data.decode("utf-8", "surrogateescape")
    change = recipes.Change(
        names, recipes.renames_between(old, names), prefix(patch_root, rel), read
    )
    out = recipes.rewrite(rel, text, change)
    if out == text:
        return plan
    return replace(plan, files={**plan.files, rel: out.encode("utf-8", "surrogateescape")})
