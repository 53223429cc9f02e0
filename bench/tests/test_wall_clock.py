"""The wall-clock bench judges the measurements the product's tests record, and runs
tests that exist and measure."""

from __future__ import annotations

import json
from pathlib import Path

from patchq_bench import wall_clock

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_judges_each_measurement_by_its_median() -> None:
    def line(what: str, s: float, most: float | None, least: float | None = None) -> str:
        return json.dumps({"what": what, "seconds": s, "at_most": most, "at_least": least})

    lines = [
        line("fast", 0.5, 2.0),
        line("slow", 2.5, 2.0),
        line("fast", 3.0, 2.0),  # one slow run of three: the median is in bounds
        line("fast", 0.7, 2.0),
        line("waits", 2.6, None, 2.5),
        line("gives up early", 0.1, None, 2.5),
        "",
    ]
    got = {m.what: (m.seconds, m.runs, m.ok) for m in wall_clock.judge(lines)}
    assert got == {
        "fast": (0.7, 3, True),
        "slow": (2.5, 1, False),
        "waits": (2.6, 1, True),
        "gives up early": (0.1, 1, False),
    }
    assert wall_clock.judge([line("x", 2.0, 2.0)])[0].ok is False  # the bound is strict


def test_the_bench_runs_the_tests_that_measure() -> None:
    """Each node the bench runs exists, and calls `wall_clock`: a renamed test would make
    the bench measure nothing."""
    for node in wall_clock.TESTS:
        path, _, name = node.partition("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        assert "wall_clock(" in source, node
        if name:
            assert f"def {name}(" in source, node
