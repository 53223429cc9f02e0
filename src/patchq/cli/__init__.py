"""The command line. `run` is the `patchq` program itself (and `python -m patchq`)."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def run() -> None:
    """Run patchq and exit with its code; Ctrl-C at any moment exits 130 without a traceback.

    Python's own handler turns SIGINT into KeyboardInterrupt wherever the program is —
    loading modules, inside a `finally`, in the handler of another error — and a second
    one can land while the first is being handled. So the interrupt is caught here, around
    the import of everything else too; it is remembered, so that an error it caused on the
    way out (a git child the same Ctrl-C stopped) still ends as the interrupt; and once
    the outcome is decided, later Ctrl-Cs are ignored while the process exits.
    """
    interrupted = False

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted
        interrupted = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        from patchq.cli.main import main

        code = main()
    except KeyboardInterrupt:
        code = -1
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == -1 or (interrupted and code != 130):
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        sys.stderr.write("patchq: interrupted\n")
        code = 130
    if interrupted:
        # main() has closed what it opened (click closes the context on the way out);
        # the interpreter's own teardown is skipped, where the interrupt could surface
        # again (Python re-raises an unhandled one by killing itself with SIGINT).
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)
