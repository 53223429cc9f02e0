"""The patch model: parse unified diffs into values and render them back, on bytes.

A patch is a free-text or mail header, then file sections (git extended headers,
`---`/`+++`, hunks). Everything parsed keeps its exact source bytes, so rendering a
parsed patch reproduces it byte for byte; values built anew (refreshed hunks) render in
git's canonical spelling. This module knows nothing of git processes or the terminal.

Malformed input raises `BadInputError` naming `file:line` and what is wrong.
Which of a section's names is the file is core.names' to say, against the tree.

The parser reads what GNU patch reads (docs/patch-formats.md): whitespace-damaged
hunks, a `+++` line without `---`, timestamps after spaces, `Index:`/`RCS file:`/`Only in`
lines and other text between sections, mbox files of several messages, CRLF patch
files. Every repair it makes is recorded on the parsed patch as a `Normalisation`;
which of a plain diff's names to patch (old, new or `Index:`) is decided later, against
the tree, by `resolve_section`, which is handed an `exists(path)` callable so that this
module stays pure.
"""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from patchq.core.errors import BadInputError, UnsafePathError
from patchq.core.names import (
    BLANK_CONTEXT,
    EOF_CONTEXT,
    EOF_MID_LINE,
    GIT_NAMES,
    HUNK_OVERRUN,
    MINUS_ONLY,
    OVERLAP,
    PLUS_ONLY,
    SHORT_NAME,
    SKIPPED_HUNK,
    SKIPPED_TEXT,
    SPACED_STAMP,
    TAB_CONTEXT,
    UNSAFE_NAME,
    Normalisation,
    best_name,
)
from patchq.core.paths import file_mode
from patchq.core.quoting import decode_path, quote_path, unquote

NO_EOL = b"\\ No newline at end of file\n"

_HUNK_RE = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*?)\r?\n?$", re.S)
_CONTEXT_HUNK_RE = re.compile(rb"^\*\*\* \d+(,\d+)? \*\*\*\*\r?\n?$")
_ED_RE = re.compile(rb"^\d+(,\d+)?[acd]\d*(,\d+)?\r?\n?$")
_STAMP_RE = re.compile(
    rb"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.\d+)?"
    rb"(?: ?([+-])(\d\d):?(\d\d))?"
)
_MAIL_TRAILER = (b"base-commit: ", b"prerequisite-patch-id: ")
_GIT_EXT = (
    b"old mode ",
    b"new mode ",
    b"deleted file mode ",
    b"new file mode ",
    b"copy from ",
    b"copy to ",
    b"rename from ",
    b"rename to ",
    b"rename old ",
    b"rename new ",
    b"similarity index ",
    b"dissimilarity index ",
    b"index ",
)


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
        m = _HUNK_RE.match(split_lines(raw)[0]) if raw else None
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


def _git_mode(mode: str, cur: _Lines, n: int) -> str:
    """A mode line's mode as git stores it: `100777` is `100755`, `120755` a symlink's
    `120000` (`paths.file_mode`). A directory's or submodule's mode is kept, for the
    applier to refuse by name; any other is malformed."""
    if not re.fullmatch(r"1[02]0[0-7]{3}|160000|40000|040000", mode):
        raise cur.error(f"unknown file mode {mode!r}", n)
    return mode if mode in ("160000", "40000", "040000") else file_mode(mode, "")


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


# --- parsing ---------------------------------------------------------------------------


class _Lines:
    """A cursor over the patch's lines that knows its file name for error messages."""

    def __init__(self, data: bytes, where: str) -> None:
        self.lines = split_lines(data)
        self.i = 0
        self.where = where
        self.notes: list[Normalisation] = []

    def note(self, kind: str, lineno: int, detail: str) -> None:
        self.notes.append(Normalisation(kind, lineno, detail))

    def peek(self, k: int = 0) -> bytes | None:
        j = self.i + k
        return self.lines[j] if j < len(self.lines) else None

    def take(self) -> bytes:
        line = self.lines[self.i]
        self.i += 1
        return line

    def error(self, what: str, lineno: int | None = None, hint: str | None = None) -> BadInputError:
        n = self.i + 1 if lineno is None else lineno
        return BadInputError(what, f"{self.where}:{n}", hint)


# Lines that may stand before a plain section's `---`/`+++` lines: `Index:` and its
# `=====` rule (quilt, CVS, svn), CVS's `RCS file:`/`retrieving revision`, the `diff -ruN …`
# command line, `Prereq:`.
_PREAMBLE = (b"Index:", b"====", b"RCS file: ", b"retrieving revision ", b"diff ", b"Prereq: ")
_PREAMBLE_MAX = 8  # how far a preamble may run before its `---` line (keeps scans linear)
# What `diff -r` writes between sections besides diffs; skipped without a note.
_DIFF_R_TEXT = (b"Only in ", b"Common subdirectories: ", b"Files ", b"diff ", b"Index:")


def _is_section_start(cur: _Lines, k: int = 0) -> bool:
    line = cur.peek(k)
    if line is None:
        return False
    if line.startswith(b"diff --git "):
        return True
    if line.startswith(b"Binary files ") and line.rstrip().endswith(b" differ"):
        return True
    if line.startswith(_PREAMBLE):
        for j in range(k + 1, k + _PREAMBLE_MAX):
            nxt = cur.peek(j)
            if nxt is None or nxt.startswith(b"diff --git "):
                return False
            if not nxt.startswith(_PREAMBLE):
                return _is_plain_start(cur, j)
        return False
    return _is_plain_start(cur, k)


def _is_plain_start(cur: _Lines, k: int) -> bool:
    """`---`, `+++`, `@@`; or, as GNU patch takes them, `+++` or `---` alone before `@@`."""
    a, b = cur.peek(k), cur.peek(k + 1)
    if a is None or b is None:
        return False
    if a.startswith(b"--- "):
        if b.startswith(b"+++ "):
            c = cur.peek(k + 2)
            return c is not None and c.startswith(b"@@ -")
        return b.startswith(b"@@ -")
    return a.startswith(b"+++ ") and b.startswith(b"@@ -")


def _quoted_end(text: bytes) -> int | None:
    """Index of the quote closing the C-quoted name that `text` starts with, or None."""
    i = 1
    while i < len(text):
        if text[i] == 0x5C:  # backslash: the next byte is escaped, even a quote
            i += 2
        elif text[i] == 0x22:
            return i
        else:
            i += 1
    return None


def split_name(raw: bytes) -> tuple[bytes, bytes]:
    """Split a `---`/`+++` name from what follows it: a timestamp, or git's lone tab.

    git appends a tab to names that hold a space, quoted or not (diff.c), and diff
    appends a tab and the timestamp.
    """
    text = raw.rstrip(b"\r\n")
    if text.startswith(b'"') and (end := _quoted_end(text)) is not None:
        return text[: end + 1], text[end + 1 :].lstrip(b"\t ")
    if b"\t" in text:
        name, rest = text.split(b"\t", 1)
        return name, rest
    return text.rstrip(b" "), b""


def strip_path(
    raw: bytes, strip: int, cur: _Lines, lineno: int, *, exact: bool = False
) -> str | None:
    """Turn a `---`/`+++`/`diff --git` name into a repo path: drop timestamp, unquote, strip.

    `exact`: the name is all of `raw` (`diff --git`, `rename to`), so trailing spaces stay.
    """
    name = raw.rstrip(b"\r\n") if exact else split_name(raw)[0]
    try:
        name = unquote(name)
    except ValueError as e:
        raise cur.error(str(e), lineno) from None
    if name == b"/dev/null":
        return None
    if b"\0" in name:
        raise cur.error("file name contains a NUL byte", lineno)
    if not name:
        raise cur.error("empty file name", lineno)
    if name.startswith(b"/"):
        # Whatever the strip level, a patch naming /etc/... was not made inside a tree.
        raise UnsafePathError(
            f"absolute path {decode_path(name)!r} in the patch",
            f"{cur.where}:{lineno}",
            "patches may only touch files inside the target; re-create it with relative paths",
        )
    if strip:
        parts = name.split(b"/")
        # quilt and GNU patch count runs of slashes as one separator.
        parts = [p for p in parts[:-1] if p] + parts[-1:]
        if len(parts) <= strip:
            raise cur.error(
                f"-p{strip} strips the whole of {decode_path(name)!r}",
                lineno,
                "set the patch's strip level in series (e.g. -p0)",
            )
        name = b"/".join(parts[strip:])
        if not name:
            raise cur.error("file name ends in a slash", lineno)
    return decode_path(name)


# A date after a name and spaces, no tab: `diff -u` by hand, some editors and old tools
# (`--- f.c.orig   2010-05-13 04:57:46.878010140 +0100`, `Thu Jan  1 00:00:00 1970`).
_SPACED_STAMP = re.compile(
    rb"(.*?) +(\d{4}-\d\d-\d\d[ T]\d\d:\d\d.*"
    rb"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) .*)$"
)
NULL, SHORT, NAMED = "null", "short", "named"


def _plain_name(
    raw: bytes, strip: int, cur: _Lines, lineno: int, *, stamps: bool = True
) -> tuple[str | None, str]:
    """A plain diff's `---`/`+++`/`Index:` name with the strip level applied, and what it
    is: `NULL` (/dev/null), `SHORT` (fewer components than the strip level: GNU patch
    ignores it and looks at the other names) or `NAMED`."""
    text = raw.rstrip(b"\r\n")
    if stamps and not text.startswith(b'"') and b"\t" not in text:
        m = _SPACED_STAMP.match(text)
        if m is not None and m.group(1).strip():
            text = m.group(1)
            cur.note(SPACED_STAMP, lineno, "a timestamp follows the name after spaces, not a tab")
    name = split_name(text)[0] if stamps else text
    try:
        name = unquote(name)
    except ValueError as e:
        raise cur.error(str(e), lineno) from None
    if name == b"/dev/null":
        return None, NULL
    if b"\0" in name:
        raise cur.error("file name contains a NUL byte", lineno)
    if not name:
        raise cur.error("empty file name", lineno)
    if name.startswith(b"/"):
        raise UnsafePathError(
            f"absolute path {decode_path(name)!r} in the patch",
            f"{cur.where}:{lineno}",
            "patches may only touch files inside the target; re-create it with relative paths",
        )
    if strip:
        parts = name.split(b"/")
        parts = [p for p in parts[:-1] if p] + parts[-1:]
        if len(parts) <= strip:
            return decode_path(name), SHORT
        name = b"/".join(parts[strip:])
        if not name:
            raise cur.error("file name ends in a slash", lineno)
    return decode_path(name), NAMED


def _unsafe(name: str) -> bool:
    return ".." in name.split("/")


def _git_names(line: bytes, strip: int, cur: _Lines, lineno: int) -> tuple[str, str] | None:
    """The two names of a `diff --git a/X b/Y` line (used when no ---/+++ lines follow).

    None when two different names hold spaces, so the line cannot say where one ends:
    like git apply, the caller then takes them from the rename/copy or ---/+++ lines.
    """
    rest = line[len(b"diff --git ") :].rstrip(b"\r\n")
    if rest.startswith(b'"'):
        end = _quoted_end(rest)
        if end is None:
            raise cur.error("cannot read the file names of this `diff --git` line", lineno)
        first, second = rest[: end + 1], rest[end + 2 :]
    else:
        # Unquoted names may hold spaces: split where both halves name the same file.
        candidates = [m.start() for m in re.finditer(rb" ", rest)]
        pos = _same_name_split(rest, candidates)
        first = second = b""
        if pos is not None:
            first, second = rest[:pos], rest[pos + 1 :]
        if not first:
            if not candidates:
                raise cur.error("cannot read the file names of this `diff --git` line", lineno)
            if len(candidates) > 1:
                return None
            first, second = rest[: candidates[0]], rest[candidates[0] + 1 :]
    if _too_short(first, strip) or _too_short(second, strip):
        # GNU patch (pch.c) drops both names then, and goes by the `---`/`+++` ones.
        return None
    old = strip_path(first, strip, cur, lineno, exact=True)
    new = strip_path(second, strip, cur, lineno, exact=True)
    if old is None or new is None:
        raise cur.error("`diff --git` line names /dev/null", lineno)
    return old, new


def _too_short(raw: bytes, strip: int) -> bool:
    """Whether a `diff --git` name has no more components than the strip level."""
    try:
        name = unquote(raw.rstrip(b"\r\n"))
    except ValueError:
        return False
    parts = name.split(b"/")
    return bool(strip) and not name.startswith(b"/") and len([p for p in parts[:-1] if p]) < strip


def _same_name_split(rest: bytes, spaces: list[int]) -> int | None:
    """The first space of `spaces` where `rest` splits into `A B` with B quoted, or with
    A and B naming the same file after their first `/` — in linear time: a split's two
    names can be equal only where their lengths are, and as the space moves right the
    first name's length grows while the second's shrinks, so at most one space on each
    side of the first `/` is compared byte by byte."""
    slashes = [m.start() for m in re.finditer(rb"/", rest)]
    n = len(rest)
    for pos in spaces:
        if rest[pos + 1 : pos + 2] == b'"':
            return pos
        a_start = slashes[0] + 1 if slashes and slashes[0] < pos else 0
        k = bisect.bisect_right(slashes, pos)
        b_start = slashes[k] + 1 if k < len(slashes) else pos + 1
        if pos - a_start == n - b_start and rest[a_start:pos] == rest[b_start:]:
            return pos
    return None


def _hunk_header(cur: _Lines) -> tuple[int, int, int, int, bytes]:
    """Take a hunk's `@@ -a,b +c,d @@ heading` line: (old start, old count, new start,
    new count, heading); a count left out is 1, as in diff's output."""
    start = cur.i
    m = _HUNK_RE.match(cur.take())
    if m is None:
        raise cur.error(
            "malformed hunk header", start + 1, "expected `@@ -start,count +start,count @@`"
        )
    old_start, new_start = int(m.group(1)), int(m.group(3))
    old_len = 1 if m.group(2) is None else int(m.group(2))
    new_len = 1 if m.group(4) is None else int(m.group(4))
    if (old_start == 0 and old_len) or (new_start == 0 and new_len):
        raise cur.error(
            "hunk header puts lines at line 0",
            start + 1,
            "only an empty side (`-0,0` or `+0,0`) starts at line 0",
        )
    return old_start, old_len, new_start, new_len, m.group(5)


def _parse_hunk(cur: _Lines) -> Hunk:
    start = cur.i
    old_start, old_len, new_start, new_len, heading = _hunk_header(cur)
    old_left, new_left = old_len, new_len
    lines: list[tuple[str, bytes]] = []
    src, i, n = cur.lines, cur.i, len(cur.lines)
    append = lines.append
    blank = tabbed = 0  # damaged context lines: how many, and the first one's index
    first_blank = first_tab = 0
    # GNU patch drops a last line the patch file ends inside of ("patch unexpectedly
    # ends in middle of line", pch.c pget_line returns 0 for it): inside a hunk it is
    # the end of the file. A `\\ No newline` marker so cut is still read as one.
    end = n - 1 if n and not src[-1].endswith(b"\n") and src[-1][:1] != b"\\" else n
    # The hot loop of parsing: plain locals, one branch per line.
    while old_left > 0 or new_left > 0:
        if i >= end:
            if _chopped_context(lines, old_left, new_left):
                if end < n:
                    cur.note(
                        EOF_MID_LINE,
                        n,
                        "the patch ends in the middle of a line: that line is dropped, as "
                        "GNU patch drops it",
                    )
                # GNU patch (pch.c) takes up to three missing lines at the end of the
                # patch for blank context lines an editor or mailer chopped off.
                cur.note(
                    EOF_CONTEXT,
                    start + 1,
                    f"the patch ends {old_left} blank context line(s) short of the hunk's count",
                )
                lines.extend([(" ", b"\n")] * old_left)
                old_left = new_left = 0
                i = n  # the dropped line, if any, belongs to this hunk's text
                break
            cur.i = i
            raise cur.error(
                f"truncated hunk: header says {old_len} old and {new_len} new lines, found "
                f"{old_len - old_left} and {new_len - new_left}",
                start + 1,
            )
        line = src[i]
        tag = line[:1]
        if tag == b" ":
            if old_left == 0 or new_left == 0:
                break
            append((" ", line[1:]))
            old_left -= 1
            new_left -= 1
        elif tag == b"-":
            if old_left == 0:
                break
            append(("-", line[1:]))
            old_left -= 1
        elif tag == b"+":
            if new_left == 0:
                break
            append(("+", line[1:]))
            new_left -= 1
        elif tag == b"\\" and lines:
            t, c = lines[-1]
            lines[-1] = (t, c[:-1] if c.endswith(b"\n") else c)
        elif line in (b"\n", b"\r\n") or tag == b"\t":
            # A context line whose leading space a mailer or editor stripped: an empty
            # line, or one starting with a tab (GNU patch reads both so).
            if old_left == 0 or new_left == 0:
                break
            append((" ", line))
            old_left -= 1
            new_left -= 1
            if tag == b"\t":
                first_tab = first_tab or i + 1
                tabbed += 1
            else:
                first_blank = first_blank or i + 1
                blank += 1
        else:
            break
        i += 1
    cur.i = i
    _note_damaged_context(cur, (blank, first_blank), (tabbed, first_tab))
    if old_left > 0 or new_left > 0:
        raise _count_error(cur, start, (old_len, new_len), (old_left, new_left))
    nxt = cur.peek()
    if nxt is not None and nxt.startswith(b"\\") and lines:
        cur.take()
        t, c = lines[-1]
        lines[-1] = (t, c[:-1] if c.endswith(b"\n") else c)
    raw = b"".join(cur.lines[start : cur.i])
    return Hunk(old_start, old_len, new_start, new_len, tuple(lines), heading, raw, start + 1)


def _note_damaged_context(cur: _Lines, blank: tuple[int, int], tabbed: tuple[int, int]) -> None:
    """Record the context lines a mailer or editor damaged, as (how many, the first's line):
    `blank` empty ones, `tabbed` ones that start with a tab."""
    if blank[0]:
        cur.note(
            BLANK_CONTEXT,
            blank[1],
            f"{blank[0]} empty line(s) in the hunk read as blank context lines",
        )
    if tabbed[0]:
        cur.note(
            TAB_CONTEXT,
            tabbed[1],
            f"{tabbed[0]} line(s) starting with a tab read as context lines that lost their space",
        )


def _chopped_context(lines: list[tuple[str, bytes]], old_left: int, new_left: int) -> bool:
    """Whether a hunk the patch file ends `old_left` old and `new_left` new lines short
    of its counts is read as GNU patch 2.7.6 reads it (pch.c, another_hunk, unified
    case): at the end of the file, while at most three new lines are missing
    (`p_max - filldst < 3`), it reads a blank context line (" \\n"), "assume blank
    lines got chopped". A context line fills both sides, so the hunk is whole only
    when as many old as new lines are missing; GNU patch calls anything else a
    malformed patch, and a hunk without a change line (no `p_prefix_context`) too."""
    return 0 < old_left == new_left <= 3 and any(t != " " for t, _ in lines)


def _count_error(
    cur: _Lines, start: int, counts: tuple[int, int], left: tuple[int, int]
) -> BadInputError:
    """The error for a hunk whose header `counts` (old, new lines) are `left` short."""
    (old_len, new_len), (old_left, new_left) = counts, left
    return cur.error(
        f"hunk header says {old_len} old and {new_len} new lines, found "
        f"{old_len - old_left} and {new_len - new_left} before this line",
        None,
        f"the hunk starting on line {start + 1} has wrong line counts",
    )


@dataclass(slots=True)
class _Head:
    """A file section's header as `_parse_section` reads it, step by step."""

    git: bool
    old_path: str | None = None
    new_path: str | None = None
    named: bool = True  # False while a `diff --git` line's names are unknown
    binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    rename: bool = False
    copy: bool = False
    similarity: int | None = None
    old_id: str | None = None
    new_id: str | None = None
    minus: bytes = b""  # the raw `---` and `+++` names
    plus: bytes = b""
    candidates: tuple[str, ...] = ()
    crlf: bool = False


def _parse_section(cur: _Lines, strip: int) -> FilePatch:
    start = cur.i
    first = cur.peek()
    assert first is not None
    if first.startswith(b"Binary files "):
        return _binary_files(cur, first, strip)
    head = _Head(git=first.startswith(b"diff --git "))
    if head.git:
        cur.take()
        names = _git_names(first, strip, cur, start + 1)
        head.named = names is not None
        if names is not None:
            head.old_path, head.new_path = names
        _git_extended(cur, strip, head)
        _git_binary(cur, head)
    if not head.git:
        old_path, new_path, candidates, minus, plus, crlf = _plain_names(cur, strip)
        head.old_path, head.new_path, head.candidates = old_path, new_path, candidates
        head.minus, head.plus, head.crlf = minus, plus, crlf
    elif not head.binary:
        _git_minus_plus(cur, strip, start, head)
    if not head.named:
        raise cur.error(
            "cannot read the file names of this `diff --git` line",
            start + 1,
            "names with spaces that differ need rename/copy or ---/+++ lines",
        )
    header_end = cur.i
    hunks = _section_hunks(cur)
    if not head.git and not hunks:
        raise cur.error("section has no hunks", start + 1)
    if not head.git:
        _epoch_sides(head, hunks[0])
    return FilePatch(
        head.old_path,
        head.new_path,
        tuple(hunks),
        old_mode=head.old_mode,
        new_mode=head.new_mode,
        rename=head.rename,
        copy=head.copy,
        similarity=head.similarity,
        old_id=head.old_id,
        new_id=head.new_id,
        binary=head.binary,
        git=head.git,
        raw_header=b"".join(cur.lines[start:header_end]),
        lineno=start + 1,
        candidates=head.candidates,
        crlf=head.crlf,
    )


def _binary_files(cur: _Lines, first: bytes, strip: int) -> FilePatch:
    """A plain diff's `Binary files A and B differ` line: a binary section of its own."""
    start = cur.i
    cur.take()
    m = re.match(rb"Binary files (.*) and (.*) differ", first.rstrip(b"\r\n"))
    if m is None:
        raise cur.error("cannot read this `Binary files` line", start + 1)
    old_path = strip_path(m.group(1), strip, cur, start + 1, exact=True)
    new_path = strip_path(m.group(2), strip, cur, start + 1, exact=True)
    return FilePatch(
        old_path,
        new_path,
        (),
        binary=True,
        git=False,
        raw_header=b"".join(cur.lines[start : cur.i]),
        lineno=start + 1,
    )


def _git_extended(cur: _Lines, strip: int, head: _Head) -> None:
    """Read git's extended header lines (modes, rename/copy, similarity, index) into `head`."""
    while (line := cur.peek()) is not None and line.startswith(_GIT_EXT):
        n = cur.i + 1
        cur.take()
        text = line.rstrip(b"\r\n")
        if text.startswith((b"new file mode ", b"deleted file mode ", b"old mode ", b"new mode ")):
            mode = _git_mode(text.rsplit(b" ", 1)[1].decode("ascii", "replace"), cur, n)
            if text.startswith(b"new file"):
                head.new_mode, head.old_path = mode, None
            elif text.startswith(b"deleted"):
                head.old_mode, head.new_path = mode, None
            elif text.startswith(b"old mode"):
                head.old_mode = mode
            else:
                head.new_mode = mode
        elif text.startswith((b"rename from ", b"copy from ", b"rename old ")):
            if text.startswith(b"rename"):
                head.rename = True
            else:
                head.copy = True
            head.named = True
            head.old_path = strip_path(
                text.split(b" ", 2)[2], max(strip - 1, 0), cur, n, exact=True
            )
        elif text.startswith((b"rename to ", b"copy to ", b"rename new ")):
            head.new_path = strip_path(
                text.split(b" ", 2)[2], max(strip - 1, 0), cur, n, exact=True
            )
        elif text.startswith(b"similarity index "):
            m = re.search(rb"(\d+)%", text)
            head.similarity = int(m.group(1)) if m else None
        elif text.startswith(b"index "):
            m = re.fullmatch(rb"index ([0-9a-f]+)\.\.([0-9a-f]+)(?: (\d+))?", text)
            if m is None:
                raise cur.error("malformed `index` line", n)
            head.old_id, head.new_id = m.group(1).decode(), m.group(2).decode()
            if m.group(3):
                head.old_mode = head.new_mode = _git_mode(m.group(3).decode(), cur, n)


def _git_binary(cur: _Lines, head: _Head) -> None:
    """Take a git section's `GIT binary patch` (with its data) or `Binary files` line."""
    line = cur.peek()
    if line is None or not (
        line.startswith(b"GIT binary patch") or line.startswith(b"Binary files ")
    ):
        return
    head.binary = True
    cur.take()
    if line.startswith(b"GIT binary patch"):
        while (
            (line := cur.peek()) is not None
            and not _is_section_start(cur)
            and not line.startswith(b"-- ")
        ):
            cur.take()


def _git_minus_plus(cur: _Lines, strip: int, start: int, head: _Head) -> None:
    """Read a git section's `---`/`+++` lines into `head` (GNU patch also takes a section
    that lost one of them); their names win over the `diff --git` ones, as in pch.c."""
    got: dict[bytes, tuple[int, bytes]] = {}
    while (line := cur.peek()) is not None and line[:4] in (b"--- ", b"+++ "):
        if line[:4] in got:
            break
        got[line[:4]] = (cur.i + 1, cur.take()[4:])
        head.crlf = line.endswith(b"\r\n")
    if not got:
        return
    nxt = cur.peek()
    if len(got) == 1 and (nxt is None or not nxt.startswith(b"@@ ")):
        kind = next(iter(got)).decode().strip()
        other = "+++" if kind == "---" else "---"
        raise cur.error(f"`{kind}` line without a `{other}` line or a hunk after it", cur.i)
    at_a, head.minus = got.get(b"--- ", (0, b""))
    at_b, head.plus = got.get(b"+++ ", (0, b""))
    if not at_a:
        cur.note(PLUS_ONLY, at_b, "a `+++` line without a `---` line before it")
    if not at_b:
        cur.note(MINUS_ONLY, at_a, "a `---` line without a `+++` line after it")
    a_name, a_kind = _plain_name(head.minus, strip, cur, at_a) if at_a else (None, SHORT)
    b_name, b_kind = _plain_name(head.plus, strip, cur, at_b) if at_b else (None, SHORT)
    if a_kind == NULL and b_kind == NULL:
        raise cur.error("both sides of the section are /dev/null", at_a or at_b)
    # GNU patch (pch.c): a `---`/`+++` name replaces the `diff --git` one; a
    # /dev/null or too short one leaves it (and /dev/null marks create/delete).
    a = a_name if a_kind == NAMED else head.old_path
    b = b_name if b_kind == NAMED else head.new_path
    if not head.named:
        if a is None and b is None:
            # Every name too short for the strip level: the error says so.
            strip_path(
                head.minus if a_kind == SHORT and at_a else head.plus, strip, cur, at_a or at_b
            )
        if a is None or b is None:
            a, b = a or b, b or a
        head.old_path, head.new_path, head.named = a, b, True
    elif not head.rename and not head.copy:
        head.old_path, head.new_path, head.candidates = _git_choice(
            cur, start + 1, (head.old_path, head.new_path), (a, b)
        )
    if a_kind == NULL:
        head.old_path = None
    if b_kind == NULL:
        head.new_path = None


def _section_hunks(cur: _Lines) -> list[Hunk]:
    """Read a section's hunks, noting each that starts before the one above it ends."""
    hunks: list[Hunk] = []
    while (line := cur.peek()) is not None and line.startswith(b"@@ "):
        hunks.append(_parse_hunk(cur))
    for prev, nxt_h in zip(hunks, hunks[1:], strict=False):
        if nxt_h.old_pos >= prev.old_pos + prev.old_len:
            continue
        # GNU patch freezes a file only up to a hunk's last change: the next hunk may
        # start in its trailing context (two diffs of one file pasted into one section),
        # and one stated before it is looked for after it (placement decides).
        inside = nxt_h.old_pos >= prev.old_pos + prev.old_len - prev.trailing_context
        cur.note(
            OVERLAP,
            nxt_h.lineno,
            f"the hunk starts inside the trailing context of the hunk on line {prev.lineno}"
            if inside
            else f"the hunk is stated before the end of the hunk on line {prev.lineno}; it "
            "is looked for after it, as GNU patch looks",
        )
    return hunks


def _epoch_sides(head: _Head, first_hunk: Hunk) -> None:
    """`diff -N` names a missing file with the epoch as its timestamp; like GNU patch
    (pch.c), such a side whose hunk starts at line 0 says the file does not exist."""
    if (
        first_hunk.old_start == 0
        and not first_hunk.old_len
        and _is_epoch(head.minus)
        and head.new_path is not None
    ):
        head.old_path = None
    elif (
        first_hunk.new_start == 0
        and not first_hunk.new_len
        and _is_epoch(head.plus)
        and head.old_path is not None
    ):
        head.new_path = None


def _plain_names(
    cur: _Lines, strip: int
) -> tuple[str | None, str | None, tuple[str, ...], bytes, bytes, bool]:
    """Read a plain diff's header up to its first `@@`: (old path, new path, the names
    the file may have when they differ, the raw `---` and `+++` names, CRLF line ends).

    Like GNU patch (pch.c intuit_diff_type, util.c fetchname): the names are the `---`
    and `+++` ones, or the `Index:` one when both are missing; a name with too few
    components for the strip level is ignored. Which of several names is the file is the
    tree's to say (`resolve_section`); without a tree, GNU patch's best_name() decides.
    """
    got: dict[bytes, tuple[int, bytes]] = {}
    crlf = False
    while (line := cur.peek()) is not None and not line.startswith(b"@@ "):
        n = cur.i + 1
        cur.take()
        if line.startswith((b"--- ", b"+++ ")):
            got[line[:4]] = (n, line[4:])
            crlf = line.endswith(b"\r\n")
        elif line.startswith(b"Index:"):
            got[b"Index:"] = (n, line[6:].strip(b" \t\r\n"))
    minus_at, minus = got.get(b"--- ", (0, b""))
    plus_at, plus = got.get(b"+++ ", (0, b""))
    if not minus_at and not plus_at:
        raise cur.error("a hunk without `---` or `+++` lines naming its file", cur.i + 1)
    if not minus_at:
        cur.note(PLUS_ONLY, plus_at, "a `+++` line without a `---` line before it")
    if not plus_at:
        cur.note(MINUS_ONLY, minus_at, "a `---` line without a `+++` line after it")
    sides: list[tuple[str | None, str, int]] = []
    for raw, at in ((minus, minus_at), (plus, plus_at)):
        if at:
            sides.append((*_plain_name(raw, strip, cur, at), at))
        else:
            sides.append((None, "", 0))
    (old, old_kind, _), (new, new_kind, _) = sides
    if old_kind == NULL and new_kind == NULL:
        raise cur.error("both sides of the section are /dev/null", minus_at)
    names = [(name, at) for name, kind, at in sides if kind == NAMED and name is not None]
    shorts = [(name, at) for name, kind, at in sides if kind == SHORT and name is not None]
    if not names and b"Index:" in got and NULL not in (old_kind, new_kind):
        index_at, index = got[b"Index:"]
        name, kind = _plain_name(index, strip, cur, index_at, stamps=False)
        if kind == NAMED and name is not None:
            names.append((name, index_at))
        elif kind == SHORT and name is not None:
            shorts.append((name, index_at))
    if not names and not shorts:
        raise cur.error("the section names no file, only /dev/null", minus_at or plus_at)
    if not names:
        name, at = shorts[0]
        raise cur.error(
            f"-p{strip} strips the whole of {name!r}",
            at,
            "set the patch's strip level in series (e.g. -p0)",
        )
    for name, at in shorts:
        cur.note(
            SHORT_NAME,
            at,
            f"{name!r} has fewer components than -p{strip}; ignored, as GNU patch does",
        )
    safe = [(name, at) for name, at in names if not _unsafe(name)]
    if safe and len(safe) < len(names):
        for name, at in names:
            if _unsafe(name):
                cur.note(UNSAFE_NAME, at, f"{name!r} has a '..' component; the other name is used")
        names = safe
    cands = tuple(dict.fromkeys(name for name, _ in names))
    path = cands[0] if len(cands) == 1 else best_name(*cands)
    return (
        None if old_kind == NULL else path,
        None if new_kind == NULL else path,
        cands if len(cands) > 1 else (),
        minus,
        plus,
        crlf,
    )


def _git_choice(
    cur: _Lines,
    lineno: int,
    git: tuple[str | None, str | None],
    plain: tuple[str | None, str | None],
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """A git section's (old path, new path, names the tree chooses among) when its
    `---`/`+++` names `plain` may differ from its `diff --git` names `git`: as GNU
    patch, the `---`/`+++` names (a backup file named by `diff --git`, a prefix it lacks
    is not the file)."""
    old, new = plain
    if (old, new) == git:
        if old is None or new is None or old == new:
            return old, new, ()
        # Two names and no rename: no git made it (`diff --git a/x.c.orig b/x.c`).
        return best_name(old, new), best_name(old, new), (old, new)
    shown = " and ".join(repr(n) for n in dict.fromkeys(x for x in git if x))
    cur.note(
        GIT_NAMES,
        lineno,
        f"the `diff --git` line names {shown}, the `---`/`+++` lines "
        f"{' and '.join(repr(n) for n in dict.fromkeys(x for x in plain if x))}: "
        "those are used, as GNU patch uses them",
    )
    if old is None or new is None:
        return old, new, ()
    names = tuple(dict.fromkeys((old, new)))
    pick = best_name(*names)
    return pick, pick, names if len(names) > 1 else ()


def _is_epoch(name_line: bytes) -> bool:
    """Whether a `---`/`+++` line's timestamp is the epoch, in whatever time zone."""
    m = _STAMP_RE.match(split_name(name_line)[1].strip())
    if m is None:
        return False
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    offset = 0
    if m.group(7):
        offset = (int(m.group(8)) * 60 + int(m.group(9))) * 60
        offset = offset if m.group(7) == b"+" else -offset
    try:
        return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - offset == 0
    except (ValueError, OverflowError):
        return False


def parse(data: bytes, where: str = "<patch>", strip: int = 1) -> Patch:
    """Parse a patch file; `where` names it in errors, `strip` is its -p level."""
    cur = _Lines(data, where)
    while cur.peek() is not None and not _is_section_start(cur):
        cur.take()
    header = b"".join(cur.lines[: cur.i])
    _refuse_other_formats(cur.lines[: cur.i], cur, whole=cur.peek() is None)
    sections: list[FilePatch] = []
    tail_start = len(cur.lines)
    while cur.peek() is not None:
        if _is_section_start(cur):
            sections.append(_parse_section(cur, strip))
            continue
        # Between sections: blank lines, `diff -r`'s own lines, a mail signature and the
        # next message of an mbox — or any other text, which GNU patch skips too.
        blank_from = cur.i
        while (line := cur.peek()) is not None and line.strip() == b"":
            cur.take()
        if line is None:
            tail_start = blank_from
            break
        mail = _at_trailer(cur)
        noted = mail or line.startswith(_DIFF_R_TEXT) or _is_section_start(cur)
        if not noted and sections and sections[-1].hunks and line[:1] in (b" ", b"-", b"+"):
            # GNU patch reads a hunk up to its counts; what follows, up to the next
            # file's header, is text it skips (pch.c another_hunk, intuit_diff_type).
            end = sections[-1].hunks[-1]
            cur.note(
                HUNK_OVERRUN,
                cur.i + 1,
                f"the hunk on line {end.lineno} counts {end.old_len} old and {end.new_len} "
                "new lines and goes on: the lines after its counts are skipped, as GNU "
                "patch skips them",
            )
            noted = True
        # Linear: each line is looked at once on the way to the next section.
        while (line := cur.peek()) is not None and not _is_section_start(cur):
            if line.startswith(b"@@ -") and not mail:
                # A hunk after text that ended its file's section: GNU patch looks for a
                # new file header and skips it.
                cur.note(
                    SKIPPED_HUNK,
                    cur.i + 1,
                    "a hunk after text that ended its file's section (a blank line, or "
                    "lines past the last hunk's counts) is not applied, as GNU patch "
                    "skips it",
                )
                noted = True
            elif not noted and line.strip() and not line.startswith(_DIFF_R_TEXT):
                cur.note(
                    SKIPPED_TEXT,
                    cur.i + 1,
                    "text that is no diff, between or after file sections, skipped",
                )
                noted = True
            cur.take()
        if cur.peek() is None:
            tail_start = blank_from
            break
        last = sections[-1]
        sections[-1] = replace(
            last, raw_tail=last.raw_tail + b"".join(cur.lines[blank_from : cur.i])
        )
    trailer = b"".join(cur.lines[tail_start:])
    return Patch(header, tuple(sections), trailer, tuple(cur.notes))


def _at_trailer(cur: _Lines) -> bool:
    """At a mail signature, or at format-patch's `base-commit:` lines before one or the end."""
    k = 0
    while (line := cur.peek(k)) is not None and line.startswith(_MAIL_TRAILER):
        k += 1
    while k and (line := cur.peek(k)) is not None and line.strip() == b"":
        k += 1
    line = cur.peek(k)
    if line is None:
        return k > 0
    return line.startswith(b"-- ") or line.rstrip(b"\r\n") == b"--"


def _refuse_other_formats(lines: list[bytes], cur: _Lines, whole: bool) -> None:
    """Refuse diffs that are not unified ones rather than take them for header text.

    `lines` are the header's; `whole` says no unified section follows them.
    """
    redo = "re-create it with `diff -u` or `git diff`"
    # A mail's commit message may quote anything; like git mailinfo, its patch part starts
    # at the `---` line.
    body = 0
    if lines and lines[0].startswith((b"From ", b"From: ", b"Subject: ")):
        body = next((n for n, ln in enumerate(lines) if ln.rstrip(b"\r\n") == b"---"), len(lines))
    for n, line in enumerate(lines, 1):
        if n > body and _HUNK_RE.match(line):
            # git apply: "patch fragment without header".
            raise cur.error(
                "hunk outside any file section",
                n,
                "the `---`/`+++` lines that name its file are missing",
            )
        if line.startswith((b"diff --cc ", b"diff --combined ")):
            raise cur.error(
                "this is a combined diff of a merge; patchq takes only unified diffs",
                n,
                "diff the merge against one parent",
            )
        if (
            line.rstrip(b"\r\n") == b"*" * 15
            and n < len(lines)
            and _CONTEXT_HUNK_RE.match(lines[n])
        ):
            raise cur.error(
                "this is a context-format diff; patchq takes only unified diffs", n, redo
            )
    if not whole:
        return
    # Like GNU patch (pch.c), after any header text: a command line (`4c`, `3,5d`) followed
    # by `<`/`>` lines is a normal diff; one followed later by a lone `.` is an ed script.
    first = next((n for n, ln in enumerate(lines, 1) if ln.strip()), 0)
    n = next((n for n, ln in enumerate(lines, 1) if _ED_RE.match(ln)), 0)
    if not n:
        return
    if n < len(lines) and lines[n].startswith((b"< ", b"> ")):
        raise cur.error("this is a normal-format diff; patchq takes only unified diffs", n, redo)
    if n == first or any(ln.rstrip(b"\r\n") == b"." for ln in lines[n:]):
        raise cur.error(
            "this looks like an ed-script diff; patchq takes only unified diffs", n, redo
        )
