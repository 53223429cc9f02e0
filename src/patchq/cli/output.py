"""All terminal output: data to stdout, diagnostics to stderr, colour decided once."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from patchq.cli.render import Doc, Item, Line


def _colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


COLOUR_ERR = _colour(sys.stderr)
_CODES = {"red": "31", "green": "32", "yellow": "33", "bold": "1", "dim": "2"}


def paint(text: str, colour: str, stream: TextIO | None = None) -> str:
    on = _colour(stream) if stream is not None else COLOUR_ERR
    return f"\x1b[{_CODES[colour]}m{text}\x1b[0m" if on else text


def data(line: str = "") -> None:
    """A line of data for scripts (stdout)."""
    sys.stdout.write(line + "\n")


def emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


_counter_shown = False  # a Progress line is on the terminal, without its newline


def info(line: str) -> None:
    """A diagnostic for people (stderr), after any data already written, in order; a
    counter still showing (a run stopped by an error or Ctrl-C) is cleared first."""
    global _counter_shown
    sys.stdout.flush()
    if _counter_shown:
        sys.stderr.write("\r\x1b[K")
        _counter_shown = False
    sys.stderr.write(line + "\n")
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
            sys.stdout.write(item.data)


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
            sys.stderr.write(f"\r\x1b[K{self.label} {done + 1}/{total} {name[:50]}")
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
