"""`python -m patchq`.

Ctrl-C is taken over first, before another module loads: an interrupt that lands while
`patchq.cli` loads is remembered here and ends the run with 130 (see `patchq.cli.run`).
"""

import _signal  # type: ignore[import-not-found]  # already loaded: Python's start-up uses it

_early: list[int] = []
_signal.signal(_signal.SIGINT, lambda signum, frame: _early.append(signum))

from patchq.cli import run  # noqa: E402  (after the handler, on purpose)

run(_early)
