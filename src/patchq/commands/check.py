"""`check`: the drift report — how each patch and hunk fares on a new upstream, and why.

Nothing is written; the report itself is `rebase.check`, which `rebase --dry-run` shares.
"""

from __future__ import annotations

from patchq.core.progress import Progress
from patchq.rebase import check as report
from patchq.rebase.check import CheckOutcome
from patchq.stack.context import Context


def check(
    ctx: Context,
    onto: str | None,
    fuzz: int | None = None,
    progress: Progress | None = None,
    accept: tuple[str, ...] = (),
) -> CheckOutcome:
    """Replay the series onto `onto` (or the configured upstream) in memory and report;
    `accept` names the proposed methods counted as accepted (core.tiers)."""
    return report.check(ctx, onto, fuzz, progress, accept)
