"""Sequence comparison in bounded time, for input anyone can make as long as they like.

difflib's SequenceMatcher takes time up to the product of its two sides' lengths (a
one-megabyte line against another, two files of 100,000 lines): a patch, an upstream
file or a subject from a stranger must not make patchq run for hours. Every comparison
of unbounded input goes through here: within `LIMIT` (the product of the lengths) it is
difflib's; beyond, `opcodes` answers in linear time — the common head and tail equal,
the middle one replacement — and `ratio` answers None, for which each caller has its own
linear answer (no hint, no pairing: a conflict, a plain layout).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from difflib import Match, SequenceMatcher
from itertools import accumulate, repeat

# The most `len(a) * len(b)` compared by difflib (about a second of CPU at worst).
LIMIT = 1_000_000

Opcode = tuple[str, int, int, int, int]


def comparable(a: Sequence[Hashable], b: Sequence[Hashable]) -> bool:
    """Whether difflib may compare `a` and `b` within the bound."""
    return len(a) * len(b) <= LIMIT


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """difflib's opcodes turning `a` into `b` (no autojunk) within the bound; beyond it,
    in linear time: the common head and tail equal, the rest one replacement."""
    if comparable(a, b):
        return list(SequenceMatcher(None, a, b, autojunk=False).get_opcodes())
    return linear(a, b)


def linear(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Opcode]:
    """The common head and tail equal, the middle one replacement (linear time)."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    out: list[Opcode] = []
    if head:
        out.append(("equal", 0, head, 0, head))
    i2, j2 = n - tail, m - tail
    if head < i2 or head < j2:
        tag = "replace" if head < i2 and head < j2 else "delete" if head < i2 else "insert"
        out.append((tag, head, i2, head, j2))
    if tail:
        out.append(("equal", i2, n, j2, m))
    return out


# The most steps difflib may take aligning two whole files (`aligned`), about two to
# four seconds of CPU: two versions of a 19,000-line C file or configure script need
# 1-2 million (a 1,000-patch curl check: at most 87,000); a 50,000-line configure
# script 10-24 million (10-20 s), and that is where the bound answers instead.
WORK = 4_000_000


class _Budget(Exception):
    """The alignment went past its steps."""


class _Counted(SequenceMatcher):  # type: ignore[type-arg]
    """difflib's matcher, unchanged (autojunk as its default), that counts the steps of
    each longest-match search before making it — every position of the `a` range, and
    each place one of its lines has in `b` — and stops past `budget`."""

    def __init__(self, a: Sequence[Hashable], b: Sequence[Hashable], budget: int) -> None:
        super().__init__(None, a, b)
        self.budget, self.na, self.nb = budget, len(a), len(b)
        chains: dict[Hashable, list[int]] = self.__dict__["b2j"]  # difflib's index of b
        # places[i]: how many places the lines a[:i] have in b (a prefix sum made in C,
        # so each search's count is one subtraction however long its range).
        self.places = list(accumulate(map(len, map(chains.get, a, repeat((), len(a)))), initial=0))

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> Match:
        hi = self.na if ahi is None else ahi
        self.budget -= (hi - alo) + self.places[hi] - self.places[alo]
        if self.budget < 0:
            raise _Budget
        return super().find_longest_match(alo, hi, blo, self.nb if bhi is None else bhi)


def aligned(
    a: Sequence[Hashable], b: Sequence[Hashable], budget: int = WORK
) -> list[Opcode] | None:
    """difflib's own opcodes turning `a` into `b` — `SequenceMatcher(None, a, b)`, with
    its autojunk — while they take at most `budget` steps; beyond, None (the caller's
    linear answer)."""
    try:
        return list(_Counted(a, b, budget).get_opcodes())
    except _Budget:
        return None


def ratio(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """difflib's similarity ratio within the bound, else None (the caller's linear answer)."""
    if not comparable(a, b):
        return None
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def matcher(a: Sequence[Hashable], b: Sequence[Hashable]) -> SequenceMatcher[Hashable] | None:
    """A SequenceMatcher of `a` and `b` (no autojunk) within the bound, else None."""
    return SequenceMatcher(None, a, b, autojunk=False) if comparable(a, b) else None


def grouped_opcodes(a: Sequence[Hashable], b: Sequence[Hashable], n: int = 3) -> list[list[Opcode]]:
    """`opcodes` grouped into hunks with up to `n` lines of context, as difflib's
    `get_grouped_opcodes` groups its own (the same steps, over the bounded opcodes)."""
    codes = opcodes(a, b) or [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups
