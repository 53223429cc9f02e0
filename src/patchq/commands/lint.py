"""`lint`: check the patch repo on its own, without a target (the checks are `ops.lint`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.ops import lint as checks
from patchq.ops.lint import Finding
from patchq.ops.session import Context
from patchq.store.patchrepo import LINT_ALLOW, PatchRepo


@dataclass(frozen=True, slots=True)
class LintOutcome:
    """Every finding, errors first within each file."""

    findings: tuple[Finding, ...]

    @property
    def exit_code(self) -> int:
        """0 clean, 1 warnings only, 4 errors."""
        return checks.exit_code(list(self.findings))


def lint(ctx: Context, cwd: Path, allow: Sequence[str] = ()) -> LintOutcome:
    """Lint the patch repo given (`--dir`), else the nearest one up from `cwd`, accepting
    the `allow` kinds (`LINT_ALLOW`, each value a comma-separated list) besides the
    config's. The repo is not opened as commands open it: a broken one is what lint is
    for."""
    kinds = [k.strip() for value in allow for k in value.split(",") if k.strip()]
    unknown = [a for a in kinds if a not in LINT_ALLOW]
    if unknown:
        raise BadInputError(
            f"lint --allow {unknown[0]}: no such kind",
            None,
            "one of " + ", ".join(LINT_ALLOW),
        )
    root = ctx.dir if ctx.dir is not None else PatchRepo.find(cwd)
    return LintOutcome(tuple(checks.lint(root, kinds)))
