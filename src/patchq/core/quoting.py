"""git's C-style quoting of file names that hold special bytes, both ways.

git writes a name with control bytes, quotes, backslashes or non-ASCII bytes in double
quotes with C escapes (`"a/na\\303\\257ve"`); patches and git's own output carry names
so, and patchq reads and writes them the same way.
"""

from __future__ import annotations

import re

_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}
_QUOTE_OUT = {
    7: b"\\a",
    8: b"\\b",
    9: b"\\t",
    10: b"\\n",
    11: b"\\v",
    12: b"\\f",
    13: b"\\r",
    34: b'\\"',
    92: b"\\\\",
}


def unquote(raw: bytes) -> bytes:
    """Undo git's C-style quoting of `"a/na\\303\\257ve"`; unquoted input is returned as is."""
    if not (len(raw) >= 2 and raw.startswith(b'"') and raw.endswith(b'"')):
        return raw
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i : i + 1]
        if c != b"\\":
            out += c
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt.isdigit() and re.fullmatch(rb"[0-3][0-7]{2}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            raise ValueError(f"bad escape in quoted path {raw!r}")
    return bytes(out)


def quote_path(path: str) -> bytes:
    """git's quoting: names with control bytes, quotes, backslashes or non-ASCII are quoted."""
    raw = path.encode("utf-8", "surrogateescape")
    if all(32 <= b < 127 and b not in (34, 92) for b in raw):
        return raw
    out = bytearray(b'"')
    for b in raw:
        if b in _QUOTE_OUT:
            out += _QUOTE_OUT[b]
        elif b < 32 or b >= 127:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out + b'"')


def decode_path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def diff_git_names(rest: bytes) -> tuple[str, ...]:
    """The paths a `diff --git a/X b/X` line names (no renames: both sides alike; a quoted
    side is unquoted as git quotes it). Unreadable: none."""
    rest = rest.rstrip(b"\r")
    if rest.startswith(b'"'):
        end = 1
        while end < len(rest) and rest[end] != 0x22:  # the closing quote, escapes skipped
            end += 2 if rest[end] == 0x5C else 1
        try:
            first = unquote(rest[: end + 1])
        except ValueError:
            return ()
        return (first[2:].decode("utf-8", "surrogateescape"),) if first[:2] == b"a/" else ()
    n = (len(rest) - 5) // 2  # `a/N b/N`
    if (
        n > 0
        and rest[:2] == b"a/"
        and rest[2 + n : 5 + n] == b" b/"
        and rest[2 : 2 + n] == rest[5 + n :]
    ):
        return (rest[2 : 2 + n].decode("utf-8", "surrogateescape"),)
    return ()
