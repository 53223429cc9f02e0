"""The placement ladder of DESIGN §4 as a table the replay runs.

`RUNGS` holds one `Rung` per step, in the one order the replay tries them: the engine's
search (exact, offset, and fuzz where the person asked for it), the pinned base's doubt
of that search, the two tests for a hunk upstream already holds, git's 3-way merge with
the finer methods of `core.resolve`, anchored placement, the moved-block search, a
person's remembered resolutions, the context-drift `fuzz` proposal, and at the bottom the
conflict. Each rung is a function from where a section stands (`Climb`) to where it
stands after that rung; a rung that places every hunk still failing ends the climb.
What a rung records — its method, that method's tier and measured precision — is read
from `core.tiers`, the one place a method's facts live. Adding a rung is adding an entry.

A patch whose origin upstream holds is first tried with the `quick` rungs only (see
`Replay.step`): placed as it is, doubted, or found there reversed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from patchq.core import contextdrift, placement
from patchq.core import hunks as engine
from patchq.core.patch import FilePatch, Split
from patchq.core.records import HunkOutcome
from patchq.core.resolve import Region
from patchq.core.status import (
    CONFLICT,
    FUZZ,
    MERGE,
    OFFSET,
    UPSTREAMED,
    Method,
    drift_of,
)
from patchq.core.tiers import Tier, measured, tier_of
from patchq.stack.apply import PINNED_FUZZ

if TYPE_CHECKING:
    from patchq.rebase.replay import Replay


class Section:
    """What every rung of one section reads: the section as placed, the patch's name,
    upstream's file, the run, and the section's pinned pre-image with the patch applied
    to it (`theirs`), read the first time a rung asks and then kept."""

    __slots__ = ("s", "name", "pin_path", "content", "run", "_pinned")

    def __init__(
        self, s: FilePatch, name: str, pin_path: str | None, content: bytes, run: Replay
    ) -> None:
        self.s, self.name, self.pin_path, self.content, self.run = s, name, pin_path, content, run
        self._pinned: tuple[bytes | None, engine.FileResult | None, int] | None = None

    def _pin(self) -> tuple[bytes | None, engine.FileResult | None, int]:
        if self._pinned is None:
            run, s = self.run, self.s
            pre = run.preimage_of(s, self.name, self.pin_path)
            split = run.g.lines.split
            # The patch on its own pinned preimage, placed as `apply` placed it there (GNU
            # patch's placement): what the doubt and the merge compare with.
            theirs = (
                engine.apply_hunks(pre, s.hunks, split=split, gnu=True) if pre is not None else None
            )
            fuzz = 0
            if theirs is not None and not theirs.ok and run.pinned_with_fuzz(self.name):
                # Placed there as the pinned series placed it (`apply --fuzz`; see OldStack).
                fuzz = PINNED_FUZZ
                theirs = engine.apply_hunks(pre, s.hunks, fuzz=fuzz, split=split, gnu=True)
            self._pinned = (pre, theirs, fuzz)
        return self._pinned

    @property
    def pre(self) -> bytes | None:
        """The file this section was made against (the pinned base's, else `index`'s)."""
        return self._pin()[0]

    @property
    def known_pre(self) -> bytes | None:
        """The pre-image if a rung has read it already, else None (not read for this)."""
        return self._pinned[0] if self._pinned is not None else None

    @property
    def theirs(self) -> engine.FileResult | None:
        return self._pin()[1]

    @property
    def pinned_fuzz(self) -> int:
        return self._pin()[2]

    @property
    def split(self) -> Split:
        return self.run.g.lines.split

    def align(self) -> placement.Alignment:
        """The shared alignment of the pre-image with upstream's file (made once a run)."""
        assert self.pre is not None
        return self.run.align_of(self.pre, self.content)

    @property
    def labels(self) -> tuple[str, str, str]:
        return (self.run.ours, "base", self.name)


@dataclass(frozen=True, slots=True)
class Climb:
    """Where a section stands on the ladder."""

    # The engine's own placement (the first rung's), and the placement as it stands now
    # (without the hunks the pinned base doubted).
    first: engine.FileResult
    res: engine.FileResult
    # Each hunk's outcome so far, by index, and the hunks no rung has placed yet.
    checks: tuple[HunkOutcome, ...] = ()
    failing: tuple[int, ...] = ()
    # The hunks the engine did not place once doubted (the review hints judge these).
    unplaced: tuple[int, ...] = ()
    # The 3-way merge's output where it conflicted, and its conflict regions.
    merged: bytes | None = None
    regions: tuple[Region, ...] = ()
    # The section's file once a rung placed every failing hunk (the climb ends there),
    # and the markers of a conflict with the regions in them left to a person.
    placed: bytes | None = None
    markers: bytes | None = None
    open_regions: tuple[Region, ...] | None = None

    @property
    def done(self) -> bool:
        return self.placed is not None

    @property
    def final(self) -> bytes:
        """The section's file after the climb."""
        return self.placed if self.placed is not None else self.res.content

    def set(self, checks: Sequence[HunkOutcome], **kw: Any) -> Climb:
        """The climb with the hunks' outcomes `checks`, and the other fields `kw`."""
        return replace(self, checks=tuple(checks), **kw)


@dataclass(frozen=True, slots=True)
class Rung:
    """One step of the ladder: its name, the method a hunk it places records (None for
    a rung that only filters what the engine placed), the finer methods it may record
    instead, the words of DESIGN §4's list it stands for, and the function doing it."""

    name: str
    method: Method | None
    does: str
    climb: Callable[[Section, Climb], Climb]
    finer: tuple[Method, ...] = ()
    design: tuple[str, ...] = ()
    # Among the quick tests a patch whose origin upstream holds is tried with first.
    quick: bool = False

    @property
    def methods(self) -> tuple[Method, ...]:
        return (self.method, *self.finer) if self.method is not None else self.finer

    @property
    def tier(self) -> Tier | None:
        """How far a hunk this rung places is trusted (core.tiers)."""
        return tier_of(self.method) if self.method is not None else None

    @property
    def precision(self) -> dict[str, int] | None:
        """The method's measured precision (core.tiers.MEASURED), None if not measured."""
        return measured(self.method) if self.method is not None else None


def climb(sec: Section, quick: bool = False) -> Climb:
    """Run the ladder on one section: every rung in order (only the `quick` ones if
    asked) until one places every hunk still failing."""
    at = Climb(engine.FileResult(sec.content, ()), engine.FileResult(sec.content, ()))
    for rung in RUNGS:
        if at.done:
            break
        if quick and not rung.quick:
            continue
        at = rung.climb(sec, at)
    return at


def _engine(sec: Section, at: Climb) -> Climb:
    """Exact, then offset, then (under `--fuzz`) fuzz: the engine's one search."""
    s, path = sec.s, sec.s.path
    res = engine.apply_hunks(sec.content, s.hunks, fuzz=sec.run.fuzz, split=sec.split)
    # A hunk the engine could not place has no offset or fuzz, whatever it tried.
    checks = tuple(
        HunkOutcome(path, h.index, drift_of(h.status), h.offset, h.fuzz)
        if h.applied
        else HunkOutcome(path, h.index, CONFLICT, reason=h.reason)
        for h in res.hunks
    )
    failing = tuple(h.index for h in res.failures)
    return Climb(res, res, checks, failing, failing)


def _doubt(sec: Section, at: Climb) -> Climb:
    """The pinned base doubts the engine: a hunk placed by offset or fuzz where its
    surroundings differ from the pre-image's (it may have landed in a look-alike copy of
    the block) is kept only if the 3-way merge agrees."""
    if not at.failing and not any(h.status in (OFFSET, FUZZ) for h in at.res.hunks):
        return at
    pre, theirs = sec.pre, sec.theirs
    if pre is None or theirs is None:
        return at
    s, path, content, res = sec.s, sec.s.path, sec.content, at.res
    run, split = sec.run, sec.split
    checks, failing = list(at.checks), list(at.failing)
    doubtful = placement.doubtful(s.hunks, res, content, pre, theirs, split=split)
    if doubtful:
        merged, conflicts = run.g.merge_file(content, pre, theirs.content, sec.labels)
        if (conflicts or merged != res.content) and (failing or len(doubtful) > 1):
            # The whole file's merge also holds the other hunks' conflicts: each doubt
            # is then weighed by the merge of that hunk alone.
            doubtful = [i for i in doubtful if not _agrees_alone(sec, i, pre)]
        if doubtful and (conflicts or merged != res.content):
            failing = sorted(failing + doubtful)
            for i in doubtful:
                checks[i] = replace(
                    checks[i],
                    status=CONFLICT,
                    offset=0,
                    fuzz=0,
                    reason="its lines match only at a place that differs from the pinned base",
                )
            res = placement.apply_only(
                content,
                s.hunks,
                [i for i in range(len(s.hunks)) if i not in failing],
                run.fuzz,
                split,
            )
            for r in res.hunks:
                checks[r.index] = (
                    HunkOutcome(path, r.index, drift_of(r.status), r.offset, r.fuzz)
                    if r.applied
                    else HunkOutcome(path, r.index, CONFLICT, reason=r.reason)
                )
            failing = sorted(set(failing) | {r.index for r in res.failures})
    return at.set(checks, res=res, failing=tuple(failing), unplaced=tuple(failing))


def _agrees_alone(sec: Section, i: int, pre: bytes) -> bool:
    """Whether the 3-way merge of hunk `i` alone (its change on the pinned base into
    upstream's file) is clean and puts it where the engine placed it."""
    hunks, split, run = sec.s.hunks, sec.split, sec.run
    one = engine.apply_hunks(pre, [hunks[i]], fuzz=sec.pinned_fuzz, split=split)
    if not one.ok:
        return False
    merged, conflicts = run.g.merge_file(sec.content, pre, one.content, sec.labels)
    placed = placement.apply_only(sec.content, hunks, [i], run.fuzz, split)
    return conflicts == 0 and placed.ok and merged == placed.content


def _reversed(sec: Section, at: Climb) -> Climb:
    """The failing hunks that reverse-apply, their patched lines there once: upstream
    already holds them."""
    if not at.failing:
        return at
    s, split, cur = sec.s, sec.split, at.res.content
    checks, failing = list(at.checks), list(at.failing)
    cur_lines = split(cur)
    pre = sec.pre
    pre_lines = split(pre) if pre is not None else None
    for i in list(failing):
        back = engine.apply_hunks(cur, [s.hunks[i]], reverse=True, split=split)
        # Upstreamed only if the patched lines are there once: a look-alike
        # elsewhere in the file proves nothing.
        if (
            back.ok
            and placement.count(cur_lines, s.hunks[i].new_lines) == 1
            and placement.lacks_removed(s.hunks[i : i + 1], cur_lines, pre_lines)
            and not (
                pre_lines is not None
                and placement.kept(s.hunks[i : i + 1], cur_lines, cur_lines, pre_lines)
            )
        ):
            checks[i] = replace(checks[i], status=UPSTREAMED, reason="")
            failing.remove(i)
    return at.set(checks, failing=tuple(failing))


def _held(sec: Section, at: Climb) -> Climb:
    """Upstream rewrote the block and it now holds the patch's change: found by
    content, within the block the alignment maps the hunk to."""
    if not at.failing or sec.pre is None:  # (the pre-image is read only for a hunk failing)
        return at
    pre, split = sec.pre, sec.split
    pre_lines, up_lines = split(pre), split(sec.content)
    align = sec.align()
    checks, failing = list(at.checks), list(at.failing)
    for i in list(failing):
        if placement.held(sec.s.hunks[i], pre_lines, up_lines, align):
            checks[i] = replace(
                checks[i], status=UPSTREAMED, reason="upstream's block already holds its change"
            )
            failing.remove(i)
    return at.set(checks, failing=tuple(failing))


def _merge(sec: Section, at: Climb) -> Climb:
    """git's 3-way merge of the patch on its pinned pre-image into upstream's file, each
    conflict region offered to the finer methods (`core.resolve`) first."""
    if not at.failing:
        return at
    s, pre, theirs, split = sec.s, sec.pre, sec.theirs, sec.split
    assert s.old_path is not None
    if pre is None or theirs is None or not theirs.ok:
        return at
    regions: list[Region] = []
    content, cur, failing = sec.content, at.res.content, at.failing
    merged: bytes | None
    merged, conflicts, _ = sec.run.g.merge_resolving(
        content, pre, theirs.content, sec.labels, regions=regions
    )
    merged_lines, up_lines = split(merged), split(content)
    # The merge holds every hunk's change, so the line balance counts them all.
    if (
        conflicts == 0
        and placement.lacks_removed([s.hunks[i] for i in failing], merged_lines, up_lines)
        and not placement.kept(s.hunks, merged_lines, up_lines, split(pre))
    ):
        # Merging in the failing hunks changed nothing beyond the hunks that
        # applied: upstream already made those changes.
        checks = list(at.checks)
        if merged == cur:
            for i in failing:
                checks[i] = replace(checks[i], status=UPSTREAMED, reason="")
        else:
            placement.settle(s.hunks, theirs, failing, checks, regions)
        return at.set(checks, placed=merged)
    if conflicts == 0:
        merged = None  # clean, but it kept what the patch removes: no markers
    return replace(at, merged=merged, regions=tuple(regions))


def _anchored(sec: Section, at: Climb) -> Climb:
    """Each change block where its removed lines (or the line a pure insertion hangs
    from) match exactly once, in the pinned base and upstream (DESIGN §4.4)."""
    if not at.failing or sec.pre is None:
        return at
    hunks = [sec.s.hunks[i] for i in at.failing]
    placed = placement.anchored(at.res.content, hunks, sec.pre, sec.split)
    if placed is None:
        return at
    checks = list(at.checks)
    for i in at.failing:
        checks[i] = replace(checks[i], status=MERGE, anchored=True, reason="")
    return at.set(checks, placed=placed)


def _moved(sec: Section, at: Climb) -> Climb:
    """The failing hunks' blocks where upstream moved them (DESIGN §4.5)."""
    if not at.failing:
        return at
    s = sec.s
    moved = sec.run.relocate(
        s,
        at.failing,
        cur=at.res.content,
        pre=sec.pre,
        up=sec.content,
        where=f"{sec.name}:{s.lineno}",
    )
    if moved is None:
        return at
    found, moved_cur = moved
    checks = list(at.checks)
    for i in at.failing:
        checks[i] = (
            replace(found[i], drift=checks[i].drift, offset=0, fuzz=0)
            if i in found
            else replace(checks[i], status=CONFLICT)
        )
    return at.set(checks, placed=moved_cur)


def _reused(sec: Section, at: Climb) -> Climb:
    """The conflict regions a person resolved before, resolved as they did (DESIGN §4.7)."""
    if not at.failing or at.merged is None:
        return at
    pre, theirs, book = sec.pre, sec.theirs, sec.run.resolutions
    if pre is None or theirs is None or not book:
        return at
    regions: list[Region] = []
    merged, conflicts, _ = sec.run.g.merge_resolving(
        sec.content, pre, theirs.content, sec.labels, remembered=book.lookup, regions=regions
    )
    if conflicts == 0:
        checks = list(at.checks)
        placement.settle(sec.s.hunks, theirs, at.failing, checks, regions)
        return at.set(checks, placed=merged, merged=merged, regions=tuple(regions))
    return replace(at, merged=merged, regions=tuple(regions))


def _context_drift(sec: Section, at: Climb) -> Climb:
    """The failing hunks placed where GNU patch's fuzz places them, each at its one
    match (core/contextdrift.py), as `fuzz` proposals; only if every one is placed so."""
    if not at.failing:
        return at
    pre, split, failing = sec.pre, sec.split, at.failing
    res = contextdrift.fuzz_placed(
        split(at.res.content),
        [sec.s.hunks[i] for i in failing],
        None if pre is None else split(pre),
    )
    if res is None:
        return at
    checks = list(at.checks)
    for i, r in zip(failing, res.hunks, strict=True):
        checks[i] = replace(
            checks[i],
            status=FUZZ,
            offset=r.offset,
            fuzz=r.fuzz,
            reason=contextdrift.evidence(r.fuzz),
        )
    return at.set(checks, placed=res.content)


def _conflict(sec: Section, at: Climb) -> Climb:
    """What no rung placed: the merge's markers (its settled regions merged), or, with
    no merge to show, each hunk marked at its stated place."""
    if not at.failing:
        return at
    checks = list(at.checks)
    if at.merged is None:
        for i in at.failing:
            checks[i] = replace(checks[i], status=CONFLICT)
        markers = placement.conflict_blocks(
            at.res.content,
            [sec.s.hunks[i] for i in at.failing],
            sec.name,
            sec.split,
            sec.run.ours,
        )
        return at.set(checks, placed=sec.content, markers=markers)
    theirs = sec.theirs
    assert theirs is not None
    placement.settle(sec.s.hunks, theirs, at.failing, checks, at.regions)
    unsettled = tuple(r for r in at.regions if not r.settled)
    return at.set(checks, placed=sec.content, markers=at.merged, open_regions=unsettled)


# The ladder, in the one order the replay climbs it (DESIGN §4).
RUNGS: tuple[Rung, ...] = (
    Rung(
        "exact",
        Method.EXACT,
        "the hunk's lines where the patch says, else the nearest place they match "
        "(offset), else with outer context dropped where the person allows fuzz",
        _engine,
        finer=(Method.OFFSET, Method.FUZZ),
        design=("exact", "offset", "fuzz"),
        quick=True,
    ),
    Rung(
        "doubt",
        None,
        "a hunk moved to where its surroundings differ from the pinned base's is kept "
        "only if the 3-way merge agrees",
        _doubt,
        quick=True,
    ),
    Rung(
        "reversed",
        Method.UPSTREAMED,
        "upstream already holds the change: it reverse-applies, its lines there once",
        _reversed,
        quick=True,
    ),
    Rung(
        "held",
        Method.UPSTREAMED,
        "upstream's rewritten block already holds the change",
        _held,
    ),
    Rung(
        "merge",
        Method.MERGE,
        "3-way merge against the pinned pre-image, each conflict region offered to the "
        "finer methods",
        _merge,
        finer=(Method.ZEALOUS, Method.WORD, Method.DELETE_WINS),
        design=("3-way merge",),
    ),
    Rung(
        "anchored",
        Method.ANCHORED,
        "each change block at its unique anchor line",
        _anchored,
        design=("anchored placement",),
    ),
    Rung(
        "moved",
        Method.MOVED,
        "the block where upstream moved it",
        _moved,
        design=("moved",),
    ),
    Rung(
        "reused",
        Method.REUSED,
        "a conflict region resolved as a person did before",
        _reused,
        design=("reused",),
    ),
    Rung(
        "context drift",
        Method.FUZZ,
        "the place GNU patch's fuzz gives the hunk, at one match, as a proposal",
        _context_drift,
        design=("context-only drift",),
    ),
    Rung(
        "conflict",
        None,
        "markers for a person to resolve",
        _conflict,
        design=("conflict",),
    ),
)


def rung(name: str) -> Rung:
    """The rung called `name`."""
    return next(r for r in RUNGS if r.name == name)
