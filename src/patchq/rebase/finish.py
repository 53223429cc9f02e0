"""A rebase's last step: each refreshed patch rendered, the lock computed in memory, and
one journal transaction writing the patches, `series`, `series.lock`, the stack record and
the record `report` reads, removing the rebase state and checking out the stack branch.
A stopped `sink`/`float` finishes here too, in its new order (`finish_reorder`).
"""

from __future__ import annotations

from dataclasses import replace

from patchq.core import tiers
from patchq.core.lock import Lock, PatchRecord, records_for, sha256
from patchq.core.records import LastRebase, PatchOutcome, RebaseState, Reorder, Stack
from patchq.core.series import Entry, Series
from patchq.core.status import GONE, Outcome
from patchq.rebase import execute
from patchq.rebase.keep import release_rebase_objects
from patchq.rebase.outcome import RebaseOutcome
from patchq.rebase.reorder import place_of, reorder_lock, reordered
from patchq.rebase.stop import (
    state_name,
)
from patchq.stack import journal
from patchq.stack.apply import Failure, apply_series
from patchq.stack.context import Context
from patchq.stack.refresh import refreshed_files
from patchq.stack.relock import not_updated
from patchq.store import rebasestate
from patchq.store.files import real_names
from patchq.store.patchrepo import LOCK, PATCHES, SERIES
from patchq.store.statedir import (
    crashpoint,
    last_rebase_path,
)

# The marker lines of a diff3-style conflict (ours, base, theirs); each carries a label.


def finish(
    ctx: Context,
    st: RebaseState,
    announce: execute.Announce | None = None,
    expect: journal.Expect | None = None,
) -> RebaseOutcome:
    """Write the refreshed patches, series, lock, stack and the last rebase's record and
    check out the new stack: one journal transaction (held back if the target changed
    since `expect`)."""
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
        methods = tiers.recorded(r.hunks)
        records.append(
            PatchRecord(
                r.name,
                sha256(data),
                r.outcome,
                r.drift,
                methods,
                dict(r.evidence) if r.evidence is not None else None,
                r.hints,
                accepted=r.accepted,
            )
        )
    nothing = _nothing_to_do(st)
    previous = repo.read_lock() if nothing else None
    if nothing:
        # A rebase with nothing to do keeps what the last real one recorded, so `report`
        # still shows that review.
        datas = [(r.name, repo.read_patch(r.name)) for r in done]
        records = list(records_for(datas, previous, [e.raw for e in repo.series.entries]))
    top_tree = g.commit_info(st.head)["tree"].decode()
    # `files` must list what `verify` will see the series touch: re-apply the series about
    # to be written onto the new base, in memory, exactly as `apply` and `verify` do.
    written = replace(repo, series=series, staged=new_bytes)
    with g.dry_run():
        again = apply_series(g, written, st.onto, written.series.active(st.guards), commits=False)
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
            expect=expect,
            # Started and finished by this run, no stop between: its before is what the
            # person had, so `undo` may put it back.
            undoable=expect is not None,
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
        written=real_names(repo.root, writes),
    )
    return executed(ctx, out, st.exec_cmd, st.exec_each, announce)


def _refreshed(ctx: Context, st: RebaseState) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The new and the old bytes of each patch file the rebase changed (its placement
    changed, or a person resolved it), by patch name."""
    repo, g = ctx.repo(), ctx.git()
    changed = [
        (d.patch.name, d.tree_before, d.tree_after)
        for d in st.done
        if d.patch.outcome in (Outcome.REFRESHED, Outcome.MERGED, Outcome.RESOLVED)
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
    place = place_of(r.verb, r.anchor, r.after)
    series = _retired(reordered(repo.series, r.name, place), gone, st.onto)
    staying = set(st.entries[: r.applied])
    stack = _stack_of(
        st, [d.patch for d in st.done if d.patch.name in staying and d.patch.name not in gone]
    )
    writes = _written(ctx, new_bytes, gone, series, reorder=True)
    lock = reorder_lock(ctx, series, new_bytes, [d.patch for d in st.done])
    note = None
    if isinstance(lock, Failure):
        # The resolution is the person's, and is kept: the lock stays as it was, and
        # `verify` will say so (a stop this late must not leave the reorder stuck).
        pinned = repo.read_lock()
        note = not_updated(lock, pinned.base if pinned is not None else st.onto, st.onto)
    elif lock is not None:
        writes[LOCK] = lock
    crashpoint("rebase:finishing")
    # Nothing applied before the reorder and nothing after: the stack branch was only
    # where its conflict was shown, and the person goes back to the branch they were on.
    home = st.orig_branch if not stack.applied and not _applied_before(st) else None
    home = home if home and home != st.branch else None
    journal.run(
        g,
        repo.root,
        journal.Plan(
            "rebase",
            home or st.branch,
            g.resolve(f"refs/heads/{home}") if home else stack.head,
            stack,
            repo.config.queue,
            files=writes,
            state={state_name(ctx): None},
            reason=f"{r.verb} {r.name}",
            kind=journal.Kind.REORDER_FINISHED,
            reorder=(r.verb, r.name),
        ),
    )
    if home:
        # The stack branch back where it stood before the reorder (its base, empty).
        g.update_ref(
            f"refs/heads/{st.branch}", st.branch_before or stack.head, None, "patchq: sink"
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
        unapplied=r.name not in gone
        and r.name not in stack.applied
        and r.name in (st.stack_before.applied if st.stack_before else ()),
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


def _applied_before(st: RebaseState) -> bool:
    """Whether any patch was applied when the rebase (or reorder) began."""
    return st.stack_before is not None and bool(st.stack_before.applied)


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
        writes.update(repo.retire(p.name, p.outcome, keep=reorder, taken=writes))
    writes[SERIES] = series.format().encode("utf-8", "surrogateescape")
    return writes


def _nothing_to_do(st: RebaseState) -> bool:
    """Whether the rebase was onto the base it started from and changed no patch."""
    return st.old_base == st.onto and all(d.patch.outcome == Outcome.UNCHANGED for d in st.done)


def executed(
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
    if p.outcome == Outcome.UPSTREAMED and p.drift:
        return p.drift[0]
    return onto
