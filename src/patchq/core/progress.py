"""The one progress shape every long run reports in: `(done, name, total)`.

A run tells its `Progress` of each patch it reaches: `done` patches of `total` are
behind it and `name` is the one it works on now. The counter on the terminal
(`cli/output.Progress`) is one implementation; a run given none reports nothing.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def __call__(self, done: int, name: str, total: int) -> None:
        """`done` of `total` patches are behind the run, which now works on `name`."""
