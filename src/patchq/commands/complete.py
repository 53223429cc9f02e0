"""What shell completion offers: patch names read from the files alone, refs from git.

A TAB must answer at once, so patch names come from `series`, `patchq.toml` and the
stack record in the target's `.git/patchq/` (found without a process): no git runs, and
nothing that needs it is loaded. Only `--onto`'s refs ask git.
"""

from __future__ import annotations

from patchq.core.errors import PatchqError
from patchq.git.gitdir import state_dir
from patchq.stack.context import Context
from patchq.store.stack import load
from patchq.store.statedir import rebase_state_path

# What each kind of argument completes to.
SERIES, APPLIED, UNAPPLIED, REFS = "series", "applied", "unapplied", "refs"
GUARDS = "guards"  # `guard`'s words: +g and -g for every guard the series or config names


def words(ctx: Context, kind: str) -> tuple[str, ...]:
    """The words a shell may complete an argument of `kind` to: the series' patch names,
    the applied or the unapplied ones, the guards (`+g`, `-g`), or the target's refs.
    Where the target cannot be read, the whole series stands in for applied/unapplied,
    and refs complete to nothing."""
    if kind == REFS:
        return ("HEAD", *ctx.git().ref_names())
    repo = ctx.repo()
    if kind == GUARDS:
        known = [g[1:] for e in repo.series.patches for g in e.guards]
        known += list(repo.config.guards)
        return tuple(f"{sign}{g}" for g in dict.fromkeys(known) for sign in "+-")
    names = tuple(e.name or "" for e in repo.series.patches)
    if kind == SERIES:
        return names
    try:
        applied, todo = _stack(ctx)
    except (PatchqError, OSError):
        return names
    if kind == APPLIED:
        return applied
    if todo is not None:
        return todo
    done = set(applied)
    active = repo.series.active(repo.config.guards)
    return tuple(e.name or "" for e in active if e.name not in done)


def _stack(ctx: Context) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The applied patches, and (during a rebase) those still to push; as `applied` and
    `unapplied` say them, from the state files alone."""
    state, queue = state_dir(ctx.target_path()), ctx.repo().config.queue
    path = rebase_state_path(state, queue)
    if path.exists():
        # A rebase in progress (rare): its record says what is replayed and what is not,
        # as `queries.rebase_view` reads it.
        from patchq.store.rebasestate import read_state

        st = read_state(path)
        if st is not None:
            gone = ("upstreamed", "dropped")
            kept = tuple(d.patch.name for d in st.done if d.patch.outcome not in gone)
            seen = {d.patch.name for d in st.done}
            stopped = (st.current.name,) if st.current else ()
            todo = tuple(n for n in st.entries if n not in seen and n not in stopped)
            return kept, stopped + todo
    stack = load(state, queue)
    return (stack.applied if stack else ()), None
