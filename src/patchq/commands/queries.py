"""The read-only views of the queue and its stack: `series -v`, `applied`, `unapplied`,
`top`, `status`, `diff`, `files` and `patches`. Nothing here changes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from patchq.core import tiers
from patchq.core.errors import BadInputError, PatchqError
from patchq.core.lock import sha256
from patchq.core.records import ExecRun, RebaseState, Stack
from patchq.core.series import Entry
from patchq.core.status import GONE
from patchq.rebase import execute
from patchq.rebase.outcome import proposal_evidence
from patchq.rebase.reorder import shifted_under
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import load_patch
from patchq.stack.context import Context
from patchq.stack.refresh import abbreviated, files_of, refreshed
from patchq.stack.targets import active_entries
from patchq.store import rebasestate
from patchq.store.stack import load
from patchq.store.statedir import ForeignJournalError, lock_holder, rebase_state_path


def series(ctx: Context) -> tuple[str, ...]:
    """The patches of the series, in order (guarded ones too)."""
    return tuple(e.name or "" for e in ctx.repo().series.patches)


@dataclass(frozen=True, slots=True)
class RebaseView:
    """A rebase stopped (or interrupted) half-way, as `status` and `series -v` tell it: the
    new base, the patches replayed so far with their outcomes, the one it stopped at
    (with the files that hold markers) and those still to come."""

    branch: str
    old_base: str
    onto: str
    onto_ref: str
    replayed: tuple[tuple[str, str], ...]  # (name, outcome), in series order
    stopped: str | None  # None: interrupted between patches (`--continue` goes on)
    files: tuple[str, ...]
    todo: tuple[str, ...]
    reorder: tuple[str, str] | None = None  # a stopped `sink`/`float`: (verb, patch)
    # The stopped patch's proposed hunks (DESIGN §4.1): (file, line, hunk index, method,
    # evidence) each.
    proposals: tuple[tuple[str, int, int, str, str], ...] = ()
    # "Fixed differently upstream" (DESIGN §4.1): the upstream commits that changed every
    # line the stopped patch changes, and whether its added lines are already there;
    # None where that is not so.
    rewritten: tuple[tuple[str, ...], bool] | None = None
    # A reorder's stop at a patch whose every changed line reads differently in the new
    # order: what moved under it, as the stop said (rebase/reorder.py `shifted_under`).
    shifted: str = ""

    @property
    def kept(self) -> tuple[str, ...]:
        """The replayed patches that are on the rebased stack (not upstreamed/dropped)."""
        return tuple(n for n, o in self.replayed if o not in GONE)


def rebase_view(st: RebaseState) -> RebaseView:
    """The view of a rebase state."""
    done = tuple((d.patch.name, d.patch.outcome) for d in st.done)
    seen = {n for n, _ in done} | ({st.current.name} if st.current else set())
    return RebaseView(
        st.branch,
        st.old_base,
        st.onto,
        st.onto_ref,
        done,
        st.current.name if st.current else None,
        st.current.files if st.current else (),
        tuple(n for n in st.entries if n not in seen),
        None if st.reorder is None else (st.reorder.verb, st.reorder.name),
        tuple(
            (*tiers.place(h), h.index, m, proposal_evidence(h, m, dict(st.subjects)))
            for h, m in tiers.proposals(st.current.hunks, st.accept)
        )
        if st.current
        else (),
        (st.current.drift, st.current.added_present)
        if st.current is not None and st.current.rewritten
        else None,
    )


def rebase_progress(ctx: Context) -> RebaseView | None:
    """The rebase of this queue in progress in the target, or None (also with no target)."""
    try:
        path = rebase_state_path(ctx.git().state_dir(), ctx.repo().config.queue)
    except BadInputError:
        return None
    try:
        st = rebasestate.read_state(path)
    except PatchqError:  # a damaged record: `status` still says a rebase is in progress
        return None
    if st is None:
        return None
    view = rebase_view(st)
    if st.reorder is not None and st.current is not None and st.current.rewritten:
        shifted = shifted_under(ctx.repo(), st.current, st.reorder.order, st.entries)
        view = replace(view, shifted=shifted)
    return view


# The marks of `series -v` (quilt's, and those of a rebase in progress) and their words in
# `series --json`.
MARK_STATES = {"=": "top", "+": "applied", " ": "unapplied", "#": "guarded"}
REBASE_STATES = {"+": "replayed", "-": "left", "!": "stopped", " ": "to-come", "#": "guarded"}


def series_marks(
    ctx: Context, guards: Sequence[str] | None = None
) -> tuple[tuple[str, Entry], ...]:
    """Each patch of the series with quilt's `series -v` mark: `=` the top, `+` applied,
    ` ` unapplied, and `#` guarded out (not applied by push or apply) under `guards`
    (default: the config's). During a rebase the marks tell the rebase, not the old
    stack: `+` replayed onto the new base, `-` replayed and left the series (upstreamed
    or dropped), `!` the patch it stopped at, ` ` still to come."""
    repo = ctx.repo()
    if not guards:
        guards = repo.config.guards
    view = rebase_progress(ctx)
    if view is not None:
        outcomes = dict(view.replayed)
        out = []
        for e in repo.series.patches:
            mark = "#" if not e.active(guards) else " "
            if e.name in outcomes:
                mark = "-" if outcomes[e.name] in GONE else "+"
            elif e.name == view.stopped:
                mark = "!"
            out.append((mark, e))
        return tuple(out)
    try:
        done = applied(ctx)
    except BadInputError:  # no target: a patch repo read on its own applies nothing
        done = ()
    out = []
    for e in repo.series.patches:
        mark = "#" if not e.active(guards) else " "
        if e.name in done:
            mark = "=" if e.name == done[-1] else "+"
        out.append((mark, e))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class SeriesView:
    """`series -v`: each patch with its mark, and the rebase in progress if one is."""

    marks: tuple[tuple[str, Entry], ...]
    rebase: RebaseView | None


def series_view(ctx: Context, guards: Sequence[str] | None = None) -> SeriesView:
    """The marked series and the rebase in progress (what `series -v` and `--json` show)."""
    return SeriesView(series_marks(ctx, guards), rebase_progress(ctx))


def applied(ctx: Context) -> tuple[str, ...]:
    """The applied patches, bottom first; during a rebase, those replayed onto the new
    base that stay on the stack (as `status` says)."""
    view = rebase_progress(ctx)
    if view is not None:
        return view.kept
    stack = load(ctx.git().state_dir(), ctx.repo().config.queue)
    return stack.applied if stack else ()


def unapplied(ctx: Context) -> tuple[str, ...]:
    """The active patches not applied yet, in series order; during a rebase, the one it
    stopped at and those still to come, in the order it replays them."""
    view = rebase_progress(ctx)
    if view is not None:
        return ((view.stopped,) if view.stopped else ()) + view.todo
    done = set(applied(ctx))
    _, entries = active_entries(ctx, None)
    return tuple(e.name or "" for e in entries if e.name not in done)


def top(ctx: Context) -> str:
    """The top applied patch (during a rebase, the last one replayed that stays on the
    stack); bad input if none."""
    if rebase_progress(ctx) is not None:
        kept = applied(ctx)
        if not kept:
            raise BadInputError("no patch is replayed yet", "series", "see `patchq status`")
        return kept[-1]
    return stack_ops.top(ctx)


def diff(ctx: Context, name: str | None) -> bytes:
    """The top patch as refresh would write it now, or a named patch as applied or filed."""
    repo, g = ctx.repo(), ctx.git()
    stack = load(g.state_dir(), repo.config.queue)
    if name is None:
        if stack is None or not stack.applied:
            raise BadInputError("no patch is applied", "series", "name a patch")
        parent = g.commit_info(stack.commit_below(len(stack.applied) - 1))["tree"].decode()
        w = g.writer()
        wt = stack_ops.worktree(ctx, g.commit_info(stack.head)["tree"].decode())
        w.flush()
        entry = stack_ops.entry(repo, stack.applied[-1])
        _, old = load_patch(repo, entry)
        diff = g.diff_trees(parent, wt, repo.config.context, full_index=True)
        try:
            new = refreshed(
                old,
                diff,
                repo.display(stack.applied[-1]),
                entry.strip_level(repo.config.strip),
                style=repo.config.style,
                old_file=files_of(g, parent),
            )
        except BadInputError:
            return abbreviated(diff)  # a strip level refresh cannot write: git's diff
        return b"".join(s.render() for s in new.sections)
    if stack is not None and name in stack.applied:
        k = stack.applied.index(name)
        a = g.commit_info(stack.commit_below(k))["tree"].decode()
        b = g.commit_info(stack.commits[k])["tree"].decode()
        return g.diff_trees(a, b, repo.config.context)
    entry = stack_ops.entry(repo, name)
    _, patch = load_patch(repo, entry)
    return b"".join(s.render() for s in patch.sections)


def files(ctx: Context, name: str | None) -> tuple[str, ...]:
    """The files the top (or named) patch touches."""
    repo = ctx.repo()
    _, patch = load_patch(repo, stack_ops.entry(repo, name or stack_ops.top(ctx)))
    return patch.paths


def patches_touching(ctx: Context, path: str) -> tuple[str, ...]:
    """The patches of the series that touch `path`."""
    repo = ctx.repo()
    out = []
    for e in repo.series.patches:
        _, patch = load_patch(repo, e)
        if path in patch.paths:
            out.append(e.name or "")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Status:
    """The stack at a glance: where it is, what is applied, and what is in progress."""

    branch: str | None
    base: str | None
    applied: tuple[str, ...]
    unapplied: tuple[str, ...]
    guards: tuple[str, ...]
    dirty: tuple[str, ...]
    on_branch: bool
    operation: str | None
    # The rebase in progress: then `base`, `applied` and `unapplied` are the rebase's (the
    # new base, the patches replayed onto it, the stopped one and those to come).
    rebase: RebaseView | None = None
    # The runs of the last `rebase --exec`/`--exec-each` that series.lock records.
    execs: tuple[ExecRun, ...] = ()
    # Hunks the lock records as placed by GNU patch's rules (fuzz, or past another
    # match): (patch, the placement record).
    placed: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    # Applied patches whose file changed since (a pull, an edit): (patch, differs from
    # series.lock's hash, differs from its applied commit), where either holds.
    changed: tuple[tuple[str, bool, bool], ...] = ()
    # Where a `push --merge` stopped with its patch's merge in the working tree: a
    # conflict, or proposals to review (DESIGN §4.1).
    stop: stack_ops.PushStop | None = None
    # Applied patches whose commit holds a placement `push --merge`'s ladder made (an
    # accepted proposal) that their file does not hold yet: what `refresh NAME` writes.
    unwritten: tuple[tuple[str, stack_ops.Placement], ...] = ()
    # A `push --continue` killed after it took the tree into the stopped patch, before
    # it pushed on to where the push was going.
    going_on: stack_ops.PushStop | None = None


def changed_files(ctx: Context, stack: Stack | None) -> tuple[tuple[str, bool, bool], ...]:
    """The applied patches whose file is no longer what series.lock records or what its
    commit holds: what `refresh` would refuse to write over, so a pull or an edit is never lost."""
    if stack is None or not stack.applied:
        return ()
    repo = ctx.repo()
    try:
        lock = repo.read_lock()
    except PatchqError:
        lock = None
    out = []
    for k, name in enumerate(stack.applied):
        try:
            data = repo.read_patch(name)
        except PatchqError:
            continue
        record = lock.record(name) if lock is not None else None
        vs_lock = record is not None and record.sha256 != sha256(data)
        # A file still as series.lock records it is the file its commit was made from:
        # only a file the lock does not vouch for is applied again to compare (a replay
        # of every applied patch made `status` take 30 s on a 1,000-patch stack).
        vs_commit = (record is None or vs_lock) and stack_ops.changed_file(ctx, stack, k)
        if vs_lock or vs_commit:
            out.append((name, vs_lock, vs_commit))
    return tuple(out)


def lock_placements(ctx: Context) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    """The hunk placements series.lock records, by patch (`PatchRecord.placed`)."""
    try:
        lock = ctx.repo().read_lock()
    except PatchqError:
        return ()
    return tuple((p.name, x) for p in lock.patches for x in p.placed) if lock else ()


def exec_runs(ctx: Context) -> tuple[ExecRun, ...]:
    """The `--exec` runs series.lock records: per patch (`--exec-each`), then the series."""
    try:
        lock = ctx.repo().read_lock()
    except PatchqError:  # a damaged lock is `lint`'s and `verify`'s to report
        return ()
    if lock is None:
        return ()
    runs = [
        ExecRun(str(p.exec["command"]), bool(p.exec["ok"]), int(p.exec["code"]), p.name)
        for p in lock.patches
        if p.exec is not None
    ]
    if lock.exec is not None:
        x = lock.exec
        runs.append(ExecRun(str(x["command"]), bool(x["ok"]), int(x["code"])))
    return tuple(runs)


def status(ctx: Context) -> Status:
    """The stack's branch, base, patches, guards, unrefreshed edits and operation."""
    repo, g = ctx.repo(), ctx.git()
    stack = load(g.state_dir(), repo.config.queue)
    view = rebase_progress(ctx)
    op = "rebase" if stack_ops.rebase_in_progress(ctx) else None
    try:
        interrupted = journal.pending(g, repo.root)
    except (ForeignJournalError, BadInputError) as e:
        # Named, not replayed: a journal this machine did not write (a clone's), or one
        # patchq does not open (a symlink, a FIFO).
        interrupted, op = None, f"unusable journal {e.line()}"
    if interrupted is not None:
        # The journal exists while a command changes the target: interrupted only when no
        # patchq holds the run lock any more (what `recover` goes by too).
        holder = lock_holder(g.state_dir())
        state = "interrupted" if holder is None else "running"
        op = f"{state} {interrupted.get('op', 'command')}"
    elif op is None and execute.pending_runs(ctx) is not None:
        # `--exec-each` runs under way: the stack is at the patch being built.
        holder = lock_holder(g.state_dir())
        op = f"{'interrupted' if holder is None else 'running'} rebase --exec-each"
    if view is not None:
        return Status(
            view.branch,
            view.onto,
            view.kept,
            ((view.stopped,) if view.stopped else ()) + view.todo,
            repo.config.guards,
            tuple(g.dirty_paths(ctx.own_paths())),
            g.current_branch() == view.branch,
            op,
            view,
            exec_runs(ctx),
            lock_placements(ctx),
        )
    return Status(
        stack.branch if stack else None,
        stack.base if stack else None,
        stack.applied if stack else (),
        unapplied(ctx),
        repo.config.guards,
        tuple(g.dirty_paths(ctx.own_paths())),
        stack is not None and g.current_branch() == stack.branch,
        op,
        None,
        exec_runs(ctx),
        lock_placements(ctx),
        changed_files(ctx, stack),
        stack_ops.pushed_stop(ctx, stack),
        stack_ops.unwritten(ctx, stack),
        stack_ops.continuing(ctx, stack) if op is None else None,
    )
