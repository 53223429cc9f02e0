"""`apply`: the reproducible, whole-series application.

`apply` builds every commit in memory, writes the objects in one batch, moves the stack
branch and checks it out once, then writes `series.lock`. Nothing changes unless every
patch applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchq.core.lock import Lock, keeps_exec, records_for, without_exec
from patchq.core.progress import Progress
from patchq.core.records import Stack
from patchq.core.status import GONE
from patchq.core.words import plural
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import (
    SeriesResult,
    apply_series,
    load_patch,
    raise_failure,
    with_placements,
)
from patchq.stack.context import Context
from patchq.stack.targets import active_entries, branch_name, check_own_branch, choose_base
from patchq.store.patchrepo import LOCK
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class ApplyOutcome:
    """The series applied, the stack branch it is on, and the lock written."""

    result: SeriesResult
    branch: str
    lock: Lock
    saved: str | None = None  # the stash holding untracked or ignored files in the way
    # The patches that differ from what series.lock pinned (edited, added, gone), each
    # with how, when the lock was left as it was: re-pinning is `--pin`'s, or `--onto`'s
    # onto another base.
    unpinned: tuple[tuple[str, str], ...] = ()


def apply(
    ctx: Context,
    onto: str | None,
    branch: str | None,
    guards: Sequence[str] | None,
    fuzz: int | None,
    *,
    progress: Progress | None = None,
    force: bool = False,
    pin: bool = False,
) -> ApplyOutcome:
    """Apply the active series onto a base; nothing changes unless every patch applies.

    `force`: reset a branch named `branch` that patchq did not make, and save untracked
    or ignored files the checkout would write over in a stash. series.lock is written
    where there is none, onto another base than its, or with `pin`; otherwise what was
    reviewed stays pinned, and the patches that differ from it are named."""
    repo, g = ctx.repo(), ctx.git()
    name = branch_name(ctx, branch)
    with run_lock(g.state_dir(), ctx.repo().root):
        stack_ops.refuse_at_push_stop(ctx, "an apply")
        g.require_clean(ctx.own_paths())
        check_own_branch(g, name, repo.config.queue, force)
        base = choose_base(ctx, onto)
        active, entries = active_entries(ctx, guards)
        w = g.writer()
        previous = repo.read_lock()
        fz = repo.config.fuzz if fuzz is None else fuzz
        if fuzz is None and previous is not None and previous.base == base:
            # The placements series.lock pins on its base (as `verify` re-places them):
            # what was reviewed there applies again without a `--fuzz` to remember.
            fz = max(fz, previous.fuzz)
        result = apply_series(g, repo, base, entries, fuzz=fz, progress=progress)
        if result.failure is not None:
            raise_failure(result.failure)
        # The bytes apply_series parsed (kept by load_patch while the file is unchanged).
        datas = [(e.name or "", load_patch(repo, e)[0]) for e in entries]
        lock = Lock(
            base=base,
            result_tree=result.tree,
            files=result.files,
            guards=active,
            patches=with_placements(
                records_for(datas, previous, [e.raw for e in repo.series.entries]),
                result.patches,
            ),
            last_rebase=previous.last_rebase if previous else None,
            exec=previous.exec if previous else None,
        )
        if previous is None or not keeps_exec(previous, lock):
            # The recorded `rebase --exec` runs were of another tree: not this one's.
            lock = without_exec(lock)
        unpinned: tuple[tuple[str, str], ...] = ()
        files: dict[str, bytes | None] = {LOCK: lock.to_json()}
        if previous is not None and not pin and base == previous.base:
            unpinned = differences(previous, lock)
            if unpinned:
                files = {}  # what was reviewed stays pinned: `verify` will say so
                lock = previous
        w.flush()
        stack = Stack(
            base,
            name,
            tuple(e.name or "" for e in entries),
            tuple(p.commit or "" for p in result.patches),
        )
        saved = journal.run(
            g,
            repo.root,
            journal.Plan(
                "apply",
                name,
                result.head,
                stack,
                repo.config.queue,
                files=files,
                reason=f"{plural(len(entries), 'patch')} onto {base[:12]}",
                force=force,
            ),
        )
    return ApplyOutcome(result, name, lock, saved, unpinned)


def differences(pinned: Lock, now: Lock) -> tuple[tuple[str, str], ...]:
    """How the series applied now differs from what `pinned` holds, patch by patch:
    `edited` (another hash), `added` (not in the lock), `gone` (in the lock's active
    records, no longer applied); or the result alone (the same patches, another tree)."""
    was = {r.name: r.sha256 for r in pinned.patches if r.rebase not in GONE}
    is_ = {r.name: r.sha256 for r in now.patches if r.rebase not in GONE}
    out = [(n, "edited") for n, h in is_.items() if n in was and was[n] != h]
    out += [(n, "added") for n in is_ if n not in was]
    out += [(n, "gone") for n in was if n not in is_]
    if not out and (pinned.result_tree, dict(pinned.files)) != (now.result_tree, dict(now.files)):
        out.append(("", "result"))
    return tuple(out)
