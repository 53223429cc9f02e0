"""`undo`: roll the last stack operation back (push, pop, goto, refresh, new, delete,
rename, fold, header, sink, float, apply), as StGit's `undo` does.

The journal keeps the last operation it carried out with the copies of what it changed
(stack/journal.py); `undo` puts back the target, the stack record and the patch-repo files
as they were before it — exactly as an interrupted run is undone — and refuses (exit 5)
when anything changed since: uncommitted edits, the stack branch, the stack record, a
file the operation wrote, any file of the patch repo. One level: an undo is not undone.
"""

from __future__ import annotations

from dataclasses import dataclass

from patchq.core.records import Stack
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.context import Context
from patchq.store.stack import load
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class UndoOutcome:
    """The operation undone (its verb and what it said it did) and the stack now."""

    op: str
    reason: str
    stack: Stack | None


def undo(ctx: Context) -> UndoOutcome:
    """Roll the last stack operation back through the journal."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), repo.root):
        stack_ops.refuse_during_rebase(ctx)
        doc = journal.undo_last(g, repo.root, ctx.own_paths())
    return UndoOutcome(
        str(doc.get("op", "")), str(doc.get("reason", "")), load(g.state_dir(), repo.config.queue)
    )
