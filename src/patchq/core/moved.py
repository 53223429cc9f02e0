"""Where a block of lines went: the search behind method `moved` (DESIGN §4 step 6).

Pure: lines in, places out. A hunk whose pre-image block is gone from its file is looked
for among the files upstream changed — exactly first, then by similarity — and only a
single, unambiguous place is ever a result that a caller may act on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
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


def find_block(
    block: Sequence[bytes],
    files: Mapping[str, Sequence[bytes]],
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
    # Each file's lines are indexed once, for the votes and every window scored after.
    indexed = {path: [_ended(x) for x in files[path]] for path in sorted(files)}
    for path, lines in indexed.items():
        for i, x in enumerate(lines):
            k = anchors.get(x)
            if k is None:
                continue
            start = i - k
            if skip is not None and skip(path, start):
                continue
            votes[(path, start)] += 1
            if k == 0 and lines[i : i + n] == want:
                exact.append(Found(path, i, 1.0))
    if exact:
        return exact
    need = max(1, len(anchors) // 3)
    scored: list[Found] = []
    for (path, start), v in votes.items():
        if v < need or path in exact_only:
            continue
        lo = max(start, 0)
        window = indexed[path][lo : lo + n]
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
