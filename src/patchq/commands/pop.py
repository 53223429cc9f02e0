"""`pop`: remove the top patch, N patches, down to a name, or all from the stack."""

from __future__ import annotations

from patchq.stack.context import Context
from patchq.stack.moves import MoveOutcome, pop_patches


def pop(
    ctx: Context, target: str | None, all_: bool, force: bool, verb: str = "pop"
) -> MoveOutcome:
    """Remove the top patch (or down to `target`, which stays applied, or all)."""
    return pop_patches(ctx, target, all_, force, verb)
