"""The rebase's state machine: start, run (replay patch by patch), stop at a conflict,
`--continue`, `--skip`, `--abort`. It carries the series onto a new upstream, refreshes
it, and records what happened (the last step is `finish.py`).

The whole run happens in memory; the target is touched once at the end — or, at a
conflict, once to show the markers. Until the rebase finishes, `series`, `patches/` and
`series.lock` are not written at all: a stopped rebase lives in `.git/patchq/`, whose
record is also the snapshot of where it started. Every change goes through the journal
(stack/journal.py): showing a conflict, taking a resolution, the finishing writes (patch
files, series, lock, the stack, the last rebase's record) as one transaction, and
`--abort` as the journal's rollback of the starting snapshot. A kill anywhere leaves
what `rebase --continue` or `--abort` finishes or undoes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from patchq.core import tiers
from patchq.core.errors import BadInputError, ConflictError, UnsafeStateError
from patchq.core.progress import Progress
from patchq.core.records import DonePatch, RebaseState, StoppedPatch
from patchq.core.resolutions import Remembered, resolved_regions
from patchq.core.resolutions import render as render_resolution
from patchq.core.series import Entry
from patchq.core.status import CONFLICT, MISSING, UPSTREAMED, Outcome
from patchq.git.memtree import MemTree
from patchq.rebase import execute
from patchq.rebase.attribution import attribute_drift
from patchq.rebase.drift import Change, histories_later
from patchq.rebase.finish import executed, finish
from patchq.rebase.keep import release_rebase_objects
from patchq.rebase.outcome import AbortOutcome, RebaseOutcome
from patchq.rebase.reorder import shifted_under
from patchq.rebase.replay import (
    SERIES_SO_FAR,
    PatchCheck,
    Replay,
    for_review,
    lock_outcome,
    replayed,
)
from patchq.rebase.stop import (
    done_patch,
    show_conflict,
    state_name,
    state_path,
    stopped,
)
from patchq.stack import journal
from patchq.stack.apply import ident_date, identity, load_patch, preimages
from patchq.stack.context import Context
from patchq.stack.moves import refuse_at_push_stop
from patchq.stack.targets import branch_name, default_onto, old_base
from patchq.store import rebasestate
from patchq.store.files import inside
from patchq.store.patchrepo import PatchRepo, resolution_path
from patchq.store.stack import load
from patchq.store.statedir import (
    crashpoint,
    last_rebase_path,
    run_lock,
)

# The marker lines of a diff3-style conflict (ours, base, theirs); each carries a label.
MARKERS = (b"<<<<<<< ", b"||||||| ", b">>>>>>> ")


def in_progress(ctx: Context) -> bool:
    return state_path(ctx).exists()


def _read_state(ctx: Context) -> RebaseState:
    state = rebasestate.read_state(state_path(ctx))
    if state is None:
        raise BadInputError("no rebase in progress", str(ctx.git().root))
    return state


def _write_state(ctx: Context, state: RebaseState) -> None:
    rebasestate.write_state(state_path(ctx), state)


def start(
    ctx: Context,
    onto: str,
    fuzz: int | None,
    progress: Progress | None = None,
    *,
    execs: tuple[str | None, str | None, bool] = (None, None, False),
    announce: execute.Announce | None = None,
    accept: tuple[str, ...] = (),
) -> RebaseOutcome:
    """Rebase onto `onto`; `execs` is (--exec, --exec-each, --no-exec); `accept` the
    proposed methods taken without a stop besides patchq.toml's `accept`."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        if in_progress(ctx):
            raise UnsafeStateError(
                "a rebase is already in progress",
                str(state_path(ctx)),
                "`patchq rebase --continue`, `--skip` or `--abort`",
            )
        repo.check_writable()
        refuse_at_push_stop(ctx, "a rebase")
        # Edits of tracked files only: an untracked file stops the rebase only where its
        # checkout would write over it (the journal names it), as docs/commands.md says.
        g.require_clean(ctx.own_paths(), untracked=False)
        ref, onto_id = default_onto(ctx, g, onto)
        base, guards = old_base(ctx, g)
        # Said, and gone on with: onto an older tag is a rebase a person may mean.
        behind = g.behind(onto_id, base) if onto_id != base else 0
        entries = repo.series.active(guards)
        exec_cmd, exec_each, untrusted = execute.commands(ctx, *execs, entries)
        stack = load(g.state_dir(), repo.config.queue)
        branch = stack.branch if stack else branch_name(ctx, None)
        tip = g.try_resolve(f"refs/heads/{stack.branch}") if stack else None
        if stack is not None and tip is not None and tip != stack.head:
            # Commits made on the stack branch with git are edits no patch holds yet; the
            # rebase would rebuild the branch without them.
            raise UnsafeStateError(
                f"{stack.branch} moved outside patchq (now {tip[:12]}, expected {stack.head[:12]})",
                str(g.root),
                "fold those commits into patches (`git reset --soft` and "
                "`patchq refresh`), or reset the branch",
            )
        state = RebaseState(
            old_base=base,
            onto=onto_id,
            onto_ref=ref,
            guards=tuple(guards),
            fuzz=repo.config.fuzz if fuzz is None else fuzz,
            orig_branch=g.current_branch(),
            orig_head=g.head(),
            stack_before=stack,
            branch=branch,
            branch_before=g.try_resolve(f"refs/heads/{branch}"),
            entries=tuple(e.name for e in entries if e.name is not None),
            done=(),
            head=onto_id,
            current=None,
            subjects=(),
            exec_cmd=exec_cmd,
            exec_each=exec_each,
            untrusted=untrusted,
            accept=tiers.parse_accept((*repo.config.accept, *accept)),
        )
        # What a commit or a saved file made while the rebase works is compared with.
        expect = journal.expect(g, branch)
        out = _run(ctx, state, progress, announce, expect)
        return replace(out, behind=(ref, behind)) if behind else out


def _run(
    ctx: Context,
    st: RebaseState,
    progress: Progress | None = None,
    announce: execute.Announce | None = None,
    expect: journal.Expect | None = None,
) -> RebaseOutcome:
    """Replay the remaining patches from the state's head; stop at a conflict or finish
    (`expect`: the target as this run found it, when it started the rebase)."""
    repo, g = ctx.repo(), ctx.git()
    all_entries = _entries(ctx, st.entries)
    w = g.writer()
    # A stopped reorder replays in the new order, each patch pinned to its pre-image in
    # the order it was written in.
    order = all_entries if st.reorder is None else _entries(ctx, st.reorder.order)
    pre = preimages(g, repo, st.old_base, order)
    rp = Replay.start(
        g,
        repo,
        st.old_base,
        st.onto,
        fuzz=st.fuzz,
        preimage=pre,
        tree=g.commit_info(st.head)["tree"].decode(),
        resolutions=repo.resolutions(),
        accept=st.accept,
        expected=lambda: todo_patches,  # read below, before the first patch
        ours="upstream" if st.reorder is None else SERIES_SO_FAR,
    )
    when, tz = ident_date(g.commit_info(st.onto)["committer"])
    finished_names = {d.patch.name for d in st.done}
    todo = [e for e in all_entries if e.name not in finished_names]
    # Upstream's history of every file the remaining patches touch, in one `git log`.
    todo_patches = [load_patch(repo, e)[1] for e in todo]
    touched = {rp.renames.get(p, p) for patch in todo_patches for p in patch.paths}
    # Asked now, read when the first patch's drift is attributed: git works on it while
    # the first patch replays.
    none: dict[str, list[Change]] = {}  # one dict for the run: what is fetched is kept
    histories_ready: Callable[[], dict[str, list[Change]]] = (
        histories_later(g, st.old_base, st.onto, touched, rp.renames)
        if touched and st.old_base != st.onto
        else lambda: none
    )
    for entry, res in replayed(rp, todo, progress):
        assert entry.name is not None
        histories = histories_ready()
        (res,), subjects = attribute_drift(
            g,
            st.old_base,
            st.onto,
            [res],
            repo,
            entries=[entry],
            histories=histories,
            renames=rp.renames,
            sections=rp.sections,
        )
        st = st.with_subjects(subjects)
        hunks = res.hunks
        # In a reorder, a change already there is another patch's: a person decides.
        already = st.reorder is not None and (
            res.status == UPSTREAMED or any(h.status == UPSTREAMED for h in res.hunks)
        )
        conflict = res.status in (CONFLICT, MISSING) or already
        # DESIGN §4.1: a proposed method never finishes a patch alone. The patch stops
        # for review with the proposal applied in the working tree, no markers.
        # (upstream changing every line the patch changes — "fixed differently
        # upstream" — stops it too, unless the person accepted its proposals)
        if conflict or for_review(res, st.accept):
            if not conflict:
                res = replace(res, conflict_tree=res.tree)
            w.flush()
            stopped_patch = stopped(res)
            st = replace(st, current=stopped_patch)
            crashpoint("rebase:stopped")
            show_conflict(ctx, st, res.name, res.conflict_tree)
            return RebaseOutcome(
                st.done,
                False,
                res,
                dict(st.subjects),
                st.old_base,
                st.onto,
                where=repo.display(res.name),
                reorder=None if st.reorder is None else (st.reorder.verb, st.reorder.name),
                accept=st.accept,
                shifted=_shifted(repo, res, st),
            )
        outcome = lock_outcome(res)
        commit = None
        if outcome != Outcome.UPSTREAMED:
            _, patch = load_patch(repo, entry)
            author, message = identity(entry.name, patch, when, tz, g.user_identity())
            commit = g.commit_object(res.tree, [st.head], message, author, author)
        taken = tiers.taken(hunks, res.rewritten, st.accept)
        st = st.with_done(done_patch(res, outcome, commit, taken), head=commit)
    w.flush()
    return finish(ctx, st, announce, expect)


def _shifted(repo: PatchRepo, res: PatchCheck, st: RebaseState) -> str:
    """A stopped reorder: what moved under the stopped patch (reorder.shifted_under)."""
    return "" if st.reorder is None else shifted_under(repo, res, st.reorder.order, st.entries)


def _refuse_moved_target(ctx: Context, st: RebaseState) -> None:
    """Refuse (exit 5) to take or skip a resolution when the target is no longer at the
    stop: another branch checked out, or commits made on the stack branch meanwhile —
    they would be folded into the stopped patch, or thrown away."""
    g = ctx.git()
    branch, head = g.current_branch(), g.head()
    if branch != st.branch:
        raise UnsafeStateError(
            f"the target is on {branch or 'a detached HEAD'}, not on {st.branch} where the "
            "rebase stopped",
            str(g.root),
            f"`git checkout {st.branch}` to go on, or `patchq rebase --abort`",
        )
    if head != st.head:
        raise UnsafeStateError(
            f"{st.branch} moved during the stop (now {(head or '')[:12]}, the stop left it at "
            f"{st.head[:12]})",
            str(g.root),
            f"`git reset --soft {st.head[:12]}` keeps those edits as the resolution, "
            "or `patchq rebase --abort`",
        )


def _series_unchanged(ctx: Context, st: RebaseState) -> None:
    """Refuse (exit 5) to go on when the active series is no longer the one the rebase
    started from (a line added, removed or moved during the stop). Checked wherever a
    stopped rebase goes on (--continue, --skip), so `_run` may take the names as found."""
    expected = st.reorder.order if st.reorder is not None else st.entries
    active = tuple(e.name or "" for e in ctx.repo().series.active(st.guards))
    if active != expected:
        raise UnsafeStateError(
            "the series changed during the rebase",
            "series",
            "put it back as it was to go on, or `patchq rebase --abort`",
        )


def _entries(ctx: Context, names: tuple[str, ...]) -> list[Entry]:
    """The series entries of `names` (the series holds them: `_series_unchanged`)."""
    found = [ctx.repo().series.find(n) for n in names]
    out = [e for e in found if e is not None]
    assert len(out) == len(found), "the series changed during the rebase"
    return out


def _clear_conflict(ctx: Context, st: RebaseState) -> None:
    """Throw away the working tree's conflict state (used by --skip and --abort)."""
    g = ctx.git()
    g.discard_changes()
    tree = st.current.conflict_tree if st.current is not None else None
    if tree:
        for name in g.added_paths("HEAD", tree):
            path = g.root / name
            # Only a file really in the target: a folder on the way that became a symlink
            # during the stop would lead this unlink out of it.
            if inside(g.root, name) and path.is_file() and not path.is_symlink():
                path.unlink()


def _recover(ctx: Context, mode: str) -> journal.Recovered | None:
    """Finish or undo a rebase step that was killed halfway (its journal), first."""
    g, repo = ctx.git(), ctx.repo()
    g.clear_stale_index_lock()
    doc = journal.pending(g, repo.root)
    if doc is None:
        journal.tidy(g, repo.root)
        return None
    if not str(doc.get("op", "")).startswith("rebase"):
        raise UnsafeStateError(
            f"an interrupted `patchq {doc.get('op')}` left the target half-changed",
            str(g.state_dir()),
            "`patchq recover --continue` or `patchq recover --abort` first",
        )
    return journal.recover(g, repo.root, mode)


def continue_(
    ctx: Context, progress: Progress | None = None, announce: execute.Announce | None = None
) -> RebaseOutcome:
    """Take the person's resolution of the conflicting patch (no `git add` needed)."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root, recovering=True):
        done = _recover(ctx, "continue")
        interrupted = done.record if done is not None else None
        if interrupted is not None and interrupted.back_only:
            release_rebase_objects(g, repo.config.queue)
            return RebaseOutcome(
                (), False, aborted=True, aborted_op=interrupted.op, removed_lock=g.removed_lock
            )
        if (
            not in_progress(ctx)
            and interrupted is not None
            and interrupted.kind == journal.Kind.REORDER_FINISHED
            and interrupted.reorder is not None
        ):
            # A stopped reorder's finishing writes were the rest (their record names it).
            release_rebase_objects(g, repo.config.queue)
            verb, name = interrupted.reorder
            stack = load(g.state_dir(), repo.config.queue)
            return RebaseOutcome(
                (),
                True,
                reorder=(verb, name),
                top=stack.top if stack else None,
                removed_lock=g.removed_lock,
            )
        left = execute.pending_runs(ctx) if not in_progress(ctx) else None
        if left is not None:
            # Killed while an `--exec-each` command ran: make that run again and the rest.
            execute.after_rebase(ctx, left.cmd, left.each, announce, resumed=left)
        if not in_progress(ctx):
            last = rebasestate.read_last(last_rebase_path(g.state_dir(), repo.config.queue))
            if (interrupted is not None or left is not None) and last is not None:
                release_rebase_objects(g, repo.config.queue)
                # The finishing writes were the rest: the record they wrote says what.
                records = tuple(DonePatch(p, "", "") for p in last.patches)
                out = RebaseOutcome(
                    records,
                    True,
                    None,
                    dict(last.subjects),
                    last.base,
                    last.onto,
                    removed_lock=g.removed_lock,
                    saved=done.saved if done is not None else None,
                    untrusted=last.untrusted,
                    patch_root=str(repo.root),
                )
                if left is not None:
                    out = replace(out, exec_runs=last.exec_runs, target=str(g.root))
                elif (last.exec_cmd or last.exec_each) and not last.exec_runs:
                    out = executed(ctx, out, last.exec_cmd, last.exec_each, announce)
                return out
            raise BadInputError("no rebase in progress", str(g.root))
        st = _read_state(ctx)
        _series_unchanged(ctx, st)
        cur = st.current
        if cur is None:
            return replace(_run(ctx, st, progress, announce), removed_lock=g.removed_lock)
        if interrupted is not None and interrupted.kind == journal.Kind.CONFLICT_SHOWN:
            # Killed while showing the conflict: it is in the working tree now.
            raise ConflictError(
                f"{cur.name} needs resolving; its conflict is now in the working tree",
                str(g.root),
                "resolve it, then `patchq rebase --continue`",
            )
        _refuse_moved_target(ctx, st)
        for path in cur.files:
            f = g.root / path
            if f.is_file() and any(
                line.startswith(MARKERS) for line in f.read_bytes().split(b"\n")
            ):
                raise ConflictError(
                    f"{path} still has conflict markers",
                    str(g.root),
                    "resolve them, then `patchq rebase --continue`",
                )
        # The stopped patch's files are taken as the person left them, those they created
        # too (a file the patch needed was missing): no `git add` needed.
        wt = g.worktree_tree(also=sorted({h.file for h in cur.hunks} | set(cur.files)))
        if wt == cur.tree_before:
            # As `git rebase --continue` does: an empty resolution is not silently kept as
            # an empty patch; the person says whether to drop it.
            raise ConflictError(
                f"the resolution of {cur.name} changes nothing",
                str(g.root),
                "edit the files, or `patchq rebase --skip` to drop the patch",
            )
        (entry,) = _entries(ctx, (cur.name,))
        _, patch = load_patch(repo, entry)
        when, tz = ident_date(g.commit_info(st.onto)["committer"])
        author, message = identity(cur.name, patch, when, tz, g.user_identity())
        w = g.writer()
        commit = g.commit_object(wt, [st.head], message, author, author)
        w.flush()
        st = st.with_done(cur.resolved(commit, wt), head=commit)
        # The resolution becomes the branch's commit: the ref and the index move, the
        # working tree (the person's files) stays; what they wrote for each conflict
        # region is remembered in the patch repo, in the same transaction.
        journal.run(
            g,
            repo.root,
            journal.Plan(
                "rebase",
                st.branch,
                commit,
                None,
                repo.config.queue,
                worktree=journal.INDEX,
                files=_remembered(ctx, cur, wt) if repo.config.rerere else {},
                state={state_name(ctx): rebasestate.state_bytes(st)},
                reason=f"resolved {cur.name}",
            ),
        )
        return replace(_run(ctx, st, progress, announce), removed_lock=g.removed_lock)


def _remembered(ctx: Context, cur: StoppedPatch, wt: str) -> dict[str, bytes | None]:
    """The resolution files of what the person wrote for each conflict region of the
    stopped patch (`core.resolutions`): the file as shown, with its markers, against the
    file as they left it."""
    repo, g = ctx.repo(), ctx.git()
    if not cur.regions or cur.conflict_tree is None:
        return {}
    shown, left = (MemTree(g.read_tree, t) for t in (cur.conflict_tree, wt))
    out: dict[str, bytes | None] = {}
    for path in dict.fromkeys(f for f, _ in cur.regions):
        was, now = shown.get(path), left.get(path)
        if was is None or now is None:
            continue  # the person deleted the file: no region-sized answer
        regions = [r for f, r in cur.regions if f == path]
        marked, resolved = g.read_blob(was[1]), g.read_blob(now[1])
        for region, lines in resolved_regions(marked, resolved, regions):
            r = Remembered(
                region.base, region.ours, region.theirs, lines, f"{repo.display(cur.name)}, {path}"
            )
            out[resolution_path(r)] = render_resolution(r)
    return out


def skip(
    ctx: Context, progress: Progress | None = None, announce: execute.Announce | None = None
) -> RebaseOutcome:
    """Drop the conflicting patch (recorded `dropped`) and go on."""
    g = ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        st = _read_state(ctx)
        cur = st.current
        if cur is None:
            raise BadInputError("no conflicting patch to skip", str(state_path(ctx)))
        # Clearing the markers and then recording the skip: a kill in between leaves the
        # patch still stopped, and a second --skip does the same again.
        _series_unchanged(ctx, st)
        _refuse_moved_target(ctx, st)
        _clear_conflict(ctx, st)
        _write_state(ctx, st.with_done(cur.dropped()))
        return _run(ctx, _read_state(ctx), progress, announce)


def abort(ctx: Context) -> AbortOutcome:
    """Put the target, series, patches/ and series.lock back exactly as they were: the
    journal's rollback of the snapshot the rebase state holds. Says what it finished: a
    killed abort, a killed step undone first, a held-back result dropped, killed
    `--exec-each` runs given up."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root, recovering=True):
        done = _recover(ctx, "abort")
        left = execute.pending_runs(ctx) if not in_progress(ctx) else None
        if left is not None:
            # Killed while an `--exec-each` command ran: the whole stack back, no more runs.
            execute.give_up_runs(ctx, left)
            return AbortOutcome(g.removed_lock, runs=execute.given_up(left))
        if not in_progress(ctx) and done is not None:
            release_rebase_objects(g, repo.config.queue)
            if done.record.held:
                return AbortOutcome(g.removed_lock, held=done.record.held)
            # The interrupted step was the abort itself (or an undo), now finished.
            return AbortOutcome(g.removed_lock, finished=done.op)
        st = _read_state(ctx)
        _clear_conflict(ctx, st)
        snap = journal.Snapshot(
            st.branch,
            st.branch_before,
            st.orig_branch,
            st.orig_head or st.old_base,
            st.stack_before,
        )
        journal.restore(
            g, repo.root, "rebase --abort", snap, queue=repo.config.queue, state=(state_name(ctx),)
        )
        release_rebase_objects(g, repo.config.queue)
        return AbortOutcome(g.removed_lock, undid=done.op if done is not None else "")
