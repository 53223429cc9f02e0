"""`patchq-bench COMMAND [ARGS…]`: one entry point for every bench command.

Each command is a module of this package with a `main(argv)`; `patchq-bench COMMAND
--help` shows its options. `python -m patchq_bench COMMAND` is the same.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

# command -> (module, what it does)
COMMANDS: dict[str, tuple[str, str]] = {
    "speed": ("patchq_bench.speed.cli", "whole-series commands against their peers"),
    "speed-apply": ("patchq_bench.speed.apply_only", "apply against its peers only"),
    "completion": ("patchq_bench.completion", "shell completion of patch names"),
    "refresh-style": ("patchq_bench.refresh_style", "writing refreshed patches back"),
    "subject": ("patchq_bench.subject", "reading hostile 0.1-10 MB subjects"),
    "wall-clock": ("patchq_bench.wall_clock", "the test suite's wall-clock bounds"),
    "killstudy": ("patchq_bench.killstudy", "patchq killed at random points"),
    "differential": ("patchq_bench.differential", "the hunk engine against GNU patch"),
    "harvest": ("patchq_bench.harvest.cli", "downstream series: manifests, cases, bumps"),
    "parity": ("patchq_bench.parity", "apply parity with GNU patch on real series"),
    "realworld": ("patchq_bench.realworld.cli", "real refreshes: cost and precision"),
    "lenient": ("patchq_bench.realworld.lenient", "the lenient parser on real cases"),
    "precision": ("patchq_bench.precision", "write patchq's measured-precision file"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: patchq-bench COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"patchq-bench: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    run: Callable[..., int] = module.main
    return run(rest, prog=f"patchq-bench {name}")


if __name__ == "__main__":
    raise SystemExit(main())
