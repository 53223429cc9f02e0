"""`export`: the active series as an mbox (for `git am`) or a quilt folder."""

from __future__ import annotations

from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.formats import exporters
from patchq.git.environment import user_identity_at
from patchq.stack.apply import ident_date, load_patch
from patchq.stack.context import Context
from patchq.stack.targets import active_entries, choose_base
from patchq.store import outputs
from patchq.store.stack import load


def _items(ctx: Context) -> list[exporters.Outgoing]:
    repo = ctx.repo()
    _, entries = active_entries(ctx, None)
    out = []
    for e in entries:
        data, patch = load_patch(repo, e)
        out.append(exporters.Outgoing(e.name or "", data, patch, e.strip_level(repo.config.strip)))
    return out


def _fallbacks(ctx: Context) -> tuple[int, str, tuple[str, str] | None]:
    """The date and author `push` gives a patch whose header has none, so `git am` gives
    it the same: the committer date of the base `push` would apply the series to (the
    stack's, else the lock's, the upstream branch or HEAD) and the user's git identity in
    the target. Without a target to ask: the epoch, and the identity git has here."""
    try:
        g = ctx.git()
    except BadInputError:
        return 0, "+0000", user_identity_at(ctx.repo().root)
    try:
        stack = load(g.state_dir(), ctx.repo().config.queue)
        base = stack.base if stack is not None else choose_base(ctx, None)
    except BadInputError:
        return 0, "+0000", g.user_identity()
    return (*ident_date(g.commit_info(base)["committer"]), g.user_identity())


def export_mbox(ctx: Context, path: Path) -> int:
    """Write the active series as one mbox; refuse a patch without a diff (git am would stop
    at it: "Patch is empty")."""
    outputs.target(path)  # a folder or a socket is refused before any work
    items = _items(ctx)
    for it in items:
        if not it.patch.sections:
            raise BadInputError(
                "the patch has no diff, and git am stops at an empty patch",
                ctx.repo().display(it.name),
                "refresh it, or delete it",
            )
    outputs.write(path, exporters.mbox(items, *_fallbacks(ctx)))
    return len(items)


def export_quilt(ctx: Context, folder: Path) -> int:
    """Write `folder/series` and the patch files; refuse to overwrite a different file."""
    where = outputs.folder(folder)
    items = _items(ctx)
    series = exporters.quilt_series(items).encode()
    # The series too: exporting into a patch repo must not replace its own series. Every
    # file is judged before the first is written, so a refusal leaves the folder as it was.
    writes = [(folder / it.name, it.data) for it in items] + [(folder / "series", series)]
    for dest, data in writes:
        out = outputs.target(dest)
        if out.how == "replace" and out.path.read_bytes() != data:
            raise BadInputError(
                f"{dest} exists with other content", str(folder), "export into an empty folder"
            )
    where.mkdir(parents=True, exist_ok=True)
    for dest, data in writes:
        outputs.write(dest, data)
    return len(items)
