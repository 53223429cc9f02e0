"""Nothing a person saves while patchq works in memory is lost.

`push -a`, `pop -a` and `rebase` build their result in memory and check it out at the
end. A person who saves a file or makes a commit in the target meanwhile must find it
intact: patchq compares the target with what it found when it began (the stack branch
with `update-ref`'s old value, HEAD, the working tree's tracked files), and when either
moved it changes nothing of theirs, keeps its own result for `--continue`/`--abort`, and
stops with exit 5 and one line saying what changed and how to finish.

The run is held at a crash point (PATCHQ_CRASH_SIGNAL=PAUSE), the test does what the
person would, then lets it go on (SIGUSR1).
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
from ..stack.test_interrupt import applied_all, applied_one, build, run


def meanwhile(queue: Path, args: list[str], point: str, act: Callable[[], None]) -> tuple[int, str]:
    """Run patchq up to `point`, do `act` there as the person would, let it go on; (exit
    code, stderr)."""
    env = dict(os.environ, PATCHQ_CRASH_AT=point, PATCHQ_CRASH_SIGNAL="PAUSE")
    proc = subprocess.Popen(
        [sys.executable, "-m", "patchq", "--dir", str(queue), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        seen = b""
        while not seen.endswith(f"paused at {point}\n".encode()):
            line = proc.stderr.readline()
            assert line, f"never reached {point}: {seen.decode()}"
            seen += line
        act()
        proc.send_signal(signal.SIGUSR1)
        rest = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, (seen + rest).decode()


def edit(up: Path, text: str) -> Callable[[], None]:
    def act() -> None:
        (up / "f.txt").write_text((up / "f.txt").read_text() + text)

    return act


def commit(up: Path, text: str) -> Callable[[], None]:
    def act() -> None:
        (up / "f.txt").write_text((up / "f.txt").read_text() + text)
        git(up, "commit", "-q", "-am", "my own work")

    return act


CASES = [
    ("push", applied_one, ["push", "-a"], "apply:patch"),
    ("pop", applied_all, ["pop", "-a"], "journal:checking"),
    ("rebase", applied_all, ["rebase", "--onto", "main"], "replay:patch"),
]
IDS = [c[0] for c in CASES]
Setup = Callable[[Path, Path, str], None]


@pytest.mark.parametrize("verb,setup,args,point", CASES, ids=IDS)
def test_a_file_saved_meanwhile_is_never_overwritten(
    tmp_path: Path, verb: str, setup: Setup, args: list[str], point: str
) -> None:
    up, q, base = build(tmp_path)
    setup(up, q, base)
    head = git(up, "rev-parse", "HEAD")
    code, err = meanwhile(q, args, point, edit(up, "my unsaved line\n"))
    assert code == 5, err
    last = err.splitlines()[-1]
    assert "f.txt changed while `patchq" in last and "nothing was overwritten" in last, err
    assert f"`patchq {verb} --continue`" in last and f"`patchq {verb} --abort`" in last
    # The person's file and the target are as they left them.
    assert (up / "f.txt").read_text().endswith("my unsaved line\n")
    assert git(up, "rev-parse", "HEAD") == head
    # Both sides agree something waits, and nothing else may run over it.
    assert "interrupted" in run(q, "status").stdout
    assert run(q, "push").returncode == 5
    # --abort drops patchq's result and leaves the person's work where it is.
    r = run(q, f"{verb}", "--abort")
    assert r.returncode == 0, r.stderr
    assert (up / "f.txt").read_text().endswith("my unsaved line\n")
    assert git(up, "rev-parse", "HEAD") == head
    assert git(up, "for-each-ref", "refs/patchq/").count("/held") == 0


@pytest.mark.parametrize("verb,setup,args,point", CASES, ids=IDS)
def test_continue_puts_the_result_in_place_and_keeps_the_edit_in_a_stash(
    tmp_path: Path, verb: str, setup: Setup, args: list[str], point: str
) -> None:
    up, q, base = build(tmp_path)
    setup(up, q, base)
    code, err = meanwhile(q, args, point, edit(up, "my unsaved line\n"))
    assert code == 5, err
    r = run(q, f"{verb}", "--continue")
    assert r.returncode == 0, r.stderr
    assert "saved uncommitted changes found on the way in stash" in r.stderr
    stash = git(up, "stash", "show", "-p", "stash@{0}")
    assert "+my unsaved line" in stash
    # The result is what the undisturbed command gives.
    up2, q2, base2 = build(tmp_path / "ref")
    setup(up2, q2, base2)
    assert run(q2, *args).returncode == 0
    assert (up / "f.txt").read_text() == (up2 / "f.txt").read_text()
    assert run(q, "applied").stdout == run(q2, "applied").stdout


@pytest.mark.parametrize("verb,setup,args,point", CASES, ids=IDS)
def test_a_commit_made_meanwhile_is_never_thrown_away(
    tmp_path: Path, verb: str, setup: Setup, args: list[str], point: str
) -> None:
    up, q, base = build(tmp_path)
    setup(up, q, base)
    code, err = meanwhile(q, args, point, commit(up, "committed line\n"))
    assert code == 5, err
    last = err.splitlines()[-1]
    assert "moved to" in last and "a commit made meanwhile" in last, err
    mine = git(up, "rev-parse", "HEAD").strip()
    assert git(up, "log", "-1", "--format=%s", mine).strip() == "my own work"
    assert git(up, "rev-parse", "refs/patchq/main/kept").strip() == mine
    # --continue puts patchq's result in place; the person's commit stays reachable.
    r = run(q, f"{verb}", "--continue")
    assert r.returncode == 0, r.stderr
    assert git(up, "rev-parse", "refs/patchq/main/kept").strip() == mine
    assert git(up, "cat-file", "-t", mine).strip() == "commit"
    assert "committed line" not in (up / "f.txt").read_text()


def test_a_commit_made_meanwhile_survives_abort_on_its_branch(tmp_path: Path) -> None:
    up, q, base = build(tmp_path)
    applied_one(up, q, base)
    code, err = meanwhile(q, ["push", "-a"], "apply:patch", commit(up, "committed line\n"))
    assert code == 5, err
    mine = git(up, "rev-parse", "HEAD").strip()
    assert run(q, "push", "--abort").returncode == 0
    assert git(up, "rev-parse", "HEAD").strip() == mine
    assert (up / "f.txt").read_text().endswith("committed line\n")


def test_nothing_changed_meanwhile_goes_through(tmp_path: Path) -> None:
    """The check holds back only a real change: a run the person left alone finishes."""
    up, q, base = build(tmp_path)
    applied_one(up, q, base)
    code, err = meanwhile(q, ["push", "-a"], "apply:patch", lambda: None)
    assert code == 0, err
    assert run(q, "applied").stdout == "p1.patch\np2.patch\np3.patch\n"
    assert "refs/patchq/main/held" not in git(up, "for-each-ref")
