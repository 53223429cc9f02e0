"""`goto`: push or pop until a named patch is the top one."""

from __future__ import annotations

from patchq.stack.context import Context
from patchq.stack.moves import MoveOutcome, pop_patches, push_patches
from patchq.store.stack import load


def goto(ctx: Context, name: str, force: bool) -> MoveOutcome:
    """Push or pop until `name` is the top patch."""
    stack = load(ctx.git().state_dir(), ctx.repo().config.queue)
    if stack is not None and name in stack.applied:
        return pop_patches(ctx, name, False, force, verb="goto")
    return push_patches(
        ctx, name, all_=False, fuzz=None, merge=False, force=force, progress=None, verb="goto"
    )
