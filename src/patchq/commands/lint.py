"""`lint`: check the patch repo on its own, without a target (the checks are `ops.lint`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from patchq.ops import lint as checks
from patchq.ops.lint import Finding
from patchq.ops.session import Context
from patchq.store.patchrepo import PatchRepo


@dataclass(frozen=True, slots=True)
class LintOutcome:
    """Every finding, errors first within each file."""

    findings: tuple[Finding, ...]

    @property
    def exit_code(self) -> int:
        """0 clean, 1 warnings only, 4 errors."""
        return checks.exit_code(list(self.findings))


def lint(ctx: Context, cwd: Path) -> LintOutcome:
    """Lint the patch repo given (`--dir`), else the nearest one up from `cwd`. The repo
    is not opened as commands open it: a broken one is what lint is for."""
    root = ctx.dir if ctx.dir is not None else PatchRepo.find(cwd)
    return LintOutcome(tuple(checks.lint(root)))
