"""Where a hunk's lines are in a file, as the replay reports it: the runs of lines it
removes, whether upstream holds its added lines near a place (upstreaming with edits), and
the line its change sits at. Pure: hunks and lines in, answers out.
"""

from __future__ import annotations

from collections.abc import Sequence

from patchq.core import bounded
from patchq.core.patch import Hunk


def removed_runs(h: Hunk) -> list[list[bytes]]:
    """The runs of consecutive lines hunk `h` removes."""
    runs: list[list[bytes]] = []
    prev = ""
    for tag, c in h.lines:
        if tag == "-":
            if prev != "-":
                runs.append([])
            runs[-1].append(c)
        prev = tag
    return runs


def _squeezed(line: bytes) -> bytes:
    return b"".join(line.split())


def added_near(h: Hunk, up: Sequence[bytes], at: int) -> bool:
    """Whether every line hunk `h` adds (blank ones aside) is in `up` near line `at` as
    it is, or nearly (whitespace aside, or 90% alike): upstreaming with edits."""
    added = [_squeezed(c) for tag, c in h.lines if tag == "+"]
    added = [a for a in added if a]
    if not added:
        return False
    span = len(h.old_lines) + len(added)
    window = [_squeezed(x) for x in up[max(at - span - 10, 0) : at + span + 10]]
    have = set(window)
    for a in added:
        if a in have:
            continue
        # Bounded, so a hostile line costs linear time: two lines too long to compare are not alike.
        if not any(
            (bounded.ratio(a, w) or 0.0) >= 0.9
            for w in window
            if abs(len(w) - len(a)) <= len(a) // 5
        ):
            return False
    return True


def line_of(h: Hunk, lines: Sequence[bytes], moved_to: tuple[str, int, str] | None) -> int:
    """Where hunk `h`'s change is in `lines` (1-based; 0 where not found): where its new
    lines occur, else after its leading context, else its first added line, else
    before its trailing context — each nearest the hunk's own place."""
    if moved_to is not None:
        return moved_to[1]
    lead = 0
    while lead < len(h.lines) and h.lines[lead][0] == " ":
        lead += 1
    trail = 0
    while trail < len(h.lines) - lead and h.lines[len(h.lines) - 1 - trail][0] == " ":
        trail += 1
    added = [c for tag, c in h.lines if tag == "+"]
    before = [c for _, c in h.lines[:lead]]
    after = [c for _, c in h.lines[len(h.lines) - trail :]]
    probes: list[tuple[list[bytes], int]] = [
        (list(h.new_lines), lead),
        (before, lead),
        (added[:1], 0),
        (after, -len(added)),
    ]
    for probe, shift in probes:
        n = len(probe)
        if not n:
            continue
        hits = [i for i in range(len(lines) - n + 1) if lines[i : i + n] == probe]
        if hits:
            best = min(hits, key=lambda i: abs(i - h.new_pos))
            return max(best + shift, 0) + 1
    return 0
