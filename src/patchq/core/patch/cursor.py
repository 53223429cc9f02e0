"""The parser's cursor over a patch's lines, and where a file section starts.

The cursor knows the file's name for error messages (`file:line`) and collects each
repair the parser makes as a `Normalisation`.
"""

from __future__ import annotations

from patchq.core.errors import BadInputError
from patchq.core.names import Normalisation
from patchq.core.patch.model import split_lines


class Lines:
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


def is_section_start(cur: Lines, k: int = 0) -> bool:
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


def _is_plain_start(cur: Lines, k: int) -> bool:
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
