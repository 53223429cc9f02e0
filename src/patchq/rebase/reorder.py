"""`sink` and `float`: move a patch to the bottom or the top of the series, StGit's way.

The reordered stretch — the moved patch and every patch it crosses — is re-applied in
memory with the rebase's ladder (rebase/replay.py), each patch's 3-way step pinned to its
pre-image in the old order: so a patch that now sits on different neighbours is placed
by offset or merged where it can be. Patches whose placement changed get their files
refreshed (as `rebase` does), the applied stack is rebuilt and checked out, and `series`,
the patch files, `series.lock` and the stack record are written in one journal
transaction, which `undo` can roll back.

A patch that conflicts in the new order stops the reorder as a rebase stops (exit 3): the
reorder becomes a rebase in progress onto the base it started from, with the patches
replayed so far committed, the conflict's markers in the working tree and nothing else
written; `patchq rebase --continue` takes the resolution and goes on, `--skip` drops the
patch, `--abort` puts everything back as it was before the reorder. Only when it is done
are `series`, the patch files and the lock written (rebase/finish.py, `Reorder`). A
patch whose change would already be there (two patches making the same change) is
refused, exit 3, before anything changes.

The stack after: `sink` puts the patch at the bottom of the applied stack (applied, if
anything is); `float` puts it last in the series, still applied only when every patch
before it is (a patch is applied only after all those before it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from patchq.core import tiers
from patchq.core.errors import ConflictError
from patchq.core.lock import without_exec
from patchq.core.records import DonePatch, PatchOutcome, RebaseState, Reorder, Stack
from patchq.core.series import Entry, Series
from patchq.core.status import CLEAN, CONFLICT, MISSING, UNCHANGED, UPSTREAMED
from patchq.core.words import plural
from patchq.rebase.replay import PatchCheck, Replay, for_review, lock_outcome
from patchq.rebase.stop import evidence, show_conflict, stopped
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import Failure, failure_error, ident_date, identity, load_patch
from patchq.stack.apply import preimages as pinned
from patchq.stack.context import Context
from patchq.stack.refresh import refreshed_files
from patchq.stack.relock import reapplied
from patchq.stack.targets import active_entries
from patchq.store.patchrepo import LOCK, PATCHES, SERIES
from patchq.store.stack import load
from patchq.store.statedir import run_lock

SINK, FLOAT = "sink", "float"


@dataclass(frozen=True, slots=True)
class ReorderOutcome:
    """Where the patch went, which patch files were refreshed, and the stack now."""

    name: str
    verb: str
    moved: bool  # False: it already was at the bottom (top)
    refreshed: tuple[str, ...]
    stack: Stack
    unapplied: bool = False  # float: it was applied and, last now, is not any more
    # The patch that conflicts in the new order: the reorder stopped there, as a rebase.
    stopped: PatchCheck | None = None
    where: str = ""  # the stopped patch's file, as errors name it

    @property
    def problem(self) -> ConflictError | None:
        """The stop at a conflict, as the error to report; None when the move is done."""
        return (
            None
            if self.stopped is None
            else stop_error(self.verb, self.name, self.stopped, self.where)
        )

    @property
    def exit_code(self) -> int:
        """0 when the patch moved (or already was there); 3 when it stopped at a conflict."""
        return 0 if self.stopped is None else 3


def stop_error(
    verb: str, name: str, c: PatchCheck, where: str, accept: tuple[str, ...] = ()
) -> ConflictError:
    """A reorder stopped at patch `c`: what conflicts, and the way on."""
    bad = [h for h in c.hunks if h.status in (CONFLICT, MISSING)]
    files = sorted({h.file for h in bad})
    proposed = tiers.proposals(c.hunks, accept)
    if files:
        what = f"conflict in {', '.join(files)}"
    elif proposed or c.rewritten:
        what = "for review, applied in the working tree, no markers: " + "; ".join(
            [
                *(
                    f"{h.file} hunk #{h.index + 1} by {m}"
                    + (f" ({tiers.evidence(h, m)})" if tiers.evidence(h, m) else "")
                    for h, m in proposed
                ),
                *(
                    ["the patches it now sits on changed every line it changes"]
                    if c.rewritten
                    else []
                ),
            ]
        )
    else:
        what = "its change is already made by a patch now before it"
    return ConflictError(
        f"{verb} {name} stopped: {c.name} does not apply in the new order ({what})",
        where,
        "edit the files to resolve, then `patchq rebase --continue` "
        f"(--skip drops {c.name}, --abort undoes the {verb})",
    )


def reordered(series: Series, name: str, to_top: bool) -> Series:
    """`series` with `name`'s line moved before the first patch line (after the last)."""
    entries = [e for e in series.entries if e.name != name]
    moved = next(e for e in series.entries if e.name == name)
    at = [i for i, e in enumerate(entries) if e.is_patch]
    if not at:
        return series
    k = at[-1] + 1 if to_top else at[0]
    return Series(tuple(entries[:k] + [moved] + entries[k:]))


def _refusal(verb: str, name: str, res: PatchCheck, display: str) -> ConflictError:
    bad = next((h for h in res.hunks if h.status in (CONFLICT, MISSING, UPSTREAMED)), res.hunks[0])
    why = (
        "its change would already be there"
        if bad.status == UPSTREAMED
        else bad.reason or "it would conflict"
    )
    return ConflictError(
        f"cannot {verb} {name}: {res.name} would not apply in the new order "
        f"({bad.file} hunk #{bad.index + 1}: {why})",
        display,
        "nothing was changed; reorder with `patchq pop`/`push` and resolve it by hand",
    )


def move(ctx: Context, name: str, verb: str) -> ReorderOutcome:
    """Move `name` to the bottom (`sink`) or the top (`float`) of the series."""
    repo, g = ctx.repo(), ctx.git()
    to_top = verb == FLOAT
    with run_lock(g.state_dir(), repo.root):
        stack_ops.refuse_during_rebase(ctx)
        stack_ops.entry(repo, name)  # an unknown name is bad input, before anything else
        stack = stack_ops.open_stack(ctx, create=True)
        names, entries = stack_ops.series_state(ctx, stack)
        series = reordered(repo.series, name, to_top)
        if series.format() == repo.series.format():
            return ReorderOutcome(name, verb, False, (), stack)
        files: dict[str, bytes | None] = {SERIES: stack_ops.series_bytes(series)}
        a, n = len(stack.applied), len(names)
        if name not in names:  # guarded out: only its line moves
            _write(ctx, verb, name, files, None, ())
            return ReorderOutcome(name, verb, True, (), stack)
        i = names.index(name)
        others = [e for e in entries if e.name != name]
        me = entries[i]
        new = [me, *others] if not to_top else [*others, me]
        if to_top:
            first, last = i, n - 1
            keep = a if i >= a or a == n else a - 1
        else:
            first, last = 0, i
            keep = a if i < a else (a + 1 if a else 0)
        if a or keep:
            stack_ops.protect(ctx, False, verb, can_force=False)
        start = min(first, a)
        w = g.writer()
        rp = Replay.start(
            g,
            repo,
            stack.base,
            stack.base,
            fuzz=repo.config.fuzz,
            preimage=pinned(g, repo, stack.base, entries),
            tree=g.commit_info(stack.commit_below(start))["tree"].decode(),
            resolutions=repo.resolutions(),
            accept=repo.config.accept,
        )
        when, tz = ident_date(g.commit_info(stack.base)["committer"])
        commits = list(stack.commits[:start])
        # What a stop at a conflict hands to the rebase: the patches replayed so far.
        done = [
            DonePatch(PatchOutcome(n, CLEAN, UNCHANGED, commit=c), "", "")
            for n, c in zip(stack.applied[:start], commits, strict=True)
        ]
        pairs: list[tuple[str, str, str]] = []  # (name, tree before, tree after) to refresh
        end = max(last + 1, keep)
        for k in range(start, end):
            entry = new[k]
            assert entry.name is not None
            res = rp.step(entry)
            # DESIGN §4.1: no reorder rewrites a crossed patch's changed lines without a
            # stop — a proposal (or a patch whose changed lines the patches it now sits on
            # changed) stops as a conflict does, the proposal applied, no markers.
            review = res.status not in (CONFLICT, MISSING) and for_review(res, repo.config.accept)
            if res.status in (CONFLICT, MISSING) or review:
                if review:
                    res = replace(res, conflict_tree=res.tree)
                w.flush()
                # The rest of the series is replayed after the stop too: a resolution may
                # change lines that later patches need.
                return _stop(ctx, verb, name, stack, entries, new, keep, done, res)
            if res.status == UPSTREAMED or any(h.status == UPSTREAMED for h in res.hunks):
                raise _refusal(verb, name, res, repo.display(entry.name))
            outcome = lock_outcome(res)
            if k >= first and outcome != UNCHANGED:
                pairs.append((entry.name, res.tree_before, res.tree))
            # Every patch replayed is committed (objects only): the stack keeps the first
            # `keep`, and a stop further on shows its conflict on top of them all.
            _, patch = load_patch(repo, entry)
            author, message = identity(entry.name, patch, when, tz, g.user_identity())
            parent = commits[-1] if commits else stack.base
            commits.append(g.commit_object(res.tree, [parent], message, author, author))
            hunks = res.hunks
            done.append(
                DonePatch(
                    PatchOutcome(
                        entry.name,
                        res.status,
                        outcome if k >= first else UNCHANGED,
                        res.drift,
                        hunks,
                        commits[-1],
                        None,
                        evidence(res),
                        res.hints,
                        tiers.accepted(hunks, repo.config.accept),
                    ),
                    res.tree_before,
                    res.tree,
                )
            )
        commits = commits[:keep]
        w.flush()  # the trees must be in the repository before git diffs them
        refreshed = refreshed_files(g, repo, pairs)
        files.update({f"{PATCHES}/{n}": data for n, data in refreshed.items()})
        after = Stack(
            stack.base, stack.branch, tuple(e.name or "" for e in new[:keep]), tuple(commits)
        )
        lock = reorder_lock(ctx, series, refreshed)
        if isinstance(lock, Failure):
            raise failure_error(lock)  # nothing written yet: the move is refused
        if lock is not None:
            files[LOCK] = lock
        _write(ctx, verb, name, files, after if (a or keep) else None, tuple(refreshed))
    was_applied = i < a
    return ReorderOutcome(
        name, verb, True, tuple(refreshed), after, unapplied=was_applied and keep < n
    )


def _stop(
    ctx: Context,
    verb: str,
    name: str,
    stack: Stack,
    old: tuple[Entry, ...],
    new: list[Entry],
    keep: int,
    done: list[DonePatch],
    res: PatchCheck,
) -> ReorderOutcome:
    """Stop the reorder at `res`, which conflicts in the new order: from here it is a
    rebase onto the stack's base, in progress (rebase/stop.py), that `patchq rebase
    --continue` finishes by writing the reordered series."""
    repo, g = ctx.repo(), ctx.git()
    repo.check_writable()
    stack_ops.protect(ctx, False, verb, can_force=False)
    guards, _ = active_entries(ctx, None)
    st = RebaseState(
        old_base=stack.base,
        onto=stack.base,
        onto_ref=f"{verb} {name}",
        guards=tuple(guards),
        fuzz=repo.config.fuzz,
        orig_branch=g.current_branch(),
        orig_head=g.head(),
        stack_before=load(g.state_dir(), repo.config.queue),
        branch=stack.branch,
        branch_before=g.try_resolve(f"refs/heads/{stack.branch}"),
        entries=tuple(e.name or "" for e in new),
        done=tuple(done),
        head=done[-1].patch.commit or stack.base if done else stack.base,
        current=stopped(res),
        subjects=(),
        reorder=Reorder(verb, name, tuple(e.name or "" for e in old), keep),
        accept=repo.config.accept,
    )
    show_conflict(ctx, st, res.name, res.conflict_tree)
    return ReorderOutcome(name, verb, True, (), stack, stopped=res, where=repo.display(res.name))


def reorder_lock(ctx: Context, series: Series, staged: dict[str, bytes]) -> bytes | Failure | None:
    """series.lock for the reordered series (stack/relock.py `reapplied`: the records kept,
    but no `--exec` runs, the trees between changed); the patch that no longer applies
    exactly on the lock's base; None without a lock."""
    repo, g = ctx.repo(), ctx.git()
    previous = repo.read_lock()
    if previous is None:
        return None
    lock = reapplied(g, replace(repo, series=series, staged=staged), previous)
    return lock if isinstance(lock, Failure) else without_exec(lock).to_json()


def _write(
    ctx: Context,
    verb: str,
    name: str,
    files: dict[str, bytes | None],
    after: Stack | None,
    refreshed: tuple[str, ...],
) -> None:
    repo, g = ctx.repo(), ctx.git()
    journal.run(
        g,
        repo.root,
        journal.Plan(
            verb,
            after.branch if after else "",
            after.head if after else None,
            after,
            repo.config.queue,
            files=files,
            reason=f"{name}, {plural(len(refreshed), 'patch')} refreshed" if refreshed else name,
        ),
    )
