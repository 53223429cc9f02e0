"""Remembered resolutions (DESIGN §4 method 7, `reused`): how a person resolved one
conflict region, kept in the patch repo's `resolutions/` so that the same conflict met
again — a rebase aborted and redone, the series carried onto a second branch, `check`
— is resolved the same way, and said so.

A resolution is keyed by its region's three sides (base, upstream's lines, the patch's
lines), normalised so that only their text counts: each line's ending (LF, CRLF, none at
the end of a file) is read as LF. Where the region sits — its line, its file — is not
part of the key, as with `git rerere`. One small text file each, made to be read in a
code review:

    # patchq resolution: how a person resolved one conflict; `rebase` and `check`
    # reuse it when they meet the same conflict again (method `reused`).
    # first resolved in patches/fix-flags.patch, CMakeLists.txt
    base 1
     set(FLAGS "-O2")
    upstream 1
     set(FLAGS "-O2 -g")
    patch 1
     set(FLAGS "-O3")
    resolution 1
     set(FLAGS "-O3 -g")

Each side is a heading with its line count, then its lines, each after one space, byte
for byte (CRLF kept); a last line without a newline is followed by
`\\ No newline at end of file`, as in a diff. `#` lines before the first heading are
comments. A person may edit the resolution's lines (and its count); editing a side
changes the conflict it answers. Pure: bytes in, values out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from patchq.core import bounded
from patchq.core.errors import BadInputError
from patchq.core.patch import split_lines
from patchq.core.resolve import Region, Resolution
from patchq.core.status import REUSED

FOLDER = "resolutions"
SUFFIX = ".resolution"
_SIDES = (b"base", b"upstream", b"patch", b"resolution")
_NO_EOL = b"\\ No newline at end of file"
_MARKS = (b"<<<<<<< ", b"||||||| ", b"=======", b">>>>>>> ")


@dataclass(frozen=True, slots=True)
class Remembered:
    """One resolution: the conflict's three sides and the lines a person wrote for it."""

    base: tuple[bytes, ...]
    ours: tuple[bytes, ...]
    theirs: tuple[bytes, ...]
    lines: tuple[bytes, ...]
    origin: str = ""  # where it was first resolved (a comment, for the reader)

    @property
    def key(self) -> str:
        return key(self.base, self.ours, self.theirs)

    @property
    def filename(self) -> str:
        """Its file in `resolutions/`: named by its key, so one conflict has one file."""
        return self.key[:20] + SUFFIX


def _norm(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2] + b"\n"
    return line if line.endswith(b"\n") else line + b"\n"


def key(base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]) -> str:
    """The hex sha256 of a conflict's normalised sides: what a resolution answers."""
    h = hashlib.sha256(b"patchq resolution 1\0")
    for side in (base, ours, theirs):
        h.update(b"%d\0" % len(side))
        for line in side:
            h.update(_norm(line))
    return h.hexdigest()


def render(r: Remembered) -> bytes:
    """The file form of a resolution."""
    out = [
        b"# patchq resolution: how a person resolved one conflict; `rebase` and `check`\n",
        b"# reuse it when they meet the same conflict again (method `reused`).\n",
    ]
    if r.origin:
        origin = r.origin.replace("\n", " ").encode("utf-8", "surrogateescape")
        out.append(b"# first resolved in " + origin + b"\n")
    for name, lines in zip(_SIDES, (r.base, r.ours, r.theirs, r.lines), strict=True):
        out.append(name + b" %d\n" % len(lines))
        for line in lines:
            out.append(b" " + line)
            if not line.endswith(b"\n"):
                out.append(b"\n" + _NO_EOL + b"\n")
    return b"".join(out)


def parse(data: bytes, where: str) -> Remembered:
    """A resolution file read back; BadInputError naming `where:line` if it is not one."""
    lines = split_lines(data)
    k = 0
    origin = ""
    while k < len(lines) and lines[k].startswith(b"#"):
        text = lines[k].decode("utf-8", "replace").strip()
        if text.startswith("# first resolved in "):
            origin = text[len("# first resolved in ") :]
        k += 1
    sides: list[tuple[bytes, ...]] = []
    for name in _SIDES:
        if k >= len(lines):
            raise BadInputError(f"ends before its `{name.decode()}` side", f"{where}:{k + 1}")
        head = lines[k].rstrip(b"\r\n").split(b" ")
        if len(head) != 2 or head[0] != name or not head[1].isdigit():
            raise BadInputError(
                f"expected `{name.decode()} <lines>`, found {lines[k][:60]!r}", f"{where}:{k + 1}"
            )
        k += 1
        side: list[bytes] = []
        for _ in range(int(head[1])):
            if k >= len(lines) or not lines[k].startswith(b" "):
                raise BadInputError(
                    f"its `{name.decode()}` side has fewer lines than {int(head[1])}",
                    f"{where}:{k + 1}",
                )
            line = lines[k][1:]
            k += 1
            if k < len(lines) and lines[k].rstrip(b"\r\n") == _NO_EOL:
                line = line[:-1] if line.endswith(b"\n") else line
                k += 1
            side.append(line)
        sides.append(tuple(side))
    if k != len(lines):
        raise BadInputError("has text after its resolution", f"{where}:{k + 1}")
    if any(x.startswith(_MARKS) for x in sides[3]):
        raise BadInputError("its resolution still has conflict markers", where)
    return Remembered(sides[0], sides[1], sides[2], sides[3], origin)


class Book:
    """The resolutions a run may reuse, by key; `lookup` is what the merge asks."""

    def __init__(self, entries: Iterable[tuple[str, Remembered]]) -> None:
        # (file name, resolution); a later file with the same key wins.
        self.by_key = {r.key: (name, r) for name, r in entries}

    def __bool__(self) -> bool:
        return bool(self.by_key)

    def lookup(
        self, base: Sequence[bytes], ours: Sequence[bytes], theirs: Sequence[bytes]
    ) -> Resolution | None:
        """The remembered resolution of this region, fitted to its line endings."""
        hit = self.by_key.get(key(base, ours, theirs))
        if hit is None:
            return None
        name, r = hit
        return Resolution(_fit(r.lines, (ours, theirs, base)), REUSED, (), f"{FOLDER}/{name}")


def _fit(lines: Sequence[bytes], sides: Sequence[Sequence[bytes]]) -> tuple[bytes, ...]:
    """`lines` with the region's own line ending (CRLF where its first line has one),
    the last one open only where the region ends a file without a newline."""
    first = next((s[0] for s in sides if s), b"\n")
    eol = b"\r\n" if first.endswith(b"\r\n") else b"\n"
    open_end = all(not s[-1].endswith(b"\n") for s in sides if s) and any(sides)
    out = [x.rstrip(b"\r\n") + eol if x.endswith(b"\n") else x + eol for x in lines]
    if out and open_end:
        out[-1] = out[-1][: -len(eol)]
    return tuple(out)


def resolved_regions(
    marked: bytes, resolved: bytes, regions: Sequence[Region]
) -> list[tuple[Region, tuple[bytes, ...]]]:
    """What a person wrote for each region left as markers: `marked` is the file as it
    was shown (the regions' `out` spans are its lines), `resolved` the file as they
    left it. A region is answered only where the lines just around its markers are
    still there, unchanged: an edit that runs past the markers is no answer to that
    region alone, and is not remembered."""
    m, r = split_lines(marked), split_lines(resolved)
    same: dict[int, int] = {}
    # Bounded, so a hostile file costs linear time: beyond the bound, the common head
    # and tail are what stayed, which still answers a file's one resolved region.
    for tag, i1, i2, j1, _ in bounded.opcodes(m, r):
        if tag == "equal":
            same.update((i1 + d, j1 + d) for d in range(i2 - i1))
    out = []
    for g in regions:
        if g.settled:
            continue
        s, e = g.out, g.out + g.out_len
        if e > len(m) or not m[s].startswith(_MARKS[0]):
            continue
        lo = 0 if s == 0 else (same[s - 1] + 1 if s - 1 in same else None)
        hi = len(r) if e == len(m) else same.get(e)
        if lo is None or hi is None or hi < lo:
            continue
        answer = tuple(r[lo:hi])
        if any(x.startswith(_MARKS) for x in answer):
            continue
        out.append((g, answer))
    return out
