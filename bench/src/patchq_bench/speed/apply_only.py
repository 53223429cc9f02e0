#!/usr/bin/env python3
"""`patchq apply` against git am, a git apply loop, the floor and quilt: bench.py, cut down.

Kept for its command line; everything is done by bench/bench.py (see bench/README.md):

    python3 bench/bench_apply.py --repo PATH [--count 300] [--end REF] [--runs 3]
                                 [--json out.json] [--md bench/RESULTS.md]

is `bench.py --counts COUNT --tools apply,am,loop,floor,quilt` (no drift workload).
`--tools` takes the old names (patchq, am, loop, floor, quilt). Unlike before, --md
replaces the block bench.py wrote in that file instead of appending a section.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from patchq_bench.speed import cli as bench

OLD_TOOLS = {"patchq": "apply", "am": "am", "loop": "loop", "floor": "floor", "quilt": "quilt"}


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", default="300")
    ap.add_argument("--tools", default="patchq,am,loop,floor,quilt")
    a, rest = ap.parse_known_args(argv)
    tools = []
    for t in (x.strip() for x in a.tools.split(",") if x.strip()):
        if t not in OLD_TOOLS:
            ap.error(f"unknown tool {t!r} (known: {','.join(OLD_TOOLS)})")
        tools.append(OLD_TOOLS[t])
    return bench.main(
        ["--counts", a.count, "--tools", ",".join(tools), *rest],
        prog=prog or "patchq-bench speed-apply",
    )
