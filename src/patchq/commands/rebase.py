"""`rebase`: carry the series onto a new upstream, refresh it, and record what happened.

The whole run happens in memory; the target is touched once at the end — or, at a
conflict, once to show the markers. Until the rebase finishes, `series`, `patches/` and
`series.lock` are not written at all: a stopped rebase lives in `.git/patchq/`, whose
record is also the snapshot of where it started. Every change goes through the journal
(ops/journal.py): showing a conflict, taking a resolution, the finishing writes (patch
files, series, lock, the stack, the last rebase's record) as one transaction, and
`--abort` as the journal's rollback of the starting snapshot. A kill anywhere leaves
what `rebase --continue` or `--abort` finishes or undoes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from patchq.core.errors import (
    BadInputError,
    ConflictError,
    ExecFailedError,
    UnsafeStateError,
    UntrustedError,
)
from patchq.core.lock import Lock, PatchRecord, records_for, sha256
from patchq.core.progress import Progress
from patchq.core.resolutions import Remembered, resolved_regions
from patchq.core.resolutions import render as render_resolution
from patchq.core.series import Entry, Series
from patchq.core.status import CONFLICT, GONE, MISSING, UPSTREAMED
from patchq.core.trust import Configured
from patchq.core.words import plural
from patchq.git.memtree import MemTree
from patchq.git.repo import GitRepo
from patchq.ops import execute, journal
from patchq.ops.apply import Failure, apply_series, ident_date, identity, load_patch, preimages
from patchq.ops.check import CheckOutcome, check
from patchq.ops.drift import Change
from patchq.ops.drift import histories as histories_for
from patchq.ops.keep import release_rebase_objects
from patchq.ops.rebasestop import (
    evidence,
    hunk_record,
    show_conflict,
    state_name,
    state_path,
    stopped,
)
from patchq.ops.refresh import refreshed_files
from patchq.ops.relock import not_updated
from patchq.ops.reorder import FLOAT, reorder_lock, reordered, stop_error
from patchq.ops.replay import (
    PatchCheck,
    Replay,
    attribute_drift,
    lock_outcome,
    stop_notes,
)
from patchq.ops.session import Context
from patchq.ops.targets import branch_name, default_onto, old_base
from patchq.store import rebasestate
from patchq.store.files import inside
from patchq.store.patchrepo import CONFIG, LOCK, PATCHES, SERIES, resolution_path
from patchq.store.rebasestate import (
    DonePatch,
    ExecRun,
    LastRebase,
    PatchOutcome,
    RebaseState,
    Reorder,
    StoppedPatch,
)
from patchq.store.stack import Stack, load
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


@dataclass(frozen=True, slots=True)
class RebaseOutcome:
    """Where a rebase run ended: finished, or stopped at a conflict (state saved)."""

    records: tuple[DonePatch, ...]
    finished: bool
    conflict: PatchCheck | None = None
    subjects: dict[str, str] | None = None
    base: str = ""
    onto: str = ""
    where: str = ""  # the conflicting patch's file, as errors name it
    aborted: bool = False  # --continue found an interrupted --abort and finished it
    # Already on onto and every patch applied unchanged: the last real rebase's review
    # (its record and the lock's outcomes) was kept.
    nothing_to_do: bool = False
    exec_runs: tuple[ExecRun, ...] = ()  # the --exec/--exec-each runs after it finished
    target: str = ""  # where they ran, as errors name it
    removed_lock: str | None = None  # the stale index.lock of patchq's git, removed
    # A stopped `sink`/`float` going on as a rebase: (verb, the patch moved); and, once it
    # is done, the top of the stack.
    reorder: tuple[str, str] | None = None
    top: str | None = None
    unapplied: bool = False  # a float done: the moved patch, last now, is not applied
    note: str | None = None  # a reorder done: why series.lock was left as it was
    # The commands patchq.toml names that were not run (not trusted), and the patch repo.
    untrusted: tuple[Configured, ...] = ()
    patch_root: str = ""

    @property
    def exec_failed(self) -> ExecRun | None:
        """The first run of the --exec command that failed, if one did."""
        return next((x for x in self.exec_runs if not x.ok), None)

    @property
    def problem(self) -> ConflictError | ExecFailedError | UntrustedError | None:
        """The stop at a conflict, as the error to report: the patch, its conflicting
        files and the upstream commits behind them; or the --exec command failing on the
        finished rebase; None when the rebase is done."""
        c = self.conflict
        bad_run = self.exec_failed
        if c is None and bad_run is not None:
            with_what = f"with {bad_run.patch} applied" if bad_run.patch else "on the series"
            why = bad_run.note or f"exit {bad_run.code}"
            failed = sum(1 for x in self.exec_runs if not x.ok)
            return ExecFailedError(
                f"`{bad_run.command}` failed {with_what} ({why})"
                + (f", {plural(failed - 1, 'more run')} failed" if failed > 1 else ""),
                self.target or None,
                "the rebased series is written; fix it (`patchq refresh`), "
                "see `patchq status` and `patchq report`",
            )
        if c is None and self.untrusted:
            return untrusted_error(self.untrusted, self.patch_root)
        if c is None:
            return None
        if self.reorder is not None:
            return stop_error(*self.reorder, c, self.where)
        bad = [h for h in c.hunks if h.status in (CONFLICT, MISSING)]
        files = sorted({h.file for h in bad})
        drift = list(dict.fromkeys(x for h in bad for x in h.drift))
        subjects = self.subjects or {}
        why = "; ".join(f"{x[:12]} {subjects.get(x, '')}".strip() for x in drift[:3])
        return ConflictError(
            f"{c.name} does not apply to {self.onto[:12]}: conflict in {', '.join(files)}"
            + (f" (upstream: {why})" if why else "")
            + "".join(f"; {x}" for x in stop_notes(c, subjects)),
            self.where,
            "edit the files to resolve, then `patchq rebase --continue` (or --skip, --abort)",
        )

    @property
    def exit_code(self) -> int:
        """0 when the run finished; 3 when it stopped at a conflict; 1 when the --exec
        command failed on the finished rebase, or a configured one was not run (not
        trusted)."""
        problem = self.problem
        return 0 if problem is None else problem.exit_code


def untrusted_error(untrusted: tuple[Configured, ...], patch_root: str) -> UntrustedError:
    """What a finished rebase did not run, and the one command that allows it."""
    what = ", ".join(f"`{c.command}` ({c.key} in {CONFIG})" for c in untrusted)
    return UntrustedError(
        f"did not run {what}: a patch repo's command runs only once you trust it; "
        "the rebased series is written",
        str(Path(patch_root) / CONFIG) if patch_root else CONFIG,
        f"`{trust_command(patch_root)}` allows it",
    )


def trust_command(patch_root: str) -> str:
    """`patchq trust`, with `--dir` when the current folder is not in the patch repo."""
    here = Path.cwd().resolve()
    root = Path(patch_root)
    if not patch_root or here == root or root in here.parents:
        return "patchq trust"
    return f"patchq --dir {shlex.quote(patch_root)} trust"


@dataclass(frozen=True, slots=True)
class DryRunOutcome:
    """What `rebase --onto` would do to each patch: the replay `check` runs, read as the
    lock outcome each patch would get."""

    report: CheckOutcome

    @property
    def outcomes(self) -> tuple[tuple[PatchCheck, str], ...]:
        """Each patch with its would-be outcome (`conflict` where a person must decide)."""
        return tuple((p, lock_outcome(p)) for p in self.report.patches)

    @property
    def exit_code(self) -> int:
        """3 when a patch would stop the rebase at a conflict, else 0."""
        return 3 if any(o == CONFLICT for _, o in self.outcomes) else 0


def start(
    ctx: Context,
    onto: str,
    fuzz: int | None,
    progress: Progress | None = None,
    execs: tuple[str | None, str | None, bool] = (None, None, False),
    announce: execute.Announce | None = None,
) -> RebaseOutcome:
    """Rebase onto `onto`; `execs` is (--exec, --exec-each, --no-exec)."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        if in_progress(ctx):
            raise UnsafeStateError(
                "a rebase is already in progress",
                str(state_path(ctx)),
                "`patchq rebase --continue`, `--skip` or `--abort`",
            )
        repo.check_writable()
        g.require_clean(ctx.own_paths())
        ref, onto_id = default_onto(ctx, g, onto)
        base, guards = old_base(ctx, g)
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
        )
        return _run(ctx, state, progress, announce)


def _run(
    ctx: Context,
    st: RebaseState,
    progress: Progress | None = None,
    announce: execute.Announce | None = None,
) -> RebaseOutcome:
    """Replay the remaining patches from the state's head; stop at a conflict or finish."""
    repo, g = ctx.repo(), ctx.git()
    all_entries = _entries(ctx, st.entries)
    w = g.writer()
    # A stopped reorder replays in the new order, each patch pinned to its pre-image in
    # the order it was written in.
    order = all_entries if st.reorder is None else _entries(ctx, st.reorder.order)
    pre = preimages(g, repo, st.old_base, order, w)
    rp = Replay.start(
        g,
        repo,
        st.old_base,
        st.onto,
        w,
        st.fuzz,
        pre,
        tree=g.commit_info(st.head, w)["tree"].decode(),
        resolutions=repo.resolutions(),
    )
    when, tz = ident_date(g.commit_info(st.onto)["committer"])
    finished_names = {d.patch.name for d in st.done}
    todo = [e for e in all_entries if e.name not in finished_names]
    # Upstream's history of every file the remaining patches touch, in one `git log`.
    todo_patches = [load_patch(repo, e)[1] for e in todo]
    touched = {rp.renames.get(p, p) for patch in todo_patches for p in patch.paths}
    if rp.provenance is not None:
        rp.provenance.expected = lambda: todo_patches
    histories: dict[str, list[Change]] = (
        histories_for(g, st.old_base, st.onto, touched, rp.renames)
        if touched and st.old_base != st.onto
        else {}
    )
    for i, entry in enumerate(todo):
        assert entry.name is not None
        if progress is not None:
            progress(i, entry.name, len(todo))
        res = rp.step(entry)
        (res,), subjects = attribute_drift(
            g, st.old_base, st.onto, w, [res], repo, [entry], histories, rp.renames, rp.sections
        )
        st = st.with_subjects(subjects)
        hunks = tuple(hunk_record(h) for h in res.hunks)
        # In a reorder, a change already there is another patch's: a person decides.
        already = st.reorder is not None and (
            res.status == UPSTREAMED or any(h.status == UPSTREAMED for h in res.hunks)
        )
        if res.status in (CONFLICT, MISSING) or already:
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
            )
        outcome = lock_outcome(res)
        commit = None
        if outcome != "upstreamed":
            _, patch = load_patch(repo, entry)
            author, message = identity(entry.name, patch, when, tz, g.user_identity())
            commit = GitRepo.commit_object(w, res.tree, [st.head], message, author, author)
        st = st.with_done(
            DonePatch(
                PatchOutcome(
                    entry.name,
                    res.status,
                    outcome,
                    res.drift,
                    hunks,
                    commit,
                    None,
                    evidence(res),
                    res.hints,
                ),
                res.tree_before,
                res.tree,
            ),
            head=commit,
        )
    w.flush()
    return _finish(ctx, st, announce)


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
        interrupted = done.doc if done is not None else None
        if interrupted is not None and interrupted.get("back_only"):
            release_rebase_objects(g, repo.config.queue)
            return RebaseOutcome((), False, aborted=True, removed_lock=g.removed_lock)
        reason = str(interrupted.get("reason", "")) if interrupted is not None else ""
        if not in_progress(ctx) and reason.startswith(("sink ", "float ")):
            # A stopped reorder's finishing writes were the rest (their reason names it).
            release_rebase_objects(g, repo.config.queue)
            verb, _, name = reason.partition(" ")
            stack = load(g.state_dir(), repo.config.queue)
            return RebaseOutcome(
                (),
                True,
                reorder=(verb, name),
                top=stack.top if stack else None,
                removed_lock=g.removed_lock,
            )
        if not in_progress(ctx):
            last = rebasestate.read_last(last_rebase_path(g.state_dir(), repo.config.queue))
            if interrupted is not None and last is not None:
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
                    untrusted=last.untrusted,
                    patch_root=str(repo.root),
                )
                if (last.exec_cmd or last.exec_each) and not last.exec_runs:
                    out = _executed(ctx, out, last.exec_cmd, last.exec_each, announce)
                return out
            raise BadInputError("no rebase in progress", str(g.root))
        st = _read_state(ctx)
        _series_unchanged(ctx, st)
        cur = st.current
        if cur is None:
            return replace(_run(ctx, st, progress, announce), removed_lock=g.removed_lock)
        if interrupted is not None and str(interrupted.get("reason", "")).startswith("stopped"):
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
        commit = GitRepo.commit_object(w, wt, [st.head], message, author, author)
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
    w = g.writer(dry_run=True)
    shown, left = (MemTree(lambda oid: g.read_tree(oid, w), t) for t in (cur.conflict_tree, wt))
    out: dict[str, bytes | None] = {}
    for path in dict.fromkeys(f for f, _ in cur.regions):
        was, now = shown.get(path), left.get(path)
        if was is None or now is None:
            continue  # the person deleted the file: no region-sized answer
        regions = [r for f, r in cur.regions if f == path]
        marked, resolved = g.read_blob(was[1], w), g.read_blob(now[1], w)
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


def abort(ctx: Context) -> str | None:
    """Put the target, series, patches/ and series.lock back exactly as they were: the
    journal's rollback of the snapshot the rebase state holds. Returns the stale
    `index.lock` of patchq's killed git it removed on the way, if any."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root, recovering=True):
        done = _recover(ctx, "abort")
        if not in_progress(ctx) and done is not None:
            release_rebase_objects(g, repo.config.queue)
            return g.removed_lock  # the interrupted step was the abort itself, now finished
        st = _read_state(ctx)
        _clear_conflict(ctx, st)
        snap = journal.Snapshot(
            st.branch,
            st.branch_before,
            st.orig_branch,
            st.orig_head or st.old_base,
            st.stack_before,
        )
        journal.restore(g, repo.root, "rebase --abort", snap, repo.config.queue, (state_name(ctx),))
        release_rebase_objects(g, repo.config.queue)
        return g.removed_lock


def _finish(
    ctx: Context, st: RebaseState, announce: execute.Announce | None = None
) -> RebaseOutcome:
    """Write the refreshed patches, series, lock, stack and the last rebase's record and
    check out the new stack: one journal transaction."""
    if st.reorder is not None:
        return _finish_reorder(ctx, st, st.reorder)
    repo, g = ctx.repo(), ctx.git()
    done = [d.patch for d in st.done]
    new_bytes, old_bytes = _refreshed(ctx, st)
    gone = {r.name: r for r in done if r.outcome in GONE}
    series = _retired(repo.series, gone, st.onto)
    # The report needs the old patches; keep them beside the state, not in the patch repo.
    last = LastRebase(
        st.old_base,
        st.onto,
        st.onto_ref,
        tuple(done),
        st.subjects,
        tuple(old_bytes.items()),
        tuple(new_bytes.items()),
        st.exec_cmd,
        st.exec_each,
        untrusted=st.untrusted,
    )
    crashpoint("rebase:finishing")
    kept = [r for r in done if r.outcome not in GONE]
    # Every patch the rebase saw is recorded, those that left the active series too: the
    # lock is where `upstreamed` and `dropped` are kept for tools and reviewers.
    records = []
    for r in done:
        data = new_bytes.get(r.name) or repo.read_patch(r.name)
        methods = tuple(h.method for h in r.hunks)
        records.append(
            PatchRecord(
                r.name,
                sha256(data),
                r.outcome,
                r.drift,
                methods,
                dict(r.evidence) if r.evidence is not None else None,
                r.hints,
            )
        )
    nothing = _nothing_to_do(st)
    previous = repo.read_lock() if nothing else None
    if nothing:
        # A rebase with nothing to do keeps what the last real one recorded (issue 16.5).
        datas = [(r.name, repo.read_patch(r.name)) for r in done]
        records = list(records_for(datas, previous, [e.raw for e in repo.series.entries]))
    top_tree = g.commit_info(st.head)["tree"].decode()
    # `files` must list what `verify` will see the series touch: re-apply the series about
    # to be written onto the new base, in memory, exactly as `apply` and `verify` do.
    written = replace(repo, series=series, staged=new_bytes)
    again = apply_series(
        g, written, st.onto, written.series.active(st.guards), g.writer(dry_run=True), commits=False
    )
    files = dict(again.files)
    if again.failure is not None:
        onto_tree = g.commit_info(st.onto)["tree"].decode()
        files = g.changed_blobs(onto_tree, top_tree)
    lock = Lock(
        st.onto,
        top_tree,
        files,
        st.guards,
        tuple(records),
        (previous.last_rebase if previous is not None else None)
        if nothing
        else {"from": st.old_base, "onto": st.onto, "onto_ref": st.onto_ref},
    )
    stack = _stack_of(st, kept)
    writes = _written(ctx, new_bytes, gone, series)
    writes[LOCK] = lock.to_json()
    queue = repo.config.queue
    journal.run(
        g,
        repo.root,
        journal.Plan(
            "rebase",
            st.branch,
            st.head,
            stack,
            queue,
            files=writes,
            state={state_name(ctx): None}
            | (
                {}
                if nothing
                else {last_rebase_path(g.state_dir(), queue).name: rebasestate.last_bytes(last)}
            ),
            reason=f"onto {st.onto[:12]}",
        ),
    )
    release_rebase_objects(g, repo.config.queue)
    out = RebaseOutcome(
        st.done,
        True,
        None,
        dict(st.subjects),
        st.old_base,
        st.onto,
        nothing_to_do=nothing,
        untrusted=st.untrusted,
        patch_root=str(repo.root),
    )
    return _executed(ctx, out, st.exec_cmd, st.exec_each, announce)


def _refreshed(ctx: Context, st: RebaseState) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The new and the old bytes of each patch file the rebase changed (its placement
    changed, or a person resolved it), by patch name."""
    repo, g = ctx.repo(), ctx.git()
    changed = [
        (d.patch.name, d.tree_before, d.tree_after)
        for d in st.done
        if d.patch.outcome in ("refreshed", "merged", "resolved")
    ]
    new_bytes = refreshed_files(g, repo, changed)
    return new_bytes, {name: repo.read_patch(name) for name in new_bytes}


def _finish_reorder(ctx: Context, st: RebaseState, r: Reorder) -> RebaseOutcome:
    """Finish a stopped `sink`/`float`: write the reordered series, the refreshed patch
    files and the lock, and check out the stack — the patches of the new order that stay
    applied — in one journal transaction. It keeps the last rebase's record and the
    lock's outcomes, as a reorder that did not stop does."""
    repo, g = ctx.repo(), ctx.git()
    new_bytes, _ = _refreshed(ctx, st)
    gone = {d.patch.name: d.patch for d in st.done if d.patch.outcome in GONE}
    series = _retired(reordered(repo.series, r.name, r.verb == FLOAT), gone, st.onto)
    staying = set(st.entries[: r.applied])
    stack = _stack_of(
        st, [d.patch for d in st.done if d.patch.name in staying and d.patch.name not in gone]
    )
    writes = _written(ctx, new_bytes, gone, series, reorder=True)
    lock = reorder_lock(ctx, series, new_bytes)
    note = None
    if isinstance(lock, Failure):
        # The resolution is the person's, and is kept: the lock stays as it was, and
        # `verify` will say so (a stop this late must not leave the reorder stuck).
        note = not_updated(lock, st.onto)
    elif lock is not None:
        writes[LOCK] = lock
    crashpoint("rebase:finishing")
    journal.run(
        g,
        repo.root,
        journal.Plan(
            "rebase",
            st.branch,
            stack.head,
            stack,
            repo.config.queue,
            files=writes,
            state={state_name(ctx): None},
            reason=f"{r.verb} {r.name}",
        ),
    )
    release_rebase_objects(g, repo.config.queue)
    return RebaseOutcome(
        st.done,
        True,
        None,
        {},
        st.old_base,
        st.onto,
        reorder=(r.verb, r.name),
        top=stack.top,
        unapplied=r.name not in gone and r.name not in stack.applied,
        note=note,
    )


def _retired(series: Series, gone: dict[str, PatchOutcome], onto: str) -> Series:
    """`series` with the line of each patch that left it commented out (`_commented`)."""
    return Series(
        tuple(
            _commented(e.raw, gone[e.name].outcome, _taken_in(gone[e.name], onto))
            if e.name in gone
            else e
            for e in series.entries
        )
    )


def _stack_of(st: RebaseState, kept: list[PatchOutcome]) -> Stack:
    """The stack record of the rebased patches that stay applied."""
    return Stack(
        st.onto, st.branch, tuple(p.name for p in kept), tuple(_commit_of(p) for p in kept)
    )


def _written(
    ctx: Context,
    new_bytes: dict[str, bytes],
    gone: dict[str, PatchOutcome],
    series: Series,
    reorder: bool = False,
) -> dict[str, bytes | None]:
    """The patch-repo files a finished rebase writes, but the lock: the refreshed patch
    files, the files of the patches that left (removed or moved aside), and `series`."""
    repo = ctx.repo()
    writes: dict[str, bytes | None] = {f"{PATCHES}/{n}": b for n, b in new_bytes.items()}
    for p in gone.values():
        # A patch skipped in a reorder went nowhere upstream: its file is the only copy,
        # so it is moved aside (patches/.dropped/), whatever `retired` says.
        writes.update(repo.retire(p.name, p.outcome, keep=reorder))
    writes[SERIES] = series.format().encode("utf-8", "surrogateescape")
    return writes


def _nothing_to_do(st: RebaseState) -> bool:
    """Whether the rebase was onto the base it started from and changed no patch."""
    return st.old_base == st.onto and all(d.patch.outcome == "unchanged" for d in st.done)


def _executed(
    ctx: Context, out: RebaseOutcome, cmd: str, each: str, announce: execute.Announce | None
) -> RebaseOutcome:
    """The finished rebase with its --exec/--exec-each commands run and recorded."""
    if not (cmd or each):
        return out
    runs = execute.after_rebase(ctx, cmd, each, announce)
    return replace(out, exec_runs=runs, target=str(ctx.git().root))


def _commit_of(p: PatchOutcome) -> str:
    """The rebased commit of a patch that stays on the stack (every one has one)."""
    assert p.commit is not None, p.name
    return p.commit


def _commented(raw: str, outcome: str, commit: str) -> Entry:
    """The series line of a patch leaving the active series, kept as a comment."""
    return Entry(raw=f"# {outcome} in {commit[:12]}: {raw.rstrip()}\n")


def _taken_in(p: PatchOutcome, onto: str) -> str:
    """The commit a gone patch's series comment names: for an upstreamed patch, the
    upstream commit that took it — the one `check` names for it, the first upstream
    commit behind its hunks — else (dropped, or nothing to name) the rebase's onto."""
    if p.outcome == "upstreamed" and p.drift:
        return p.drift[0]
    return onto


def dry_run(
    ctx: Context, onto: str | None, fuzz: int | None, progress: Progress | None = None
) -> DryRunOutcome:
    """What `rebase --onto` would do to each patch, changing nothing: the replay `check`
    runs."""
    return DryRunOutcome(check(ctx, onto, fuzz, progress))
