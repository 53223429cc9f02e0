"""Where a rebase run ended — finished, or stopped at a conflict with its state saved —
and every decision about how it ends: the error to report, the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass

from patchq.core.errors import ConflictError, ExecFailedError
from patchq.core.records import DonePatch, ExecRun
from patchq.core.status import CONFLICT, MISSING
from patchq.core.words import plural
from patchq.rebase.reorder import stop_error
from patchq.rebase.replay import PatchCheck, stop_notes

# The marker lines of a diff3-style conflict (ours, base, theirs); each carries a label.


@dataclass(frozen=True, slots=True)
class RebaseOutcome:
    """Where a rebase run ended: finished, or stopped at a conflict (state saved)."""

    records: tuple[DonePatch, ...]
    finished: bool
    conflict: PatchCheck | None = None
    subjects: dict[str, str] | None = None
    base: str = ""
    onto: str = ""
    where: str = ""  # the conflicting patch's file, as errors name it
    aborted: bool = False  # --continue found an interrupted --abort and finished it
    # Already on onto and every patch applied unchanged: the last real rebase's review
    # (its record and the lock's outcomes) was kept.
    nothing_to_do: bool = False
    exec_runs: tuple[ExecRun, ...] = ()  # the --exec/--exec-each runs after it finished
    target: str = ""  # where they ran, as errors name it
    removed_lock: str | None = None  # the stale index.lock of patchq's git, removed
    # A stopped `sink`/`float` going on as a rebase: (verb, the patch moved); and, once it
    # is done, the top of the stack.
    reorder: tuple[str, str] | None = None
    top: str | None = None
    unapplied: bool = False  # a float done: the moved patch, last now, is not applied
    note: str | None = None  # a reorder done: why series.lock was left as it was

    @property
    def exec_failed(self) -> ExecRun | None:
        """The first run of the --exec command that failed, if one did."""
        return next((x for x in self.exec_runs if not x.ok), None)

    @property
    def problem(self) -> ConflictError | ExecFailedError | None:
        """The stop at a conflict, as the error to report: the patch, its conflicting
        files and the upstream commits behind them; or the --exec command failing on the
        finished rebase; None when the rebase is done."""
        c = self.conflict
        bad_run = self.exec_failed
        if c is None and bad_run is not None:
            with_what = f"with {bad_run.patch} applied" if bad_run.patch else "on the series"
            why = bad_run.note or f"exit {bad_run.code}"
            failed = sum(1 for x in self.exec_runs if not x.ok)
            return ExecFailedError(
                f"`{bad_run.command}` failed {with_what} ({why})"
                + (f", {plural(failed - 1, 'more run')} failed" if failed > 1 else ""),
                self.target or None,
                "the rebased series is written; fix it (`patchq refresh`), "
                "see `patchq status` and `patchq report`",
            )
        if c is None:
            return None
        if self.reorder is not None:
            return stop_error(*self.reorder, c, self.where)
        bad = [h for h in c.hunks if h.status in (CONFLICT, MISSING)]
        files = sorted({h.file for h in bad})
        drift = list(dict.fromkeys(x for h in bad for x in h.drift))
        subjects = self.subjects or {}
        why = "; ".join(f"{x[:12]} {subjects.get(x, '')}".strip() for x in drift[:3])
        return ConflictError(
            f"{c.name} does not apply to {self.onto[:12]}: conflict in {', '.join(files)}"
            + (f" (upstream: {why})" if why else "")
            + "".join(f"; {x}" for x in stop_notes(c, subjects)),
            self.where,
            "edit the files to resolve, then `patchq rebase --continue` (or --skip, --abort)",
        )

    @property
    def exit_code(self) -> int:
        """0 when the run finished; 3 when it stopped at a conflict; 1 when the --exec
        command failed on the finished rebase."""
        problem = self.problem
        return 0 if problem is None else problem.exit_code
