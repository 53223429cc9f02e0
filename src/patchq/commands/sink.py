"""`sink`: send a patch to the bottom of the stack — first in the series (StGit's `sink`).

The patches it crosses are re-applied in memory with the rebase's ladder; a conflict
stops it as a rebase stops (exit 3), for `rebase --continue`/`--skip`/`--abort`. See
rebase/reorder.py.
"""

from __future__ import annotations

from patchq.rebase.reorder import SINK, ReorderOutcome, move
from patchq.stack.context import Context


def sink(ctx: Context, name: str) -> ReorderOutcome:
    """Move `name` to the bottom of the series (and of the stack, if any is applied)."""
    return move(ctx, name, SINK)
