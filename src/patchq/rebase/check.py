"""The drift report: how each patch and hunk fares on a new upstream, and why.

Nothing is written: the series is replayed onto REF in memory (each patch on the tree
the earlier ones produced), and the upstream commits behind every drifted hunk are
named. `check` is this report; `rebase --dry-run` is too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchq.core import tiers
from patchq.core.progress import Progress
from patchq.core.series import Entry
from patchq.core.status import CLEAN, CONFLICT, MISSING, Outcome
from patchq.core.trust import Configured
from patchq.rebase.attribution import attribute_drift
from patchq.rebase.replay import PatchCheck, Replay, for_review, lock_outcome, replayed
from patchq.stack.apply import load_patch, preimages
from patchq.stack.context import Context
from patchq.stack.targets import default_onto, old_base
from patchq.store import trust


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    base: str
    onto: str
    onto_ref: str
    patches: tuple[PatchCheck, ...]
    subjects: dict[str, str]
    # The commands patchq.toml names, with whether the person trusts them (`rebase` runs
    # only those): named so that no one learns it from a rebase.
    commands: tuple[Configured, ...] = ()
    # The checkout `target` in patchq.toml points patchq at (a patch repo's files choose
    # it, a clone's too: named so that no one learns it from a changed checkout).
    target: str | None = None
    # The proposed methods taken without a stop (core.tiers): `--accept`, `accept`.
    accept: tuple[str, ...] = ()

    @property
    def to_review(self) -> tuple[str, ...]:
        """The patches whose status is no conflict at which `rebase` would stop for
        review all the same (a proposal not accepted, or fixed differently upstream)."""
        return tuple(
            p.name
            for p in self.patches
            if p.status not in (CONFLICT, MISSING) and for_review(p, self.accept)
        )

    @property
    def exit_code(self) -> int:
        """0 no drift, 1 drift rebase handles alone, 3 a person is needed (DESIGN §3): a
        proposal counts 1 when accepted, 3 when not (DESIGN §4.1)."""
        statuses = {p.status for p in self.patches}
        if statuses & {CONFLICT, MISSING}:
            return 3
        if any(for_review(p, self.accept) for p in self.patches):
            return 3
        # A file renamed upstream leaves the hunks clean, but the patch must be rewritten;
        # a review hint is for a person to read, whatever the hunks did.
        quiet = not any(p.renames or p.hints for p in self.patches)
        return 0 if statuses <= {CLEAN} and quiet else 1


def replay_series(
    ctx: Context,
    base: str,
    onto: str,
    entries: Sequence[Entry],
    fuzz: int,
    *,
    progress: Progress | None = None,
    accept: tuple[str, ...] = (),
) -> tuple[list[PatchCheck], dict[str, str]]:
    """Classify every active patch on `onto`, continuing past conflicts; drift attributed."""
    g, repo = ctx.git(), ctx.repo()
    g.writer(dry_run=True)  # nothing this check makes is written
    pre = preimages(g, repo, base, entries)
    rp = Replay.start(
        g,
        repo,
        base,
        onto,
        fuzz=fuzz,
        preimage=pre,
        conflict_trees=False,
        resolutions=repo.resolutions(),
        accept=accept,
        # Provenance reads the range once for every file of the series, if ever asked.
        expected=lambda: [load_patch(repo, e)[1] for e in entries],
    )
    results = [res for _, res in replayed(rp, entries, progress)]
    return attribute_drift(
        g, base, onto, results, repo, entries=entries, renames=rp.renames, sections=rp.sections
    )


def check(
    ctx: Context,
    onto: str | None,
    fuzz: int | None = None,
    progress: Progress | None = None,
    accept: tuple[str, ...] = (),
) -> CheckOutcome:
    """The drift report; `accept` the proposed methods taken besides patchq.toml's."""
    repo, g = ctx.repo(), ctx.git()
    taken = tiers.parse_accept((*repo.config.accept, *accept))
    ref, onto_id = default_onto(ctx, g, onto)
    base, guards = old_base(ctx, g)
    entries = repo.series.active(guards)
    fz = repo.config.fuzz if fuzz is None else fuzz
    results, subjects = replay_series(
        ctx, base, onto_id, entries, fz, progress=progress, accept=taken
    )
    commands = trust.configured(repo.root, repo.config, trust.read())
    target = str(g.root) if repo.config.target is not None else None
    return CheckOutcome(
        base, onto_id, ref, tuple(results), subjects, commands, target=target, accept=taken
    )


@dataclass(frozen=True, slots=True)
class DryRunOutcome:
    """What `rebase --onto` would do to each patch: the replay `check` runs, read as the
    lock outcome each patch would get."""

    report: CheckOutcome

    @property
    def outcomes(self) -> tuple[tuple[PatchCheck, str], ...]:
        """Each patch with its would-be outcome (`conflict` where a person must decide: a
        conflict, or a proposal not accepted)."""
        accept = self.report.accept
        return tuple(
            (p, Outcome.CONFLICT if for_review(p, accept) else lock_outcome(p))
            for p in self.report.patches
        )

    @property
    def exit_code(self) -> int:
        """3 when a patch would stop the rebase (a conflict or a proposal), 1 when it
        would take accepted proposals, else 0."""
        if any(o == CONFLICT for _, o in self.outcomes):
            return 3
        accept = self.report.accept
        return (
            1 if any(tiers.taken(p.hunks, p.rewritten, accept) for p in self.report.patches) else 0
        )


def dry_run(
    ctx: Context,
    onto: str | None,
    fuzz: int | None,
    progress: Progress | None = None,
    accept: tuple[str, ...] = (),
) -> DryRunOutcome:
    """What `rebase --onto` would do to each patch, changing nothing: the replay `check`
    runs."""
    return DryRunOutcome(check(ctx, onto, fuzz, progress, accept))
