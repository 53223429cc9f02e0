"""`import`: bring patches in from files, an mbox, a quilt series or a git range.

The importers (pure) decide names and bytes; this verb writes the patch files and the
series through the journal: an import is all or nothing (a kill halfway is finished or
undone by `patchq recover`), and an existing patch file is never overwritten.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchq.core.errors import BadInputError, UnsafeStateError
from patchq.core.patch import parse
from patchq.core.sameness import Key, change_key
from patchq.core.series import Entry, make_entry
from patchq.formats import importers
from patchq.formats.importers import Incoming
from patchq.stack import journal
from patchq.stack.context import Context
from patchq.store.files import read_regular
from patchq.store.patchrepo import PATCHES, SERIES, PatchRepo
from patchq.store.statedir import recovery_verb, repo_lock


def _existing(ctx: Context) -> list[str]:
    repo = ctx.repo()
    names = set(repo.series.names())
    if repo.patches_dir.is_dir():
        names.update(
            p.relative_to(repo.patches_dir).as_posix()
            for p in repo.patches_dir.rglob("*")
            if p.is_file()
        )
    return sorted(names)


def _read(path: Path) -> bytes:
    try:
        return read_regular(path, allow_pipe=True)
    except FileNotFoundError:
        raise BadInputError("no such file", str(path)) from None
    except IsADirectoryError:
        raise BadInputError(
            "is a folder: import a series folder alone (`import DIR` or `--quilt DIR`)",
            str(path),
        ) from None


def from_files(ctx: Context, files: Sequence[Path]) -> list[Incoming]:
    items = [(str(p), _read(p)) for p in files]
    return importers.from_files(items, _existing(ctx), len(ctx.repo().series.patches) + 1)


def from_mbox(ctx: Context, path: Path) -> importers.MboxImport:
    return importers.from_mbox(
        _read(path), str(path), _existing(ctx), len(ctx.repo().series.patches) + 1
    )


def from_git(ctx: Context, revision_range: str) -> importers.MboxImport:
    data = ctx.git().format_patch(revision_range)
    if not data.strip():
        raise BadInputError(f"the range {revision_range!r} has no commits", "import --git")
    return importers.from_mbox(
        data, f"git {revision_range}", _existing(ctx), len(ctx.repo().series.patches) + 1
    )


def _series_folder(folder: Path) -> tuple[Path, bool]:
    """Where the patches of `folder` are, and whether a `series` file orders them: the
    folder's own `series`, a quilt tree's `patches/series`, a Debian package's
    `debian/patches/series` (given the package or its `debian/`); else a folder of
    `*.patch`/`*.diff` files without a series (OpenWrt, Buildroot), itself or its
    `patches/`."""
    if not folder.is_dir():
        raise BadInputError("no such folder", str(folder))
    for cand in (folder, folder / "patches", folder / "debian" / "patches"):
        if (cand / "series").is_file():
            return cand, True
    for cand in (folder, folder / "patches"):
        if cand.is_dir() and any(
            p.name.endswith(importers.PATCH_SUFFIXES) and p.is_file() for p in cand.iterdir()
        ):
            return cand, False
    raise BadInputError(
        "no series file and no *.patch or *.diff files here",
        str(folder),
        "give a quilt or Debian series folder (or its parent), or a folder of patches",
    )


def from_quilt(ctx: Context, folder: Path) -> tuple[list[Incoming], list[importers.Skipped]]:
    """The patches of a series folder in the order its build applies them: the `series`
    file's, or sorted name order where there is none (see `_series_folder`)."""
    folder, has_series = _series_folder(folder)
    base = folder.resolve()
    series = folder / "series"

    def read(name: str) -> bytes:
        p = (folder / name).resolve()
        if base not in p.parents:
            where = str(series) if has_series else str(folder / name)
            raise BadInputError(f"quilt patch {name!r} is outside the series folder", where)
        return read_regular(p)  # OSError: the importer names the series line

    if not has_series:
        kinds = [
            (e.name, "folder" if e.is_dir() else "file" if e.is_file() else "other")
            for e in os.scandir(folder)
        ]
        return importers.from_folder(kinds, read, str(folder), _existing(ctx))
    text = read_regular(series).decode("utf-8", "surrogateescape")
    return importers.from_quilt(text, read, str(series), _existing(ctx)), []


def from_order(
    ctx: Context, order: Path, folder: Path
) -> tuple[list[Incoming], list[importers.Skipped]]:
    """The patches of `folder` in the order a list file gives (one name a line, relative
    to the folder; blank lines and `#` comments allowed, `-pN` and guards as in a
    series): a recipe's own order (a conda-forge `meta.yaml`'s `patches:`, a vcpkg
    portfile's `PATCHES`), whatever the names sort to. The folder's patch files the list
    does not name are skipped and named."""
    if not folder.is_dir():
        raise BadInputError("no such folder", str(folder), "--order LIST takes a folder of patches")
    try:
        text = read_regular(order).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        raise BadInputError("no such file", str(order)) from None
    except IsADirectoryError:
        raise BadInputError("is a folder, not a list of patch names", str(order)) from None
    base = folder.resolve()

    def read(name: str) -> bytes:
        p = (folder / name).resolve()
        if base not in p.parents:
            raise BadInputError(f"patch {name!r} is outside {folder}", str(order))
        return read_regular(p)  # OSError: the importer names the list's line

    incoming = importers.from_quilt(text, read, str(order), _existing(ctx), str(folder))
    named = {i.name for i in incoming}
    skipped = [
        importers.Skipped(str(folder / p.name), None, f"not named in {order.name}")
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name.endswith(importers.PATCH_SUFFIXES) and p.name not in named
    ]
    return incoming, skipped


def _refuse_target_journal(ctx: Context) -> None:
    """A command killed while changing the target may have the series in its journal;
    writing the series now would be undone (or lost) by its recovery."""
    try:
        g = ctx.git()
    except BadInputError:
        return  # no target: nothing of it can be pending
    doc = journal.pending(g, ctx.repo().root)
    if doc is not None and doc.get("home") != "patch-repo":
        raise UnsafeStateError(
            f"an interrupted `patchq {doc.get('op')}` left the target half-changed",
            str(g.state_dir()),
            f"`patchq {recovery_verb(str(doc.get('op', '')))} --continue` or `--abort` first",
        )


def _key(data: bytes, strip: int) -> Key | None:
    try:
        return change_key(parse(data, "", strip))
    except BadInputError:
        return None  # an unreadable patch already in the series is lint's to report


def _refuse_duplicates(repo: PatchRepo, incoming: Sequence[Incoming]) -> None:
    """Refuse a patch that makes the same change as one in the series, or as one imported
    before it: applied twice, the second copy fails or lands somewhere else."""
    seen: dict[Key, str] = {}
    for e in repo.series.patches:
        assert e.name is not None
        try:
            data = repo.read_patch(e.name)
        except BadInputError:
            continue
        key = _key(data, e.strip_level(repo.config.strip))
        if key is not None:
            seen.setdefault(key, e.name)
    for item in incoming:
        key = _key(item.data, repo.config.strip if item.strip is None else item.strip)
        if key is None:
            continue
        other = seen.get(key)
        if other is not None:
            where = "already in the series" if repo.series.find(other) else "imported with it"
            raise BadInputError(
                f"{item.name} makes the same change as {other}, {where}",
                item.source or item.name,
                "nothing was imported; `--force` imports it anyway",
            )
        seen[key] = item.name


def commit(
    ctx: Context, incoming: Sequence[Incoming], after: str | None, force: bool = False
) -> list[Incoming]:
    """Write the patch files and the series as one journal transaction (kept in the
    patch repo: an import needs no target). A patch whose change the series already
    makes is refused unless `force`."""
    repo = ctx.repo()
    if not incoming:
        return []
    if after is not None and repo.series.find(after) is None:
        raise BadInputError(f"no patch named {after!r} in the series", "--after")
    with repo_lock(repo.root):
        _refuse_target_journal(ctx)
        # Read the series again under the lock: another import may have just written it.
        repo = PatchRepo.open(ctx.repo().root)
        repo.check_writable()
        if not force:
            _refuse_duplicates(repo, incoming)
        entries = [
            e
            for i in incoming
            for e in (
                *(Entry(raw=line) for line in i.before),
                make_entry(i.name, i.strip, i.guards),
                *(Entry(raw=line) for line in i.trailer),
            )
        ]
        new_series = repo.series.with_appended(entries, after)
        files: dict[str, bytes | None] = {}
        for item in incoming:
            path = repo.patch_path(item.name)
            if path.exists() or path.is_symlink():
                raise BadInputError(
                    f"{item.name!r} already exists in patches/",
                    str(path),
                    "rename or delete it first; patchq never overwrites it",
                )
            files[f"{PATCHES}/{item.name}"] = item.data
        files[SERIES] = new_series.format().encode("utf-8", "surrogateescape")
        journal.run(
            None,
            repo.root,
            journal.Plan(
                "import", "", None, None, repo.config.queue, files=files, reason=f"{len(incoming)}"
            ),
        )
    return list(incoming)


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """The patches written, in series order, and the messages an mbox had that are not
    patches (a cover letter, a reply), each with why."""

    imported: tuple[Incoming, ...]
    skipped: tuple[importers.Skipped, ...] = ()


def import_patches(
    ctx: Context,
    *,
    files: Sequence[Path],
    git_range: str | None,
    mbox: Path | None,
    quilt: Path | None,
    after: str | None,
    force: bool = False,
    order: Path | None = None,
) -> ImportOutcome:
    """Read the one source given (files, a git range, an mbox or a series folder) and
    write what it holds as one transaction. A folder given as the only FILE is a series
    folder, as with `--quilt`; with `order`, a folder of patches in the order that list
    file gives."""
    skipped: tuple[importers.Skipped, ...] = ()
    if len(files) == 1 and quilt is None and files[0].is_dir():
        quilt, files = files[0], []
    if order is not None:
        if quilt is None:
            raise BadInputError(
                "--order takes the folder of the patches it lists",
                str(order),
                "`patchq import --order LIST DIR`",
            )
        incoming, order_skipped = from_order(ctx, order, quilt)
        skipped = tuple(order_skipped)
    elif files:
        incoming = from_files(ctx, files)
    elif quilt is not None:
        incoming, folder_skipped = from_quilt(ctx, quilt)
        skipped = tuple(folder_skipped)
    else:
        if git_range:
            res = from_git(ctx, git_range)
        elif mbox is not None:
            res = from_mbox(ctx, mbox)
        else:
            raise BadInputError(
                "nothing to import", "import", "give FILE…, --git, --mbox or --quilt"
            )
        incoming, skipped = list(res.patches), tuple(res.skipped)
    return ImportOutcome(tuple(commit(ctx, incoming, after, force)), skipped)
