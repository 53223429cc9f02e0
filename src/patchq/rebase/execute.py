"""`rebase --exec CMD` and `--exec-each CMD`: the person's build or test, run in the target
once the rebased series is written, and recorded.

A rebase that applies cleanly but does not build is not done, so the run is part of the
rebase: `--exec-each` checks out each rebased patch in turn (the stack at that patch, a
journal transaction like `goto`, so a kill leaves a stack `status` explains) and runs the
command with it applied; `--exec` runs once with the whole series applied. A run passes
when the command exits 0 and leaves the working tree as it found it (as `git rebase
--exec` requires); the first run that leaves changes stops the runs there, the stack at
that patch, so nothing is checked out over them. Every run is recorded in `series.lock`
(`exec` on the patch for `--exec-each`, at the top level for `--exec`) and in the last
rebase's record that `report` reads, in one last transaction.

The command is the person's only: the option, or `exec`/`exec-each` in patchq.toml as it
was when the rebase started *and trusted* (core/trust.py: the person marked that exact
text for that patch repo with `patchq trust`) — a patch repo's files are anyone's text, so
an untrusted configured command is not run, and the rebase says so (exit 1). Not even a
trusted one runs when a patch of the series changes the queue's own patchq.toml (a queue
inside its target), since a patch may not choose what runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from patchq.core.errors import BadInputError
from patchq.core.records import ExecRun, Stack
from patchq.core.series import Entry
from patchq.core.trust import Configured
from patchq.shell import command as shell
from patchq.stack import journal
from patchq.stack.apply import load_patch
from patchq.stack.context import Context
from patchq.store import rebasestate, trust
from patchq.store.files import atomic_write
from patchq.store.patchrepo import CONFIG, LOCK
from patchq.store.stack import load
from patchq.store.statedir import crashpoint, exec_progress_path, last_rebase_path

# Told before each run: the command, and the patch it runs with (None: the whole series).
Announce = Callable[[str, str | None], None]


def commands(
    ctx: Context,
    exec_cmd: str | None,
    exec_each: str | None,
    no_exec: bool,
    entries: Sequence[Entry],
) -> tuple[str, str, tuple[Configured, ...]]:
    """The commands a rebase will run ("": none) — the options, else patchq.toml's trusted
    ones (none with `no_exec`) — and the configured ones it will not run (untrusted)."""
    repo = ctx.repo()
    given = {"exec": exec_cmd, "exec-each": exec_each}
    named = () if no_exec else trust.configured(repo.root, repo.config, trust.read())
    taken = {c.key: c.command for c in named if given[c.key] is None and c.trusted}
    untrusted = tuple(c for c in named if given[c.key] is None and not c.trusted)
    cmd = exec_cmd if exec_cmd is not None else taken.get("exec", "")
    each = exec_each if exec_each is not None else taken.get("exec-each", "")
    own = [p for p in ctx.own_paths() if p.endswith(CONFIG)]
    if taken and own:
        for e in entries:
            if own[0] in load_patch(repo, e)[1].paths:
                raise BadInputError(
                    f"{e.name} changes {own[0]}, which names the command to run after the "
                    "rebase: patchq runs no command a patch can choose",
                    repo.display(e.name or ""),
                    "give it with --exec/--exec-each, or --no-exec",
                )
    return cmd, each, untrusted


def _changes(ctx: Context) -> str:
    """What a run left changed in the working tree, as a note ("" when nothing)."""
    dirty = ctx.git().dirty_paths(ctx.own_paths())
    if not dirty:
        return ""
    more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
    return f"left changes in {dirty[0]}{more}"


def _run(ctx: Context, cmd: str, patch: str | None, announce: Announce | None) -> ExecRun:
    if announce is not None:
        announce(cmd, patch)
    code = shell.run(cmd, ctx.git().root, {"PATCHQ_PATCH": patch} if patch else {})
    note = _changes(ctx)
    return ExecRun(cmd, code == 0 and not note, code, patch, note)


def _move(ctx: Context, stack: Stack, k: int, why: str) -> None:
    """Check out the stack with its first `k` patches applied (a journal transaction)."""
    repo, g = ctx.repo(), ctx.git()
    at = stack.truncated(k)
    journal.run(
        g,
        repo.root,
        journal.Plan("rebase --exec-each", at.branch, at.head, at, repo.config.queue, reason=why),
    )


def after_rebase(
    ctx: Context,
    cmd: str,
    each: str,
    announce: Announce | None = None,
    resumed: rebasestate.ExecProgress | None = None,
) -> tuple[ExecRun, ...]:
    """Run `each` with every rebased patch applied in turn, then `cmd` with all of them;
    record the runs in series.lock and the last rebase's record. While the `each` runs
    go on, a record of them (`exec_progress_path`) says so: a kill during a run leaves it
    for `status`, `recover` and `rebase --continue` (`resumed`: that record, the runs
    finished before the kill kept, the killed one made again)."""
    repo, g = ctx.repo(), ctx.git()
    queue = repo.config.queue
    stack = resumed.stack if resumed is not None else load(g.state_dir(), queue)
    if stack is None:
        return ()
    runs: list[ExecRun] = list(resumed.runs) if resumed is not None else []
    done = {x.patch for x in runs}
    n = len(stack.applied)
    stuck = False  # a run left changes: the stack stays where it is
    progress = exec_progress_path(g.state_dir(), queue)
    try:
        for k, name in enumerate(stack.applied if each else ()):
            if name in done:
                continue
            atomic_write(
                progress,
                rebasestate.exec_progress_bytes(
                    rebasestate.ExecProgress(cmd, each, stack, tuple(runs), name)
                ),
            )
            if g.head() != stack.commits[k]:
                _move(ctx, stack, k + 1, name)
            crashpoint("exec:each")
            runs.append(_run(ctx, each, name, announce))
            if runs[-1].note:
                stuck = True
                break
        if each and not stuck and g.head() != stack.head:
            _move(ctx, stack, n, "back to the top")  # resumed after the last run
        if cmd and not stuck:
            runs.append(_run(ctx, cmd, None, announce))
    except KeyboardInterrupt:
        # Ctrl-C during a run: the rebase is done and written; give back its whole stack.
        if each and not stuck and not _changes(ctx) and g.head() != stack.head:
            _move(ctx, stack, n, "back to the top")
        if g.head() == stack.head:
            progress.unlink(missing_ok=True)
        raise
    _record(ctx, runs)
    return tuple(runs)


def pending_runs(ctx: Context) -> rebasestate.ExecProgress | None:
    """The `--exec-each` runs a killed patchq left under way, if any."""
    g = ctx.git()
    return rebasestate.read_exec_progress(
        exec_progress_path(g.state_dir(), ctx.repo().config.queue)
    )


def given_up(left: rebasestate.ExecProgress) -> str:
    """What giving up killed `--exec-each` runs did, for the person."""
    total = len(left.stack.applied)
    killed = f", the one with {left.patch} was killed" if left.patch else ""
    return (
        f"checked the whole stack out again; {len(left.runs)} of {total} --exec-each runs "
        f"had finished{killed}; the rest were not made"
    )


def give_up_runs(ctx: Context, left: rebasestate.ExecProgress) -> None:
    """After a kill during an `--exec-each` run: check the whole stack out again and
    record the runs that finished (the killed one and those after it are not made)."""
    g = ctx.git()
    if g.head() != left.stack.head:
        _move(ctx, left.stack, len(left.stack.applied), "back to the top")
    _record(ctx, list(left.runs))


def run_doc(x: ExecRun) -> dict[str, object]:
    """A run as series.lock records it."""
    return {"command": x.command, "ok": x.ok, "code": x.code}


def _record(ctx: Context, runs: Sequence[ExecRun]) -> None:
    """Write the runs into series.lock and the last rebase's record: one transaction."""
    repo, g = ctx.repo(), ctx.git()
    lock = repo.read_lock()
    files: dict[str, bytes | None] = {}
    if lock is not None:
        by_patch = {x.patch: run_doc(x) for x in runs if x.patch is not None}
        whole = next((run_doc(x) for x in runs if x.patch is None), None)
        lock = replace(
            lock,
            exec=whole,
            patches=tuple(replace(p, exec=by_patch.get(p.name)) for p in lock.patches),
        )
        files[LOCK] = lock.to_json()
    state: dict[str, bytes | None] = {}
    progress = exec_progress_path(g.state_dir(), repo.config.queue)
    if progress.exists():
        state[progress.name] = None  # the runs are over: recorded below
    path = last_rebase_path(g.state_dir(), repo.config.queue)
    last = rebasestate.read_last(path)
    if last is not None:
        state[path.name] = rebasestate.last_bytes(replace(last, exec_runs=tuple(runs)))
    journal.run(
        g,
        repo.root,
        journal.Plan(
            "rebase --exec",
            "",
            None,
            None,
            repo.config.queue,
            files=files,
            state=state,
            reason=f"{len(runs)} runs",
        ),
    )
