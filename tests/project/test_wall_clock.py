"""Wall-clock bounds live in the bench (`patchq-bench wall-clock`), not in assertions.

A test asserting elapsed time fails when the machine is busy, not when patchq is slow.
Tests measure and call `wall_clock`; the bench runs them and judges the bounds. Here: no
test asserts a clock reading and the record reaches the file the bench names (the
bench's own tests, under bench/tests, hold its judgement of the records).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from .. import conftest
from ..conftest import ROOT

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
    assert bad == [], "move these bounds to the bench (patchq_bench.wall_clock):\n" + "\n".join(bad)


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
