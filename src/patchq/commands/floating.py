"""`float`: bring a patch to the top of the stack — last in the series (StGit's `float`).

The patches it crosses are re-applied in memory with the rebase's ladder; a conflict
stops it as a rebase stops (exit 3), for `rebase --continue`/`--skip`/`--abort`. See
rebase/reorder.py.
"""

from __future__ import annotations

from patchq.rebase.reorder import FLOAT, ReorderOutcome, move
from patchq.stack.context import Context


def float_(ctx: Context, name: str) -> ReorderOutcome:
    """Move `name` to the end of the series (the top of the stack when all are applied)."""
    return move(ctx, name, FLOAT)
