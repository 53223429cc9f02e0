"""All terminal output: data to stdout, diagnostics to stderr, colour decided once.

Every line goes out through `_inert`: whatever a patch put in a name, subject or path
(ESC, CR, C1, bidi overrides, bytes that are not UTF-8) is written as a visible escape
(`core/text.shown`). patchq's own colours survive because `paint` marks them with a
token made fresh for each run, which no patch text can contain, and only `_inert` turns
the token into an escape sequence, after the escaping.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from patchq.cli.render import Doc, Item, Line
from patchq.core.text import json_text, shown

# Private-use code points drawn at random: a patch cannot spell the colour token.
# (os.urandom rather than `secrets`, which loads `random` and `hashlib` on every run.)
_TOKEN = "".join(chr(0xF0000 + int.from_bytes(os.urandom(4), "big") % 0xFFFD) for _ in range(6))
_OPEN, _CLOSE = _TOKEN + "[", _TOKEN + "m"


def _colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


COLOUR_ERR = _colour(sys.stderr)
_CODES = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}


def paint(text: str, colour: str, stream: TextIO | None = None) -> str:
    on = _colour(stream) if stream is not None else COLOUR_ERR
    return f"{_OPEN}{_CODES[colour]}{_CLOSE}{text}{_OPEN}0{_CLOSE}" if on else text


def _inert(text: str, lines: bool = False) -> str:
    """`text` escaped for a terminal (see the module), with patchq's own colours."""
    out = shown(text, lines)
    if _TOKEN in out:
        out = out.replace(_OPEN, "\x1b[").replace(_CLOSE, "m")
    return out


def data(line: str = "") -> None:
    """A line of data for scripts (stdout)."""
    sys.stdout.write(_inert(line) + "\n")


def emit_json(doc: Any) -> None:
    """A JSON document (stdout): valid UTF-8 for any name (`core/text.json_text`)."""
    sys.stdout.write(json_text(doc) + "\n")


_counter_shown = False  # a Progress line is on the terminal, without its newline


def info(line: str) -> None:
    """A diagnostic for people (stderr), after any data already written, in order; a
    counter still showing (a run stopped by an error or Ctrl-C) is cleared first."""
    global _counter_shown
    sys.stdout.flush()
    if _counter_shown:
        sys.stderr.write("\r\x1b[K")
        _counter_shown = False
    sys.stderr.write(_inert(line, lines=True) + "\n")
    sys.stderr.flush()


def show(items: Iterable[Item]) -> None:
    """Print what `cli/render` built, in order: lines to their stream (colour only on a
    terminal), JSON documents and raw text or bytes to stdout."""
    for item in items:
        if isinstance(item, Line):
            text = item.text
            if item.colour is not None and item.span:
                stream = None if item.err else sys.stdout
                text = paint(text[: item.span], item.colour, stream) + text[item.span :]
            (info if item.err else data)(text)
        elif isinstance(item, Doc):
            emit_json(item.value)
        elif isinstance(item.data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(item.data)
        else:
            # Text (a header, a report) is escaped like every line, newlines kept; only
            # bytes (a diff) go out exactly.
            sys.stdout.write(_inert(item.data, lines=True))


class Progress:
    """A one-line counter on stderr, shown only on a terminal and for runs of 20 or more.

    It is the terminal's `core.progress.Progress`: each call says how many patches of
    how many are done and which one the run works on now.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.shown = False

    def __call__(self, done: int, name: str, total: int) -> None:
        global _counter_shown
        if total < 20 or not sys.stderr.isatty():
            return
        if done % 10 == 0 or done == total - 1:
            sys.stderr.write(f"\r\x1b[K{self.label} {done + 1}/{total} {shown(name[:50])}")
            sys.stderr.flush()
            self.shown = True
            _counter_shown = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.done()  # an error ends the run too: clear the line before it is reported

    def done(self) -> None:
        """Wipe the counter, if it was ever shown."""
        global _counter_shown
        if self.shown:
            _counter_shown = False
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.shown = False
