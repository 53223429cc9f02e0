"""The wall-clock bounds the test suite measures but does not assert.

    patchq-bench wall-clock [--runs 1] [--json out.json] [NODE …]

A test that asserts elapsed time fails on a loaded machine (two cores shared with other
jobs) while patchq is fine, so the tests only measure: each calls `wall_clock(what,
seconds, at_most=…, at_least=…)` from tests/conftest.py, which writes the measurement
and its bound to the file PATCHQ_WALL_CLOCK names, and nothing otherwise. This script
runs those tests (serially, one worker, so they do not compete with each other) with
PATCHQ_WALL_CLOCK set, then judges every measurement against its bound: over `at_most`
or under `at_least` fails (exit 1), as does a run whose tests failed or that measured
nothing. Run it on a quiet machine. With `--runs N` it runs the tests N times and judges
each measurement's median.

The measurements: every row of the hostile-input table (its command, 10 s), the diff
server's close with unread answers (2 s), `import --mbox` of 300 and 3,000 messages
(2 s, 10 s: linear time), parsing a damaged megabyte (3 s), and the wait of a second
`import` for a busy patch repo before it gives up (at least 2.5 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchq_bench.paths import REPO as ROOT

TESTS = (
    "tests/hostile/test_hostile.py::test_hostile_input",
    "tests/git/test_diffserver.py::test_close_does_not_wait_for_answers_nobody_reads",
    "tests/formats/test_importers.py::test_mbox_with_300_messages_is_fast_and_in_order",
    "tests/core/test_lenient.py::test_a_damaged_megabyte_parses_in_linear_time",
    "tests/store/test_concurrency.py",
)


@dataclass(frozen=True)
class Measured:
    what: str
    seconds: float  # the median over the runs
    at_most: float | None
    at_least: float | None
    runs: int

    @property
    def ok(self) -> bool:
        if self.at_most is not None and self.seconds >= self.at_most:
            return False
        return self.at_least is None or self.seconds >= self.at_least

    @property
    def bound(self) -> str:
        parts = []
        if self.at_most is not None:
            parts.append(f"< {self.at_most:g} s")
        if self.at_least is not None:
            parts.append(f">= {self.at_least:g} s")
        return ", ".join(parts)


def judge(lines: list[str]) -> list[Measured]:
    """The records the tests wrote (one JSON object a line), grouped by what they measure,
    each with its median."""
    seen: dict[str, list[dict[str, object]]] = {}
    for line in lines:
        if line.strip():
            record = json.loads(line)
            seen.setdefault(str(record["what"]), []).append(record)
    out = []
    for what, records in seen.items():
        times = [float(str(r["seconds"])) for r in records]
        first = records[0]
        out.append(
            Measured(
                what,
                statistics.median(times),
                None if first["at_most"] is None else float(str(first["at_most"])),
                None if first["at_least"] is None else float(str(first["at_least"])),
                len(times),
            )
        )
    return out


def run_tests(nodes: list[str], record: Path) -> int:
    env = dict(os.environ, PATCHQ_WALL_CLOCK=str(record))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *nodes]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("nodes", nargs="*", default=list(TESTS), help="pytest node ids to run")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the measurements here too")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "wall-clock.jsonl"
        record.touch()
        codes = [run_tests(args.nodes, record) for _ in range(args.runs)]
        measured = judge(record.read_text(encoding="utf-8").splitlines())
    width = max((len(m.what) for m in measured), default=10)
    for m in sorted(measured, key=lambda m: (m.ok, m.what)):
        verdict = "ok" if m.ok else "FAIL"
        print(f"{m.what:<{width}}  {m.seconds:7.2f} s  {m.bound:<16} {verdict}")
    if args.json:
        args.json.write_text(json.dumps([m.__dict__ for m in measured], indent=2) + "\n")
    failed = [m for m in measured if not m.ok]
    print(
        f"{len(measured)} measurements, {len(failed)} out of bounds"
        + ("" if not any(codes) else f"; the tests failed (pytest exit {max(codes)})")
    )
    return 1 if failed or any(codes) or not measured else 0
