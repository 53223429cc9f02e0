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

from collections.abc import Sequence
from dataclasses import dataclass, replace

from patchq.core import tiers
from patchq.core.errors import AcceptedError, BadInputError, ConflictError, UnsafeStateError
from patchq.core.lock import Lock, without_exec
from patchq.core.patch import Patch
from patchq.core.records import (
    DonePatch,
    PatchOutcome,
    RebaseState,
    Reorder,
    Stack,
    StoppedPatch,
)
from patchq.core.series import Entry, Series
from patchq.core.status import CLEAN, CONFLICT, GONE, MISSING, UNCHANGED, UPSTREAMED
from patchq.core.words import plural
from patchq.rebase.replay import (
    SERIES_SO_FAR,
    PatchCheck,
    Replay,
    for_review,
    lock_outcome,
    replayed,
)
from patchq.rebase.stop import done_patch, show_conflict, stopped
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import Failure, failure_error, ident_date, identity, load_patch
from patchq.stack.apply import preimages as pinned
from patchq.stack.context import Context
from patchq.stack.refresh import refreshed_files
from patchq.stack.relock import not_updated, reapplied
from patchq.stack.targets import active_entries
from patchq.store.patchrepo import LOCK, PATCHES, SERIES, PatchRepo
from patchq.store.stack import load
from patchq.store.statedir import run_lock

SINK, FLOAT, MOVE = "sink", "float", "move"


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
    place: Place | None = None  # where it was asked to go
    # The patches replayed with proposals `accept` in patchq.toml took (DESIGN §4.1).
    taken: tuple[DonePatch, ...] = ()
    # What moved under the stopped patch, for a stop whose every changed line reads
    # differently in the new order (`shifted_under`).
    shifted: str = ""
    # Why series.lock was left as it was (the stack on another base than the lock's).
    lock_note: str | None = None

    @property
    def problem(self) -> ConflictError | AcceptedError | None:
        """The stop at a conflict, as the error to report; the accepted proposals a
        finished move took (done, to review); None when the move is done."""
        if self.stopped is None:
            return accepted_error(self.taken)
        return stop_error(self.verb, self.name, self.stopped, self.where, shifted=self.shifted)

    @property
    def exit_code(self) -> int:
        """0 when the patch moved (or already was there); 1 when it took accepted
        proposals; 3 when it stopped at a conflict or for review."""
        problem = self.problem
        return 0 if problem is None else problem.exit_code


def stop_error(
    verb: str,
    name: str,
    c: PatchCheck,
    where: str,
    accept: tuple[str, ...] = (),
    *,
    shifted: str = "",
) -> ConflictError:
    """A reorder stopped at patch `c`: what conflicts, and the way on (`shifted`: what
    moved under it, `shifted_under`)."""
    bad = [h for h in c.hunks if h.status in (CONFLICT, MISSING) and not tiers.proposal(h, c.hunks)]
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
                *([shifted or "every line it changes reads differently"] if c.rewritten else []),
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


def shifted_under(
    repo: PatchRepo, c: PatchCheck | StoppedPatch, old: Sequence[str], new: Sequence[str]
) -> str:
    """What a reorder changed under patch `c` whose every changed line reads differently
    in the new order (`old` and `new`: the active patches in either order): the patches
    it no longer sits on that wrote a line it removes, and those it now sits on that
    change one (where none does by content, those touching its files)."""
    if not c.rewritten or c.name not in old or c.name not in new:
        return ""
    files = {h.file for h in c.hunks if h.status != UPSTREAMED}
    was, now = old[: old.index(c.name)], new[: new.index(c.name)]
    removed = _lines(repo, c.name, "-", files)

    def named(names: list[str], tag: str) -> str:
        hit = [n for n in names if removed & _lines(repo, n, tag, files)]
        hit = hit or [n for n in names if files & set(_patch(repo, n).paths)]
        return " and ".join(filter(None, (", ".join(hit[:-1]), hit[-1] if hit else "")))

    came = named([n for n in now if n not in was], "-")
    gone = named([n for n in was if n not in now], "+")
    said = [
        *([f"{came} now below it"] if came else []),
        *([f"{gone} no longer below it"] if gone else []),
    ]
    return (
        f"every line it changes reads differently in the new order ({', '.join(sorted(files))})"
        + (": " + "; ".join(said) if said else "")
    )


def _patch(repo: PatchRepo, name: str) -> Patch:
    return load_patch(repo, stack_ops.entry(repo, name))[1]


def _lines(repo: PatchRepo, name: str, tag: str, files: set[str]) -> set[bytes]:
    """The lines patch `name` removes (`tag` "-") or adds ("+") in `files`, blank ones
    aside."""
    return {
        x.strip()
        for sec in _patch(repo, name).sections
        if sec.path in files
        for h in sec.hunks
        for t, x in h.lines
        if t == tag and x.strip()
    }


def accepted_error(records: tuple[DonePatch, ...]) -> AcceptedError | None:
    """A finished rebase that took proposals because the person accepted them: done,
    but to review (exit 1); None when it took none."""
    taken = [d.patch for d in records if d.patch.accepted]
    if not taken:
        return None
    what = ", ".join(f"{p.name} ({', '.join(p.accepted)})" for p in taken)
    return AcceptedError(
        f"the rebased series is written with {plural(len(taken), 'accepted proposal')} "
        f"to review: {what}",
        None,
        "see `patchq report` (series.lock records them as `accepted`)",
    )


@dataclass(frozen=True, slots=True)
class Place:
    """Where a reorder puts a patch: before the line of patch `anchor` (after it, with
    `after`), or, without an anchor, before the first patch line (`sink`) or after the
    last (`float`)."""

    anchor: str | None = None
    after: bool = False


def place_of(verb: str, anchor: str = "", after: bool = False) -> Place:
    """The place a verb names: sink's and float's ends, or move's patch."""
    if anchor:
        return Place(anchor, after)
    return Place(None, verb == FLOAT)


def reordered(series: Series, name: str, place: Place) -> Series:
    """`series` with `name`'s line moved to `place` (comments and blank lines stay)."""
    entries = [e for e in series.entries if e.name != name]
    moved = next(e for e in series.entries if e.name == name)
    if place.anchor is not None:
        at = [i for i, e in enumerate(entries) if e.name == place.anchor]
    else:
        at = [i for i, e in enumerate(entries) if e.is_patch]
    if not at:
        return series
    k = at[-1] + 1 if place.after else at[0]
    return Series(tuple(entries[:k] + [moved] + entries[k:]))


def _applied_after(i: int, j: int, applied: int, total: int) -> int:
    """How many patches stay applied when the patch at `i` of the active order moves to
    `j`: an applied patch moved past the applied ones is unapplied (unless all are); an
    unapplied one moved under an applied one is applied."""
    if i < applied:
        return applied if j < applied or applied == total else applied - 1
    return applied + 1 if j < applied else applied


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


def _refuse_unwritten(
    ctx: Context, stack: Stack, verb: str, name: str, replayed: Sequence[str | None]
) -> None:
    """A patch the reorder would replay from its file while its commit holds a placement
    `push --merge` made that the file does not hold yet (an accepted proposal): replayed,
    the file would meet the lines it no longer fits, and the placement would be lost.
    Refused (exit 5), nothing changed, naming the `refresh` that writes it."""
    pending = dict(stack_ops.unwritten(ctx, stack))
    for n in replayed:
        if n is not None and n in pending:
            how = ", ".join(pending[n].accepted or pending[n].methods) or "the ladder"
            raise UnsafeStateError(
                f"{n}'s commit holds the placement push --merge made ({how}) and its file "
                f"does not yet: {verb} would replay the file and lose it",
                ctx.repo().display(n),
                f"`patchq refresh {n}` writes it into the file; then `patchq {verb} {name}`",
            )


def move(ctx: Context, name: str, verb: str, place: Place | None = None) -> ReorderOutcome:
    """Move `name` to `place` in the series: `sink` to the bottom, `float` to the top,
    `move` before or after another patch. One path for all three: the patches between
    the old place and the new are replayed with the rebase's ladder."""
    repo, g = ctx.repo(), ctx.git()
    place = place if place is not None else place_of(verb)
    with run_lock(g.state_dir(), repo.root):
        stack_ops.refuse_during_rebase(ctx)
        stack_ops.entry(repo, name)  # an unknown name is bad input, before anything else
        if place.anchor is not None:
            _check_anchor(repo.series, name, place.anchor, repo.display(place.anchor))
        stack = stack_ops.open_stack(ctx, create=True)
        names, entries = stack_ops.series_state(ctx, stack)
        series = reordered(repo.series, name, place)
        if series.format() == repo.series.format():
            return ReorderOutcome(name, verb, False, (), stack, place=place)
        files: dict[str, bytes | None] = {SERIES: stack_ops.series_bytes(series)}
        a, n = len(stack.applied), len(names)
        if name not in names:  # guarded out: only its line moves
            _write(ctx, verb, name, files, None, refreshed=())
            return ReorderOutcome(name, verb, True, (), stack, place=place)
        i = names.index(name)
        rank = {e.name: k for k, e in enumerate(series.entries)}
        new = sorted(entries, key=lambda e: rank[e.name])
        j = next(k for k, e in enumerate(new) if e.name == name)
        if i == j:  # only its line moved among guarded-out ones: nothing to replay
            _write(ctx, verb, name, files, None, refreshed=())
            return ReorderOutcome(name, verb, True, (), stack, place=place)
        first, last = min(i, j), max(i, j)
        keep = _applied_after(i, j, a, n)
        start, end = min(first, a), max(last + 1, keep)
        _refuse_unwritten(ctx, stack, verb, name, [e.name for e in new[start:end]])
        if a or keep:
            stack_ops.protect(ctx, False, verb, can_force=False)
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
            ours=SERIES_SO_FAR,
        )
        when, tz = ident_date(g.commit_info(stack.base)["committer"])
        commits = list(stack.commits[:start])
        # What a stop at a conflict hands to the rebase: the patches replayed so far.
        done = [
            DonePatch(PatchOutcome(n, CLEAN, UNCHANGED, commit=c), "", "")
            for n, c in zip(stack.applied[:start], commits, strict=True)
        ]
        pairs: list[tuple[str, str, str]] = []  # (name, tree before, tree after) to refresh
        for k, (entry, res) in enumerate(replayed(rp, new[start:end]), start):
            assert entry.name is not None
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
                return _stop(
                    ctx,
                    verb,
                    name,
                    place=place,
                    stack=stack,
                    old=entries,
                    new=new,
                    keep=keep,
                    done=done,
                    res=res,
                )
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
            accepted = tiers.taken(res.hunks, res.rewritten, repo.config.accept)
            done.append(
                done_patch(res, outcome if k >= first else UNCHANGED, commits[-1], accepted)
            )
        commits = commits[:keep]
        w.flush()  # the trees must be in the repository before git diffs them
        refreshed = refreshed_files(g, repo, pairs)
        files.update({f"{PATCHES}/{n}": data for n, data in refreshed.items()})
        after = Stack(
            stack.base, stack.branch, tuple(e.name or "" for e in new[:keep]), tuple(commits)
        )
        lock, note = _lock_or_note(ctx, series, refreshed, done, stack.base)
        if lock is not None:
            files[LOCK] = lock
        _write(ctx, verb, name, files, after if (a or keep) else None, refreshed=tuple(refreshed))
    was_applied = i < a
    return ReorderOutcome(
        name,
        verb,
        True,
        tuple(refreshed),
        after,
        unapplied=was_applied and name not in after.applied,
        place=place,
        taken=tuple(d for d in done if d.patch.accepted),
        lock_note=note,
    )


def _lock_or_note(
    ctx: Context,
    series: Series,
    refreshed: dict[str, bytes],
    done: Sequence[DonePatch],
    stack_base: str,
) -> tuple[bytes | None, str | None]:
    """series.lock for the reordered series (None: no lock), or, where the series no
    longer applies on the lock's base and the stack is on another (`push --merge` onto
    a newer upstream, a patch refreshed there), None and why the lock stays as it was:
    the lock is not this stack's to bring up to date, as `refresh` leaves it. On the
    lock's own base, such a series refuses the move (nothing written yet)."""
    lock = reorder_lock(ctx, series, refreshed, [d.patch for d in done])
    if not isinstance(lock, Failure):
        return lock, None
    pinned_on = ctx.repo().read_lock()
    if pinned_on is None or pinned_on.base == stack_base:
        raise failure_error(lock)
    return None, not_updated(lock, pinned_on.base, stack_base)


def _check_anchor(series: Series, name: str, anchor: str, display: str) -> None:
    """`move`'s other patch must be another patch of the series."""
    if anchor == name:
        raise BadInputError(
            f"cannot move {name} next to itself", display, "name another patch of the series"
        )
    if series.find(anchor) is None:
        raise BadInputError(
            f"no patch named {anchor!r} in the series", "series", "`patchq series` lists them"
        )


def _stop(
    ctx: Context,
    verb: str,
    name: str,
    *,
    place: Place,
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
        reorder=Reorder(
            verb, name, tuple(e.name or "" for e in old), keep, place.anchor or "", place.after
        ),
        accept=repo.config.accept,
    )
    show_conflict(ctx, st, res.name, res.conflict_tree)
    return ReorderOutcome(
        name,
        verb,
        True,
        (),
        stack,
        stopped=res,
        where=repo.display(res.name),
        place=place,
        shifted=shifted_under(repo, res, [e.name or "" for e in old], st.entries),
    )


def reorder_lock(
    ctx: Context,
    series: Series,
    staged: dict[str, bytes],
    replayed: Sequence[PatchOutcome] = (),
) -> bytes | Failure | None:
    """series.lock for the reordered series (stack/relock.py `reapplied`: the records kept,
    but no `--exec` runs, the trees between changed), each patch the reorder placed anew
    recorded with its methods (`with_methods`); the patch that no longer applies exactly
    on the lock's base; None without a lock."""
    repo, g = ctx.repo(), ctx.git()
    previous = repo.read_lock()
    if previous is None:
        return None
    lock = reapplied(g, replace(repo, series=series, staged=staged), previous)
    if isinstance(lock, Failure):
        return lock
    return without_exec(with_methods(lock, replayed)).to_json()


def with_methods(lock: Lock, replayed: Sequence[PatchOutcome]) -> Lock:
    """DESIGN §4.1: every reorder records the methods it used. Each patch whose placement
    the reorder changed (refreshed, merged, resolved by a person after a stop) gets the
    reorder's outcome, its hunks' methods and the proposals `accept` took; the others
    keep their records."""
    by_name = {p.name: p for p in replayed if p.outcome != UNCHANGED and p.outcome not in GONE}
    return replace(
        lock,
        patches=tuple(
            replace(
                r,
                rebase=by_name[r.name].outcome,
                methods=tiers.recorded(by_name[r.name].hunks),
                accepted=by_name[r.name].accepted,
            )
            if r.name in by_name
            else r
            for r in lock.patches
        ),
    )


def _write(
    ctx: Context,
    verb: str,
    name: str,
    files: dict[str, bytes | None],
    after: Stack | None,
    *,
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
