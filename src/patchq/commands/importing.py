"""`import`: bring patches in from files, an mbox, a quilt series or a git range.

The importers (pure) decide names and bytes; this verb writes the patch files and the
series through the journal: an import is all or nothing (a kill halfway is finished or
undone by `patchq recover`), and an existing patch file is never overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchq.core.errors import BadInputError, UnsafeStateError
from patchq.core.series import make_entry
from patchq.formats import importers
from patchq.formats.importers import Incoming
from patchq.ops import journal
from patchq.ops.session import Context
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
        return read_regular(p)  # OSError: from_quilt names the series line

    text = read_regular(series).decode("utf-8", "surrogateescape")
    return importers.from_quilt(text, read, str(series), _existing(ctx))


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


def commit(ctx: Context, incoming: Sequence[Incoming], after: str | None) -> list[Incoming]:
    """Write the patch files and the series as one journal transaction (kept in the
    patch repo: an import needs no target)."""
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
        entries = [make_entry(i.name, i.strip, i.guards) for i in incoming]
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
    files: Sequence[Path],
    git_range: str | None,
    mbox: Path | None,
    quilt: Path | None,
    after: str | None,
) -> ImportOutcome:
    """Read the one source given (files, a git range, an mbox or a quilt folder) and
    write what it holds as one transaction."""
    skipped: tuple[importers.Skipped, ...] = ()
    if files:
        incoming = from_files(ctx, files)
    elif quilt is not None:
        incoming = from_quilt(ctx, quilt)
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
    return ImportOutcome(tuple(commit(ctx, incoming, after)), skipped)
