"""`parse`: a whole patch file — its header, the file sections, the text between them
and a mail's trailer — refusing formats patchq does not read (context and ed diffs).
"""

from __future__ import annotations

import re
from dataclasses import replace

from patchq.core.errors import BadInputError
from patchq.core.names import HUNK_OVERRUN, SKIPPED_HUNK, SKIPPED_TEXT
from patchq.core.patch.cursor import Lines, is_section_start
from patchq.core.patch.model import HUNK_RE, FilePatch, Patch
from patchq.core.patch.sections import parse_section

_CONTEXT_HUNK_RE = re.compile(rb"^\*\*\* \d+(,\d+)? \*\*\*\*\r?\n?$")
_ED_RE = re.compile(rb"^\d+(,\d+)?[acd]\d*(,\d+)?\r?\n?$")
_MAIL_TRAILER = (b"base-commit: ", b"prerequisite-patch-id: ")
# What `diff -r` writes between sections besides diffs; skipped without a note.
_DIFF_R_TEXT = (b"Only in ", b"Common subdirectories: ", b"Files ", b"diff ", b"Index:")


def parse(data: bytes, where: str = "<patch>", strip: int = 1) -> Patch:
    """Parse a patch file; `where` names it in errors, `strip` is its -p level."""
    _refuse_wide_text(data, where)
    cur = Lines(data, where)
    while cur.peek() is not None and not is_section_start(cur):
        cur.take()
    header = b"".join(cur.lines[: cur.i])
    _refuse_other_formats(cur.lines[: cur.i], cur, whole=cur.peek() is None)
    sections: list[FilePatch] = []
    tail_start = len(cur.lines)
    while cur.peek() is not None:
        if is_section_start(cur):
            sections.append(parse_section(cur, strip))
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
        noted = mail or line.startswith(_DIFF_R_TEXT) or is_section_start(cur)
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
        while (line := cur.peek()) is not None and not is_section_start(cur):
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


def _at_trailer(cur: Lines) -> bool:
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


# Byte-order marks of encodings whose text is not bytes a diff's lines are made of.
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe", "UTF-16LE"),
    (b"\xfe\xff", "UTF-16BE"),
)


def _refuse_wide_text(data: bytes, where: str) -> None:
    """A patch saved as UTF-16 or UTF-32 (an editor's "Unicode"): its diff is no bytes
    patch or git reads, and parsed as it is it holds no section at all, which would be
    taken (and committed) as an empty patch. Refused (exit 4) naming the encoding: by its
    byte-order mark, or, without one, by NUL bytes in every other place of its start."""
    name = next((enc for bom, enc in _WIDE_BOMS if data.startswith(bom)), None)
    if name is None:
        head = data[:256]
        if len(head) >= 8 and head.count(0) * 2 >= len(head) - 1:
            name = "UTF-16LE" if head[1::2].count(0) > head[0::2].count(0) else "UTF-16BE"
    if name is not None:
        raise BadInputError(
            f"the patch is {name} text, not bytes a diff is made of",
            where,
            f"convert it (`iconv -f {name} -t UTF-8`)",
        )


def _refuse_other_formats(lines: list[bytes], cur: Lines, whole: bool) -> None:
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
        if n > body and HUNK_RE.match(line):
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
