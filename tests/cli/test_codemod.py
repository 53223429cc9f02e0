"""`patchq codemod` through the real silver-platter: its wheel's `script_runner` runs the
command in a breezy working tree of a local git repository (the patch repo), reads the
result file it writes at `$SVP_RESULT`, and commits what it changed. And the same entry
as a pod of the Kubernetes Indexed Job that examples/fleet-job.yaml describes.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from patchq.cli.main import cli

from ..conftest import ROOT, git, new_repo

svp = pytest.importorskip("silver_platter")
breezy_git = pytest.importorskip("breezy.git")
WorkingTree = pytest.importorskip("breezy.workingtree").WorkingTree

LINES = "".join(f"line {i}\n" for i in range(1, 41))
PATCH = (
    "From: Dev <dev@example.org>\nSubject: Change line 20\n\n---\n"
    "--- a/f.txt\n+++ b/f.txt\n@@ -17,7 +17,7 @@\n line 17\n line 18\n line 19\n"
    "-line 20\n+LINE TWENTY\n line 21\n line 22\n line 23\n"
)


def _commit_all(path: Path, message: str) -> str:
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD").strip()


def make_fleet_repo(root: Path, name: str) -> tuple[Path, Path]:
    """An upstream checkout and a patch repo (a git repository of its own, as the
    Janitor checks it out) whose one patch is applied and locked on upstream's base."""
    up, queue = root / f"{name}-upstream", root / name
    base = new_repo(up, {"f.txt": LINES})
    (queue / "patches").mkdir(parents=True)
    (queue / "patches" / "change.patch").write_text(PATCH)
    (queue / "series").write_text("change.patch\n")
    (queue / "patchq.toml").write_text(f'target = "../{name}-upstream"\nbranch = "main"\n')
    r = subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(queue), "apply", "--onto", base],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    git(queue, "init", "-q", "-b", "main")
    _commit_all(queue, "the series")
    return up, queue


def upstream_moves(up: Path, text: str, message: str) -> None:
    """A new upstream commit on main, the target's checkout left where it is."""
    branch = git(up, "symbolic-ref", "--short", "HEAD").strip()
    git(up, "checkout", "-q", "main")
    (up / "f.txt").write_text(text)
    _commit_all(up, message)
    git(up, "checkout", "-q", branch)


def run_codemod(queue: Path, *args: str) -> Any:
    tree = WorkingTree.open(str(queue))
    script = shlex.join([sys.executable, "-m", "patchq", "codemod", *args])
    return svp.script_runner(tree, script, commit_pending=True, committer="Bot <bot@example.org>")


def test_silver_platter_runs_the_codemod_end_to_end(tmp_path: Path) -> None:
    up, queue = make_fleet_repo(tmp_path, "pkg")
    before = git(queue, "rev-parse", "HEAD").strip()

    # Nothing drifted: nothing to do, and silver-platter says no changes were made.
    with pytest.raises(svp.ScriptMadeNoChanges):
        run_codemod(queue, "--onto", "main")
    assert git(queue, "rev-parse", "HEAD").strip() == before

    # Upstream inserts lines above the patch: the rebase refreshes it, and silver-platter
    # commits the refreshed patch and lock.
    upstream_moves(up, "# header\n# two\n" + LINES, "Add a header")
    result = run_codemod(queue, "--onto", "main")
    assert result.value == 1
    assert result.description.startswith("rebased the series onto ")
    assert "1 refreshed" in result.description
    ctx = result.context
    assert ctx["check"]["patches"][0]["status"] == "offset"
    assert ctx["rebase"]["patches"][0]["outcome"] == "refreshed"
    assert ctx["report"]["patches"][0]["name"] == "change.patch"
    assert ctx["review"] == []
    after = git(queue, "rev-parse", "HEAD").strip()
    assert after != before
    changed = git(queue, "diff", "--name-only", before, after).split()
    assert sorted(changed) == ["patches/change.patch", "series.lock"]
    assert git(queue, "status", "--porcelain") == ""
    verify = subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(queue), "verify"], capture_output=True
    )
    assert verify.returncode == 0


def test_a_conflict_is_a_failure_with_the_check_kept_and_nothing_changed(tmp_path: Path) -> None:
    up, queue = make_fleet_repo(tmp_path, "pkg")
    upstream_moves(up, LINES.replace("line 20\n", "line twenty\n"), "Reword line 20")
    before = git(queue, "rev-parse", "HEAD").strip()
    with pytest.raises(svp.DetailedFailure) as failed:
        run_codemod(queue, "--onto", "main")
    assert "1 patch(es) conflict with the upstream: change.patch" in str(failed.value)
    assert git(queue, "rev-parse", "HEAD").strip() == before
    assert git(queue, "status", "--porcelain") == ""


def test_the_operators_build_decides(tmp_path: Path) -> None:
    """A failing build is a failure (the branch is discarded), never a success."""
    up, queue = make_fleet_repo(tmp_path, "pkg")
    upstream_moves(up, "# header\n" + LINES, "Add a header")
    with pytest.raises(svp.DetailedFailure) as failed:
        run_codemod(queue, "--onto", "main", "--exec", "exit 7")
    assert "the build `exit 7` failed on the rebased series" in str(failed.value)
    # silver-platter discards a failed run's branch: the next starts from a clean checkout.
    git(queue, "reset", "-q", "--hard")
    git(queue, "clean", "-q", "-fdx")
    result = run_codemod(queue, "--onto", "main", "--exec", "test -f f.txt")
    assert result.value == 1 and result.context["rebase"]["exec"][0]["ok"] is True


def test_result_codes_without_silver_platter(tmp_path: Path) -> None:
    """The result file and the exit codes, read directly: bad input is exit 1 with
    `bad-input` (and `result_code`, the field silver-platter reads on a failure)."""
    _, queue = make_fleet_repo(tmp_path, "pkg")
    result = tmp_path / "result.json"
    env = dict(os.environ, SVP_RESULT=str(result), SVP_API="1")
    r = subprocess.run(
        [sys.executable, "-m", "patchq", "codemod", "--onto", "no-such-ref"],
        cwd=queue,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1, r.stderr
    doc = json.loads(result.read_text())
    assert doc["code"] == doc["result_code"] == "bad-input"
    assert "no-such-ref" in doc["description"]
    assert json.loads(r.stdout) == doc


def _job() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "examples" / "fleet-job.yaml").read_text())
    assert isinstance(doc, dict)
    return doc


def test_the_example_job_is_an_indexed_job_running_the_documented_cli() -> None:
    job = _job()
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    container = job["spec"]["template"]["spec"]["containers"][0]
    command = container["command"]
    assert command[:2] == ["patchq", "codemod"]
    # The arguments parse as the real CLI's, and name the list and the results volume.
    sub = cli.commands["codemod"]
    with sub.make_context("codemod", list(command[2:])) as parsed:
        params = parsed.params
    assert params["list_file"] == Path("/work/repos.txt")
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert str(params["out"]) in mounts
    env = {e["name"] for e in container["env"]}
    assert {"PATCHQ_ONTO", "PATCHQ_EXEC"} <= env
    opts = {o for p in sub.params if isinstance(p, click.Option) for o in p.opts}
    assert {"--list", "--out", "--onto", "--exec"} <= opts


def test_each_pod_takes_its_line_and_writes_its_result(tmp_path: Path) -> None:
    repos = [make_fleet_repo(tmp_path, name) for name in ("one", "two", "three")]
    upstream_moves(repos[1][0], "# header\n" + LINES, "Add a header")
    (tmp_path / "repos.txt").write_text("# the fleet\none\n\ntwo\nthree\n")
    out = tmp_path / "results"
    codes = {}
    for index in range(3):
        env = dict(os.environ, JOB_COMPLETION_INDEX=str(index), PATCHQ_ONTO="main")
        env.pop("SVP_RESULT", None)
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "patchq",
                "codemod",
                "--list",
                str(tmp_path / "repos.txt"),
                "--out",
                str(out),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        doc = json.loads((out / f"{index}.json").read_text())
        assert json.loads(r.stdout) == doc
        codes[index] = (r.returncode, doc["code"])
    assert codes == {0: (0, "nothing-to-do"), 1: (0, "success"), 2: (0, "nothing-to-do")}
    # A pod past the list's end is bad input naming the count.
    env = dict(os.environ, JOB_COMPLETION_INDEX="3")
    r = subprocess.run(
        [sys.executable, "-m", "patchq", "codemod", "--list", str(tmp_path / "repos.txt")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 4 and "past the 3 patch repos listed" in r.stderr


def test_the_result_outputs_go_through_the_one_writer(tmp_path: Path) -> None:
    """$SVP_RESULT through a link is written at the link's end; an --out that is a FIFO
    or a file is refused (exit 4) before check or rebase runs."""
    up, queue = make_fleet_repo(tmp_path, "one")
    upstream_moves(up, "# header\n" + LINES, "Add a header")
    (tmp_path / "repos.txt").write_text("one\n")
    real = tmp_path / "elsewhere" / "result.json"
    real.parent.mkdir()
    link = tmp_path / "result-link"
    link.symlink_to(real)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("keep\n")
    lock = (queue / "series.lock").read_bytes()
    for bad in ("fifo", "file"):
        env = dict(os.environ, JOB_COMPLETION_INDEX="0", SVP_RESULT=str(link))
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "patchq",
                "codemod",
                "--onto",
                "main",
                "--list",
                str(tmp_path / "repos.txt"),
                "--out",
                str(tmp_path / bad),
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 4, r.stderr
        assert (queue / "series.lock").read_bytes() == lock and not real.exists()
    env = dict(os.environ, SVP_RESULT=str(link))
    r = subprocess.run(
        [sys.executable, "-m", "patchq", "codemod", "--onto", "main"],
        cwd=queue,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and json.loads(real.read_text())["code"] == "success"
