"""A patch as values: `Patch` (a header and its file sections), `FilePatch` (one file's
git extended headers, names and hunks) and `Hunk`, each rendering back to bytes.

Everything parsed keeps its exact source bytes, so rendering a parsed patch reproduces
it byte for byte; values built anew (refreshed hunks) render in git's canonical
spelling. Also here: how a text is split into lines (`split_lines`, `LineCache`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from patchq.core.names import Normalisation
from patchq.core.quoting import quote_path

NO_EOL = b"\\ No newline at end of file\n"
HUNK_RE = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*?)\r?\n?$", re.S)
Split = Callable[[bytes], list[bytes]]  # split_lines, or a LineCache's split


def split_lines(data: bytes) -> list[bytes]:
    """Split on LF only, keeping endings (CR, VT, FF stay inside lines)."""
    return _split_lines(data)


class LineCache:
    """The lines of the last few large texts split in one run, kept by identity.

    A replay splits the same file many times over (to apply, merge, check moves and
    anchor). One cache lives on each run's GitRepo and its `split` is handed to the core
    functions that split; a hit returns a copy, so a caller may still change its list.
    It holds each text it keys, so an id cannot be reused while it is kept."""

    # Texts kept: 4 KB to 8 MB each, 16 and 8 MB at most in all (their lines cost
    # about twice that again).
    MIN, MAX, COUNT = 4096, 8 << 20, 16

    def __init__(self) -> None:
        self._kept: dict[int, tuple[bytes, list[bytes]]] = {}  # id → (the text, its lines)
        self._bytes = 0

    def split(self, data: bytes) -> list[bytes]:
        """`split_lines(data)`, from the cache where `data` is a text split before."""
        if not self.MIN <= len(data) <= self.MAX:
            return _split_lines(data)
        hit = self._kept.get(id(data))
        if hit is not None and hit[0] is data:
            return list(hit[1])
        lines = _split_lines(data)
        self._kept[id(data)] = (data, lines)
        self._bytes += len(data)
        while len(self._kept) > self.COUNT or self._bytes > self.MAX:
            self._bytes -= len(self._kept.pop(next(iter(self._kept)))[0])
        return list(lines)


def _split_lines(data: bytes) -> list[bytes]:
    if not data:
        return []
    if b"\r" not in data:
        # bytes.splitlines() splits on LF and CR only: without CR it is exactly our rule,
        # in C.
        return data.splitlines(keepends=True)
    lines = data.split(b"\n")
    last = lines.pop()
    out = [line + b"\n" for line in lines]
    if last:
        out.append(last)
    return out


@dataclass(frozen=True, slots=True)
class Hunk:
    """One `@@` hunk: its ranges and lines as (tag, content) with tag ' ', '-' or '+'.

    Content keeps its line ending; a line without a final LF is one that `\\ No newline
    at end of file` followed.
    """

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[tuple[str, bytes], ...]
    heading: bytes = b""
    raw: bytes | None = field(default=None, compare=False)
    lineno: int = field(default=0, compare=False)

    @property
    def old_pos(self) -> int:
        """0-based index of the first old line (for an insertion: of the line after it)."""
        return self.old_start - 1 if self.old_len else self.old_start

    @property
    def new_pos(self) -> int:
        return self.new_start - 1 if self.new_len else self.new_start

    @property
    def old_lines(self) -> list[bytes]:
        return [c for t, c in self.lines if t != "+"]

    @property
    def new_lines(self) -> list[bytes]:
        return [c for t, c in self.lines if t != "-"]

    @property
    def leading_context(self) -> int:
        n = 0
        for t, _ in self.lines:
            if t != " ":
                break
            n += 1
        return n

    @property
    def trailing_context(self) -> int:
        n = 0
        for t, _ in reversed(self.lines):
            if t != " ":
                break
            n += 1
        return n

    @property
    def has_context(self) -> bool:
        return any(t == " " for t, _ in self.lines)

    @property
    def changes(self) -> tuple[tuple[str, bytes], ...]:
        """The added and removed lines alone: what the hunk does, without where."""
        return tuple((t, c) for t, c in self.lines if t != " ")

    def reversed(self) -> Hunk:
        """The hunk that undoes this one."""
        swap = {" ": " ", "-": "+", "+": "-"}
        # Keep removals before additions within each change block, as diff does.
        out: list[tuple[str, bytes]] = []
        block: list[tuple[str, bytes]] = []
        for t, c in self.lines:
            if t == " ":
                out.extend(_ordered_block(block))
                block = []
                out.append((t, c))
            else:
                block.append((swap[t], c))
        out.extend(_ordered_block(block))
        return Hunk(
            self.new_start, self.new_len, self.old_start, self.old_len, tuple(out), self.heading
        )

    @property
    def sides(self) -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
        """The text before and after: two hunks with equal sides make the same change at
        the same spot, however their added and removed lines interleave."""
        return tuple(self.old_lines), tuple(self.new_lines)

    def shifted(self, old_start: int, new_start: int) -> Hunk:
        """The same hunk at other line numbers: its bytes kept but for the two numbers of
        its `@@` line (its heading, lengths and line spelling unchanged)."""
        raw = self.raw
        m = HUNK_RE.match(split_lines(raw)[0]) if raw else None
        if raw is not None and m is not None:
            raw = b"%s%d%s%d%s" % (
                raw[: m.start(1)],
                old_start,
                raw[m.end(1) : m.start(3)],
                new_start,
                raw[m.end(3) :],
            )
        else:
            raw = None
        return replace(self, old_start=old_start, new_start=new_start, raw=raw)

    def render(self) -> bytes:
        """The hunk's bytes: its source bytes if parsed, else git's canonical form."""
        if self.raw is not None:
            return self.raw
        out = [
            b"@@ -%s +%s @@%s\n"
            % (
                _range(self.old_start, self.old_len),
                _range(self.new_start, self.new_len),
                self.heading,
            )
        ]
        for t, c in self.lines:
            out.append(t.encode() + c)
            if not c.endswith(b"\n"):
                out.append(b"\n" + NO_EOL)
        return b"".join(out)


def _ordered_block(block: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    return [x for x in block if x[0] == "-"] + [x for x in block if x[0] == "+"]


def _range(start: int, length: int) -> bytes:
    return b"%d" % start if length == 1 else b"%d,%d" % (start, length)


@dataclass(frozen=True, slots=True)
class FilePatch:
    """One file's section: its paths (strip level applied), git metadata and hunks.

    `old_path` is None for a created file, `new_path` None for a deleted one.
    """

    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...] = ()
    old_mode: str | None = None
    new_mode: str | None = None
    rename: bool = False
    copy: bool = False
    similarity: int | None = None
    old_id: str | None = None
    new_id: str | None = None
    binary: bool = False
    git: bool = True
    raw_header: bytes | None = field(default=None, compare=False)
    raw_tail: bytes = field(default=b"", compare=False)
    lineno: int = field(default=0, compare=False)
    # A plain diff's names that may be the file (old, new, then `Index:`), when they
    # differ: `resolve_section` picks one by GNU patch's rules against the tree.
    candidates: tuple[str, ...] = field(default=(), compare=False)
    crlf: bool = field(default=False, compare=False)  # its `---`/`+++` lines end in CRLF

    @property
    def is_new(self) -> bool:
        return self.old_path is None

    @property
    def is_delete(self) -> bool:
        return self.new_path is None

    @property
    def path(self) -> str:
        """The path this section is about: the new one, or the old one if deleted."""
        p = self.new_path if self.new_path is not None else self.old_path
        assert p is not None
        return p

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this section reads or writes."""
        return tuple(dict.fromkeys(p for p in (self.old_path, self.new_path) if p is not None))

    def render(self) -> bytes:
        return self.render_header() + b"".join(h.render() for h in self.hunks) + self.raw_tail

    def render_header(self) -> bytes:
        if self.raw_header is not None:
            return self.raw_header
        # git quotes the prefixed name as a whole: "a/na\303\257ve".
        a = quote_path("a/" + (self.old_path or self.path))
        b = quote_path("b/" + (self.new_path or self.path))
        out = [b"diff --git %s %s\n" % (a, b)]
        if self.is_new:
            out.append(b"new file mode %s\n" % (self.new_mode or "100644").encode())
        elif self.is_delete:
            out.append(b"deleted file mode %s\n" % (self.old_mode or "100644").encode())
        elif self.old_mode and self.new_mode and self.old_mode != self.new_mode:
            out.append(
                b"old mode %s\nnew mode %s\n" % (self.old_mode.encode(), self.new_mode.encode())
            )
        if self.rename or self.copy:
            verb = b"rename" if self.rename else b"copy"
            out.append(b"similarity index %d%%\n" % (self.similarity or 100))
            out.append(b"%s from %s\n" % (verb, quote_path(self.old_path or "")))
            out.append(b"%s to %s\n" % (verb, quote_path(self.new_path or "")))
        if self.old_id and self.new_id:
            mode = b""
            if (
                not self.is_new
                and not self.is_delete
                and self.old_mode == self.new_mode
                and self.new_mode
            ):
                mode = b" " + self.new_mode.encode()
            out.append(b"index %s..%s%s\n" % (self.old_id.encode(), self.new_id.encode(), mode))
        if self.hunks:
            minus = a if not self.is_new else b"/dev/null"
            plus = b if not self.is_delete else b"/dev/null"
            # git ends a name holding a space with a tab, so a trailing space survives.
            out.append(b"--- %s%s\n" % (minus, b"\t" if b" " in minus else b""))
            out.append(b"+++ %s%s\n" % (plus, b"\t" if b" " in plus else b""))
        return b"".join(out)


@dataclass(frozen=True, slots=True)
class Patch:
    """A whole patch file: header bytes, file sections, trailing bytes (a mail signature)."""

    header: bytes
    sections: tuple[FilePatch, ...]
    trailer: bytes = b""
    normalisations: tuple[Normalisation, ...] = field(default=(), compare=False)

    def render(self) -> bytes:
        return self.header + b"".join(s.render() for s in self.sections) + self.trailer

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for s in self.sections for p in s.paths))
