"""Wall-clock bounds live in bench/wall_clock.py, not in assertions (issue 23, point 5).

A test asserting elapsed time fails when the machine is busy, not when patchq is slow.
Tests measure and call `wall_clock`; the bench script runs them and judges the bounds.
Here: no test asserts a clock reading, the record reaches the file the bench names, and
the bench's judgement of the records is right.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from .. import conftest
from ..conftest import ROOT

BENCH = ROOT / "bench" / "wall_clock.py"
CLOCKS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns"}


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr in CLOCKS and isinstance(f.value, ast.Name) and f.value.id == "time"
    return isinstance(f, ast.Name) and f.id in CLOCKS - {"time"}


def _reads_clock(node: ast.AST, timed: set[str]) -> bool:
    return any(
        _is_clock_call(n) or (isinstance(n, ast.Name) and n.id in timed) for n in ast.walk(node)
    )


def clock_asserts(source: str) -> list[int]:
    """The lines of the `assert`s in `source` that test a clock reading: one read in the
    assert itself, or a name that holds one (`took = time.monotonic() - t0`)."""
    out = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        timed: set[str] = set()
        grew = True
        while grew:
            grew = False
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and (
                    node.value is not None and _reads_clock(node.value, timed)
                ):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name) and n.id not in timed:
                                timed.add(n.id)
                                grew = True
        out += [
            n.lineno for n in ast.walk(fn) if isinstance(n, ast.Assert) and _reads_clock(n, timed)
        ]
    return sorted(set(out))


def test_no_test_asserts_a_clock_reading() -> None:
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        lines = clock_asserts(path.read_text(encoding="utf-8"))
        bad += [f"{path.relative_to(ROOT)}:{n}" for n in lines]
    assert bad == [], "move these bounds to bench/wall_clock.py:\n" + "\n".join(bad)


def test_the_scan_finds_a_clock_assert() -> None:
    sample = """
import time
from time import perf_counter

def test_a():
    t0 = time.monotonic()
    work()
    took = time.monotonic() - t0
    later = took * 2
    assert result == 3
    assert later < 2.0

def test_b():
    start = perf_counter()
    assert perf_counter() - start < 1

def test_c():
    end = time.monotonic() + 5
    while time.monotonic() < end:
        assert step()
"""
    assert clock_asserts(sample) == [11, 15]


def test_a_measurement_goes_to_the_file_the_bench_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "clock.jsonl"
    monkeypatch.setattr(conftest, "WALL_CLOCK", str(record))
    conftest.wall_clock("a", 1.5, at_most=2.0)
    conftest.wall_clock("b", 3.0, at_least=2.5)
    assert [json.loads(line) for line in record.read_text().splitlines()] == [
        {"what": "a", "seconds": 1.5, "at_most": 2.0, "at_least": None},
        {"what": "b", "seconds": 3.0, "at_most": None, "at_least": 2.5},
    ]
    monkeypatch.setattr(conftest, "WALL_CLOCK", None)
    conftest.wall_clock("c", 1.0, at_most=2.0)  # no file named: nothing written
    assert len(record.read_text().splitlines()) == 2


def test_hypothesis_keeps_no_clock() -> None:
    """A property test's examples are not timed: no deadline, no too-slow health check
    (a busy machine once failed the rebase state's round trip that way)."""
    default = settings.default
    assert default is not None and default.deadline is None
    assert HealthCheck.too_slow in default.suppress_health_check
    assert settings(max_examples=5).deadline is None  # a test's own settings inherit it


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wall_clock_bench", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_bench_judges_each_measurement_by_its_median(bench: ModuleType) -> None:
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
    got = {m.what: (m.seconds, m.runs, m.ok) for m in bench.judge(lines)}
    assert got == {
        "fast": (0.7, 3, True),
        "slow": (2.5, 1, False),
        "waits": (2.6, 1, True),
        "gives up early": (0.1, 1, False),
    }
    assert bench.judge([line("x", 2.0, 2.0)])[0].ok is False  # the bound is strict


def test_the_bench_runs_the_tests_that_measure(bench: ModuleType) -> None:
    """Each node the bench runs exists, and calls `wall_clock`: a renamed test would make
    the bench measure nothing."""
    for node in bench.TESTS:
        path, _, name = node.partition("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        assert "wall_clock(" in source, node
        if name:
            assert f"def {name}(" in source, node
