"""Review hints (DESIGN §5): what a tool must not decide, said to the person reviewing.

Pure: the pinned base's lines, upstream's lines, and the line alignment between them in;
text out. Two kinds, both only ever text, never a decision:

- upstream added lines beside a hunk that look like the lines the patch changes (the
  patch may need the same change there: a second policy or flag line beside the one
  it guards);
- upstream inserted lines at the very spot the patch edits (the problem may be fixed
  differently upstream).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

from patchq.core import bounded
from patchq.core.patch import Hunk

# How far from a hunk's lines an upstream addition still counts as beside it.
NEAR = 3
# How alike an added line must be to a changed one (after stripping blanks).
ALIKE = 0.75

Opcode = tuple[str, int, int, int, int]


def _telling(line: bytes) -> bool:
    return len(line.strip().strip(b"{}()[];,").strip()) >= 4


@functools.lru_cache(maxsize=4096)
def _chars(line: bytes) -> Counter[int]:
    # Each line's counts once: a hunk's changed lines meet every line near it.
    return Counter(line)


def _alike(a: bytes, b: bytes) -> bool:
    x, y = a.strip(), b.strip()
    if x == y:
        return True
    # The ratio is at most 2·min/(len sum), then at most the quick ratio: most pairs
    # fail one of those bounds and are never aligned (the answer is the ratio's).
    if 2 * min(len(x), len(y)) < ALIKE * (len(x) + len(y)):
        return False
    if 2 * (_chars(x) & _chars(y)).total() < ALIKE * (len(x) + len(y)):
        return False  # the quick ratio, without building the matcher
    r = bounded.ratio(x, y)  # lines too long to compare in bounded time: no hint
    return r is not None and r >= ALIKE


def _changed(h: Hunk) -> list[tuple[int, int, list[bytes]]]:
    """Each run of -/+ lines as (first base line, end, the lines it changes): its removed
    lines and the context lines it wraps (a line between two added runs is guarded)."""
    out: list[tuple[int, int, list[bytes]]] = []
    lines = h.lines
    pos = 0
    i = 0
    while i < len(lines):
        if lines[i][0] == " ":
            pos += 1
            i += 1
            continue
        start = pos
        removed: list[bytes] = []
        while i < len(lines) and lines[i][0] != " ":
            if lines[i][0] == "-":
                removed.append(lines[i][1])
                pos += 1
            i += 1
        # Context wrapped by additions on both sides: `+if (...)`, ` line`, `+endif`.
        j = i
        wrapped: list[bytes] = []
        while j < len(lines) and lines[j][0] == " ":
            wrapped.append(lines[j][1])
            j += 1
        guarded = wrapped if j < len(lines) and lines[j][0] == "+" and len(wrapped) <= 2 else []
        if i > 0 and lines[i - 1][0] == "+" and guarded:
            removed = removed + guarded
        out.append((start, pos, removed))
    return out


def stripped(up: Sequence[bytes]) -> Counter[bytes]:
    """How often each line of `up` is there, blanks around it aside."""
    return Counter(x.strip() for x in up)


def maybe_sibling(h: Hunk, near: Sequence[bytes]) -> bool:
    """Whether any of the lines `near` a hunk (in upstream's file, outside the lines it
    matched) looks like a line it changes: the cheap test before aligning anything."""
    changed = {x.strip() for _, _, rem in _changed(h) for x in rem if _telling(x)}
    if not changed:
        return False
    return any(_telling(u) and any(_alike(u, c) for c in changed) for u in near)


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace").strip()


def hunk_hints(
    path: str,
    index: int,
    h: Hunk,
    start: int,
    up: Sequence[bytes],
    *,
    ops: Sequence[Opcode],
    seen: Counter[bytes] | None = None,
) -> list[str]:
    """The hints for hunk `index` of `path`, whose old lines start at base line `start`
    (0-based); `ops` aligns the pinned base with upstream's `up` (difflib opcodes);
    `seen`, if given, is `stripped(up)` (made once for a file's many hunks)."""
    out: list[str] = []
    end = start + len(h.old_lines)
    present = stripped(up) if seen is None else seen
    blocks = [(start + a, start + b, rem) for a, b, rem in _changed(h)]
    changed = [x for _, _, rem in blocks for x in rem if _telling(x)]
    for tag, i1, i2, j1, j2 in ops:
        if tag not in ("insert", "replace"):
            continue
        if i1 > end + NEAR or (i2 if tag == "replace" else i1) < start - NEAR:
            continue
        for j in range(j1, j2):
            u = up[j]
            # Beside the hunk: within NEAR lines of it in upstream's file too.
            if (i1 >= end and j - j1 >= NEAR) or (i2 <= start and j2 - j > NEAR):
                continue
            if not _telling(u):
                continue
            for c in changed:
                # A sibling: the line the patch changes is still there beside it.
                same = u.strip() == c.strip()
                sibling = c.strip() in present and not same and _alike(u, c)
                again = same and present[c.strip()] > 1
                if sibling or again:
                    out.append(
                        f"{path} hunk #{index + 1}: upstream added `{_text(u)}` beside "
                        f"`{_text(c)}` (line {j + 1}); the patch may need the same change there"
                    )
                    break
        if tag == "insert":
            for b0, b1, _ in blocks:
                if b0 <= i1 <= b1:  # inside, or right at the edge of, what it changes
                    out.append(
                        f"{path} hunk #{index + 1}: upstream inserted {j2 - j1} "
                        f"line{'s' if j2 - j1 != 1 else ''} at the spot it edits (line "
                        f"{j1 + 1}); the problem may be fixed differently upstream"
                    )
                    break
    return list(dict.fromkeys(out))
