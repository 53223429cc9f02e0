"""`new`: create an empty patch after the top and push it.

Uncommitted edits on the stack branch stay in the working tree; like `stg new`, they go
into the new patch on `patchq refresh`.
"""

from __future__ import annotations

from dataclasses import dataclass

from patchq.core.errors import BadInputError
from patchq.core.patch import Patch
from patchq.core.series import Entry, Series, make_entry
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import ident_date, identity
from patchq.stack.context import Context
from patchq.store.patchrepo import PATCHES, SERIES
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class NewOutcome:
    """The patch created (now the top one, empty)."""

    name: str


def new(ctx: Context, name: str, message: str | None) -> NewOutcome:
    """Create an empty patch after the top and push it."""
    repo, g = ctx.repo(), ctx.git()
    entry = make_entry(name)
    path = repo.patch_path(name)
    if path.exists() or repo.series.find(name) is not None:
        raise BadInputError(f"patch {name!r} already exists", str(path))
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = stack_ops.open_stack(ctx, create=True)
        if stack.applied:
            stack_ops.series_state(ctx, stack)
        if g.current_branch() != stack.branch or g.head() != stack.head:
            stack_ops.protect(ctx, False, "new", can_force=False)
        # On the stack branch the new commit has the top's tree, so the checkout below
        # leaves uncommitted edits alone; like `stg new`, they go into the new patch on
        # `patchq refresh`.
        header = (message.rstrip("\n") + "\n").encode() if message else b""
        after = stack.top
        series = (
            repo.series.with_appended([entry], after)
            if after
            else _insert_first(repo.series, entry)
        )
        w = g.writer()
        info_tree = g.commit_info(stack.head)["tree"].decode()
        when, tz = ident_date(g.commit_info(stack.base)["committer"])
        # The same identity and message `push` gives the patch, so both make one commit.
        ident, text = identity(name, Patch(header, ()), when, tz, g.user_identity())
        commit = g.commit_object(info_tree, [stack.head], text, ident, ident)
        w.flush()
        new_stack = stack.extended((name,), (commit,))
        journal.run(
            g,
            repo.root,
            journal.Plan(
                "new",
                new_stack.branch,
                new_stack.head,
                new_stack,
                repo.config.queue,
                files={f"{PATCHES}/{name}": header, SERIES: stack_ops.series_bytes(series)},
                reason=name,
            ),
        )
    return NewOutcome(name)


def _insert_first(series: Series, entry: Entry) -> Series:
    """`entry` as the first patch, after the comments that open the file."""
    entries = series.entries
    first = next((i for i, e in enumerate(entries) if e.is_patch), None)
    if first is None:
        return series.with_appended([entry])
    return Series(entries[:first] + (entry,) + entries[first:])
