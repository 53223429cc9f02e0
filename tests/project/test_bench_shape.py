"""The bench (bench/, the patchq-bench package and its tests) keeps the product's shape:
at most 1,000 lines a module, and test_shape's rules for functions (at most 120 lines,
at most five positional parameters)."""

from __future__ import annotations

from pathlib import Path

from .test_shape import shape_faults

BENCH = Path(__file__).resolve().parents[2] / "bench"
MAX_BENCH_MODULE_LINES = 1_000


def bench_faults(source: str, where: str) -> list[str]:
    """What in `source` (a module of the bench, at `where`) breaks the rules."""
    faults = [f for f in shape_faults(source, where) if f.split(" ", 2)[1] != "module:"]
    n = len(source.splitlines())
    if n > MAX_BENCH_MODULE_LINES:
        faults.insert(0, f"{where}:1 module: {n} lines (at most {MAX_BENCH_MODULE_LINES})")
    return faults


def test_no_bench_module_over_a_thousand_lines_or_long_function() -> None:
    paths = sorted(BENCH.rglob("*.py"))
    assert any(p.name == "cli.py" for p in paths)
    faults: list[str] = []
    for path in paths:
        faults += bench_faults(path.read_text(encoding="utf-8"), path.relative_to(BENCH).as_posix())
    assert faults == [], "\n" + "\n".join(faults)


def test_the_bench_scan_finds_a_long_module_and_function() -> None:
    long_function = "def f(a):\n" + "    a += 1\n" * 120 + "    return a\n"
    filler = "x = 1\n" * (MAX_BENCH_MODULE_LINES - 122)
    assert bench_faults(long_function + filler, "m.py") == ["m.py:1 f: 122 lines (at most 120)"]
    got = bench_faults(long_function + filler + "y = 2\n", "m.py")
    assert got[0] == f"m.py:1 module: {MAX_BENCH_MODULE_LINES + 1} lines (at most 1000)"
