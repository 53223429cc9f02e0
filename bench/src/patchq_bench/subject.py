"""How long reading a patch's header takes when its subject is hostile.

    patchq-bench subject [--sizes 0.1,1,10] [--runs 3]

For each size in megabytes, a mail header whose `Subject: [` is followed by ` PATCH`
repeated and never closed (the shape that once cost 89 s at 900 KB), and one of closed
`[PATCH]` prefixes, read by patchq's header parser in process. The parser is linear:
ten times the subject should cost about ten times the time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from patchq.core.header import header_info


def unclosed(n: int) -> bytes:
    return b"Subject: [" + b" PATCH" * (n // 6)


def closed(n: int) -> bytes:
    return b"Subject: " + b"[PATCH]" * (n // 7) + b" fix"


SHAPES: dict[str, Callable[[int], bytes]] = {"unclosed": unclosed, "closed": closed}


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("--sizes", default="0.1,1,10", help="subject sizes in MB, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = [float(x) for x in args.sizes.split(",")]
    print(f"{'shape':<10} {'MB':>6} {'min s':>8} {'s per MB':>9}")
    for shape, make in SHAPES.items():
        for mb in sizes:
            header = b"From: a <a@b.c>\n" + make(int(mb * 1_000_000)) + b"\n\nbody\n"
            best = min(_timed(header) for _ in range(args.runs))
            print(f"{shape:<10} {mb:>6g} {best:>8.3f} {best / mb:>9.3f}")
    return 0


def _timed(header: bytes) -> float:
    start = time.perf_counter()
    header_info(header)
    return time.perf_counter() - start
