"""`import`: bring patches in from files, an mbox, a quilt series or a git range.

The importers (pure) decide names and bytes; this verb writes the patch files and then
the series, each atomically. If anything fails, files written by this run are removed
again and the series is untouched: an import is all or nothing, and an existing patch
file is never overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.core.series import make_entry
from patchq.formats import importers
from patchq.formats.importers import Incoming
from patchq.ops.session import Context
from patchq.store.patchrepo import PatchRepo
from patchq.store.statedir import repo_lock


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
        return path.read_bytes()
    except FileNotFoundError:
        raise BadInputError("no such file", str(path)) from None
    except IsADirectoryError:
        raise BadInputError(
            "is a directory (use --quilt DIR for a quilt series)", str(path)
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


def from_quilt(ctx: Context, folder: Path) -> list[Incoming]:
    series = folder / "series"
    if not series.is_file() and (folder / "patches" / "series").is_file():
        folder = folder / "patches"
        series = folder / "series"
    if not series.is_file():
        raise BadInputError(
            "no quilt series file here",
            str(folder),
            "give the folder holding `series` (or its parent)",
        )
    base = folder.resolve()

    def read(name: str) -> bytes:
        p = (folder / name).resolve()
        if base not in p.parents:
            raise BadInputError(f"quilt patch {name!r} is outside the series folder", str(series))
        return p.read_bytes()  # OSError: from_quilt names the series line

    text = series.read_text(encoding="utf-8", errors="surrogateescape")
    return importers.from_quilt(text, read, str(series), _existing(ctx))


def commit(ctx: Context, incoming: Sequence[Incoming], after: str | None) -> list[Incoming]:
    """Write the patch files, then the series; undo the files if anything fails."""
    repo = ctx.repo()
    if not incoming:
        return []
    if after is not None and repo.series.find(after) is None:
        raise BadInputError(f"no patch named {after!r} in the series", "--after")
    with repo_lock(repo.root):
        return _commit(ctx, incoming, after)


def _commit(ctx: Context, incoming: Sequence[Incoming], after: str | None) -> list[Incoming]:
    # Read the series again under the lock: another import may have just written it.
    repo = PatchRepo.open(ctx.repo().root)
    entries = [make_entry(i.name, i.strip, i.guards) for i in incoming]
    new_series = repo.series.with_appended(entries, after)
    written: list[Path] = []
    try:
        for item in incoming:
            path = repo.patch_path(item.name)
            if path.exists():
                raise BadInputError(
                    f"{item.name!r} already exists in patches/",
                    str(path),
                    "rename or delete it first; patchq never overwrites it",
                )
            repo.write_patch(item.name, item.data)
            written.append(path)
        repo.write_series(new_series)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return list(incoming)
