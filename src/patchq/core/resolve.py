"""The finer merge methods of DESIGN §4 step 4, for one conflict region of a 3-way merge.

`merge3` answers as `git merge-file --diff3` does, where changes that touch conflict and
any two edits of one line conflict. Inside such a region (base, upstream's lines, the
patch's lines), three methods may still find the one result a careful person would
write, each refusing whenever there is a doubt:

- **zealous** — upstream's and the patch's edits of the region, diffed against the base,
  do not overlap (they only touch, or lie apart): both are applied. Two insertions at
  the same point (insert/insert) are a conflict: no order is right by itself.
- **word** — the edits overlap, but line by line: every base line pairs with one line of
  each side by similarity, and on each pair the token edits (words, runs of space,
  punctuation) compose the same way. A token both sides changed differently, or two
  insertions at one point, stays a conflict. Nothing either side wrote is dropped.
- **delete-wins** — every upstream edit lies inside lines the patch removes, and none of
  the patch's added lines resembles a line upstream edited: the patch's version is
  taken, and the upstream lines it discards are returned for the reviewer.

Pure: lines (bytes, with their newlines) in, lines out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from patchq.core import bounded
from patchq.core.status import DELETE_WINS, REUSED, WORD, ZEALOUS

# How alike two lines must be to count as the same line edited: difflib's ratio over
# their words and punctuation, case folded (so `LINE 6` is `line 6` rewritten).
SIMILAR = 0.5
# Regions larger than this are left to a person: pairing is quadratic in the lines.
MAX_LINES = 200
# Word-level pairing is tried only where the base side of the region is this small:
# its cost is the base's lines times each side's.
WORD_LINES = 40

_TOKEN = re.compile(rb"\w+|\s+|[^\w\s]", re.ASCII)
# Words long enough to tell: a patch's new identifier or flag, not `if` or `i`.
TELLING = re.compile(rb"\w{4,}", re.ASCII)


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a conflict region was resolved: its lines, the method, what it discarded."""

    lines: tuple[bytes, ...]
    method: str
    discarded: tuple[bytes, ...] = ()
    source: str = ""  # for `reused`: the remembered resolution's file


@dataclass(frozen=True, slots=True)
class Region:
    """One conflict region of a 3-way merge, as the merge left it: its three sides, where
    it starts in the base, the lines it takes in the merge's output (its markers, where
    it is left to a person), and how it was settled ("" where it was not)."""

    base: tuple[bytes, ...]
    ours: tuple[bytes, ...]  # upstream's lines
    theirs: tuple[bytes, ...]  # the patch's lines
    start: int  # first base line, 0-based
    out: int  # first line in the merged output
    out_len: int
    method: str = ""
    source: str = ""  # a reused resolution's file
    discarded: tuple[bytes, ...] = ()  # upstream lines a delete-wins dropped

    @property
    def settled(self) -> bool:
        return bool(self.method)


# The finer methods by how much a reviewer must read them, most first: a hunk whose
# change several regions settled records the most reviewable one.
_REVIEW_ORDER = (REUSED, DELETE_WINS, WORD, ZEALOUS)


def by_hunk(
    spans: Sequence[tuple[int, int] | None], regions: Sequence[Region]
) -> list[tuple[bool, Region | None]]:
    """The one answer to "how did the merge place this hunk?", per hunk: whether a
    region left to a person holds its change (a conflict), else the most reviewable
    settled region that does (None: merged as git merges, no conflict there).

    `spans` are the hunks' changed lines in the base, [start, end) (None: not known,
    counted as a conflict wherever the merge has one). A pure insertion's empty span
    belongs to a region it touches, as git's merge makes touching changes conflict."""
    open_ = [r for r in regions if not r.settled]
    out: list[tuple[bool, Region | None]] = []
    for span in spans:
        if span is None:
            out.append((bool(open_), None))
            continue
        mine = [r for r in regions if _touches(span, (r.start, r.start + len(r.base)))]
        # A hunk that ends where an open region begins, or begins where one ends, may
        # hold the insertion the region is about (a hunk's span covers all its blocks).
        if any(not r.settled for r in mine) or any(_meets(span, r) for r in open_):
            out.append((True, None))
            continue
        settled = sorted(mine, key=lambda r: _REVIEW_ORDER.index(r.method))
        out.append((False, settled[0] if settled else None))
    if open_ and out and not any(c for c, _ in out):
        # A region left to a person that no hunk was found in: every hunk is a
        # conflict rather than markers dropped with the patch called merged.
        out = [(True, None) for _ in out]
    return out


def _meets(span: tuple[int, int], r: Region) -> bool:
    end = r.start + len(r.base)
    return span[0] == end or span[1] == r.start


def patch_side(marked: bytes, regions: Sequence[Region]) -> bytes:
    """A merge's output (`marked`, with markers) with each region left to a person
    taken as the patch has it: what a person who keeps the patch's change writes."""
    lines = marked.split(b"\n")
    lines = [x + b"\n" for x in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    out: list[bytes] = []
    at = 0
    for r in sorted((r for r in regions if not r.settled), key=lambda r: r.out):
        out += lines[at : r.out]
        out += r.theirs
        at = r.out + r.out_len
    out += lines[at:]
    return b"".join(out)


def _touches(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two line ranges overlap, an empty one counting where it touches."""
    if a[0] == a[1] or b[0] == b[1]:
        return b[0] <= a[0] <= b[1] or a[0] <= b[0] <= a[1]
    return a[0] < b[1] and b[0] < a[1]


# An edit of a base sequence: replace base[start:end] with `new` (end == start: insert).
Edit = tuple[int, int, tuple[bytes, ...]]


def edits(base: Sequence[bytes], side: Sequence[bytes]) -> list[Edit]:
    """The edits that turn `base` into `side`, in order."""
    return [
        (i1, i2, tuple(side[j1:j2]))
        for op, i1, i2, j1, j2 in bounded.opcodes(list(base), list(side))
        if op != "equal"
    ]


def compose(
    base: Sequence[bytes], a: list[Edit], b: list[Edit], lines: bool = True
) -> list[bytes] | None:
    """Both edit lists applied to `base`, or None where they collide: overlapping ranges
    (unless the very same edit), two insertions at one point, or an insertion strictly
    inside a range the other side replaces. Edits that only touch compose — except, for
    `lines`, an insertion next to lines the other side replaced (see `_collide`); between
    tokens of one line that is how an argument is appended to a renamed call."""
    merged: list[Edit] = []
    for x in a:
        for y in b:
            if x == y:
                continue
            if _collide(x, y, lines):
                return None
    seen = set()
    for e in sorted(a + b, key=lambda e: (e[0], e[1])):
        if e in seen:
            continue  # the same edit made by both sides, taken once
        seen.add(e)
        merged.append(e)
    out: list[bytes] = []
    pos = 0
    for start, end, new in merged:
        if start < pos:
            return None  # defensive: overlapping after all
        out.extend(base[pos:start])
        out.extend(new)
        pos = end
    out.extend(base[pos:])
    return out


def _collide(x: Edit, y: Edit, lines: bool = True) -> bool:
    """Whether two edits of one base cannot both be made blindly. Replacements that only
    touch compose; an insertion next to lines the other side replaced does not: the line
    it hangs from changed (upstream rewrote `free(x);` where the patch adds `x = NULL;`
    after it), so where it belongs is a person's call."""
    (s1, e1, _), (s2, e2, _) = x, y
    if s1 == e1 and s2 == e2:
        return s1 == s2  # insert/insert at one point
    if s1 == e1:
        return s2 <= s1 <= e2 if lines else s2 < s1 < e2
    if s2 == e2:
        return s1 <= s2 <= e1 if lines else s1 < s2 < e1
    return s1 < e2 and s2 < e1


class Counts(Protocol):
    """How many times a file has a line (a Counter, or one counted when first asked)."""

    def __getitem__(self, line: bytes, /) -> int: ...


@dataclass(frozen=True, slots=True)
class Outside:
    """The lines a file has outside one region of it: `everywhere` counts the file's
    lines, `region` the region's. Asked line by line (`x in outside`), never built: a
    file with many conflict regions is not copied once per region."""

    everywhere: Counts
    region: Counter[bytes]

    def __contains__(self, line: object) -> bool:
        return isinstance(line, bytes) and self.everywhere[line] > self.region[line]


def resolve(
    base: Sequence[bytes],
    ours: Sequence[bytes],
    theirs: Sequence[bytes],
    *,
    elsewhere: Container[bytes] = frozenset(),
    known: Callable[[bytes], bool] | None = None,
    upstream_wrote: Callable[[bytes], bool] | None = None,
) -> Resolution | None:
    """A conflict region resolved by the first method that is sure (ours: upstream's
    lines, theirs: the patch's), or None: it stays a conflict. `elsewhere`: the base
    file's lines outside the region — a line upstream wrote into the region that the
    base had elsewhere was moved there, and a delete-wins must not discard it.

    `known(word)` says whether the base file has a word, `upstream_wrote(word)` whether
    upstream's new lines anywhere in the file have it: a new word the patch writes that
    upstream wrote too means upstream may have made the patch's change its own way (a
    flag added in another place), and no finer method decides that."""
    if max(len(base), len(ours), len(theirs)) > MAX_LINES:
        return None
    if known is not None and upstream_wrote is not None:
        added = {w for line in theirs for w in TELLING.findall(line) if not known(w)}
        if any(upstream_wrote(w) for w in added):
            return None
    up, mine = edits(base, ours), edits(base, theirs)
    together = compose(base, up, mine)
    if together is not None:
        return Resolution(tuple(together), ZEALOUS)
    wins = _delete_wins(base, ours, up, mine, elsewhere)
    if wins is not None:
        return wins
    words = _by_words(base, ours, theirs)
    if words is not None:
        return Resolution(tuple(words), WORD)
    return None


def _delete_wins(
    base: Sequence[bytes],
    ours: Sequence[bytes],
    up: list[Edit],
    mine: list[Edit],
    elsewhere: Container[bytes],
) -> Resolution | None:
    # Only what the patch deletes outright wins: a block it rewrites is a merge a person
    # makes, however unlike the old lines its new ones look.
    removed = [(s, e) for s, e, new in mine if e > s and not new]
    if not removed or not up or any(s == e for s, e, _ in up):
        return None  # (upstream's new lines inserted into the block are never discarded)
    for s, e, _ in up:
        inside = any(rs <= s and e <= re_ and (s < e or rs < s < re_) for rs, re_ in removed)
        if not inside:
            return None
    edited = [line for _, _, new in up for line in new]
    edited += [base[i] for s, e, _ in up for i in range(s, e)]
    added = [line for _, _, new in mine for line in new]
    if any(_similar(a, b) for a in added for b in edited):
        return None  # the patch rewrote what upstream edited: a person must merge them
    wrote = [line for _, _, new in up for line in new]
    if any(ended(x) in elsewhere for x in wrote if x.strip()):
        return None  # upstream moved a line here: discarding it would lose it
    result = compose(base, [], mine)
    assert result is not None
    return Resolution(tuple(result), DELETE_WINS, tuple(line for _, _, new in up for line in new))


def ended(line: bytes) -> bytes:
    """A line with its newline (a file's last line may lack one): how `elsewhere`
    counts lines, so a line moved up from the end is still the same line."""
    return line if line.endswith(b"\n") else line + b"\n"


def _similar(a: bytes, b: bytes) -> bool:
    return _ratio(a, b) >= SIMILAR


def _words(line: bytes) -> list[bytes]:
    return [t for t in _TOKEN.findall(line.lower()) if not t.isspace()]


def _pairs(base: Sequence[bytes], side: Sequence[bytes]) -> list[int | None] | None:
    """For each base line, the index of the side line it became (None: removed), in a
    monotone alignment that maximises similarity; None if some pairing is unsure."""
    n, m = len(base), len(side)
    ratios = _Ratios(base, side)
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            r = ratios.get(i, j)
            pair = score[i + 1][j + 1] + r if r >= SIMILAR else -1.0
            score[i][j] = max(pair, score[i + 1][j], score[i][j + 1])
    out: list[int | None] = []
    i = j = 0
    while i < n:
        if j < m:
            r = ratios.get(i, j)
            if r >= SIMILAR and score[i][j] == score[i + 1][j + 1] + r:
                out.append(j)
                i += 1
                j += 1
                continue
            if score[i][j] == score[i][j + 1] and score[i][j] != score[i + 1][j]:
                j += 1
                continue
        out.append(None)
        i += 1
    return out


class _Ratios:
    """`_ratio` of every base line with every side line, as `_pairs` asks it (each pair
    twice, each line against every line of the other side): each line's words found
    once, one matcher per side line (difflib keeps what it learns of its second
    sequence), each pair's answer once. The same answers as `_ratio`'s."""

    def __init__(self, base: Sequence[bytes], side: Sequence[bytes]) -> None:
        self.base, self.side = base, side
        self.base_words = [_words(x) for x in base]
        self.side_words = [_words(x) for x in side]
        self.matchers: dict[int, SequenceMatcher[bytes]] = {}
        self.known: dict[tuple[int, int], float] = {}

    def get(self, i: int, j: int) -> float:
        hit = self.known.get((i, j))
        if hit is None:
            hit = self.known[i, j] = self._ratio(i, j)
        return hit

    def _ratio(self, i: int, j: int) -> float:
        if self.base[i] == self.side[j]:
            return 1.0
        wa, wb = self.base_words[i], self.side_words[j]
        if not wa or not wb or not bounded.comparable(wa, wb):
            return 0.0
        if 2.0 * min(len(wa), len(wb)) / (len(wa) + len(wb)) < SIMILAR:
            return 0.0  # difflib's real_quick_ratio
        sm = self.matchers.get(j)
        if sm is None:
            sm = self.matchers[j] = SequenceMatcher(None, wa, wb, autojunk=False)
        else:
            sm.set_seq1(wa)
        if sm.quick_ratio() < SIMILAR:
            return 0.0
        return sm.ratio()


def _ratio(a: bytes, b: bytes) -> float:
    if a == b:
        return 1.0
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return 0.0
    sm = bounded.matcher(wa, wb)
    if sm is None:
        return 0.0  # lines too long to pair in bounded time: not paired (a conflict)
    if sm.real_quick_ratio() < SIMILAR or sm.quick_ratio() < SIMILAR:
        return 0.0  # an upper bound already below the bar: not similar, and cheap
    return sm.ratio()


def _by_words(
    base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]
) -> list[bytes] | None:
    """Merge line pairs token by token; None unless every base line pairs on both sides,
    the lines each side adds between pairs do not meet at one point, and every pair's
    token edits compose."""
    if len(base) > WORD_LINES:
        return None
    if _uses_what_upstream_renamed(base, ours, theirs):
        return None
    po = _pairs(base, ours)
    if po is None or None in po:
        return None  # (the patch's side is not paired at all: the answer is this)
    pt = _pairs(base, theirs)
    if pt is None or None in pt:
        return None
    out: list[bytes] = []
    prev_o = prev_t = -1
    for i, (jo, jt) in enumerate(zip(po, pt, strict=True)):
        assert jo is not None and jt is not None
        extra_o, extra_t = ours[prev_o + 1 : jo], theirs[prev_t + 1 : jt]
        if extra_o and extra_t and extra_o != extra_t:
            return None  # both sides inserted lines at one point
        out.extend(extra_o or extra_t)
        line = _merge_tokens(base[i], ours[jo], theirs[jt])
        if line is None:
            return None
        out.append(line)
        prev_o, prev_t = jo, jt
    extra_o, extra_t = ours[prev_o + 1 :], theirs[prev_t + 1 :]
    if extra_o and extra_t and extra_o != extra_t:
        return None
    out.extend(extra_o or extra_t)
    return out


_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _uses_what_upstream_renamed(
    base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]
) -> bool:
    """Whether one side adds uses of a name that the other took out of the whole region
    (upstream renamed `n` to `len`, say): merged word by word, the patch's new
    `s[n - 1]` would sit beside upstream's `s[len - 1]` and refer to nothing. Either
    way round (the merge stays symmetric); a person decides."""
    was, up, mine = (Counter(_NAME.findall(b"".join(x))) for x in (base, ours, theirs))
    return any((mine[w] > was[w] and not up[w]) or (up[w] > was[w] and not mine[w]) for w in was)


def _merge_tokens(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    b, o, t = (_TOKEN.findall(x) for x in (base, ours, theirs))
    if b"".join(b) != base or b"".join(o) != ours or b"".join(t) != theirs:
        return None  # tokens must cover the line exactly
    up, mine = edits(b, o), edits(b, t)
    if _same_literal(_literals(base, b), up, mine):
        return None
    merged = compose(b, up, mine, lines=False)
    return None if merged is None else b"".join(merged)


# A double-quoted string literal within one line, with backslash escapes.
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')


def _literals(line: bytes, tokens: Sequence[bytes]) -> list[tuple[int, int]]:
    """The line's string literals as token spans [first, end): a quote is a token of its
    own, so every literal starts and ends on a token boundary."""
    starts, pos = [], 0
    for tok in tokens:
        starts.append(pos)
        pos += len(tok)
    at = {x: i for i, x in enumerate(starts)}
    spans = []
    for m in _STRING.finditer(line):
        first, end = at.get(m.start()), at.get(m.end(), len(tokens))
        if first is not None:
            spans.append((first, end))
    return spans


def _same_literal(spans: Sequence[tuple[int, int]], up: list[Edit], mine: list[Edit]) -> bool:
    """Whether both sides edited inside one string literal, differently. A string is one
    value — a path, a message, a format — not words to compose: upstream turning
    `"/tmp/name-XXXXXX"` into `"/tmp/" NAME` and the patch prefixing the path are two
    rewrites of one value, and which holds is a person's call."""

    def inside(e: Edit, span: tuple[int, int]) -> bool:
        s, end, _ = e
        if s == end:
            return span[0] < s < span[1]  # an insertion between its quotes
        return s < span[1] and span[0] < end

    for span in spans:
        a = [e for e in up if inside(e, span)]
        b = [e for e in mine if inside(e, span)]
        if a and b and a != b:
            return True
    return False
