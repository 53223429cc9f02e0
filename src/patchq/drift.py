"""Drift attribution: which upstream commits moved or changed the lines a hunk depends on.

For each file with a drifted hunk, one `git log -p -U0` over old-base..new-base gives
every commit's changed line ranges; the hunk's region (its context and removed lines in
the old base) is then carried forward commit by commit. A commit whose change overlaps
the region *touched* it (it changed what the hunk matches against); one that inserted
or removed lines above it *moved* it. One git process per drifted file, not per hunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .gitrepo import GitRepo

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True, slots=True)
class Change:
    """One upstream commit's changes to a file, as -U0 ranges (old start, len, new start, len)."""

    commit: str
    subject: str
    ranges: tuple[tuple[int, int, int, int], ...]


@dataclass(frozen=True, slots=True)
class Attribution:
    touched: tuple[str, ...]
    moved: tuple[str, ...]

    def for_status(self, status: str) -> tuple[str, ...]:
        """The commits to blame: those that moved an offset hunk, else those that touched it."""
        if status == "offset":
            return self.moved or self.touched
        return self.touched or self.moved


def parse_log(data: bytes) -> list[Change]:
    """Parse `git log --format=%x00%H %s -p -U0` output (oldest first)."""
    out: list[Change] = []
    commit, subject = "", ""
    ranges: list[tuple[int, int, int, int]] = []
    for line in data.split(b"\n"):
        if line.startswith(b"\0"):
            if commit:
                out.append(Change(commit, subject, tuple(ranges)))
            head = line[1:].decode("utf-8", "replace")
            commit, _, subject = head.partition(" ")
            ranges = []
            continue
        m = _HUNK.match(line)
        if m and commit:
            ranges.append((int(m.group(1)), 1 if m.group(2) is None else int(m.group(2)),
                           int(m.group(3)), 1 if m.group(4) is None else int(m.group(4))))
    if commit:
        out.append(Change(commit, subject, tuple(ranges)))
    return out


def history(g: GitRepo, old: str, new: str, path: str) -> list[Change]:
    """Every commit in old..new that changed `path` (named as at `new`), oldest first.

    Not `--reverse`: git applies it after `--follow`, which then loses the file's history
    before a rename (git 2.x), so the newest-first list is reversed here."""
    data = g.run("log", "--topo-order", "--format=%x00%H %s", "-p", "-U0", "--no-color",
                 "--no-ext-diff", "--follow", "-M", f"{old}..{new}", "--", path)
    return parse_log(data)[::-1]


def attribute(changes: Iterable[Change], start: int, length: int) -> Attribution:
    """Carry the 0-based region [start, start+length) forward through `changes`."""
    a, b = start, start + length
    touched: list[str] = []
    moved: list[str] = []
    for ch in changes:
        hit = shifted = False
        na, nb = a, b
        for os_, ol, ns, nl in ch.ranges:
            s0 = os_ if ol == 0 else os_ - 1
            e0 = s0 + ol
            d = nl - ol
            if e0 <= a:
                # Entirely above the region (an insertion right before it shifts it too).
                na += d
                nb += d
                shifted = shifted or d != 0
            elif s0 >= b:
                continue
            else:
                hit = True
                n0 = ns if nl == 0 else ns - 1
                na = min(na, n0)
                nb = max(nb + d, n0 + nl)
        a, b = na, max(nb, na)
        if hit:
            touched.append(ch.commit)
        elif shifted:
            moved.append(ch.commit)
    return Attribution(tuple(touched), tuple(moved))
