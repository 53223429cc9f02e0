"""The pure helpers of bench/realworld.py: error parsing, failure grouping, the report.

No mirrors, no network, no git: the driver itself is exercised by running the bench; these
pin the pieces whose mistakes would silently mislabel a measurement.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "realworld.py"


@pytest.fixture(scope="module")
def rw() -> ModuleType:
    spec = importlib.util.spec_from_file_location("realworld_bench", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_patch_at_fault_reads_the_name_with_or_without_a_line(rw: ModuleType) -> None:
    parse = "patchq: patches/cmds-live.c.patch:2: hunk outside any file section — the …"
    apply = "patchq: patches/0001-mingw-cmake.patch: patch does not apply: CMakeLists.txt: …"
    assert rw.patch_at_fault(parse) == "cmds-live.c.patch"
    assert rw.patch_at_fault(apply) == "0001-mingw-cmake.patch"
    assert rw.patch_at_fault("patchq: the lock is held by another run") is None


def test_error_line_prefers_patchq_line_and_marks_a_traceback(rw: ModuleType) -> None:
    assert rw.error_line("note\npatchq: patches/a.patch: bad\n") == "patchq: patches/a.patch: bad"
    tb = "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'hunks'\n"
    assert rw.error_line(tb) == "crash: KeyError: 'hunks'"
    assert rw.error_line("") == ""


def test_cause_of_drops_names_paths_numbers_and_upstream_subjects(rw: ModuleType) -> None:
    a = (
        "patchq: patches/a.patch: a.patch does not apply to 2f32e2169bb8: conflict in "
        "src/x.c, src/y.c (upstream: c68c4c804d67 Fix (really) the build; 0b65f608cca6 "
        "Condition on MSC_VER) — edit the files to resolve, then `patchq rebase --continue`"
    )
    b = (
        "patchq: patches/b.patch: b.patch does not apply to 53ec12d40701: conflict in "
        "lib/z.c (upstream: 5adaa553a9d6 Rename) — edit the files"
    )
    assert rw.cause_of(a) == rw.cause_of(b) == "conflict in FILE (upstream: …)"
    ts = (
        "patchq: patches/p.patch: patch does not apply: src/poptint.h   2010-05-13 "
        "04:57:46.878 +0100: hunk #1 (patch line 3, file line 47) failed: 'x' does not exist"
    )
    assert rw.cause_of(ts).startswith("patch does not apply: FILE: hunk #N (patch line N")
    hdr = "patchq: patches/n.patch:41: hunk header says 11 old and 12 new lines, found 0 and 0"
    assert rw.cause_of(hdr) == "hunk header says N old and N new lines, found N and N"
    assert rw.cause_of("crash: KeyError: 'hunks'").startswith("crash (traceback)")


def test_hunk_trouble_names_each_failing_status_once_without_file_names(
    rw: ModuleType,
) -> None:
    hunks = [
        {"status": "offset", "reason": ""},
        {"status": "conflict", "reason": "its context and removed lines are not in the file"},
        {"status": "conflict", "reason": "its context and removed lines are not in the file"},
        {"status": "missing", "reason": "lib/gcc.specs is gone upstream"},
        {"status": "merge", "method": "merge", "reason": ""},
    ]
    assert rw.hunk_trouble(hunks) == (
        "conflict: its context and removed lines are not in the file; "
        "missing: FILE is gone upstream"
    )
    assert rw.hunk_trouble([{"status": "exact"}]) == ""


def test_fuzz_outcome_and_candidate_series(rw: ModuleType) -> None:
    assert rw.fuzz_outcome(["exact", "offset"]) == "offset"
    assert rw.fuzz_outcome(["offset", "fuzz"]) == "fuzz"
    assert rw.fuzz_outcome([]) == "exact"
    final = {
        "patches": [
            {"name": "a.patch", "outcome": "unchanged"},
            {"name": "b.patch", "outcome": "upstreamed"},
            {"name": "c.patch", "outcome": "dropped"},
            {"name": "d.patch", "outcome": "merged"},
        ]
    }
    assert rw.candidate_series(final) == ["a.patch", "d.patch"]


def _tool(status: dict[str, str], same: dict[str, bool], kept: set[str]) -> dict[str, Any]:
    applied = [n for n, s in status.items() if s not in ("failed", "already")]
    return {
        "status": status,
        "same_as_human": same,
        "same": sum(same.values()),
        "same_kept": sum(1 for n in same if same[n] and n in kept),
        "same_dropped": sum(1 for n in same if same[n] and n not in kept),
        "applied": len(applied),
        "applied_different": sum(1 for n in applied if not same[n]),
        "matched": sum(same.values()),
    }


def test_build_report_counts_what_the_inputs_say(rw: ModuleType) -> None:
    kept = {"1.patch", "2.patch"}
    case = {
        "name": "deb-x-1-to-2",
        "downstream_repo": "someone/x-debian",
        "patches": 3,
        "successor": {"1.patch": "1.patch", "2.patch": "2.patch", "3.patch": None},
        "human_change": {"1.patch": "identical", "2.patch": "modified", "3.patch": "dropped"},
        "facts": {
            n: {"applies_alone_on_Y": False, "reverse_applies_on_Y": n == "3.patch"}
            for n in ("1.patch", "2.patch", "3.patch")
        },
        "tools": {
            "patch": _tool(
                {"1.patch": "clean", "2.patch": "fuzz", "3.patch": "failed"},
                {"1.patch": True, "2.patch": False, "3.patch": True},
                kept,
            ),
            "patchq": _tool(
                {"1.patch": "clean", "2.patch": "already", "3.patch": "already"},
                {"1.patch": True, "2.patch": False, "3.patch": True},
                kept,
            ),
        },
    }
    log = {
        "name": "deb-x-1-to-2",
        "gnu_on_old": {
            "fuzz0": {"1.patch": "clean", "2.patch": "failed", "3.patch": "clean"},
            "fuzz2": {"1.patch": "clean", "2.patch": "fuzz", "3.patch": "clean"},
        },
        "patchq_on_old": {
            "fuzz0": {"applied": {"1.patch": "exact", "3.patch": "exact"}, "refused": {}},
            "fuzz2": {
                "applied": {"1.patch": "exact", "2.patch": "fuzz", "3.patch": "exact"},
                "refused": {},
            },
            "same_tree_as_gnu_fuzz2": True,
        },
        "per_patch": {
            "1.patch": {"on_old": "exact", "on_new": "unchanged", "methods": ["exact"]},
            "2.patch": {
                "on_old": "fuzz",
                "on_new": "stopped, skipped",
                "methods": ["conflict"],
                "hunks": [{"status": "conflict", "reason": "its context is not in the file"}],
                "error": "patchq: patches/2.patch: 2.patch does not apply to 0123abcd: "
                "conflict in f.c (upstream: 0123abcd Fix) — edit the files",
            },
            "3.patch": {"on_old": "exact", "on_new": "upstreamed", "methods": ["upstreamed"]},
        },
    }
    peers = {"tools": ["patch", "patchq"], "cases": [case]}
    md = rw.build_report(peers, {"deb-x-1-to-2": log}, "bench/realworld.py --only x", "D", [])
    assert "bench/realworld.py --only x" in md
    assert "| same as the maintainer (of 3) | **2** | **2** |" in md
    assert "| applied but not the maintainer's result | 1 | 0 |" in md
    assert "| deb-x-1-to-2 | Debian | 3 | 2 | 1 | 1+1 = 2 (1) | 1+1 = 2 (0) |" in md
    assert "| modified | 1 | 1 / 0 | 0 / 0 |" in md
    assert "| dropped: already in Y | 1 | 0 / 1 | 0 / 1 |" in md
    assert "| deb-x-1-to-2 | 3 | 2 | 3 | 2 | 3 | yes |" in md
    assert (
        "| Y (rebase) | conflict in FILE (upstream: …) — hunks: conflict: its context is not "
        "in the file | 1 | `deb-x-1-to-2/2.patch` |" in md
    )
    assert "| 2.patch | modified | fuzz | stopped, skipped conflict | failed / fuzz |" in md
