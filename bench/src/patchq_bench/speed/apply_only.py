#!/usr/bin/env python3
"""`patchq apply` against git am, a git apply loop, the floor and quilt: the speed bench, cut down.

Kept for its command line; everything is done by patchq-bench speed (see bench/README.md):

    patchq-bench speed-apply --repo PATH [--count 300] [--end REF] [--runs 3]
                                 [--json out.json] [--md bench/RESULTS.md]

is `patchq-bench speed --counts COUNT --tools apply,am,loop,floor,quilt` (no drift workload).
`--tools` takes the old names (patchq, am, loop, floor, quilt). Unlike before, --md
replaces the block the speed bench wrote in that file instead of appending a section.
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
