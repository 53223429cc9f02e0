"""`move`: put a patch before or after another one, anywhere in the series.

The same reorder as `sink` and `float` (rebase/reorder.py, one code path): the patches
between its old place and the new are re-applied in memory with the rebase's ladder, and
a conflict stops it as a rebase stops (exit 3), for `rebase --continue`/`--skip`/
`--abort`.
"""

from __future__ import annotations

from patchq.rebase.reorder import MOVE, ReorderOutcome, move, place_of
from patchq.stack.context import Context


def move_patch(ctx: Context, name: str, other: str, after: bool) -> ReorderOutcome:
    """Move `name` just before `other` in the series (just after it, with `after`)."""
    return move(ctx, name, MOVE, place_of(MOVE, other, after))
