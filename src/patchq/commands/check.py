"""`check`: the drift report — how each patch and hunk fares on a new upstream, and why.

Nothing is written; the report itself is `rebase.check`, which `rebase --dry-run` shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Checks:
    """The reports of one `check` against several upstream refs, in the order given."""

    reports: tuple[CheckOutcome, ...]

    @property
    def exit_code(self) -> int:
        """The worst ref's: 3 before 1 before 0."""
        codes = {r.exit_code for r in self.reports}
        return 3 if 3 in codes else max(codes, default=0)


def check_refs(
    ctx: Context,
    refs: Sequence[str | None],
    fuzz: int | None = None,
    progress: Progress | None = None,
    accept: tuple[str, ...] = (),
) -> Checks:
    """`check` against each of `refs` (None: the configured upstream) in one run: one
    target, one object reader, its caches shared by every ref."""
    return Checks(tuple(report.check(ctx, ref, fuzz, progress, accept) for ref in refs))
