"""`rebase`: carry the series onto a new upstream, refresh it, and record what happened.

The verb's entry points, one per mode (`--onto`, `--dry-run`, `--continue`, `--skip`,
`--abort`); the rebase itself lives in `rebase/`: its state machine in
`rebase/machine.py`, its last step in `rebase/finish.py`, the dry run in
`rebase/check.py`, and every decision about how a run ends in `rebase/outcome.py`.
"""

from __future__ import annotations

from patchq.core.progress import Progress
from patchq.rebase import check, machine
from patchq.rebase.check import DryRunOutcome
from patchq.rebase.execute import Announce
from patchq.rebase.outcome import AbortOutcome, RebaseOutcome
from patchq.stack.context import Context

__all__ = ["DryRunOutcome", "RebaseOutcome", "abort", "continue_", "dry_run", "skip", "start"]


def start(
    ctx: Context,
    onto: str,
    fuzz: int | None,
    progress: Progress | None = None,
    *,
    execs: tuple[str | None, str | None, bool] = (None, None, False),
    announce: Announce | None = None,
    accept: tuple[str, ...] = (),
) -> RebaseOutcome:
    """Rebase onto `onto`; `execs` is (--exec, --exec-each, --no-exec); `accept` the
    proposed methods to take without a stop (core.tiers)."""
    return machine.start(ctx, onto, fuzz, progress, execs=execs, announce=announce, accept=accept)


def dry_run(
    ctx: Context,
    onto: str | None,
    fuzz: int | None,
    progress: Progress | None = None,
    accept: tuple[str, ...] = (),
) -> DryRunOutcome:
    """What `rebase --onto` would do to each patch, changing nothing."""
    return check.dry_run(ctx, onto, fuzz, progress, accept)


def continue_(
    ctx: Context, progress: Progress | None = None, announce: Announce | None = None
) -> RebaseOutcome:
    """Take the person's resolution of the stopped patch and go on."""
    return machine.continue_(ctx, progress, announce)


def skip(
    ctx: Context, progress: Progress | None = None, announce: Announce | None = None
) -> RebaseOutcome:
    """Drop the stopped patch from the series and go on."""
    return machine.skip(ctx, progress, announce)


def abort(ctx: Context) -> AbortOutcome:
    """Put everything back as it was before the rebase started."""
    return machine.abort(ctx)
