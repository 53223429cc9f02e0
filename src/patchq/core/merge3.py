"""Three-way merge in process, the way `git merge-file -p --diff3` does it.

check and rebase merge one file per hunk that no longer applies; starting `git merge-file`
for each made the number of git processes grow with the drift (1,570 for a 1,000-patch
series). This module is a line-for-line port of the parts of git's xdiff that merge-file
uses with its defaults — record preparation (trimmed ends, lines with no match discarded,
lines with too many matches discarded inside runs of discarded lines), Myers' divide and
conquer with git's cost heuristics, change compaction without the indent heuristic, and
xmerge at the level diff3 output allows (overlapping changes conflict unless identical,
touching changes conflict) — so its answers are git's, byte for byte; tests compare the
two on thousands of generated inputs. Its Myers walk is Python, though: a long diff
(a file against an upstream far ahead) goes to git's own diff, in C, through the one
`git diff-tree --stdin` a run keeps (diffserver); the merge itself stays here. `merge`
returns None where git would refuse (binary input) or, with no such differ, where Python
would take too long (a diff past BUDGET steps), and the caller then asks git itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import compress
from operator import not_
from typing import TypeVar

from patchq.core.patch import Split, split_lines
from patchq.core.resolve import TELLING, Outside, Region, Resolution, ended, resolve

_MAX_COST_MIN = 256
_HEUR_MIN_COST = 256
_SNAKE_CNT = 20
_K_HEUR = 4
_MAX_EQLIMIT = 1024
_SIMSCAN_WINDOW = 100
_KPDIS_RUN = 4
_LINE_MAX = 1 << 62
_MARKER = 7
# The bytes `\w` matches (resolve.TELLING's words are runs of four or more, ASCII).
_WORD_BYTES = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

T = TypeVar("T")


def _bogosqrt(n: int) -> int:
    i = 1
    while n > 0:
        i <<= 1
        n >>= 2
    return i


def _clean_mmatch(dis: bytearray, i: int, s: int, e: int) -> bool:
    """xdl_clean_mmatch: discard a many-match line only inside a run of discarded lines."""
    if i - s > _SIMSCAN_WINDOW:
        s = i - _SIMSCAN_WINDOW
    if e - i > _SIMSCAN_WINDOW:
        e = i + _SIMSCAN_WINDOW
    r, rdis0, rpdis0 = 1, 0, 1
    while i - r >= s:
        d = dis[i - r]
        if d == 0:
            rdis0 += 1
        elif d == 2:
            rpdis0 += 1
        else:
            break
        r += 1
    if rdis0 == 0:
        return False
    r, rdis1, rpdis1 = 1, 0, 1
    while i + r <= e:
        d = dis[i + r]
        if d == 0:
            rdis1 += 1
        elif d == 2:
            rpdis1 += 1
        else:
            break
        r += 1
    if rdis1 == 0:
        return False
    rdis1 += rdis0
    rpdis1 += rpdis0
    return rpdis1 * _KPDIS_RUN < rpdis1 + rdis1


def common_ends(a: list[T], b: list[T]) -> tuple[int, int]:
    """(head, tail): how many lines `a` and `b` share at the start, then at the end of
    what is left — xdl_trim_ends' answer, found by halving with slice comparisons (in C)
    instead of a Python loop over every line."""
    n1, n2 = len(a), len(b)
    lo, hi = 0, min(n1, n2)  # a[:lo] == b[:lo]; the head is at most hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    head = lo
    lo, hi = 0, min(n1, n2) - head  # the last lo lines agree
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[n1 - mid : n1 - lo] == b[n2 - mid : n2 - lo]:
            lo = mid
        else:
            hi = mid - 1
    return head, lo


class TooCostly(Exception):
    """A diff that would take Python too long; git does it in C instead."""


# Diagonal steps one diff may take (about 1.5 s of Python); a file rewritten beyond
# that goes to `git merge-file`, one process for an input that rare.
BUDGET = 5_000_000


class _Split:
    __slots__ = ("i1", "i2", "min_lo", "min_hi")

    def __init__(self) -> None:
        self.i1 = self.i2 = 0
        self.min_lo = self.min_hi = True


class _Diff:
    """xdl_do_diff + xdl_change_compact for two line-id sequences.

    `ch1`/`ch2` mark changed lines with a sentinel at each end: line i is at index i + 1.
    """

    def __init__(self, a: list[int], b: list[int], budget: int | None = None) -> None:
        self.a, self.b = a, b
        self.budget = BUDGET if budget is None else budget
        n1, n2 = len(a), len(b)
        self.ch1 = bytearray(n1 + 2)
        self.ch2 = bytearray(n2 + 2)
        dstart, j = common_ends(a, b)
        dend1, dend2 = n1 - j - 1, n2 - j - 1
        count1 = Counter(a)
        count2 = Counter(b)
        self.r1, self.h1 = self._cleanup(a, dstart, dend1, count2, self.ch1)
        self.r2, self.h2 = self._cleanup(b, dstart, dend2, count1, self.ch2)
        n = len(self.h1) + len(self.h2) + 3
        self.kvdf = [0] * n
        self.kvdb = [0] * n
        self.koff = len(self.h2) + 1
        self.mxcost = max(_bogosqrt(n), _MAX_COST_MIN)
        self._recs_cmp(0, len(self.h1), 0, len(self.h2), False)
        self._compact(a, self.ch1, self.ch2)
        self._compact(b, self.ch2, self.ch1)

    @staticmethod
    def _cleanup(
        recs: list[int], dstart: int, dend: int, other: Counter[int], changed: bytearray
    ) -> tuple[list[int], list[int]]:
        mlim = min(_bogosqrt(len(recs)), _MAX_EQLIMIT)
        dis = bytearray(
            0 if nm == 0 else 2 if nm >= mlim else 1
            for nm in map(other.__getitem__, recs[dstart : dend + 1])
        )
        last = dend - dstart
        keep = [
            d == 1 or (d == 2 and not _clean_mmatch(dis, k, 0, last)) for k, d in enumerate(dis)
        ]
        rindex = list(compress(range(dstart, dend + 1), keep))
        ha = list(compress(recs[dstart : dend + 1], keep))
        changed[dstart + 1 : dend + 2] = bytes(map(not_, keep))
        return rindex, ha

    def _recs_cmp(self, off1: int, lim1: int, off2: int, lim2: int, need_min: bool) -> None:
        h1, h2 = self.h1, self.h2
        stack = [(off1, lim1, off2, lim2, need_min)]
        while stack:
            off1, lim1, off2, lim2, need_min = stack.pop()
            while off1 < lim1 and off2 < lim2 and h1[off1] == h2[off2]:
                off1 += 1
                off2 += 1
            while off1 < lim1 and off2 < lim2 and h1[lim1 - 1] == h2[lim2 - 1]:
                lim1 -= 1
                lim2 -= 1
            if off1 == lim1:
                for k in range(off2, lim2):
                    self.ch2[self.r2[k] + 1] = 1
            elif off2 == lim2:
                for k in range(off1, lim1):
                    self.ch1[self.r1[k] + 1] = 1
            else:
                spl = self._split(off1, lim1, off2, lim2, need_min)
                # Order does not matter: the halves mark disjoint lines.
                stack.append((spl.i1, lim1, spl.i2, lim2, spl.min_hi))
                stack.append((off1, spl.i1, off2, spl.i2, spl.min_lo))

    def _split(self, off1: int, lim1: int, off2: int, lim2: int, need_min: bool) -> _Split:
        """xdl_split: the middle snake of a box, or a good enough point past the cost cap."""
        h1, h2 = self.h1, self.h2
        kvdf, kvdb, ko = self.kvdf, self.kvdb, self.koff
        spl = _Split()
        dmin, dmax = off1 - lim2, lim1 - off2
        fmid, bmid = off1 - off2, lim1 - lim2
        odd = (fmid - bmid) & 1
        fmin = fmax = fmid
        bmin = bmax = bmid
        kvdf[fmid + ko] = off1
        kvdb[bmid + ko] = lim1
        ec = 0
        while True:
            ec += 1
            got_snake = False
            self.budget -= fmax - fmin + bmax - bmin + 2
            if self.budget < 0:
                raise TooCostly
            if fmin > dmin:
                fmin -= 1
                kvdf[fmin - 1 + ko] = -1
            else:
                fmin += 1
            if fmax < dmax:
                fmax += 1
                kvdf[fmax + 1 + ko] = -1
            else:
                fmax -= 1
            # Diagonals are indexed d + ko (ko keeps them non-negative) from here on.
            blo, bhi = bmin + ko, bmax + ko
            for dk in range(fmax + ko, fmin + ko - 1, -2):
                lo = kvdf[dk - 1]
                hi = kvdf[dk + 1]
                i1 = lo + 1 if lo >= hi else hi
                i2 = i1 - dk + ko
                if i1 < lim1 and i2 < lim2 and h1[i1] == h2[i2]:  # rarely: follow a snake
                    prev1 = i1
                    while i1 < lim1 and i2 < lim2 and h1[i1] == h2[i2]:
                        i1 += 1
                        i2 += 1
                    if i1 - prev1 > _SNAKE_CNT:
                        got_snake = True
                kvdf[dk] = i1
                if odd and blo <= dk <= bhi and kvdb[dk] <= i1:
                    spl.i1, spl.i2 = i1, i2
                    return spl
            if bmin > dmin:
                bmin -= 1
                kvdb[bmin - 1 + ko] = _LINE_MAX
            else:
                bmin += 1
            if bmax < dmax:
                bmax += 1
                kvdb[bmax + 1 + ko] = _LINE_MAX
            else:
                bmax -= 1
            flo, fhi = fmin + ko, fmax + ko
            for dk in range(bmax + ko, bmin + ko - 1, -2):
                lo = kvdb[dk - 1]
                hi = kvdb[dk + 1]
                i1 = lo if lo < hi else hi - 1
                i2 = i1 - dk + ko
                if i1 > off1 and i2 > off2 and h1[i1 - 1] == h2[i2 - 1]:
                    prev1 = i1
                    while i1 > off1 and i2 > off2 and h1[i1 - 1] == h2[i2 - 1]:
                        i1 -= 1
                        i2 -= 1
                    if prev1 - i1 > _SNAKE_CNT:
                        got_snake = True
                kvdb[dk] = i1
                if not odd and flo <= dk <= fhi and i1 <= kvdf[dk]:
                    spl.i1, spl.i2 = i1, i2
                    return spl
            if need_min:
                continue
            if got_snake and ec > _HEUR_MIN_COST:
                box = (off1, lim1, off2, lim2)
                good = self._good_snake(box, ec, (fmin, fmax, fmid), (bmin, bmax, bmid))
                if good is not None:
                    return good
            if ec >= self.mxcost:
                return self._past_cost_cap((off1, lim1, off2, lim2), (fmin, fmax), (bmin, bmax))

    def _good_snake(
        self,
        box: tuple[int, int, int, int],
        ec: int,
        fwd: tuple[int, int, int],
        bwd: tuple[int, int, int],
    ) -> _Split | None:
        """xdl_split's heuristic once a long search found snakes: the furthest-reaching
        diagonal that ends a snake of _SNAKE_CNT lines, forward (`fwd`: fmin, fmax, fmid)
        then backward (`bwd`), as a split of `box` (off1, lim1, off2, lim2); else None."""
        off1, lim1, off2, lim2 = box
        fmin, fmax, fmid = fwd
        bmin, bmax, bmid = bwd
        h1, h2 = self.h1, self.h2
        kvdf, kvdb, ko = self.kvdf, self.kvdb, self.koff
        spl = _Split()
        best = 0
        for d in range(fmax, fmin - 1, -2):
            dd = d - fmid if d > fmid else fmid - d
            i1 = kvdf[d + ko]
            i2 = i1 - d
            v = (i1 - off1) + (i2 - off2) - dd
            if (
                v > _K_HEUR * ec
                and v > best
                and off1 + _SNAKE_CNT <= i1 < lim1
                and off2 + _SNAKE_CNT <= i2 < lim2
            ):
                k = 1
                while h1[i1 - k] == h2[i2 - k]:
                    if k == _SNAKE_CNT:
                        best = v
                        spl.i1, spl.i2 = i1, i2
                        break
                    k += 1
        if best > 0:
            spl.min_lo, spl.min_hi = True, False
            return spl
        for d in range(bmax, bmin - 1, -2):
            dd = d - bmid if d > bmid else bmid - d
            i1 = kvdb[d + ko]
            i2 = i1 - d
            v = (lim1 - i1) + (lim2 - i2) - dd
            if (
                v > _K_HEUR * ec
                and v > best
                and off1 < i1 <= lim1 - _SNAKE_CNT
                and off2 < i2 <= lim2 - _SNAKE_CNT
            ):
                k = 0
                while h1[i1 + k] == h2[i2 + k]:
                    if k == _SNAKE_CNT - 1:
                        best = v
                        spl.i1, spl.i2 = i1, i2
                        break
                    k += 1
        if best > 0:
            spl.min_lo, spl.min_hi = False, True
            return spl
        return None

    def _past_cost_cap(
        self, box: tuple[int, int, int, int], fwd: tuple[int, int], bwd: tuple[int, int]
    ) -> _Split:
        """xdl_split past the cost cap: the furthest point any diagonal reached, forward
        (`fwd`: fmin, fmax) or backward (`bwd`), as a split of `box`."""
        off1, lim1, off2, lim2 = box
        fmin, fmax = fwd
        bmin, bmax = bwd
        kvdf, kvdb, ko = self.kvdf, self.kvdb, self.koff
        spl = _Split()
        fbest = fbest1 = -1
        for d in range(fmax, fmin - 1, -2):
            i1 = min(kvdf[d + ko], lim1)
            i2 = i1 - d
            if lim2 < i2:
                i1, i2 = lim2 + d, lim2
            if fbest < i1 + i2:
                fbest, fbest1 = i1 + i2, i1
        bbest = bbest1 = _LINE_MAX
        for d in range(bmax, bmin - 1, -2):
            i1 = max(off1, kvdb[d + ko])
            i2 = i1 - d
            if i2 < off2:
                i1, i2 = off2 + d, off2
            if i1 + i2 < bbest:
                bbest, bbest1 = i1 + i2, i1
        if (lim1 + lim2) - bbest < fbest - (off1 + off2):
            spl.i1, spl.i2 = fbest1, fbest - fbest1
            spl.min_lo, spl.min_hi = True, False
        else:
            spl.i1, spl.i2 = bbest1, bbest - bbest1
            spl.min_lo, spl.min_hi = False, True
        return spl

    @staticmethod
    def _compact(recs: list[int], ch: bytearray, cho: bytearray) -> None:
        """xdl_change_compact without the indent heuristic (merge-file does not use it).

        git walks every group of both files in step, the empty ones between unchanged
        lines included; this walks only the groups with changes. The other file's groups
        do not change here, so its j-th group is known from its unchanged lines: group 0
        ends at the first, group j starts after the j-th. Groups are [start, end) in line
        numbers; `ch[i + 1]` is line i's flag."""
        nrec = len(recs)
        nreco = len(cho) - 2
        same_o = [i for i in range(nreco) if not cho[i + 1]]

        def other(j: int) -> bool:  # is the other file's j-th group non-empty?
            start = same_o[j - 1] + 1 if j else 0
            end = same_o[j] if j < len(same_o) else nreco
            return end > start

        start = 0
        end = ch.find(0, 1) - 1  # the first group: lines before the first unchanged one
        j = 0
        while True:
            if end != start:
                while True:
                    groupsize = end - start
                    end_matching_other = -1
                    while start > 0 and recs[start - 1] == recs[end - 1]:  # slide up
                        start -= 1
                        end -= 1
                        ch[start + 1] = 1
                        ch[end + 1] = 0
                        while ch[start]:
                            start -= 1
                        j -= 1
                        assert j >= 0, "group sync broken sliding up"
                    earliest_end = end
                    if other(j):
                        end_matching_other = end
                    while end < nrec and recs[start] == recs[end]:  # slide down
                        ch[start + 1] = 0
                        ch[end + 1] = 1
                        start += 1
                        end += 1
                        while ch[end + 1]:
                            end += 1
                        j += 1
                        assert j <= len(same_o), "group sync broken sliding down"
                        if other(j):
                            end_matching_other = end
                    if groupsize == end - start:
                        break
                if end != earliest_end and end_matching_other != -1:
                    while not other(j):
                        assert start > 0 and recs[start - 1] == recs[end - 1], "match disappeared"
                        start -= 1
                        end -= 1
                        ch[start + 1] = 1
                        ch[end + 1] = 0
                        while ch[start]:
                            start -= 1
                        j -= 1
            if end == nrec:
                break
            # The next group with changes: each empty group skipped is one unchanged line.
            nxt = ch.find(1, end + 2)
            if nxt == -1 or nxt - 1 >= nrec:
                break
            j += nxt - 1 - end
            start = nxt - 1
            end = ch.find(0, nxt) - 1

    def script(self) -> list[tuple[int, int, int, int]]:
        """xdl_build_script: (i1, i2, chg1, chg2) in file order."""
        ch1, ch2 = self.ch1, self.ch2
        out: list[tuple[int, int, int, int]] = []
        i1, i2 = len(self.a), len(self.b)
        while i1 >= 0 or i2 >= 0:
            if ch1[i1] or ch2[i2]:  # line i1 - 1 / i2 - 1
                l1, l2 = i1, i2
                while ch1[i1]:
                    i1 -= 1
                while ch2[i2]:
                    i2 -= 1
                out.append((i1, i2, l1 - i1, l2 - i2))
            i1 -= 1
            i2 -= 1
        out.reverse()
        return out


def diff(a: list[int], b: list[int], budget: int | None = None) -> list[tuple[int, int, int, int]]:
    """git's default (Myers) line diff of two id sequences: (i1, i2, chg1, chg2) changes.

    Raises TooCostly past `budget` (default BUDGET) diagonal steps."""
    return _Diff(a, b, budget).script()


def script(a: bytes, b: bytes) -> Script:
    """git's line diff of two texts, here; TooCostly past BUDGET steps."""
    return _near(split_lines(a), split_lines(b), a, b, None)


def _eol_crlf(recs: list[bytes], i: int) -> int:
    """is_eol_crlf: 1 for CRLF, 0 for LF, -1 when the file cannot tell."""
    n = len(recs)
    if i < n - 1:
        r = recs[i]
        return int(len(r) > 1 and r[-2:-1] == b"\r")
    if not n:
        return -1
    r = recs[i]
    if r and r.endswith(b"\n"):
        return int(len(r) > 1 and r[-2:-1] == b"\r")
    if not i:
        return -1
    r = recs[i - 1]
    return int(len(r) > 1 and r[-2:-1] == b"\r")


# With a faster differ at hand (git's, diffserver), a diff goes to it when the lines
# between the common head and tail number more than FAR_LINES — Python's record cleanup
# alone then costs more than the round trip — or when Python passes NEAR diagonal steps.
FAR_LINES = 500
NEAR = 20_000

# A diff's edit script: (start in a, start in b, lines in a, lines in b) per change.
Script = list[tuple[int, int, int, int]]
# A remembered resolution of a conflict region, asked by (base, ours, theirs) lines.
Remembered = Callable[[Sequence[bytes], Sequence[bytes], Sequence[bytes]], Resolution | None]
# Asks for a diff of two texts elsewhere; the function it returns waits for the answer.
Far = Callable[[bytes, bytes], Callable[[], Script]]


# How many words one file is searched for, and how many places each search looks at,
# before that file's whole word list is made instead (a file of one long run of `a`s,
# asked for `aaaa`, `aaaaa`, …, would otherwise be walked once per word, and input
# anyone can make must cost linear time).
_SEARCHES = 32


def has_word(text: bytes, word: bytes, tries: int = -1) -> bool | None:
    """Whether `word` (a run of word bytes) stands in `text` as a whole run: the same as
    `word in set(re.findall(rb"\\w{4,}", text, re.ASCII))` for a word of four or more,
    found with C searches instead of listing every word of the file. None once `tries`
    places (if not negative) did not settle it."""
    n, end = len(word), len(text)
    at = text.find(word)
    while at != -1:
        if (at == 0 or text[at - 1] not in _WORD_BYTES) and (
            at + n == end or text[at + n] not in _WORD_BYTES
        ):
            return True
        tries -= 1
        if tries == 0:
            return None
        at = text.find(word, at + 1)
    return False


class _Words:
    """Whether a file holds a word: searched for while few words are asked and each
    search settles quickly (`has_word`); past that, from the file's word list, made
    once."""

    def __init__(self, text: bytes) -> None:
        self._text = text
        self._words: set[bytes] | None = None
        self._found: dict[bytes, bool] = {}  # the words searched for, and the answers

    def __contains__(self, word: bytes) -> bool:
        if self._words is None:
            found = self._found.get(word)
            if found is None and len(self._found) < _SEARCHES:
                found = has_word(self._text, word, _SEARCHES)
                if found is not None:
                    self._found[word] = found
            if found is not None:
                return found
            self._words = set(TELLING.findall(self._text))
        return word in self._words


class _Whole:
    """What the finer methods ask of a merge's whole files, each answer worked out when
    first asked (most conflict regions are settled, or refused, before they ask): how
    often the base has each line (`Outside` reads it) and which words the base and
    upstream's file hold. Listing every word and counting every line of both files up
    front cost a 1,000-patch curl check about 3% of its time."""

    def __init__(self, base_lines: list[bytes], base: bytes, ours: bytes) -> None:
        self._lines = base_lines
        self._base, self._ours = _Words(base), _Words(ours)
        self._counts: Counter[bytes] | None = None

    def __getitem__(self, line: bytes) -> int:
        if self._counts is None:
            self._counts = Counter(map(ended, self._lines))
        return self._counts[line]

    def known(self, word: bytes) -> bool:
        """Whether the base file has `word`."""
        return word in self._base

    def upstream_wrote(self, word: bytes) -> bool:
        """Whether upstream's file has `word` and the base does not."""
        return word not in self._base and word in self._ours


def merge(
    ours: bytes,
    base: bytes,
    theirs: bytes,
    labels: tuple[str, str, str],
    *,
    far: Far | None = None,
    split: Split = split_lines,
    resolved: list[Resolution] | None = None,
    regions: list[Region] | None = None,
    remembered: Remembered | None = None,
) -> tuple[bytes, int] | None:
    """`git merge-file -p --diff3 -L ours -L base -L theirs`: (merged bytes, conflicts).

    With `resolved` (a list to fill), each conflict region is first offered to the finer
    methods of `core.resolve` (zealous, word, delete-wins), then to `remembered` (a
    person's earlier resolution of the same region, `reused`); the regions they settle
    are written resolved, not as markers, and their resolutions appended to `resolved`.
    With `regions` (a list to fill), every conflict region — settled or left as markers —
    is described there, with where it sits in the output (`core.resolve.Region`).

    `far(a, b)`, if given, asks git's own diff of two texts (diffserver) and returns a
    function that waits for the answer: long diffs go to it, and while git works on
    them the short side is diffed here. None where git should answer
    instead: input it would not merge as text (a NUL in the first 8,000 bytes), or,
    without `far`, a diff past BUDGET."""
    if any(b"\0" in x[:8000] for x in (ours, base, theirs)):
        return None
    l0, l1, l2 = split(base), split(ours), split(theirs)
    try:
        ask1 = _ask_far(l0, l1, base, ours, far)
        ask2 = _ask_far(l0, l2, base, theirs, far)
        # The short sides first: git works on the long ones meanwhile.
        s1 = _near(l0, l1, base, ours, far) if ask1 is None else None
        s2 = _near(l0, l2, base, theirs, far) if ask2 is None else None
        s1 = ask1() if ask1 is not None else s1
        s2 = ask2() if ask2 is not None else s2
        assert s1 is not None and s2 is not None
    except TooCostly:
        return None
    if not s1:
        return theirs, 0
    if not s2:
        return ours, 0
    changes = _do_merge(s1, s2, l1, l2, (len(l0), len(l1), len(l2)))
    out: list[bytes] = []
    extra = 0  # newlines `_side` added as items of their own: `out` minus them is lines
    i = 0
    conflicts = 0
    names = [x.encode("utf-8", "surrogateescape") for x in labels]
    # What the finer methods ask of the whole files, worked out as they ask it.
    whole: _Whole | None = None
    for mode, i0, chg0, i1, chg1, i2, chg2 in changes:
        fixed = None
        if mode == 0 and resolved is not None:
            whole = whole or _Whole(l0, base, ours)
            region = Counter(map(ended, l0[i0 : i0 + chg0]))
            fixed = resolve(
                l0[i0 : i0 + chg0],
                l1[i1 : i1 + chg1],
                l2[i2 : i2 + chg2],
                elsewhere=Outside(whole, region),
                known=whole.known,
                upstream_wrote=whole.upstream_wrote,
            )
            if fixed is None and remembered is not None:
                fixed = remembered(l0[i0 : i0 + chg0], l1[i1 : i1 + chg1], l2[i2 : i2 + chg2])
        if fixed is not None:
            assert resolved is not None
            resolved.append(fixed)
            out.extend(l1[i:i1])
            if regions is not None:
                regions.append(
                    _region((l0, l1, l2), (i0, chg0, i1, chg1, i2, chg2), len(out) - extra, fixed)
                )
            out.extend(fixed.lines)
        elif mode == 0:
            conflicts += 1
            out.extend(l1[i:i1])
            if regions is not None:
                regions.append(
                    _region((l0, l1, l2), (i0, chg0, i1, chg1, i2, chg2), len(out) - extra, None)
                )
            crlf = _eol_crlf(l1, i1 - 1 if i1 else 0)
            if crlf:
                crlf = _eol_crlf(l2, i2 - 1 if i2 else 0)
            if crlf:
                crlf = _eol_crlf(l0, 0)
            eol = b"\r\n" if crlf > 0 else b"\n"
            extra += _side(out, b"<" * _MARKER + b" " + names[0] + eol, l1[i1 : i1 + chg1], eol)
            extra += _side(out, b"|" * _MARKER + b" " + names[1] + eol, l0[i0 : i0 + chg0], eol)
            extra += _side(out, b"=" * _MARKER + eol, l2[i2 : i2 + chg2], eol)
            out.append(b">" * _MARKER + b" " + names[2] + eol)
        elif mode == 1:
            out.extend(l1[i : i1 + chg1])
        else:
            start = i2 - i1 + i
            out.extend(l2[start : start + i1 + chg2 - i])
        i = i1 + chg1
    out.extend(l1[i:])
    return b"".join(out), conflicts


def _ask_far(
    a: list[bytes], b: list[bytes], ta: bytes, tb: bytes, far: Far | None
) -> Callable[[], Script] | None:
    """Ask `far` for the diff if the lines between the common head and tail are many."""
    if far is None:
        return None
    head, tail = common_ends(a, b)
    return far(ta, tb) if len(a) + len(b) - 2 * (head + tail) > FAR_LINES else None


def _near(a: list[bytes], b: list[bytes], ta: bytes, tb: bytes, far: Far | None) -> Script:
    """The diff of two texts' lines here (handed to `far` past NEAR steps, if given)."""
    ids = {line: k for k, line in enumerate(dict.fromkeys(a + b))}
    ia, ib = list(map(ids.__getitem__, a)), list(map(ids.__getitem__, b))
    if far is None:
        return diff(ia, ib)
    try:
        return diff(ia, ib, NEAR)
    except TooCostly:
        return far(ta, tb)()


def _side(out: list[bytes], marker: bytes, lines: list[bytes], eol: bytes) -> int:
    """One side of a conflict after its marker; 1 where it had to end its last line."""
    out.append(marker)
    out.extend(lines)
    if lines and not lines[-1].endswith(b"\n"):
        out.append(eol)
        return 1
    return 0


def _region(
    sides: tuple[list[bytes], list[bytes], list[bytes]],
    at: tuple[int, int, int, int, int, int],
    out: int,
    fixed: Resolution | None,
) -> Region:
    """A conflict region as `merge` describes it, `at` a merge entry's (i0, chg0, i1,
    chg1, i2, chg2) in the `sides` (base, ours, theirs lines) and `out` its line in the
    output: settled by `fixed`, or left as the markers' block (its four marker lines and
    the three sides)."""
    l0, l1, l2 = sides
    i0, chg0, i1, chg1, i2, chg2 = at
    return Region(
        tuple(l0[i0 : i0 + chg0]),
        tuple(l1[i1 : i1 + chg1]),
        tuple(l2[i2 : i2 + chg2]),
        i0,
        out,
        len(fixed.lines) if fixed is not None else 4 + chg0 + chg1 + chg2,
        fixed.method if fixed is not None else "",
        fixed.source if fixed is not None else "",
        fixed.discarded if fixed is not None else (),
    )


def _do_merge(
    s1: list[tuple[int, int, int, int]],
    s2: list[tuple[int, int, int, int]],
    a1: list[bytes],
    a2: list[bytes],
    sizes: tuple[int, int, int],
) -> list[list[int]]:
    """xdl_do_merge at XDL_MERGE_EAGER (what diff3 style allows): merge entries
    [mode, i0, chg0, i1, chg1, i2, chg2], mode 0 a conflict, 1 ours, 2 theirs; `sizes`
    are the lines of base, ours and theirs."""
    n0, n1, n2 = sizes
    out: list[list[int]] = []

    def append(entry: list[int]) -> None:
        """Add a merge entry, folded into the last one where the two touch."""
        mode, i0, chg0, i1, chg1, i2, chg2 = entry
        if out:
            m = out[-1]
            if i1 <= m[3] + m[4] or i2 <= m[5] + m[6]:
                if mode != m[0]:
                    m[0] = 0
                m[2] = i0 + chg0 - m[1]
                m[4] = i1 + chg1 - m[3]
                m[6] = i2 + chg2 - m[5]
                return
        out.append(entry)

    p = q = 0
    while p < len(s1) and q < len(s2):
        x1, x2 = s1[p], s2[q]  # (i1 base, i2 side, chg1 base, chg2 side)
        if x1[0] + x1[2] < x2[0]:
            append([1, x1[0], x1[2], x1[1], x1[3], x2[1] - x2[0] + x1[0], x1[2]])
            p += 1
            continue
        if x2[0] + x2[2] < x1[0]:
            append([2, x2[0], x2[2], x1[1] - x1[0] + x2[0], x2[2], x2[1], x2[3]])
            q += 1
            continue
        if (
            x1[0] != x2[0]
            or x1[2] != x2[2]
            or x1[3] != x2[3]
            or a1[x1[1] : x1[1] + x1[3]] != a2[x2[1] : x2[1] + x2[3]]
        ):
            off = x1[0] - x2[0]
            ffo = off + x1[2] - x2[2]
            i0, i1, i2 = x1[0], x1[1], x2[1]
            if off > 0:
                i0 -= off
                i1 -= off
            else:
                i2 += off
            chg0 = x1[0] + x1[2] - i0
            chg1 = x1[1] + x1[3] - i1
            chg2 = x2[1] + x2[3] - i2
            if ffo < 0:
                chg0 -= ffo
                chg1 -= ffo
            else:
                chg2 += ffo
            append([0, i0, chg0, i1, chg1, i2, chg2])
        e1 = x1[0] + x1[2]
        e2 = x2[0] + x2[2]
        if e1 >= e2:
            q += 1
        if e2 >= e1:
            p += 1
    while p < len(s1):
        x1 = s1[p]
        append([1, x1[0], x1[2], x1[1], x1[3], x1[0] + n2 - n0, x1[2]])
        p += 1
    while q < len(s2):
        x2 = s2[q]
        append([2, x2[0], x2[2], x2[0] + n1 - n0, x2[2], x2[1], x2[3]])
        q += 1
    return out
