"""Where a rebase run ended — finished, or stopped at a conflict with its state saved —
and every decision about how it ends: the error to report, the exit code.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from patchq.core import tiers
from patchq.core.errors import AcceptedError, ConflictError, ExecFailedError, UntrustedError
from patchq.core.records import DonePatch, ExecRun, HunkOutcome
from patchq.core.status import CONFLICT, MISSING
from patchq.core.trust import Configured
from patchq.core.words import plural
from patchq.rebase.reorder import accepted_error, stop_error
from patchq.rebase.replay import PatchCheck, stop_notes
from patchq.store.patchrepo import CONFIG

# The marker lines of a diff3-style conflict (ours, base, theirs); each carries a label.


@dataclass(frozen=True, slots=True)
class AbortOutcome:
    """What `rebase --abort` (or a `--continue` finding a killed abort) did, in words
    that say what it finished, not that it aborted a rebase anew."""

    removed_lock: str | None = None  # the stale index.lock of patchq's git, removed
    finished: str = ""  # the killed abort it finished ("rebase --abort"), if that was all
    undid: str = ""  # a killed rebase step it undid before aborting the rebase
    held: str = ""  # a result held back (the target changed meanwhile) that it dropped
    runs: str = ""  # killed `--exec-each` runs given up: what was done


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
    aborted_op: str = ""  # that interrupted command (`rebase --abort`, `undo …`)
    # Already on onto and every patch applied unchanged: the last real rebase's review
    # (its record and the lock's outcomes) was kept.
    nothing_to_do: bool = False
    exec_runs: tuple[ExecRun, ...] = ()  # the --exec/--exec-each runs after it finished
    target: str = ""  # where they ran, as errors name it
    removed_lock: str | None = None  # the stale index.lock of patchq's git, removed
    saved: str | None = None  # the stash of work found while finishing an interrupted step
    # A stopped `sink`/`float` going on as a rebase: (verb, the patch moved); and, once it
    # is done, the top of the stack.
    reorder: tuple[str, str] | None = None
    top: str | None = None
    unapplied: bool = False  # a float done: the moved patch, last now, is not applied
    note: str | None = None  # a reorder done: why series.lock was left as it was
    # The commands patchq.toml names that were not run (not trusted), and the patch repo.
    untrusted: tuple[Configured, ...] = ()
    patch_root: str = ""
    # The proposed methods taken without a stop (core.tiers): what a stop still names.
    accept: tuple[str, ...] = ()
    # A stopped reorder: what moved under the stopped patch (reorder.shifted_under).
    shifted: str = ""
    # The patch-repo files a finished rebase wrote or removed, relative to the patch repo
    # with links followed (`patches -> debian/patches`): what a bot stages, exactly.
    written: tuple[str, ...] = ()
    # The ref rebased onto, when it is behind the base it left (an older tag), and by
    # how many commits: said, and gone on with.
    behind: tuple[str, int] | None = None

    @property
    def exec_failed(self) -> ExecRun | None:
        """The first run of the --exec command that failed, if one did."""
        return next((x for x in self.exec_runs if not x.ok), None)

    @property
    def problem(
        self,
    ) -> ConflictError | ExecFailedError | UntrustedError | AcceptedError | None:
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
        if c is None and self.untrusted:
            return untrusted_error(self.untrusted, self.patch_root)
        if c is None:
            return accepted_error(self.records)
        if self.reorder is not None:
            return stop_error(*self.reorder, c, self.where, self.accept, shifted=self.shifted)
        # A hunk upstream holds inside a patch it does not hold whole is a proposal (its
        # status says conflict, but nothing is marked): named as one, not as a conflict.
        bad = [
            h for h in c.hunks if h.status in (CONFLICT, MISSING) and not tiers.proposal(h, c.hunks)
        ]
        proposed = [(h, m) for h, m in tiers.proposals(c.hunks, self.accept) if h not in bad]
        subjects = self.subjects or {}
        fixed = [rewritten_note(c, subjects)] if c.rewritten else []
        lines = [proposal_line(h, m, subjects) for h, m in proposed]
        if not bad:
            said = (
                [
                    plural(len(proposed), "proposed hunk")
                    + " applied in the working tree (no markers): "
                    + "; ".join(lines)
                ]
                if proposed
                else ["its merge is applied in the working tree (no markers)"]
            )
            return ConflictError(
                f"{c.name} stops for review: " + "; ".join(said + fixed),
                self.where,
                "check the files (edit them if need be), then `patchq rebase --continue`; "
                # (a patch fixed differently upstream: its note above names --skip already)
                + ("or --abort" if fixed else "or --skip (drops the patch), --abort")
                + accept_hint([m for _, m in proposed], c.rewritten),
            )
        files = sorted({h.file for h in bad})
        drift = list(dict.fromkeys(x for h in bad for x in h.drift))
        why = "; ".join(f"{x[:12]} {subjects.get(x, '')}".strip() for x in drift[:3])
        # A proposed hunk's own note ("already upstream, but …") is its proposal line.
        said_as_proposal = {f"{h.file} hunk #{h.index + 1}: {h.reason}" for h, _ in proposed}
        return ConflictError(
            f"{c.name} does not apply to {self.onto[:12]}: conflict in {', '.join(files)}"
            + (f" (upstream: {why})" if why else "")
            + "".join(f"; {x}" for x in stop_notes(c, subjects) if x not in said_as_proposal)
            + "".join(f"; proposed: {x}" for x in lines)
            + "".join(f"; {x}" for x in fixed),
            self.where,
            "edit the files to resolve, then `patchq rebase --continue` "
            + ("(or --abort)" if fixed else "(or --skip, --abort)"),
        )

    @property
    def exit_code(self) -> int:
        """0 when the run finished; 3 when it stopped at a conflict or a proposal; 1 when
        the --exec command failed on the finished rebase, a configured one was not run
        (not trusted), or it took proposals the person accepted."""
        problem = self.problem
        return 0 if problem is None else problem.exit_code


def proposal_line(h: HunkOutcome, method: str, subjects: dict[str, str] | None = None) -> str:
    """One proposed hunk for a person: where, by what, and why (core.tiers), with the
    upstream commits that changed its lines where `subjects` names them."""
    file, line = tiers.place(h)
    where = f"{file}:{line}" if line else file
    why = proposal_evidence(h, method, subjects)
    return f"{where} (hunk #{h.index + 1}) by {method}" + (f" ({why})" if why else "")


def proposal_evidence(h: HunkOutcome, method: str, subjects: Mapping[str, str] | None) -> str:
    """A proposed hunk's evidence (core.tiers) and the upstream commits that changed its
    lines where `subjects` names them: what the stop and `status` say of it alike."""
    why = tiers.evidence(h, method)
    if subjects is not None and h.drift:
        who = ", ".join(f"{x[:12]} {subjects.get(x, '')}".strip() for x in h.drift[:3])
        more = f" and {len(h.drift) - 3} more" if len(h.drift) > 3 else ""
        why = f"{why}; upstream: {who}{more}" if why else f"upstream: {who}{more}"
    return why


def accept_hint(methods: list[str], rewritten: bool) -> str:
    """How to take such a stop without stopping next time ("; …"), or "" where none does."""
    names = list(dict.fromkeys(methods))
    if not names:
        return "; `--accept rewritten` takes such a patch without a stop" if rewritten else ""
    return f"; `--accept {','.join(names)}` takes such proposals without a stop"


def rewritten_note(c: PatchCheck, subjects: dict[str, str]) -> str:
    """ "Fixed differently upstream" (DESIGN §4.1): what to say of a patch whose changed
    lines upstream changed in every hunk — the upstream commits, and how to drop it."""
    who = ", ".join(f"{x[:12]} {subjects.get(x, '')}".strip() for x in c.drift[:3])
    more = f" and {len(c.drift) - 3} more" if len(c.drift) > 3 else ""
    present = (
        "; its added lines (or near-identical ones) are already there near the spot"
        if c.added_present
        else ""
    )
    return (
        "upstream changed the lines it changes in every hunk"
        + (f" ({who}{more})" if who else "")
        + f": it may be fixed differently upstream{present} — `patchq rebase --skip` drops it"
    )


def untrusted_error(untrusted: tuple[Configured, ...], patch_root: str) -> UntrustedError:
    """What a finished rebase did not run, and the one command that allows it."""
    what = ", ".join(f"`{c.command}` ({c.key} in {CONFIG})" for c in untrusted)
    return UntrustedError(
        f"did not run {what}: a patch repo's command runs only once you trust it; "
        "the rebased series is written",
        str(Path(patch_root) / CONFIG) if patch_root else CONFIG,
        f"`{trust_command(patch_root)}` allows it",
    )


def trust_command(patch_root: str) -> str:
    """`patchq trust`, with `--dir` when the current folder is not in the patch repo."""
    here = Path.cwd().resolve()
    root = Path(patch_root)
    if not patch_root or here == root or root in here.parents:
        return "patchq trust"
    return f"patchq --dir {shlex.quote(patch_root)} trust"
