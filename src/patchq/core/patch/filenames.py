"""The file names on a section's header lines: `diff --git` names, plain `---`/`+++`
names with the dates and timestamps tools write after them, -p stripping, and the
choice between names that core.names makes against the tree.
"""

from __future__ import annotations

import bisect
import calendar
import re

from patchq.core.errors import UnsafePathError
from patchq.core.names import (
    GIT_NAMES,
    MINUS_ONLY,
    PLUS_ONLY,
    SHORT_NAME,
    SPACED_STAMP,
    UNSAFE_NAME,
    best_name,
)
from patchq.core.patch.cursor import Lines
from patchq.core.quoting import decode_path, unquote

_STAMP_RE = re.compile(
    rb"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.\d+)?"
    rb"(?: ?([+-])(\d\d):?(\d\d))?"
)


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


def _checked(name: bytes, cur: Lines, lineno: int) -> bytes | None:
    """A header line's name unquoted, or None for /dev/null; refused when it holds a NUL,
    is empty, or is absolute (whatever the strip level, a patch naming /etc/... was not
    made inside a tree)."""
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
        raise UnsafePathError(
            f"absolute path {decode_path(name)!r} in the patch",
            f"{cur.where}:{lineno}",
            "patches may only touch files inside the target; re-create it with relative paths",
        )
    return name


def _components(name: bytes) -> list[bytes]:
    """The name's parts: quilt and GNU patch count runs of slashes as one separator."""
    parts = name.split(b"/")
    return [p for p in parts[:-1] if p] + parts[-1:]


def strip_path(
    raw: bytes, strip: int, cur: Lines, lineno: int, *, exact: bool = False
) -> str | None:
    """Turn a `---`/`+++`/`diff --git` name into a repo path: drop timestamp, unquote, strip.

    `exact`: the name is all of `raw` (`diff --git`, `rename to`), so trailing spaces stay.
    """
    name = _checked(raw.rstrip(b"\r\n") if exact else split_name(raw)[0], cur, lineno)
    if name is None:
        return None
    if strip:
        parts = _components(name)
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
# What a header line names: /dev/null, a name too short for the -p level, or a file.
NULL, SHORT, NAMED = "null", "short", "named"


def plain_name(
    raw: bytes, strip: int, cur: Lines, lineno: int, *, stamps: bool = True
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
    name = _checked(split_name(text)[0] if stamps else text, cur, lineno)
    if name is None:
        return None, NULL
    if strip:
        parts = _components(name)
        if len(parts) <= strip:
            return decode_path(name), SHORT
        name = b"/".join(parts[strip:])
        if not name:
            raise cur.error("file name ends in a slash", lineno)
    return decode_path(name), NAMED


def _unsafe(name: str) -> bool:
    return ".." in name.split("/")


def git_names(line: bytes, strip: int, cur: Lines, lineno: int) -> tuple[str, str] | None:
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


def plain_names(
    cur: Lines, strip: int
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
            sides.append((*plain_name(raw, strip, cur, at), at))
        else:
            sides.append((None, "", 0))
    (old, old_kind, _), (new, new_kind, _) = sides
    if old_kind == NULL and new_kind == NULL:
        raise cur.error("both sides of the section are /dev/null", minus_at)
    names = [(name, at) for name, kind, at in sides if kind == NAMED and name is not None]
    shorts = [(name, at) for name, kind, at in sides if kind == SHORT and name is not None]
    if not names and b"Index:" in got and NULL not in (old_kind, new_kind):
        index_at, index = got[b"Index:"]
        name, kind = plain_name(index, strip, cur, index_at, stamps=False)
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


def git_choice(
    cur: Lines,
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


def is_epoch(name_line: bytes) -> bool:
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
