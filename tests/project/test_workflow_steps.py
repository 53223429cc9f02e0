"""The example workflow's own shell steps, run as the runner runs them (bash, the step's
working directory, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and RUNNER_TEMP), on a flat patch
repo and on the symlinked Debian layout (`patches -> debian/patches`), with a build that
passes, one that fails and one patchq.toml names but nobody trusted.

What must hold: the step stages exactly the files the rebase says it wrote, links
followed (the whole refreshed series, never only `series.lock`), `patchq verify` and
`patchq lint` pass on the result, and a failed or unrun build makes the pull request a
draft for review with the reason first. The watch's state, carried between two runs from
fresh clones as the cache carries it, makes the second run report nothing new.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..conftest import ROOT, git, new_repo

WORKFLOW = ROOT / "examples" / "github-workflow.yml"
LINES = "".join(f"line {i}\n" for i in range(1, 41))
PATCH = (
    "Change line 20\n\n---\n--- a/f.txt\n+++ b/f.txt\n@@ -17,7 +17,7 @@\n line 17\n"
    " line 18\n line 19\n-line 20\n+LINE TWENTY\n line 21\n line 22\n line 23\n"
)

pytestmark = pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")


def step(name: str) -> dict[str, Any]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    found = [s for s in doc["jobs"]["drift"]["steps"] if s.get("name", "").startswith(name)]
    assert len(found) == 1, name
    return dict(found[0])


@dataclass
class Runner:
    """A workspace as the job lays it out: `patches` (the patch repo's checkout) beside
    `sglang` (upstream's clone), patchq on PATH, and the runner's files."""

    root: Path
    bin: Path

    def run(self, name: str, extra: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
        s = step(name)
        temp, out, summary = self.root / "temp", self.root / "output", self.root / "summary"
        temp.mkdir(exist_ok=True)
        out.write_text("")
        env = dict(os.environ)
        env.update(
            PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            PYTHONPATH=str(ROOT / "src"),
            RUNNER_TEMP=str(temp),
            GITHUB_OUTPUT=str(out),
            GITHUB_STEP_SUMMARY=str(summary),
            ACCEPT="all",
            REFS="origin/main",
            **(extra or {}),
        )
        cwd = self.root / s.get("working-directory", ".")
        proc = subprocess.run(
            ["bash", "-e", "-c", s["run"]], cwd=cwd, env=env, capture_output=True, text=True
        )
        return proc.returncode, _outputs(out.read_text())


def _outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT's `k=v` lines and `k<<END … END` blocks."""
    found: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line:
            key, end = line.split("<<", 1)
            j = lines.index(end, i + 1)
            found[key] = "\n".join(lines[i + 1 : j])
            i = j + 1
            continue
        key, _, value = line.partition("=")
        found[key] = value
        i += 1
    return found


def workspace(tmp: Path, layout: str, build: str) -> Runner:
    """The patch repo (`flat` or `debian`) pinned on upstream's base, its clone as the job
    checks it out, and upstream moved so that the patch is refreshed (an offset)."""
    origin = tmp / "origin"
    base = new_repo(origin, {"f.txt": LINES})
    repo = tmp / "patch-repo"
    if layout == "debian":
        (repo / "debian" / "patches").mkdir(parents=True)
        (repo / "debian" / "patches" / "change.patch").write_text(PATCH)
        (repo / "debian" / "patches" / "series").write_text("change.patch\n")
        (repo / "patches").symlink_to("debian/patches")
        (repo / "series").symlink_to("debian/patches/series")
    else:
        (repo / "patches").mkdir(parents=True)
        (repo / "patches" / "change.patch").write_text(PATCH)
        (repo / "series").write_text("change.patch\n")
    command = {"passing": "true", "failing": "false", "untrusted": "true"}[build]
    (repo / "patchq.toml").write_text(f'target = "../sglang"\nexec = "{command}"\n')
    run = tmp / "run"
    run.mkdir()
    git(tmp, "clone", "-q", str(origin), str(run / "sglang"))
    cli = [sys.executable, "-m", "patchq", "--dir", str(repo)]
    # The maintainer pinned the series on base (from a checkout beside the patch repo).
    git(tmp, "clone", "-q", str(origin), str(tmp / "sglang"))
    subprocess.run([*cli, "apply", "--onto", base], check=True, capture_output=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the series")
    git(tmp, "clone", "-q", str(repo), str(run / "patches"))
    if build != "untrusted":
        subprocess.run(
            [sys.executable, "-m", "patchq", "--dir", str(run / "patches"), "trust"],
            check=True,
            capture_output=True,
        )
    # Upstream moves on: a header above the patch's lines.
    (origin / "f.txt").write_text("# header\n" + LINES)
    git(origin, "commit", "-q", "-am", "Add a header")
    git(run / "sglang", "fetch", "-q")
    shim = tmp / "bin"
    shim.mkdir()
    (shim / "patchq").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m patchq "$@"\n')
    (shim / "patchq").chmod(0o755)
    return Runner(run, shim)


@pytest.mark.parametrize("layout", ["flat", "debian"])
@pytest.mark.parametrize("build", ["passing", "failing", "untrusted"])
def test_the_job_stages_what_patchq_wrote_and_says_when_to_review(
    tmp_path: Path, layout: str, build: str
) -> None:
    r = workspace(tmp_path, layout, build)
    code, out = r.run("Check")
    assert code == 0 and out["code"] == "1" and out["first"] == "origin/main", out
    code, out = r.run("Rebase", {"FIRST": "origin/main"})
    assert code == 0, (r.root / "summary").read_text()
    patches = r.root / "patches"
    staged = git(patches, "diff", "--cached", "--name-only").split()
    folder = "debian/patches" if layout == "debian" else "patches"
    assert set(staged) <= set(out["paths"].split("\n"))  # `series` is written, unchanged
    assert f"{folder}/change.patch" in staged and "series.lock" in staged
    assert git(patches, "diff", "--name-only") == ""  # nothing changed left unstaged
    review = (r.root / "temp" / "review.md").read_text()
    if build == "passing":
        assert out["review"] == "false" and "Needs review" not in review
        assert "## patchq rebase" in review and "## patchq lint" in review  # its warnings
    else:
        assert out["review"] == "true"
        assert review.startswith("## Needs review: the build did not pass")
        why = "failed (exit 1)" if build == "failing" else "was not run: it is not trusted"
        assert why in review.splitlines()[2]
    # What the pull request carries verifies and lints, as the merged branch will.
    clone = tmp_path / "merged"
    git(patches, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "rebase")
    git(tmp_path, "clone", "-q", str(patches), str(clone))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for args, ok in ((("verify",), (0,)), (("lint",), (0, 1))):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "patchq",
                "--dir",
                str(clone),
                "--target",
                str(patches.parent / "sglang"),
                *args,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode in ok, (args, done.stdout, done.stderr)


def test_the_watch_reports_nothing_new_on_the_second_run(tmp_path: Path) -> None:
    r = workspace(tmp_path, "flat", "passing")
    code, out = r.run("Check")
    assert (code, out["watch"]) == (0, "1")
    assert "new" in (r.root / "temp" / "watch.txt").read_text()
    state = (r.root / "patches" / "watch.json").read_bytes()
    # The next run: a fresh clone of the patch repo, the cache putting watch.json back.
    shutil.rmtree(r.root / "patches")
    git(tmp_path, "clone", "-q", str(tmp_path / "patch-repo"), str(r.root / "patches"))
    (r.root / "patches" / "watch.json").write_bytes(state)
    code, out = r.run("Check")
    assert (code, out["watch"], out["code"]) == (0, "0", "1")
    assert (r.root / "temp" / "watch.txt").read_text().startswith("nothing new on origin/main")
