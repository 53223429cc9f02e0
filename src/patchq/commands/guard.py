"""`guard`: show or set a patch's guards from the command line (Mercurial's `qguard`).

Guards live in `series` in MQ's spelling after the name (`name.patch #+sm120 #-rocm`),
which quilt reads as a comment: so setting them only rewrites that one line, the name,
strip level and any free comment kept. `guard NAME` shows them, `guard NAME +g -h` sets
exactly those, `guard NAME --none` removes them all.

The applied stack must stay the start of the active series: a change that would guard
out an applied patch, or bring in one below the top of the stack, is refused (exit 4,
nothing written) — pop first. `series.lock` follows the new series where it still
applies on its base (re-applied in memory, as `verify` will); the write is one journal
transaction, which `undo` rolls back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from patchq.core.errors import BadInputError
from patchq.core.series import Series, valid_guard, with_guards
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import Failure
from patchq.stack.context import Context
from patchq.stack.relock import not_updated, reapplied
from patchq.store.patchrepo import LOCK, SERIES
from patchq.store.stack import load
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class GuardOutcome:
    """The patch's guards before and after, whether it is active now, and why the lock
    was left as it was (None where it was brought up to date, or there is none)."""

    name: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    changed: bool
    active: bool
    lock_note: str | None = None


def guard(ctx: Context, name: str, guards: tuple[str, ...] | None) -> GuardOutcome:
    """Show `name`'s guards (`guards` None), or set them to exactly `guards` (() clears)."""
    repo = ctx.repo()
    entry = stack_ops.entry(repo, name)
    active_guards = repo.config.guards
    if guards is None:
        return GuardOutcome(name, entry.guards, entry.guards, False, entry.active(active_guards))
    for token in guards:
        if not valid_guard(token):
            raise BadInputError(
                f"malformed guard {token!r}",
                "command line",
                "a guard is `+name` (apply only when name is active) or `-name` (never then)",
            )
    wanted = tuple(dict.fromkeys(guards))
    fresh = with_guards(entry, wanted)
    if wanted == entry.guards:
        return GuardOutcome(name, entry.guards, wanted, False, fresh.active(active_guards))
    series = Series(tuple(fresh if e.name == name else e for e in repo.series.entries))
    g = ctx.git()
    with run_lock(g.state_dir(), repo.root):
        stack_ops.refuse_during_rebase(ctx)
        stack = load(g.state_dir(), repo.config.queue)
        applied = stack.applied if stack is not None else ()
        now = tuple(e.name for e in series.active(active_guards))
        if now[: len(applied)] != applied:
            what = (
                "is applied, and these guards leave it out"
                if name in applied
                else f"would come in below the top of the stack ({applied[-1]})"
            )
            raise BadInputError(
                f"{name} {what}", repo.display(name), "`patchq pop` below it first, then guard it"
            )
        files: dict[str, bytes | None] = {SERIES: stack_ops.series_bytes(series)}
        note = None
        lock = repo.read_lock()
        if lock is not None:
            new = reapplied(g, replace(repo, series=series), lock)
            if isinstance(new, Failure):
                note = not_updated(new, lock.base)
            else:
                files[LOCK] = new.to_json()
        journal.run(
            g,
            repo.root,
            journal.Plan(
                "guard",
                "",
                None,
                None,
                repo.config.queue,
                files=files,
                reason=f"{name} {' '.join(wanted) or '--none'}",
            ),
        )
    return GuardOutcome(name, entry.guards, wanted, True, fresh.active(active_guards), note)
