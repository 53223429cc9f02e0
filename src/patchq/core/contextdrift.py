"""Context-only drift (DESIGN §4.1, §4.2): a hunk whose context changed
upstream but whose removed lines did not, placed where GNU patch's fuzz places it.

GNU patch drops up to two outer context lines at each end (fuzz 1, then 2) and takes the
nearest match; `apply --fuzz` places hunks the same way (core/hunks.py). Fuzz never drops
a changed line, so wherever it places a hunk the hunk's removed lines are there, intact
and together. A rebase offers that placement as a `fuzz` proposal, whatever its fuzz
setting, when nothing finer placed the hunk: the rebase stops for review with it applied
(core/tiers.py), instead of stopping bare. It is offered only where the pattern GNU
patch matched matches at exactly one place in the file, and only for hunks that needed
fuzz (an exact or offset place the ladder refused stays refused), and never where the
file already holds a telling line the hunk adds more often than the pinned base did (or,
without a pinned base, than the hunk's own old lines do): upstream made some of the
change itself, and placing the hunk would duplicate it (DESIGN §4.1, "already upstream").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from patchq.core import hunks as engine
from patchq.core.patch import Hunk
from patchq.core.placement import trivial
from patchq.core.status import FUZZ

# GNU patch's default fuzz, the most `apply --fuzz` takes.
MAX_FUZZ = 2


def fuzz_placed(
    lines: list[bytes], hunks: Sequence[Hunk], pre: Sequence[bytes] | None = None
) -> engine.FileResult | None:
    """The file after `hunks`, all placed by GNU patch's fuzz (at most MAX_FUZZ), each
    matching at one place only; None if any is not (not found, found at several places,
    or found without fuzz), or if `lines` already hold what a hunk adds (`pre`: the
    pinned base's lines, when known)."""
    if not hunks or any(_duplicates(h, lines, pre) for h in hunks):
        return None
    res = engine.gnu_apply(lines, hunks, MAX_FUZZ)
    if res is None:
        return None
    for r in res.hunks:
        if r.status != FUZZ or r.fuzz < 1 or r.candidates != 1:
            return None
    return res


def _duplicates(h: Hunk, lines: Sequence[bytes], pre: Sequence[bytes] | None) -> bool:
    """Whether `lines` hold a telling line `h` adds more often than the pinned base
    (`pre`) did, or, without it, than `h`'s own old lines do."""
    added = {c.rstrip(b"\r\n") for t, c in h.lines if t == "+"}
    added = {x for x in added if not trivial(x)}
    if not added:
        return False
    now = Counter(x.rstrip(b"\r\n") for x in lines)
    was = Counter(x.rstrip(b"\r\n") for x in (pre if pre is not None else h.old_lines))
    return any(now[x] > was[x] for x in added)


def evidence(fuzz: int) -> str:
    """Why a hunk placed by context-only drift is proposed, for the person reviewing it."""
    return (
        f"only its context changed upstream: its removed lines are intact, and GNU patch's "
        f"fuzz {fuzz} places it at this one spot"
    )
