"""The speed bench's --baseline: each patchq row is timed beside its twin running an older
build, and the ratio new/baseline is reported. These pin the pieces whose mistakes would
silently compare the wrong builds or the wrong rows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import pytest

from patchq_bench.speed.builds import snapshot_rev, with_baseline
from patchq_bench.speed.report import per_patch, process_table, ratio_rows
from patchq_bench.speed.rows import RATIO_LABELS, ROWS, Ctx, Outcome, Row
from patchq_bench.speed.workspace import BenchError, Setup


def test_every_patchq_row_is_followed_by_its_baseline_twin(tmp_path: Path) -> None:
    rows = [r for r in ROWS if r.key in ("apply", "check", "am")]
    out = with_baseline(rows, tmp_path)
    assert [r.key for r in out] == ["apply", "apply@baseline", "check", "check@baseline", "am"]

    seen: list[Any] = []

    ran = Outcome(True, 0.0, 0, summary="ran")

    def fn(s: Setup, cx: Ctx) -> Outcome:
        seen.append(cx)
        return ran

    row = Row("apply", "patchq apply", "BASE", True, lambda s, cx: None, fn, "head")
    twin = with_baseline([row], tmp_path)[1]
    cx = Ctx(["patchq"], None, env={"X": "1"})
    assert twin.fn(cast(Setup, None), cx) is ran  # the twin passes the series through
    assert seen[0].patchq == [sys.executable, "-m", "patchq"]
    assert seen[0].env == {"PYTHONPATH": str(tmp_path)}
    assert cx.patchq == ["patchq"], "the twin must not change the main build's context"


def test_the_ratio_table_has_a_baseline_column_and_no_twin_rows() -> None:
    def rec(key: str, tool: str, median: float) -> dict[str, Any]:
        return {
            "key": key,
            "tool": tool,
            "onto": "BASE",
            "patchq": True,
            "status": "ok",
            "median_s": median,
            "ratios": {},
        }

    results = {
        "apply": rec("apply", "patchq apply", 1.0),
        "apply@baseline": rec("apply@baseline", "patchq apply [baseline]", 2.0),
    }
    results["apply"]["ratios"]["baseline"] = 0.5
    headers, rows = ratio_rows(results)
    assert headers[1:] == [RATIO_LABELS["baseline"], "patchq apply"]
    assert rows == [["patchq apply (BASE)", "0.50", "–"]]


def test_snapshot_rev_extracts_that_revision_of_src_patchq(tmp_path: Path) -> None:
    what, pythonpath = snapshot_rev("HEAD", tmp_path / "b")
    assert (pythonpath / "patchq" / "__main__.py").is_file()
    assert what.split()[0]  # short sha and subject
    with pytest.raises(BenchError):
        snapshot_rev("no-such-revision-xyz", tmp_path / "c")


def test_one_length_flags_a_per_patch_git_process() -> None:
    """Issue 22: a single N must show a count that grows with the series, by a git
    subcommand run once per patch and by a count past the fewest seen for the command."""

    def rec(key: str, tool: str, calls: dict[str, int]) -> dict[str, object]:
        return {
            "key": key,
            "tool": tool,
            "onto": "DRIFT",
            "patchq": True,
            "git_processes": sum(calls.values()),
            "git_calls": calls,
        }

    fine = {"log": 2, "cat-file": 2, "patch-id": 1, "rev-list": 1}
    series = [
        {
            "count": 1000,
            "rows": {
                "check-drift": rec("check-drift", "patchq check", fine),
                "check-drift@baseline": rec(
                    "check-drift@baseline", "patchq check [baseline]", {**fine, "rev-list": 1000}
                ),
                "rebase-dry": rec("rebase-dry", "patchq rebase --dry-run", {**fine, "log": 40}),
            },
        }
    ]
    flagged = per_patch(series)
    assert flagged == [
        "patchq check [baseline] (DRIFT, N=1000): 1000 `git rev-list`, one per patch"
    ]
    # The same command at a second N, with one more log than at the first: growth.
    series.append(
        {"count": 50, "rows": {"rebase-dry": rec("rebase-dry", "patchq rebase --dry-run", fine)}}
    )
    assert per_patch(series)[-1] == (
        "patchq rebase --dry-run (DRIFT, N=1000): 40 `git log`, where the fewest seen is 2"
    )
    assert len(per_patch(series)) == 2
    _, _, growing = process_table(series)
    assert any("one per patch" in g for g in growing)
