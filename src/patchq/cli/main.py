"""The command line's entry: the `patchq` group with every command on it, and `main`.

The commands live by domain in the `verbs_*` modules (set-up, stack, edits, inspection,
upstream, fleet), each click callback parsing options, calling one operation and
rendering its result; no git calls, no loops over patches and no state decisions live
in them. `main` is the one boundary that maps exceptions to the exit codes of
docs/commands.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from patchq.cli import (
    interrupted,
    output,
    render,
    verbs_edit,
    verbs_fleet,
    verbs_inspect,
    verbs_setup,
    verbs_stack,
    verbs_upstream,
)
from patchq.cli.group import TASKS, cli
from patchq.core.errors import FaultError, PatchqError

# The commands register on `cli` as their modules load (help lists them by TASKS).
VERBS = (verbs_setup, verbs_stack, verbs_edit, verbs_inspect, verbs_upstream, verbs_fleet)
__all__ = ["TASKS", "VERBS", "cli", "main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI and map every failure to one stderr line and an exit code."""
    try:
        cli.main(args=argv, prog_name="patchq", standalone_mode=False)
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except click.exceptions.Abort:
        output.show(render.interrupted())
        return 130
    except click.ClickException as e:
        e.show()
        return int(e.exit_code) if e.exit_code else 2
    except PatchqError as e:
        output.show(render.error(e))
        return e.exit_code
    except KeyboardInterrupt:
        output.show(render.interrupted())
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # the environment's fault (full disk, read-only): not a bug
        fault = FaultError.from_os(e)
        output.show(render.error(fault))
        return fault.exit_code
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 0
    except Exception as e:  # noqa: BLE001 - the one place that reports the unexpected
        if interrupted():  # an error Ctrl-C caused (a module it cut short): the interrupt
            output.show(render.interrupted())
            return 130
        import traceback  # only here: loading it costs every run

        frame = traceback.extract_tb(e.__traceback__)[-1]
        output.show(render.internal_error(e, f"{Path(frame.filename).name}:{frame.lineno}"))
        return 70
    return 0


if __name__ == "__main__":
    sys.exit(main())
