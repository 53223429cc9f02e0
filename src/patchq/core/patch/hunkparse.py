"""Reading one hunk (`@@ -a,b +c,d @@` and its lines) and a section's run of hunks,
as GNU patch reads them: damaged context lines, chopped hunks and wrong counts are
repaired and noted, or refused naming `file:line`.
"""

from __future__ import annotations

from patchq.core.errors import BadInputError
from patchq.core.names import BLANK_CONTEXT, EOF_CONTEXT, EOF_MID_LINE, OVERLAP, TAB_CONTEXT
from patchq.core.patch.cursor import Lines
from patchq.core.patch.model import HUNK_RE, Hunk


def _hunk_header(cur: Lines) -> tuple[int, int, int, int, bytes]:
    """Take a hunk's `@@ -a,b +c,d @@ heading` line: (old start, old count, new start,
    new count, heading); a count left out is 1, as in diff's output."""
    start = cur.i
    m = HUNK_RE.match(cur.take())
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


def _parse_hunk(cur: Lines) -> Hunk:
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


def _note_damaged_context(cur: Lines, blank: tuple[int, int], tabbed: tuple[int, int]) -> None:
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
    cur: Lines, start: int, counts: tuple[int, int], left: tuple[int, int]
) -> BadInputError:
    """The error for a hunk whose header `counts` (old, new lines) are `left` short."""
    (old_len, new_len), (old_left, new_left) = counts, left
    return cur.error(
        f"hunk header says {old_len} old and {new_len} new lines, found "
        f"{old_len - old_left} and {new_len - new_left} before this line",
        None,
        f"the hunk starting on line {start + 1} has wrong line counts",
    )


def section_hunks(cur: Lines) -> list[Hunk]:
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
