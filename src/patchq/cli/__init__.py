"""The command line. `run` is the `patchq` program itself (and `python -m patchq`).

Only the interpreter's modules already loaded at start-up are imported here (`_signal` is
the C half of `signal`, which would load `enum` first): until `run` has taken Ctrl-C over,
an interrupt is Python's, and prints a traceback.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import os
import sys

TYPE_CHECKING = False  # `typing` is not loaded at start-up either
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

# Whether Ctrl-C was pressed, and whether the handler may raise it now (only while a
# command runs, inside `main`'s own handling; never while modules load).
_state = {"interrupted": False, "raising": False}


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C (and its re-delivery, SIGALRM): remembered; raised only while a command
    runs, and not inside an import's own bookkeeping (its module locks, whose weakref
    callback cannot raise: Python would print "Exception ignored in … _get_module_lock"
    and lose the interrupt), where it is raised again a moment later instead."""
    if signum == _signal.SIGINT:
        _state["interrupted"] = True
    if not _state["raising"] or not _state["interrupted"]:
        return
    if frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        _again_soon()
        return
    raise KeyboardInterrupt


def _again_soon() -> None:
    """Deliver the interrupt again in 2 ms, at whatever the program is doing then."""
    _signal.signal(_signal.SIGALRM, _on_sigint)
    _signal.setitimer(_signal.ITIMER_REAL, 0.002)


def take_over_ctrl_c() -> None:
    """Handle Ctrl-C from here on: remembered while modules load, raised as
    KeyboardInterrupt while a command runs. `python -m patchq` calls it first."""
    _signal.signal(_signal.SIGINT, _on_sigint)


def interrupted() -> bool:
    """Whether Ctrl-C was pressed in this run: an error it caused (a git child it stopped,
    a module it cut short) is reported as the interrupt."""
    return _state["interrupted"]


def _unraisable(hook: Any) -> Any:
    """`sys.unraisablehook`: an interrupt raised where Python cannot raise (the weakref
    callback of an import's module lock, a `__del__`) is not printed as "Exception
    ignored in …" but raised again at the next place that can raise it."""

    def handle(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _state["interrupted"] = True
            if _state["raising"]:
                _again_soon()  # not now: raised inside this hook, it would be printed
            return
        if _state["interrupted"]:
            # A finaliser the interrupt cut short (a stream read in its `__del__` after
            # the pipe it reads was closed): part of the interrupt,
            # which the run reports in its one line.
            return
        hook(unraisable)

    return handle


def run(early: list[int] | None = None) -> None:
    """Run patchq and exit with its code; Ctrl-C at any moment exits 130 without a traceback.

    Python's own handler turns SIGINT into KeyboardInterrupt wherever the program is —
    loading a module (where it can surface as another error, or as "Exception ignored
    in … _get_module_lock"), inside a `finally`, in the handler of another error — and a
    second one can land while the first is being handled. So while the modules load, an
    interrupt is only remembered, and the command does not start; while a command runs
    it raises, inside `main`, which rolls back what it was doing; an error it caused on
    the way out (a git child the same Ctrl-C stopped) still ends as the interrupt; and
    once the outcome is decided, later Ctrl-Cs are only remembered while the process
    exits. `early`: the interrupts `python -m patchq` saw before this function ran.
    """
    take_over_ctrl_c()
    if early:
        _state["interrupted"] = True
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    if os.environ.get("PATCHQ_SAY_READY"):  # the interruption tests: Ctrl-C is ours now
        os.write(2, b"ready\n")
    code = -1
    try:
        from patchq.cli.main import main

        if not _state["interrupted"]:
            _state["raising"] = True
            try:
                code = main()
            finally:
                _state["raising"] = False
    except BaseException:
        if not _state["interrupted"]:
            raise  # a real failure to start (a broken installation): Python reports it
        code = -1
    _state["raising"] = False
    _signal.setitimer(_signal.ITIMER_REAL, 0)  # a re-delivery still pending: not needed now
    if code == -1 or (_state["interrupted"] and code != 130):
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        sys.stderr.write("patchq: interrupted\n")
        code = 130
    if _state["interrupted"]:
        # main() has closed what it opened (click closes the context on the way out);
        # the interpreter's own teardown is skipped, where the interrupt could surface
        # again (Python re-raises an unhandled one by killing itself with SIGINT).
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    # The outcome is decided: a Ctrl-C now changes nothing. Ignored, not handled, since
    # the interpreter's teardown puts back the default action for a signal whose handler
    # is a Python function, and a Ctrl-C then would kill a run that has succeeded.
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    sys.exit(code)
