"""No machine path is a default: a folder a run writes or reads is an option, required
unless its environment variable names it, and a run's output folder is never inside the
repository."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from patchq_bench import paths
from patchq_bench.realworld import cli as realworld


def _parser(always: bool = True) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(exit_on_error=False)
    paths.path_option(ap, "--out", paths.WORK_ENV, "where it goes", "runs", always=always)
    return ap


def test_a_folder_is_required_unless_the_environment_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises((SystemExit, argparse.ArgumentError)):
        _parser().parse_args([])
    assert _parser(always=False).parse_args([]).out is None
    assert _parser().parse_args(["--out", str(tmp_path)]).out == tmp_path
    monkeypatch.setenv(paths.WORK_ENV, str(tmp_path))
    assert _parser().parse_args([]).out == tmp_path / "runs"


def test_an_output_folder_inside_the_repository_is_refused(tmp_path: Path) -> None:
    assert paths.outside_repo(tmp_path / "out", "--out") == tmp_path / "out"
    with pytest.raises(SystemExit, match="inside the repository"):
        paths.outside_repo(paths.REPO / "bench" / "out", "--out")
    with pytest.raises(SystemExit, match="inside the repository"):
        realworld.main(["--out", str(paths.REPO / "run"), "--report-only"])


def test_no_bench_default_names_a_machine_path() -> None:
    for module in sorted((paths.BENCH / "src").rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        for bad in ('"/work', '"/tmp/', "/.mirror"):
            assert bad not in text, f"{module.relative_to(paths.BENCH)} names {bad}"
