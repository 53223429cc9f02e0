"""`push`: apply the next patch, N patches, up to a name, or all on top of the stack."""

from __future__ import annotations

from patchq.core.progress import Progress
from patchq.stack.context import Context
from patchq.stack.moves import MoveOutcome, push_patches


def push(
    ctx: Context,
    target: str | None,
    *,
    all_: bool,
    fuzz: int | None,
    merge: bool,
    force: bool,
    progress: Progress | None = None,
    verb: str = "push",
) -> MoveOutcome:
    """Apply the next patch (or up to `target`, or all) on top of the stack."""
    return push_patches(
        ctx, target, all_=all_, fuzz=fuzz, merge=merge, force=force, progress=progress, verb=verb
    )
