"""Tiers (DESIGN §4.1 "Trust"): which placement methods act alone, and which only propose.

A method that lands a hunk is either **automatic** (it finishes a patch alone) or
**proposed**: the rebase stops for review at the patch, the proposal applied in the
working tree, unless the person accepted that method (`rebase --accept`, `accept = [...]`
in patchq.toml), when it is **accepted**: taken, recorded and reported, and the rebase
exits 1 instead of 0. The table is the design's initial list (docs/trust.md); a method
earns automatic status only by measured precision (on the measured run none
reached 97% over the 30 validation uses it needs, so the list stands).

`upstreamed` is automatic when the whole patch is proven upstream; a hunk judged upstream
inside a patch that is not upstream as a whole is a proposal (accepted as `upstreamed`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from patchq.core.records import HunkOutcome
from patchq.core.status import CONFLICT, FACTS, MISSING, UPSTREAMED, Method
from patchq.core.status import Tier as Tier  # beside the methods whose facts name it

AUTOMATIC, PROPOSED, ACCEPTED = Tier.AUTOMATIC, Tier.PROPOSED, Tier.ACCEPTED

# Each method's tier (core.status.FACTS: the design's initial list, DESIGN §4.1, until a
# measured run promotes a method).
TIERS: dict[str, Tier] = {m: f.tier for m, f in FACTS.items()}


def tier_of(method: Method) -> Tier:
    """The tier a hunk placed by `method` has, unless a person accepts it."""
    return FACTS[method].tier


# Each proposed method's measured precision (uses, right, wrong) on the validation part of
# the harvested refresh corpus, shown beside every proposal so that a reviewer (or the CI
# job's merge request) sees how often the method was right. The figures live in
# data/precision.json, written by the bench (`patchq-bench precision`) from a measured run
# with that run's command and corpus revision inside it; docs/trust.md renders the same
# file. Only proposed methods are shown: an automatic one is never proposed. A method
# absent there was not used in the run: not measured yet. (A use neither right nor wrong
# was not scored.)
PRECISION_FILE = Path(__file__).resolve().parent.parent / "data" / "precision.json"


def _measured_table() -> dict[str, tuple[int, int, int]]:
    methods = json.loads(PRECISION_FILE.read_text(encoding="utf-8"))["methods"]
    return {
        m: (int(row["uses"]), int(row["right"]), int(row["wrong"]))
        for m, row in methods.items()
        if TIERS.get(m) == PROPOSED
    }


MEASURED: dict[str, tuple[int, int, int]] = _measured_table()


def measured(method: str) -> dict[str, int] | None:
    """`method`'s measured precision as the JSON carries it, or None if not measured."""
    got = MEASURED.get(method)
    if got is None:
        return None
    uses, right, wrong = got
    return {"uses": uses, "right": right, "wrong": wrong}


# A patch upstream changed the lines of in every hunk ("fixed differently upstream",
# DESIGN §4.1) is never merged alone, whatever merged it: a proposal of the whole patch,
# which `--accept rewritten` (or `all`) takes. Not a method: its hunks keep theirs.
REWRITTEN = "rewritten"

# What `--accept` and `accept = [...]` may name (besides `all`): every proposed method,
# `upstreamed` for a hunk upstream holds inside a patch it does not hold whole, and
# `rewritten` for a patch fixed differently upstream.
ACCEPTABLE: tuple[str, ...] = (
    *(str(m) for m, t in TIERS.items() if t == PROPOSED),
    str(Method.UPSTREAMED),
    REWRITTEN,
)
ALL = "all"

# Why a hunk upstream already holds stops its patch: the rest of the patch is not there.
PARTLY = "already upstream, but the rest of its patch is not"


def valid_names() -> str:
    """The names `--accept` takes, for a one-line error."""
    return ", ".join((*ACCEPTABLE, ALL))


def parse_accept(values: Iterable[str]) -> tuple[str, ...]:
    """The methods named by `values` (each may hold a comma-separated list; `all` names
    every acceptable method), in ACCEPTABLE's order. ValueError names the first unknown
    name and lists the valid ones."""
    names: set[str] = set()
    for v in values:
        for raw in str(v).split(","):
            name = raw.strip()
            if not name:
                continue
            if name == ALL:
                names.update(ACCEPTABLE)
            elif name in ACCEPTABLE:
                names.add(name)
            else:
                raise ValueError(f"unknown method {name!r} to accept (valid: {valid_names()})")
    return tuple(m for m in ACCEPTABLE if m in names)


def proposal(h: HunkOutcome, hunks: Sequence[HunkOutcome]) -> str:
    """The proposed method of hunk `h` of a patch with `hunks` ("" for a hunk placed by
    an automatic method, or not placed): a proposed method's, or `upstreamed` for a hunk
    upstream holds in a patch it does not hold whole."""
    if h.status == UPSTREAMED or h.reason.startswith(PARTLY):
        whole = all(x.status == UPSTREAMED for x in hunks)
        return "" if whole else str(Method.UPSTREAMED)
    if h.status in (CONFLICT, MISSING):
        return ""
    m = h.method
    return m if TIERS.get(m) == PROPOSED else ""


def tier(h: HunkOutcome, hunks: Sequence[HunkOutcome], accept: Iterable[str]) -> Tier | None:
    """The tier of hunk `h` (None for a hunk that did not land)."""
    p = proposal(h, hunks)
    if p:
        return ACCEPTED if p in set(accept) else PROPOSED
    if h.status in (CONFLICT, MISSING):
        return None
    return AUTOMATIC


def proposals(
    hunks: Sequence[HunkOutcome], accept: Iterable[str] = ()
) -> list[tuple[HunkOutcome, str]]:
    """The hunks of a patch that a proposed method placed and `accept` does not take,
    each with its method."""
    taken = set(accept)
    out = []
    for h in hunks:
        p = proposal(h, hunks)
        if p and p not in taken:
            out.append((h, p))
    return out


def accepted(hunks: Sequence[HunkOutcome], accept: Iterable[str]) -> tuple[str, ...]:
    """The proposed methods `accept` took in a patch, each once, in order."""
    taken = set(accept)
    return tuple(dict.fromkeys(p for h in hunks if (p := proposal(h, hunks)) in taken and p))


def taken(hunks: Sequence[HunkOutcome], rewritten: bool, accept: Iterable[str]) -> tuple[str, ...]:
    """What `accept` took in a patch (recorded as `accepted`): its hunks' proposed methods
    (`accepted`); where it has none, `rewritten` for a patch fixed differently upstream
    when `accept` names it. A patch fixed differently upstream finishes only with one."""
    got = accepted(hunks, accept)
    return (REWRITTEN,) if not got and rewritten and REWRITTEN in set(accept) else got


def recorded(hunks: Sequence[HunkOutcome]) -> tuple[str, ...]:
    """The method each hunk of a patch is recorded with (`methods` in series.lock): its
    own, or for a hunk upstream holds inside a patch it does not hold whole (which landed
    by no method: it needed none), `upstreamed`."""
    return tuple(h.method or proposal(h, hunks) for h in hunks)


def place(h: HunkOutcome) -> tuple[str, int]:
    """Where a proposed hunk's change is: the file (where upstream moved its block, for
    a moved one) and the 1-based line (0: not known)."""
    if h.moved_to is not None:
        return h.moved_to[0], h.moved_to[1]
    return h.file, h.line


def evidence(h: HunkOutcome, method: str) -> str:
    """Why the proposal is made, for a person to weigh: the method's own reason where it
    gave one."""
    if h.reason and not h.reason.startswith(PARTLY):
        return h.reason
    return _WHY.get(method, "")


# Why a proposal by each method is made, where the method gave no reason (core.status).
_WHY: dict[str, str] = {m: f.why for m, f in FACTS.items() if f.why}
