"""`push`: apply the next patch, N patches, up to a name, or all on top of the stack.

With `--merge`, a patch that git's plain 3-way merge does not place climbs the rebase's
ladder (rebase/replay.py: the finer merges, anchored, moved, remembered resolutions,
context-only drift) with the same tiers (DESIGN §4.1): a hunk placed by an automatic
method goes on; one placed by a proposed method stops the push for review (exit 3) with
the proposal in the working tree, no markers, unless `--accept` or `accept` in
patchq.toml takes it (then the push exits 1: done, review the proposals).
"""

from __future__ import annotations

from collections.abc import Sequence

from patchq.core import tiers
from patchq.core.progress import Progress
from patchq.core.series import Entry
from patchq.core.status import CONFLICT, MISSING, UPSTREAMED
from patchq.rebase.replay import Replay
from patchq.stack.apply import Preimage
from patchq.stack.context import Context
from patchq.stack.moves import Ladder, Laddered, MoveOutcome, push_patches
from patchq.store.stack import load


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
    accept: Sequence[str] = (),
) -> MoveOutcome:
    """Apply the next patch (or up to `target`, or all) on top of the stack; with
    `merge`, through the rebase's ladder and tiers, taking the proposed methods `accept`
    (and `accept` in patchq.toml) names."""
    taken = tiers.parse_accept((*ctx.repo().config.accept, *accept)) if merge else ()
    return push_patches(
        ctx,
        target,
        all_=all_,
        fuzz=fuzz,
        merge=merge,
        force=force,
        progress=progress,
        verb=verb,
        ladder=_ladder(ctx, fuzz, taken) if merge else None,
    )


def _ladder(ctx: Context, fuzz: int | None, accept: tuple[str, ...]) -> Ladder:
    """The rebase's ladder for one patch on a tree of the stack (`Laddered`, or None where
    it conflicts, misses a file, or finds the change already there: then git's merge
    and its markers stand, as before)."""
    repo, g = ctx.repo(), ctx.git()

    def place(tree: str, entry: Entry, pre: Preimage) -> Laddered | None:
        stack = load(g.state_dir(), repo.config.queue)
        # The stack's own base on both sides: no upstream range, only the tree given.
        base = stack.base if stack is not None else ""
        rp = Replay.start(
            g,
            repo,
            base,
            base,
            fuzz=repo.config.fuzz if fuzz is None else fuzz,
            preimage=pre,
            tree=tree,
            resolutions=repo.resolutions(),
            accept=accept,
        )
        res = rp.step(entry)
        if res.status in (CONFLICT, MISSING, UPSTREAMED) or any(
            h.status in (CONFLICT, MISSING, UPSTREAMED) for h in res.hunks
        ):
            return None
        return Laddered(
            res.name,
            repo.display(res.name),
            res.tree,
            tuple(h.method for h in res.hunks),
            tuple(
                (*tiers.place(h), h.index, m, tiers.evidence(h, m))
                for h, m in tiers.proposals(res.hunks, accept)
            ),
            tiers.accepted(res.hunks, accept),
            res.rewritten,
        )

    return place
