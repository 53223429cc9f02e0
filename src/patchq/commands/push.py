"""`push`: apply the next patch, N patches, up to a name, or all on top of the stack.

With `--merge`, a patch that git's plain 3-way merge does not place climbs the rebase's
ladder (rebase/replay.py: the finer merges, anchored, moved, remembered resolutions,
context-only drift) with the same tiers (DESIGN §4.1): a hunk placed by an automatic
method goes on; one placed by a proposed method stops the push for review (exit 3) with
the proposal in the working tree, no markers, unless `--accept` or `accept` in
patchq.toml takes it (then the push exits 1: done, review the proposals).

A push that stopped with a patch's merge in the working tree (git's markers, or
proposals) is settled as a rebase's stop is: `push --continue` takes the tree into the
patch (`refresh`) and pushes on to where the push was going, with the options it had;
`push --abort` puts the target, the stack and the patch repo back as before the push,
saving edits made since in a stash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchq.core import tiers
from patchq.core.errors import BadInputError, UnsafeStateError
from patchq.core.progress import Progress
from patchq.core.records import Stack
from patchq.core.series import Entry
from patchq.core.status import CONFLICT, MISSING, UPSTREAMED
from patchq.rebase.attribution import attribute_drift
from patchq.rebase.replay import PatchCheck, Replay, replayed
from patchq.stack import journal, moves
from patchq.stack.apply import Preimage
from patchq.stack.context import Context
from patchq.stack.moves import (
    Ladder,
    Laddered,
    MoveOutcome,
    PushStop,
    push_patches,
    pushed_stop,
    refuse_during_rebase,
)
from patchq.store.stack import load
from patchq.store.statedir import run_lock


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
        accept=tuple(accept),
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
        ((_, res),) = replayed(rp, [entry])
        # A hunk upstream holds inside a patch it does not hold whole is a proposal (the
        # rest applied, no markers), as in a rebase; any other conflict is git's markers.
        if res.status == UPSTREAMED or any(
            h.status in (CONFLICT, MISSING, UPSTREAMED) and not tiers.proposal(h, res.hunks)
            for h in res.hunks
        ):
            return None
        return Laddered(
            res.name,
            repo.display(res.name),
            # A patch upstream holds part of stops as a rebase does: the rest applied.
            res.tree if res.conflict_tree is None else res.conflict_tree,
            tuple(h.method for h in res.hunks),
            tuple(
                (*tiers.place(h), h.index, m, tiers.evidence(h, m))
                for h, m in tiers.proposals(res.hunks, accept)
            ),
            tiers.taken(res.hunks, res.rewritten, accept),
            res.rewritten,
            _fixed_by(ctx, res, entry, base) if res.rewritten else (),
            res.added_present,
        )

    return place


def _fixed_by(
    ctx: Context, res: PatchCheck, entry: Entry, base: str
) -> tuple[tuple[str, str], ...]:
    """The upstream commits between the lock's base and the stack's `base` that changed
    the lines of patch `res`, each with its subject (a stop names them: "fixed
    differently upstream"); none where the stack is on the lock's base or there is no
    lock. The rebase's drift attribution, for the message only."""
    lock, g = ctx.repo().read_lock(), ctx.git()
    if lock is None or lock.base == base or not base or not g.has_object(lock.base):
        return ()
    (done,), subjects = attribute_drift(g, lock.base, base, [res], ctx.repo(), entries=[entry])
    return tuple((c, subjects.get(c, "")) for c in done.drift)


def stopped(ctx: Context) -> PushStop | None:
    """Where a `push --merge` stopped, for its `--continue`/`--abort`; None where it did
    not, or where a killed command's journal waits (that is `recover`'s to settle)."""
    g = ctx.git()
    if journal.pending(g, ctx.repo().root) is not None:
        return None
    return pushed_stop(ctx, load(g.state_dir(), ctx.repo().config.queue))


def continuing(ctx: Context, abort: bool = False) -> PushStop | None:
    """A `push --continue` killed after it took the tree into the stopped patch, before
    it pushed on: what a `push --continue` now goes on from (None where there is none,
    or a killed command's journal waits). For a `push --abort` (`abort`) there is
    nothing of the push's left to put back: refused (exit 4), saying what is."""
    g = ctx.git()
    if journal.pending(g, ctx.repo().root) is not None:
        return None
    going = moves.continuing(ctx, load(g.state_dir(), ctx.repo().config.queue))
    if going is not None and abort:
        raise BadInputError(
            f"push --continue already took the tree into {going.patch}: only the push "
            f"on to {going.target} is left",
            str(g.root),
            "`patchq push --continue` pushes on; `patchq undo` undoes the refresh, "
            "back to the stop",
        )
    return going


def resume(
    ctx: Context, stop: PushStop, progress: Progress | None = None, *, force: bool = False
) -> MoveOutcome:
    """After `refresh` took the stopped patch's tree: push on to where the stopped push
    was going, with its fuzz and accepted methods (nothing more where it was the last)."""
    stack = load(ctx.git().state_dir(), ctx.repo().config.queue)
    if stack is not None and stop.target in stack.applied:
        return MoveOutcome(stack)
    return push(
        ctx,
        stop.target,
        all_=False,
        fuzz=stop.fuzz,
        merge=True,
        force=force,
        progress=progress,
        accept=stop.accept,
    )


@dataclass(frozen=True, slots=True)
class PushAbortOutcome:
    """`push --abort`: the patch the push had stopped at, the stash holding edits made
    since (None: there were none), and the stack as before the push."""

    patch: str
    saved: str | None
    stack: Stack | None


def abort(ctx: Context) -> PushAbortOutcome:
    """Put the target, the stack and the patch repo back as before the push that stopped
    (the push's journal record, as `undo` does), edits made since saved in a stash."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), repo.root):
        refuse_during_rebase(ctx)
        stop = pushed_stop(ctx, load(g.state_dir(), repo.config.queue))
        if stop is None:
            raise BadInputError(
                "no push stopped at a patch: nothing to abort",
                str(g.root),
                "`patchq undo` rolls back the last stack operation",
            )
        doc = journal.last_op(g)
        if doc is None or doc.get("op") != "push" or doc["after"].get("head") != stop.commit:
            raise UnsafeStateError(
                f"the push that stopped at {stop.patch} is no longer the last change",
                str(g.root),
                "`patchq pop` removes the patch; `git reflog` shows where the branch was",
            )
        own = ctx.own_paths()
        saved = None
        if journal.edits_since(g, doc, own):
            saved = g.stash_save(f"patchq: saved before push --abort at {stop.patch}")
        journal.undo_last(g, repo.root, own)
    return PushAbortOutcome(stop.patch, saved, load(g.state_dir(), repo.config.queue))
