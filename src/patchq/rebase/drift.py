"""Drift attribution: which upstream commits moved or changed the lines a hunk depends on.

One `git log -p -U0 -M` over old-base..new-base, for all the files whose hunks drifted
at once, gives every commit's changed line ranges per file; each hunk's region (its
context and removed lines in the old base) is then carried forward commit by commit. A
commit whose change overlaps the region *touched* it (it changed what the hunk matches
against); one that inserted or removed lines above it *moved* it. One git process per
few hundred drifted files, not per file or per hunk.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from patchq.core.errors import MissingObjectError
from patchq.core.patch import FilePatch, Hunk
from patchq.core.quoting import unquote
from patchq.core.records import HunkOutcome
from patchq.core.status import CLEAN, Status
from patchq.git.repo import GitRepo
from patchq.git.shallow import refuse_cut

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


# What the run goes without where the range's `git log -p` cannot be read whole.
DRIFT = "the upstream commits that changed each hunk's lines (messages name none)"


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
        if status == Status.OFFSET:
            return self.moved or self.touched
        return self.touched or self.moved


def histories_later(
    g: GitRepo, old: str, new: str, paths: Iterable[str], renames: dict[str, str]
) -> Callable[[], dict[str, list[Change]]]:
    """`histories`, asked of git at once and answered when called: its `git log` runs
    beside the replay's own work (the first patch, provenance's diff of the range) on
    another core, and the caller waits only where the first attribution needs it. An
    error (or an interrupted git) is raised by the call, as `histories` raises it."""
    wanted, names = list(paths), dict(renames)
    box: dict[str, dict[str, list[Change]] | BaseException] = {}

    def work() -> None:
        try:
            box["done"] = histories(g, old, new, wanted, names)
        except BaseException as e:  # handed to the caller, who raises it
            box["done"] = e

    t = threading.Thread(target=work, name="patchq-histories", daemon=True)
    t.start()

    def answer() -> dict[str, list[Change]]:
        t.join()
        got = box["done"]
        if isinstance(got, BaseException):
            raise got
        return got

    return answer


def histories(
    g: GitRepo, old: str, new: str, paths: Iterable[str], renames: dict[str, str]
) -> dict[str, list[Change]]:
    """`history` for many paths at once, in one `git log` (paths on its stdin).

    Without --follow (one path only), a rename is followed through `renames` (old path
    → path at `new`): both names are asked for, and the old name's commits are put
    before the new name's, in commit order, under the new name.
    """
    wanted = sorted(set(paths))
    back = {v: k for k, v in renames.items()}
    names = sorted(set(wanted) | {back[p] for p in wanted if p in back})
    per_file: dict[str, list[tuple[int, Change]]] = {}
    order = 0
    try:
        for data in g.path_history(old, new, names):
            for seq, (path, change) in enumerate(_split_log(data)):
                per_file.setdefault(path, []).append((order + seq, change))
            order += 1 << 30
        # A shallow clone's cut shows as a commit that added every file: blaming it (or
        # any commit after it, whose lines cannot be traced back to the old base) would
        # name the wrong commit.
        seen = (c.commit for changes in per_file.values() for _, c in changes)
        refuse_cut(g.common_dir, str(g.root), old, new, seen)
    except MissingObjectError as e:
        # An object of the range is not in the store (a partial or shallow clone): no
        # commit is named, which decides nothing (attribution only says who moved what).
        g.went_without(DRIFT, e)
        return {path: [] for path in wanted}
    out: dict[str, list[Change]] = {}
    for path in wanted:
        merged = per_file.get(path, []) + per_file.get(back.get(path, ""), [])
        out[path] = [c for _, c in sorted(merged, key=lambda x: x[0])]
    return out


def _split_log(data: bytes) -> list[tuple[str, Change]]:
    """(path, that commit's ranges in it) for every file of every commit, in log order."""
    out: list[tuple[str, Change]] = []
    commit = subject = ""
    path: str | None = None
    minus: str | None = None
    ranges: list[tuple[int, int, int, int]] = []

    def close() -> None:
        if commit and path is not None and ranges:
            out.append((path, Change(commit, subject, tuple(ranges))))

    for line in data.split(b"\n"):
        if line.startswith(b"\0"):
            close()
            head = line[1:].decode("utf-8", "replace")
            commit, _, subject = head.partition(" ")
            path, ranges = None, []
        elif line.startswith(b"diff --git "):
            close()
            path, minus, ranges = None, None, []
        elif line.startswith(b"--- ") and path is None:
            minus = _side(line[4:], b"a/")
        elif line.startswith(b"+++ ") and path is None:
            path = _side(line[4:], b"b/") or minus
        else:
            m = _HUNK.match(line)
            if m and path is not None:
                ranges.append(
                    (
                        int(m.group(1)),
                        1 if m.group(2) is None else int(m.group(2)),
                        int(m.group(3)),
                        1 if m.group(4) is None else int(m.group(4)),
                    )
                )
    close()
    return out


def _side(raw: bytes, prefix: bytes) -> str | None:
    name = unquote(raw.rstrip(b"\t"))
    if name == b"/dev/null":
        return None
    if name.startswith(prefix):
        name = name[len(prefix) :]
    return name.decode("utf-8", "surrogateescape")


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


@dataclass(frozen=True, slots=True)
class Drifted:
    """What drift attribution needs of a section: its old path and its unclean hunks."""

    old_path: str | None
    hunks: dict[int, Hunk]


def drifted_sections(
    sections: Sequence[FilePatch], renames: Sequence[tuple[str, str]], checks: Sequence[HunkOutcome]
) -> dict[str, Drifted]:
    """A patch's unclean hunks by the path the replay reported them under."""
    renamed = dict(renames)
    want: dict[str, set[int]] = {}
    for c in checks:
        if c.status != CLEAN:
            want.setdefault(c.file, set()).add(c.index)
    out = {}
    for s in sections:
        path = renamed.get(s.path, s.path)
        if path in want:
            out[path] = Drifted(s.old_path, {i: s.hunks[i] for i in want[path] if i < len(s.hunks)})
    return out
