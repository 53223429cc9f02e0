"""`patchq demo`: the guided rebase runs end to end and leaves the state it describes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ..conftest import run_inprocess


def test_demo_end_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "demo"
    r = run_inprocess(capsys, "demo", str(root))
    assert r.code == 0, r.err
    for step in ("apply", "check", "rebase", "rebase --continue", "report", "verify"):
        assert f" {step}" in r.err
    assert "verified: the series reproduces series.lock" in r.err
    queue = root / "patches-repo"
    lock = json.loads((queue / "series.lock").read_text())
    assert {p["name"]: p["rebase"] for p in lock["patches"]} == {
        "0001-cmake-policy-guards.patch": "upstreamed",
        "0002-cuda13-cccl-include.patch": "refreshed",
        "0003-fp4-sm120a.patch": "resolved",
        "0004-fa3-optional.patch": "resolved",  # a zealous merge, reviewed
    }
    assert all(p["drift"] for p in lock["patches"])
    series = (queue / "series").read_text().splitlines()
    assert re.fullmatch(r"# upstreamed in [0-9a-f]{12}: 0001-cmake-policy-guards\.patch", series[0])
    assert series[1:] == [
        "0002-cuda13-cccl-include.patch",
        "0003-fp4-sm120a.patch",
        "0004-fa3-optional.patch",
    ]
    cmake = (root / "sgl-kernel" / "CMakeLists.txt").read_text()
    assert 'set(FP4_ARCHS "100a;103a;120a")' in cmake and "<<<<<<<" not in cmake
    assert "# DeepGEMM" in cmake and "${CUDAToolkit_INCLUDE_DIRS}/cccl" in cmake
    assert "if(SGL_KERNEL_ENABLE_FA3)" in cmake
    assert run_inprocess(capsys, "--dir", str(queue), "verify").code == 0
    # The report it printed marks the resolved patch substantive with its interdiff.
    assert "[substantive" in r.out and '++  set(FP4_ARCHS "100a;103a;120a")' in r.out


def test_demo_refuses_a_folder_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").write_text("mine\n")
    r = run_inprocess(capsys, "demo", str(tmp_path))
    assert r.code == 4 and "not empty" in r.err
    assert (tmp_path / "x").read_text() == "mine\n"
