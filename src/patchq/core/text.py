"""Text that reaches a reader, made inert: one escape for terminals, one for Markdown,
one JSON encoding, for every name, subject and path a patch or an upstream brings.

A patch name, subject or path is anyone's text: left raw, an ESC or C1 sequence drives
the terminal (moves the cursor, rewrites the line above, sets the title, makes an OSC 8
link), a CR overwrites what was printed, a bidi override shows `txt.exe` as `exe.txt`.
`shown` writes each of those as a visible escape:

- a byte that is not UTF-8 (held as the surrogate `\\udcXX`, Python's surrogateescape):
  `\\xNN`, the byte;
- C0 controls and DEL: `\\r`, `\\x1b`, … (`\\n` too, unless the text is several lines);
- C1 controls, bidi embeddings, overrides, isolates and marks, line and paragraph
  separators: `\\uNNNN`.

Tab, backslash and every printable character are kept. JSON (`json_text`) keeps its
own escapes (`\\u001b`), writes those code points as `\\uNNNN` too, and a non-UTF-8 byte
as `\\udcNN` — the escape `series.lock` uses, which `json.loads` turns back into the
same surrogate, so a name round-trips exactly.
"""

from __future__ import annotations

import json
import math
import re
from json.encoder import encode_basestring as _encode_str  # C, as json.dumps uses
from typing import Any

# Code points that reorder or break lines on screen without being seen.
_INVISIBLE = "\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_C0 = "".join(chr(c) for c in range(32) if chr(c) not in "\t\n") + "\x7f"
_C1 = "".join(chr(c) for c in range(0x80, 0xA0))
_SURROGATES = "\udc80-\udcff"
_UNSAFE = re.compile(f"[{re.escape(_C0 + _C1 + _INVISIBLE)}{_SURROGATES}\n]")
# The one-line pattern as text, for code patchq generates (the exported script escapes
# the names it prints with it, as `shown` does).
UNSAFE_PATTERN = _UNSAFE.pattern
_UNSAFE_KEEP_LINES = re.compile(f"[{re.escape(_C0 + _C1 + _INVISIBLE)}{_SURROGATES}]")
_JSON_UNSAFE = re.compile(f"[{re.escape(_C1 + _INVISIBLE)}]")
_NAMED = {"\r": "\\r", "\n": "\\n", "\x1b": "\\x1b"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    n = ord(c)
    if c in _NAMED:
        return _NAMED[c]
    if 0xDC80 <= n <= 0xDCFF:
        return f"\\x{n - 0xDC00:02x}"
    if n < 0x80:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}"


def shown(text: str, lines: bool = False) -> str:
    """`text` with nothing that can drive a terminal (see the module); `lines`: keep
    newlines (a block of several lines, such as a patch header)."""
    pattern = _UNSAFE_KEEP_LINES if lines else _UNSAFE
    return pattern.sub(_escape, text)


def shown_bytes(data: bytes) -> str:
    """Bytes (a name git gave us) as `shown` text."""
    return shown(data.decode("utf-8", "surrogateescape"))


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def md_text(text: str) -> str:
    """Inline Markdown that shows `text` as it is: no table cell ends at its `|`, no
    heading begins at a leading `#`, no code span, emphasis or raw HTML begins in it.
    (A bare address may still be linked by GitHub: text from strangers goes in
    `md_code`, which nothing in it can make live.)"""
    out = _MD_SPECIAL.sub(r"\\\1", shown(text))
    return out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_code(text: str) -> str:
    """`text` as an inline code span that no backtick in it can close, safe in a table
    cell (`|` escaped, as GitHub's tables need even inside code)."""
    body = shown(text).replace("|", "\\|")
    longest = max((len(r) for r in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def md_fence(lines: list[str], info: str = "") -> list[str]:
    """A fenced code block around `lines` that no line of them can close."""
    body = [shown(line) for line in lines]
    longest = max((len(r) for line in body for r in re.findall(r"`{3,}", line)), default=2)
    fence = "`" * (longest + 1)
    return [fence + info, *body, fence]


class _NotPlain(Exception):
    """A value the quick encoder leaves to json.dumps (a float, a non-string key, …)."""


def _indented(doc: Any, indent: int) -> str:
    """`json.dumps(doc, indent=indent, sort_keys=True, ensure_ascii=False)`, the same
    text, for documents of dicts with string keys, lists, strings, ints, booleans and
    nulls: json's own indenting encoder is pure Python (its C encoder does not indent),
    and a thousand-patch `check --json` spent 3% of its run there."""
    out: list[str] = []
    put = out.append
    unit = " " * indent

    def dump(o: Any, ind: str) -> None:
        t = type(o)
        if t is str:
            put(_encode_str(o))
        elif t is dict:
            if not o:
                put("{}")
                return
            inner, sep = ind + unit, "{"
            for k in sorted(o) if all(isinstance(k, str) for k in o) else _not_plain():
                put(sep + inner)
                put(_encode_str(k))
                put(": ")
                dump(o[k], inner)
                sep = ","
            put(ind + "}")
        elif t is list or t is tuple:
            if not o:
                put("[]")
                return
            inner, sep = ind + unit, "["
            for v in o:
                put(sep + inner)
                dump(v, inner)
                sep = ","
            put(ind + "]")
        elif o is None:
            put("null")
        elif o is True:
            put("true")
        elif o is False:
            put("false")
        elif t is int:
            put(int.__repr__(o))
        elif isinstance(o, str):  # a StrEnum (a status): json writes its text
            put(_encode_str(o))
        elif isinstance(o, int) and not isinstance(o, bool):
            put(int.__repr__(o))
        elif t is float and math.isfinite(o):
            put(float.__repr__(o))
        else:
            raise _NotPlain

    dump(doc, "\n")
    return "".join(out)


def _not_plain() -> list[str]:
    raise _NotPlain


def json_text(doc: Any, indent: int | None = 2) -> str:
    """`doc` as JSON text that is valid UTF-8 for any name and inert on a terminal: a
    non-UTF-8 byte as `\\udcNN` (as in `series.lock`), C1, bidi and separator code
    points as `\\uNNNN` (C0 controls JSON escapes itself)."""
    try:
        if indent is None or indent <= 0:
            raise _NotPlain
        text = _indented(doc, indent)
    except (_NotPlain, RecursionError):
        text = json.dumps(doc, indent=indent, sort_keys=True, ensure_ascii=False)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def shortened(text: str, limit: int = 120) -> str:
    """`text` at most about `limit` characters: its head and tail around an ellipsis and
    the count left out, so a name longer than any file name still makes a short line."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]}…({len(text) - head - tail} more)…{text[-tail:]}"


_LONG_WORD = re.compile(r"\S{241,}")
LINE_MAX = 2000  # the most characters one error line holds


def bounded(line: str) -> str:
    """One message line, bounded: every run without spaces over 240 characters (a name
    longer than file systems hold) shortened, and the whole line at most LINE_MAX."""
    out = _LONG_WORD.sub(lambda m: shortened(m.group(), 240), line)
    return out if len(out) <= LINE_MAX else shortened(out, LINE_MAX)
