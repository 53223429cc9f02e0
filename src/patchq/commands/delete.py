"""`delete`: remove a patch from the series (the top one is popped first)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from patchq.core.errors import UnsafeStateError
from patchq.core.series import Series
from patchq.core.status import GONE
from patchq.stack import journal, relock
from patchq.stack import moves as stack_ops
from patchq.stack.apply import Failure
from patchq.stack.context import Context
from patchq.stack.targets import check_branch
from patchq.store.patchrepo import LOCK, PATCHES, SERIES, PatchRepo
from patchq.store.stack import load
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class DeleteOutcome:
    """The patch deleted, whether it was popped first and whether its file was removed."""

    name: str
    popped: bool
    removed_file: bool
    # The stash holding the working tree of a `push --merge` stopped at this patch.
    saved: str | None = None
    # Why series.lock was left as it was (the rest no longer applies exactly without it).
    note: str | None = None


def delete(ctx: Context, name: str, remove_file: bool) -> DeleteOutcome:
    """Remove an unapplied (or the top) patch from the series; its file is kept unless -r.
    A patch only commented out (`# upstreamed in …: NAME`, `#NAME`) loses its comment
    lines, and with -r its file and any copy a rebase moved aside."""
    repo, g = ctx.repo(), ctx.git()
    if repo.series.find(name) is None and repo.series.commented(name):
        return _delete_commented(ctx, name, remove_file)
    stack_ops.entry(repo, name)  # refuse an unknown name before anything else
    stack_ops.refuse_during_rebase(ctx)
    saved = None
    with run_lock(g.state_dir(), repo.root):
        stack = load(g.state_dir(), repo.config.queue)
        popped = stack is not None and name in stack.applied
        series = Series(tuple(e for e in repo.series.entries if e.name != name))
        files: dict[str, bytes | None] = {SERIES: stack_ops.series_bytes(series)}
        note = _relocked(ctx, replace(repo, series=series), name, files)
        if remove_file:
            files[f"{PATCHES}/{name}"] = None
        if stack is not None and popped:
            if stack.top != name:
                raise UnsafeStateError(
                    f"{name} is applied below the top",
                    "series",
                    f"`patchq goto {name}` then pop it, or pop down past it",
                )
            check_branch(g, stack)
            stop = stack_ops.pushed_stop(ctx, stack)
            state: dict[str, bytes | None] = {}
            if stop is not None and stop.patch == name:
                # A push --merge stopped at it (fixed differently upstream, say): the merge
                # in the working tree goes with the patch, kept in a stash with any edit
                # made since — never lost — and the stop with it.
                saved = stack_ops.protect(ctx, True, "delete")
                state = {stack_ops.stop_name(repo.config.queue): None}
            else:
                stack_ops.protect(ctx, False, "delete", can_force=False)
            new = stack.truncated(len(stack.applied) - 1)
            # The pop and the series edit are one change: a kill in between is recoverable.
            journal.run(
                g,
                repo.root,
                journal.Plan(
                    "delete",
                    new.branch,
                    new.head,
                    new,
                    repo.config.queue,
                    files=files,
                    state=state,
                    reason=name,
                ),
            )
        else:
            journal.run(
                g,
                repo.root,
                journal.Plan("delete", "", None, None, repo.config.queue, files=files, reason=name),
            )
    return DeleteOutcome(name, popped, remove_file, saved, note)


def _relocked(
    ctx: Context, written: PatchRepo, name: str, files: dict[str, bytes | None]
) -> str | None:
    """Add to `files` series.lock without `name`'s record, its result recomputed by
    replaying the rest of the series on the lock's base in memory (so `verify` passes
    right after); or say why the lock stays as it was (a later patch needed this one)."""
    lock = written.read_lock()
    if lock is None or lock.record(name) is None:
        return None
    new = relock.reapplied(ctx.git(), written, lock)
    if isinstance(new, Failure):
        return relock.not_updated(new, lock.base)
    files[LOCK] = new.to_json()
    return None


def _delete_commented(ctx: Context, name: str, remove_file: bool) -> DeleteOutcome:
    """Drop the comment lines standing for `name` (and with `remove_file` its files)."""
    repo, g = ctx.repo(), ctx.git()
    stack_ops.refuse_during_rebase(ctx)
    with run_lock(g.state_dir(), repo.root):
        lines = set(repo.series.commented(name))
        files: dict[str, bytes | None] = {
            SERIES: stack_ops.series_bytes(
                Series(tuple(e for e in repo.series.entries if e not in lines))
            )
        }
        if remove_file:
            for rel in (name, *(f".{o}/{name}" for o in GONE)):
                path = repo.patches_dir / rel
                if path.is_file() or path.is_symlink():
                    files[f"{PATCHES}/{rel}"] = None
        journal.run(
            g,
            repo.root,
            journal.Plan("delete", "", None, None, repo.config.queue, files=files, reason=name),
        )
    return DeleteOutcome(name, False, remove_file)
