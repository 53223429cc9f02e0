"""Where a block of lines went: the search behind method `moved` (DESIGN §4 step 6).

Pure: lines in, places out. A hunk whose pre-image block is gone from its file is looked
for among the files upstream changed — exactly first, then by similarity — and only a
single, unambiguous place is ever a result that a caller may act on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from patchq.core import bounded

# A window this similar to the block is the block, edited.
SIMILAR = 0.7
# Two windows whose similarity differs by less than this are equally good: ambiguous.
TIE = 0.05


@dataclass(frozen=True, slots=True)
class Found:
    """One place the block is: its file, first line (0-based), and how alike it is."""

    path: str
    line: int
    ratio: float

    @property
    def exact(self) -> bool:
        return self.ratio >= 1.0


def telling(line: bytes) -> bool:
    """A line worth searching on: more than blanks, brackets and punctuation."""
    return len(line.strip().strip(b"{}()[];,").strip()) >= 4


def _ended(x: bytes) -> bytes:
    return x if x.endswith(b"\n") else x + b"\n"


@dataclass(frozen=True, slots=True)
class Indexed:
    """A file's lines as `find_block` searches them: each ended with a newline, and the
    set of them. Made once for a file's content and searched for every block: a file
    without one of a block's lines is passed over at once, and a line's places are
    found by `list.index`, not by a walk over the file in Python."""

    lines: list[bytes]
    have: frozenset[bytes]

    def has_any(self, lines: Iterable[bytes]) -> bool:
        """Whether one of `lines` (ended) is a line of the file (a set intersection, in C:
        a rebase asks it of every file upstream changed for every failing hunk)."""
        return not self.have.isdisjoint(lines)

    def places(self, line: bytes) -> Iterator[int]:
        """Where `line` (ended) is in the file, first to last."""
        if line not in self.have:
            return
        i = -1
        while True:
            try:
                i = self.lines.index(line, i + 1)
            except ValueError:
                return
            yield i


def index(lines: Sequence[bytes]) -> Indexed:
    ended = [x if x.endswith(b"\n") else x + b"\n" for x in lines]
    return Indexed(ended, frozenset(ended))


def index_text(lines: list[bytes]) -> Indexed:
    """`index` of a text's lines as `core.patch.split_lines` gives them, where only the
    last can lack its newline: the list is copied in C and that line alone ended."""
    ended = list(lines)
    if ended and not ended[-1].endswith(b"\n"):
        ended[-1] += b"\n"
    return Indexed(ended, frozenset(ended))


def anchors_of(block: Sequence[bytes]) -> list[bytes]:
    """The block's telling lines, ended: those a file must hold for it to be found there."""
    return [x for x in map(_ended, block) if telling(x)]


def find_block(
    block: Sequence[bytes],
    files: Mapping[str, Sequence[bytes] | Indexed],
    skip: Callable[[str, int], bool] | None = None,
    exact_only: frozenset[str] = frozenset(),
) -> list[Found]:
    """Every exact place of `block` in `files` (none skipped by `skip(path, line)`); if
    there is none, the most similar places (ratio ≥ SIMILAR) outside the `exact_only`
    files, the best first, only those within TIE of the best. A block with fewer than two
    telling lines is found nowhere: it would match anything."""
    want = [_ended(x) for x in block]
    anchors = {x: k for k, x in reversed(list(enumerate(want))) if telling(x)}
    if len(anchors) < 2:
        return []
    n = len(want)
    exact: list[Found] = []
    votes: Counter[tuple[str, int]] = Counter()
    indexed = {p: f if isinstance(f, Indexed) else index(f) for p, f in files.items()}
    for path in sorted(indexed):
        ix = indexed[path]
        for x, k in anchors.items():
            for i in ix.places(x):
                start = i - k
                if skip is not None and skip(path, start):
                    continue
                votes[(path, start)] += 1
                if k == 0 and ix.lines[i : i + n] == want:
                    exact.append(Found(path, i, 1.0))
    if exact:
        return exact
    need = max(1, len(anchors) // 3)
    scored: list[Found] = []
    for (path, start), v in votes.items():
        if v < need or path in exact_only:
            continue
        lo = max(start, 0)
        window = indexed[path].lines[lo : lo + n]
        ratio = bounded.ratio(want, window) or 0.0
        if ratio >= SIMILAR:
            scored.append(Found(path, lo, ratio))
    if not scored:
        return []
    scored.sort(key=lambda f: (-f.ratio, f.path, f.line))
    best = scored[0].ratio
    # Windows a line or two apart over the same block are one place.
    out: list[Found] = []
    for f in scored:
        if f.ratio < best - TIE:
            break
        if any(o.path == f.path and abs(o.line - f.line) < n for o in out):
            continue
        out.append(f)
    return out
