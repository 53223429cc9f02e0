"""How long `render_refreshed` takes to write a big patch back in its own style.

    patchq-bench refresh-style [--sections 2000] [--runs 5]

A synthetic patch of N file sections (two hunks' worth of lines each, half of them
changed by the "refresh"), once plain (quilt's `--- a/f`/`+++ b/f`) and once git-style,
rendered against git-shaped diff text in process: the cost of reading the style and
writing every changed section in it, without git or the disk.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from patchq.core.patch import parse
from patchq.stack.refresh import render_refreshed


def hunk(i: int, v: int) -> str:
    return f"@@ -4,7 +4,7 @@ int f{i}(void)\n {{\n a\n b\n-c{i}\n+c{i}{v}\n d\n e\n }}\n"


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("--sections", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    n = args.sections
    git_head = "diff --git a/d/f{i}.c b/d/f{i}.c\nindex 111111111111..{new} 100644\n"
    names = "--- a/d/f{i}.c\n+++ b/d/f{i}.c\n"
    plain = "".join(names.format(i=i) + hunk(i, 1) for i in range(n)).encode()
    git = "".join(
        git_head.format(i=i, new="222222222222") + names.format(i=i) + hunk(i, 1) for i in range(n)
    ).encode()
    diff = "".join(
        git_head.format(i=i, new="333333333333") + names.format(i=i) + hunk(i, 2 if i % 2 else 1)
        for i in range(n)
    ).encode()
    for name, data in (("plain", plain), ("git", git)):
        old = parse(data, "bench")
        best = float("inf")
        for _ in range(args.runs):
            t = time.perf_counter()
            out = render_refreshed(old, diff, "bench")
            best = min(best, time.perf_counter() - t)
        print(
            f"{name}: {n} sections ({len(data)} bytes), {n // 2} changed: "
            f"best of {args.runs} {best * 1000:.1f} ms, "
            f"{out.count(b'diff --git ')} git-style sections written"
        )
    return 0
