"""All terminal output: data to stdout, diagnostics to stderr, colour decided once."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO


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


class Progress:
    """A one-line counter on stderr, shown only on a terminal."""

    def __init__(self, total: int, label: str) -> None:
        self.total = total
        self.label = label
        self.on = sys.stderr.isatty() and total >= 20

    def __call__(self, n: int, name: str, total: int | None = None) -> None:
        """Patch n (0-based) of the run is `name`; a caller that learns the count late
        passes `total` with each call."""
        if total is not None and total != self.total:
            self.total = total
            self.on = sys.stderr.isatty() and total >= 20
        global _counter_shown
        if self.on and (n % 10 == 0 or n == self.total - 1):
            sys.stderr.write(f"\r\x1b[K{self.label} {n + 1}/{self.total} {name[:50]}")
            sys.stderr.flush()
            _counter_shown = True

    def done(self) -> None:
        global _counter_shown
        if self.on:
            _counter_shown = False
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
