"""Reading one file section's header: git's extended headers (modes, renames, copies,
binary), the `---`/`+++` pair, `Binary files … differ`, and a plain diff's epoch-dated
side that marks a new or deleted file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from patchq.core.names import MINUS_ONLY, PLUS_ONLY
from patchq.core.patch.cursor import Lines, is_section_start
from patchq.core.patch.filenames import (
    NAMED,
    NULL,
    SHORT,
    git_choice,
    git_names,
    is_epoch,
    plain_name,
    plain_names,
    strip_path,
)
from patchq.core.patch.hunkparse import section_hunks
from patchq.core.patch.model import FilePatch, Hunk
from patchq.core.paths import file_mode

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


def _git_mode(mode: str, cur: Lines, n: int) -> str:
    """A mode line's mode as git stores it: `100777` is `100755`, `120755` a symlink's
    `120000` (`paths.file_mode`). A directory's or submodule's mode is kept, for the
    applier to refuse by name; any other is malformed."""
    if not re.fullmatch(r"1[02]0[0-7]{3}|160000|40000|040000", mode):
        raise cur.error(f"unknown file mode {mode!r}", n)
    return mode if mode in ("160000", "40000", "040000") else file_mode(mode, "")


@dataclass(slots=True)
class _Head:
    """A file section's header as `parse_section` reads it, step by step."""

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


def parse_section(cur: Lines, strip: int) -> FilePatch:
    start = cur.i
    first = cur.peek()
    assert first is not None
    if first.startswith(b"Binary files "):
        return _binary_files(cur, first, strip)
    head = _Head(git=first.startswith(b"diff --git "))
    if head.git:
        cur.take()
        names = git_names(first, strip, cur, start + 1)
        head.named = names is not None
        if names is not None:
            head.old_path, head.new_path = names
        _git_extended(cur, strip, head)
        _git_binary(cur, head)
    if not head.git:
        old_path, new_path, candidates, minus, plus, crlf = plain_names(cur, strip)
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
    hunks = section_hunks(cur)
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


def _binary_files(cur: Lines, first: bytes, strip: int) -> FilePatch:
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


def _git_extended(cur: Lines, strip: int, head: _Head) -> None:
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


def _git_binary(cur: Lines, head: _Head) -> None:
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
            and not is_section_start(cur)
            and not line.startswith(b"-- ")
        ):
            cur.take()


def _git_minus_plus(cur: Lines, strip: int, start: int, head: _Head) -> None:
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
    a_name, a_kind = plain_name(head.minus, strip, cur, at_a) if at_a else (None, SHORT)
    b_name, b_kind = plain_name(head.plus, strip, cur, at_b) if at_b else (None, SHORT)
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
        head.old_path, head.new_path, head.candidates = git_choice(
            cur, start + 1, (head.old_path, head.new_path), (a, b)
        )
    if a_kind == NULL:
        head.old_path = None
    if b_kind == NULL:
        head.new_path = None


def _epoch_sides(head: _Head, first_hunk: Hunk) -> None:
    """`diff -N` names a missing file with the epoch as its timestamp; like GNU patch
    (pch.c), such a side whose hunk starts at line 0 says the file does not exist."""
    if (
        first_hunk.old_start == 0
        and not first_hunk.old_len
        and is_epoch(head.minus)
        and head.new_path is not None
    ):
        head.old_path = None
    elif (
        first_hunk.new_start == 0
        and not first_hunk.new_len
        and is_epoch(head.plus)
        and head.old_path is not None
    ):
        head.new_path = None
