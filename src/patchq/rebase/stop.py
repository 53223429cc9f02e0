"""A rebase stopping at a conflict: its state file, and the stop shown in the target.

Shared by `rebase` and by a `sink`/`float` that meets a conflict (which goes on as a
rebase onto the base it started from; see rebase/reorder.py): the patch the replay stopped
at becomes a `StoppedPatch`, and the state and the conflict reach the target in one
journal transaction, with the objects the stop needs held by a ref.
"""

from __future__ import annotations

from pathlib import Path

from patchq.core.errors import PatchqError
from patchq.core.records import DonePatch, PatchOutcome, RebaseState, StoppedPatch
from patchq.rebase.keep import hold_rebase_objects, release_rebase_objects
from patchq.rebase.replay import PatchCheck
from patchq.stack import journal
from patchq.stack.context import Context
from patchq.store import rebasestate
from patchq.store.statedir import rebase_state_path


def state_path(ctx: Context) -> Path:
    """Where the queue's rebase in progress is recorded."""
    return rebase_state_path(ctx.git().state_dir(), ctx.repo().config.queue)


def state_name(ctx: Context) -> str:
    """The rebase state's file name, as a journal's state files are named."""
    return state_path(ctx).name


def evidence(p: PatchCheck) -> tuple[tuple[str, str], ...] | None:
    """Why a patch is (or may be) upstream, as the records keep it."""
    return None if p.evidence is None else tuple(p.evidence.doc().items())


def done_patch(
    res: PatchCheck, outcome: str, commit: str | None, accepted: tuple[str, ...]
) -> DonePatch:
    """A replayed patch a rebase (or a reorder) is done with, as its records keep it:
    `outcome` in the lock, `commit` (None: it left the stack), the proposals `accepted`."""
    return DonePatch(
        PatchOutcome(
            res.name,
            res.status,
            outcome,
            res.drift,
            res.hunks,
            commit=commit,
            evidence=evidence(res),
            hints=res.hints,
            accepted=accepted,
        ),
        res.tree_before,
        res.tree,
    )


def stopped(res: PatchCheck) -> StoppedPatch:
    """The patch the replay stopped at, recorded with its markers shown (one transaction)."""
    assert res.name is not None
    return StoppedPatch(
        res.name,
        res.status,
        res.drift,
        res.hunks,
        res.tree_before,
        res.tree,
        res.conflict_tree,
        res.conflict_files,
        True,
        evidence(res),
        res.hints,
        res.regions,
        res.rewritten,
        res.added_present,
    )


def show_conflict(ctx: Context, st: RebaseState, name: str, conflict_tree: str | None) -> None:
    """Record the stop and check out the rebased stack so far with the markers laid over
    it (index untouched), as one journal transaction."""
    repo, g = ctx.repo(), ctx.git()
    added: tuple[str, ...] = ()
    if conflict_tree is not None:
        # Files the patch creates stay known to git (intent to add), so `git diff` shows
        # them and --continue takes them without a `git add`.
        added = tuple(g.added_paths(st.head, conflict_tree))
    hold_rebase_objects(g, repo.config.queue, st)  # a `git gc` during the stop keeps them
    try:
        _record(ctx, st, name, conflict_tree, added)
    except PatchqError:
        release_rebase_objects(g, repo.config.queue)  # refused: nothing is stopped
        raise


def _record(
    ctx: Context, st: RebaseState, name: str, conflict_tree: str | None, added: tuple[str, ...]
) -> None:
    repo, g = ctx.repo(), ctx.git()
    journal.run(
        g,
        repo.root,
        journal.Plan(
            "rebase",
            st.branch,
            st.head,
            None,
            repo.config.queue,
            state={state_name(ctx): rebasestate.state_bytes(st)},
            overlay=conflict_tree,
            intent_to_add=added,
            reason=f"stopped at {name}",
            kind=journal.Kind.CONFLICT_SHOWN,
            typed=st.reorder.verb if st.reorder is not None else "",
        ),
    )
