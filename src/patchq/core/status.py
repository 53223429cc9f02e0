"""The one status vocabulary: how a hunk was placed, how a patch fares on a new upstream,
and what `series.lock` records of it.

Three views of one question, each a subset of one ranked list of words:

- placement, the hunk engine's answer (apply, push): `exact`, `offset`, `fuzz`, `merge`
  (the 3-way step), and the failures `ambiguous`, `failed`, `conflict`;
- drift, per hunk and patch in check and rebase: `clean`, `offset`, `fuzz`,
  `upstreamed`, `merge`, `conflict`, `missing`;
- outcome, per patch in `series.lock` (DESIGN §2): `unchanged`, `refreshed`, `merged`,
  `resolved`, `upstreamed`, `dropped`, `new`.

`RANK` orders the first two (a patch's status is its worst hunk's), `drift_of` maps a
placement to its drift status, and `outcome` maps a replayed patch to its lock outcome.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    """How a hunk was placed (apply, push) and how a hunk or patch drifts (check,
    rebase): one ranked list of words, each view a subset. A `StrEnum`: the JSON, the
    records and every message carry the word itself."""

    # Placement and drift share these words.
    OFFSET = "offset"
    FUZZ = "fuzz"
    MERGE = "merge"
    CONFLICT = "conflict"
    # Placement only.
    EXACT = "exact"
    FAILED = "failed"
    AMBIGUOUS = "ambiguous"
    # Drift only.
    CLEAN = "clean"
    UPSTREAMED = "upstreamed"
    MISSING = "missing"


class Outcome(StrEnum):
    """What `series.lock` records of a patch after a rebase (DESIGN §2); `conflict` is
    a dry run's word for a patch a person must decide."""

    UNCHANGED = "unchanged"
    REFRESHED = "refreshed"
    MERGED = "merged"
    RESOLVED = "resolved"
    UPSTREAMED = "upstreamed"
    DROPPED = "dropped"
    NEW = "new"
    CONFLICT = "conflict"


class Method(StrEnum):
    """How a hunk that landed on a new upstream got there (DESIGN §4): the placement
    ladder's rungs, the registry `core.placement` dispatches on."""

    EXACT = "exact"
    OFFSET = "offset"
    FUZZ = "fuzz"
    MERGE = "merge"
    ZEALOUS = "zealous"
    WORD = "word"
    ANCHORED = "anchored"
    MOVED = "moved"
    DELETE_WINS = "delete-wins"
    REUSED = "reused"
    UPSTREAMED = "upstreamed"


OFFSET, FUZZ, MERGE, CONFLICT = Status.OFFSET, Status.FUZZ, Status.MERGE, Status.CONFLICT
EXACT, FAILED, AMBIGUOUS = Status.EXACT, Status.FAILED, Status.AMBIGUOUS
CLEAN, UPSTREAMED, MISSING = Status.CLEAN, Status.UPSTREAMED, Status.MISSING

# Worse is higher. Within each view the order is the one its reports have always used:
# an upstreamed hunk ranks with fuzz (the patch still needs rewriting), a missing file
# above a conflict (nothing to even mark up).
RANK: dict[str, int] = {
    EXACT: 0,
    CLEAN: 0,
    OFFSET: 1,
    FUZZ: 2,
    UPSTREAMED: 2,
    MERGE: 3,
    AMBIGUOUS: 4,
    FAILED: 4,
    CONFLICT: 5,
    MISSING: 6,
}

_DRIFT_OF: dict[str, Status] = {EXACT: CLEAN, OFFSET: OFFSET, FUZZ: FUZZ, MERGE: MERGE}

# Lock outcomes.
UNCHANGED, REFRESHED, MERGED = Outcome.UNCHANGED, Outcome.REFRESHED, Outcome.MERGED
RESOLVED, DROPPED, NEW = Outcome.RESOLVED, Outcome.DROPPED, Outcome.NEW
OUTCOMES = (UNCHANGED, REFRESHED, MERGED, RESOLVED, Outcome.UPSTREAMED, DROPPED, NEW)
# Outcomes of patches that left the active series: recorded, but not applied.
GONE = (Outcome.UPSTREAMED, DROPPED)


class Tier(StrEnum):
    """How far a hunk's method is trusted (DESIGN §4.1, `core.tiers`): the JSON's `tier`."""

    AUTOMATIC = "automatic"
    PROPOSED = "proposed"
    ACCEPTED = "accepted"


@dataclass(frozen=True, slots=True)
class MethodFacts:
    """What holds of one placement method wherever it is used: its tier (the design's
    initial list, DESIGN §4.1, until a measured run promotes it), whether a person should
    read what it placed (check counts it as drift, exit 1; the report shows its new hunk),
    and why a proposal by it is made where the method gave no reason of its own. Its
    measured precision is `core.tiers.MEASURED`'s."""

    tier: Tier
    reviewable: bool = False
    why: str = ""


# Every method's facts, in one table (the ladder, `rebase/ladder.py`, reads them from here).
FACTS: dict[Method, MethodFacts] = {
    Method.EXACT: MethodFacts(Tier.AUTOMATIC),
    Method.OFFSET: MethodFacts(Tier.AUTOMATIC),
    # Proposed during a rebase (apply's fuzz policy is the person's own).
    Method.FUZZ: MethodFacts(Tier.PROPOSED, why="its context matched only with fuzz"),
    Method.MERGE: MethodFacts(Tier.AUTOMATIC),
    Method.ZEALOUS: MethodFacts(
        Tier.PROPOSED, True, "the 3-way merge conflicted; both sides' common lines were merged"
    ),
    Method.WORD: MethodFacts(
        Tier.PROPOSED, True, "the 3-way merge conflicted; the change was merged word by word"
    ),
    Method.ANCHORED: MethodFacts(
        Tier.PROPOSED, True, "placed where its removed lines (or anchor line) occur once"
    ),
    Method.MOVED: MethodFacts(Tier.PROPOSED, True, "its block was found unchanged elsewhere"),
    Method.DELETE_WINS: MethodFacts(
        Tier.PROPOSED, True, "upstream edited lines the patch deletes; the deletion was kept"
    ),
    Method.REUSED: MethodFacts(Tier.AUTOMATIC, True),
    # Automatic when the whole patch is proven upstream; else a proposal (core.tiers).
    Method.UPSTREAMED: MethodFacts(
        Tier.AUTOMATIC, why="upstream already holds this hunk, but not the rest of its patch"
    ),
}

# Placement methods (DESIGN §4): how a hunk that landed on a new upstream got there.
ZEALOUS, WORD, ANCHORED, MOVED = Method.ZEALOUS, Method.WORD, Method.ANCHORED, Method.MOVED
DELETE_WINS, REUSED = Method.DELETE_WINS, Method.REUSED
METHODS = tuple(Method)
# Methods whose result a person should read: check counts them as drift (exit 1), the
# report shows their new hunk.
REVIEWABLE = tuple(m for m, f in FACTS.items() if f.reviewable)
_METHOD_OF: dict[str, Method] = {
    CLEAN: Method.EXACT,
    OFFSET: Method.OFFSET,
    FUZZ: Method.FUZZ,
    MERGE: Method.MERGE,
    UPSTREAMED: Method.UPSTREAMED,
}


def method_of(status: str, anchored: bool = False, via: str = "") -> str:
    """The placement method of a hunk with drift `status` ("" for one that did not land):
    `via` names a finer method where one was used, `anchored` the anchored placement."""
    if via:
        return via
    if anchored and status == MERGE:
        return Method.ANCHORED
    return _METHOD_OF.get(status, "")


def drift_of(placement: str) -> Status:
    """The drift status of a hunk the engine placed (`exact` is `clean` on a new base)."""
    return _DRIFT_OF.get(placement, CONFLICT)


def outcome(status: str, hunk_statuses: Iterable[str], renamed: bool) -> Outcome:
    """The lock outcome of a replayed patch from its drift (`conflict` where a person must
    decide): the one place `rebase` and `rebase --dry-run` both ask."""
    if status == UPSTREAMED:
        return Outcome.UPSTREAMED
    if status in (CONFLICT, MISSING):
        return Outcome.CONFLICT
    if any(h == MERGE for h in hunk_statuses):
        return MERGED
    # A patch is clean exactly when every hunk is: anything moved, or a file upstream
    # renamed under it, means its file must be rewritten.
    if status == CLEAN and not renamed:
        return UNCHANGED
    return REFRESHED
