"""Ctrl-C as a terminal sends it: a real SIGINT to patchq's whole process group (its git
children die of it too), mid-run (issue 16, point 10).

The run is held at a crash point (PATCHQ_CRASH_SIGNAL=PAUSE: it says where on stderr and
sleeps), then the test signals the group. Whatever was under way, patchq exits 130 with
one line and no traceback, and leaves what the README promises: rolled back exactly,
with `status` and `recover` agreeing that nothing is left to finish.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import git
from .test_interrupt import applied_all, applied_one, build, nothing, run, snapshot


def interrupted(queue: Path, args: list[str], point: str) -> tuple[int, str]:
    """Run patchq until it reaches `point`, press Ctrl-C; (exit code, stderr)."""
    env = dict(os.environ, PATCHQ_CRASH_AT=point, PATCHQ_CRASH_SIGNAL="PAUSE")
    proc = subprocess.Popen(
        [sys.executable, "-m", "patchq", "--dir", str(queue), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    assert proc.stderr is not None
    seen = b""
    while not seen.endswith(f"paused at {point}\n".encode()):
        line = proc.stderr.readline()
        assert line, f"never reached {point}: {seen.decode()}"
        seen += line
    os.killpg(proc.pid, signal.SIGINT)
    rest = proc.stderr.read()
    proc.wait(timeout=30)
    return proc.returncode, (seen + rest).decode()


CASES = [
    ("apply", nothing, ["apply", "--onto", "{base}"], "apply:patch"),
    ("push", applied_one, ["push", "-a"], "apply:patch"),
    ("pop", applied_all, ["pop", "-a"], "journal:target-moved"),
    ("rebase", applied_all, ["rebase", "--onto", "main"], "replay:patch"),
    ("check", applied_all, ["check", "--onto", "main"], "replay:patch"),
]


@pytest.mark.parametrize("op,setup,args,point", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_ctrl_c_mid_run_rolls_back_without_a_traceback(
    tmp_path: Path, op: str, setup: Callable[[Path, Path, str], None], args: list[str], point: str
) -> None:
    up, q, base = build(tmp_path)
    setup(up, q, base)
    before = snapshot(up, q)
    code, err = interrupted(q, [a.replace("{base}", base) for a in args], point)
    assert (code, err.splitlines()[-1]) == (130, "patchq: interrupted"), err
    assert "Traceback" not in err
    assert snapshot(up, q) == before
    st = run(q, "status")
    assert st.returncode == 0 and "interrupted" not in st.stdout and "in progress" not in st.stdout
    assert "nothing to recover" in run(q, "recover", "--continue").stderr


def test_ctrl_c_while_a_rebase_finishes_rolls_it_back(tmp_path: Path) -> None:
    up, q, base = build(tmp_path)
    applied_all(up, q, base)
    before = snapshot(up, q)
    code, err = interrupted(q, ["rebase", "--onto", "main"], "apply:patch")
    assert (code, "Traceback" in err) == (130, False), err
    assert snapshot(up, q) == before
    assert "in progress" not in run(q, "status").stdout


def test_recover_and_status_agree_on_a_stopped_rebase(tmp_path: Path) -> None:
    """A rebase stopped at a conflict is `in progress`, not interrupted: `recover` says
    so and names the rebase's own --continue/--abort, rather than "nothing to recover"."""
    up, q, base = build(tmp_path)
    applied_all(up, q, base)
    git(up, "checkout", "-q", "main")
    (up / "f.txt").write_text((up / "f.txt").read_text().replace("line 20", "Line twenty"))
    git(up, "commit", "-q", "-am", "upstream edits line 20")
    git(up, "checkout", "-q", "patchq/main")
    assert run(q, "rebase", "--onto", "main").returncode == 3
    st = run(q, "status")
    assert "in progress: rebase (`patchq rebase --continue` or `--abort`)" in st.stdout
    assert "interrupted" not in st.stdout
    for mode, verb in (("continue", "go on with"), ("abort", "undo")):
        rec = run(q, "recover", f"--{mode}")
        assert rec.returncode == 4
        assert "no command was interrupted, but a rebase is in progress" in rec.stderr
        assert f"`patchq rebase --{mode}` to {verb} it" in rec.stderr
    assert run(q, "rebase", "--abort").returncode == 0


def test_status_says_running_not_interrupted_while_a_command_works(tmp_path: Path) -> None:
    """The journal exists while a command changes the target: `status` calls it
    interrupted only when no patchq holds the run lock (what `recover` goes by)."""
    up, q, base = build(tmp_path)
    applied_one(up, q, base)
    env = dict(os.environ, PATCHQ_CRASH_AT="journal:target-moved", PATCHQ_CRASH_SIGNAL="PAUSE")
    proc = subprocess.Popen(
        [sys.executable, "-m", "patchq", "--dir", str(q), "push", "-a"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == b"paused at journal:target-moved\n"
        st = run(q, "status")
        assert "running push: another patchq is changing the target now" in st.stdout
        assert "interrupted" not in st.stdout
    finally:
        proc.kill()
        proc.wait()
    # Killed: now it is interrupted, and both say so.
    assert "interrupted push" in run(q, "status").stdout
    assert run(q, "push", "--abort").returncode == 0


def test_push_all_with_everything_applied_exits_0(tmp_path: Path) -> None:
    up, q, base = build(tmp_path)
    applied_all(up, q, base)
    before = snapshot(up, q)
    r = run(q, "push", "-a")
    assert (r.returncode, r.stderr) == (0, "now at p3.patch\n")
    assert snapshot(up, q) == before
    r = run(q, "push")  # one more patch was asked for, and there is none
    assert r.returncode == 4 and "nothing to push" in r.stderr
