"""Recovery tells the truth.

A kill while an `--exec-each` command runs leaves the stack at that patch: `status` says
so, `rebase --continue` makes that run again and the rest, `rebase --abort` and `recover`
check the whole stack out again and say which runs were made. Recovering from a killed
`rebase --abort` says it finished that abort, not that it aborted a rebase anew. A kill
inside patchq's own checkout of an abort is not taken for the person's edits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import git
from ..stack.test_interrupt import applied_all, build, run, snapshot


def killing_command(tmp_path: Path) -> str:
    """An --exec-each command that kills patchq (its parent) at p2.patch, once."""
    flag = tmp_path / "killed-once"
    return (
        f'if [ "$PATCHQ_PATCH" = p2.patch ] && [ ! -e {flag} ]; then '
        f"touch {flag}; kill -9 $PPID; sleep 5; fi"
    )


def killed_during_a_run(tmp_path: Path) -> tuple[Path, Path, str]:
    up, q, base = build(tmp_path)
    applied_all(up, q, base)
    cmd = killing_command(tmp_path)
    r = run(q, "rebase", "--onto", "main", "--exec-each", cmd)
    assert r.returncode == -9, r.stderr
    return up, q, cmd


def test_a_kill_during_an_exec_each_run_is_seen_and_continue_makes_the_rest(
    tmp_path: Path,
) -> None:
    up, q, _ = killed_during_a_run(tmp_path)
    # The stack is at p2, where the killed run was; status says what is going on.
    assert run(q, "applied").stdout == "p1.patch\np2.patch\n"
    st = run(q, "status")
    assert "interrupted rebase --exec-each" in st.stdout, st.stdout
    assert "`patchq rebase --continue`" in st.stdout
    assert run(q, "push").returncode == 5  # nothing else runs over it
    r = run(q, "rebase", "--continue")
    assert r.returncode == 0, r.stderr
    assert run(q, "applied").stdout == "p1.patch\np2.patch\np3.patch\n"
    lock = json.loads((q / "series.lock").read_text())
    assert [p["exec"]["ok"] for p in lock["patches"]] == [True, True, True]
    st = run(q, "status")
    assert "interrupted" not in st.stdout and "exec-each" not in st.stdout
    assert git(up, "status", "--porcelain") == ""


@pytest.mark.parametrize("how", [["rebase", "--abort"], ["recover", "--continue"]])
def test_abort_or_recover_of_killed_runs_gives_back_the_stack_and_says_so(
    tmp_path: Path, how: list[str]
) -> None:
    up, q, _ = killed_during_a_run(tmp_path)
    r = run(q, *how)
    assert r.returncode == 0, r.stderr
    assert "1 of 3 --exec-each runs had finished, the one with p2.patch was killed" in r.stderr
    assert run(q, "applied").stdout == "p1.patch\np2.patch\np3.patch\n"
    assert "interrupted" not in run(q, "status").stdout
    lock = json.loads((q / "series.lock").read_text())
    assert [p.get("exec") is not None for p in lock["patches"]] == [True, False, False]
    assert run(q, "recover", "--continue").returncode == 4  # nothing left


def stopped(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A rebase stopped at a conflict; the snapshot from before it."""
    up, q, base = build(tmp_path)
    applied_all(up, q, base)
    before = snapshot(up, q)
    git(up, "checkout", "-q", "main")
    (up / "f.txt").write_text((up / "f.txt").read_text().replace("line 20", "Line twenty"))
    git(up, "commit", "-q", "-am", "upstream edits line 20")
    git(up, "checkout", "-q", "patchq/main")
    assert run(q, "rebase", "--onto", "main").returncode == 3
    return up, q, before


@pytest.mark.parametrize("point", ["journal:recorded"])
@pytest.mark.parametrize("finish", ["--abort", "--continue"])
def test_recovering_a_killed_abort_says_it_finished_that_abort(
    tmp_path: Path, point: str, finish: str
) -> None:
    up, q, before = stopped(tmp_path)
    main = git(up, "rev-parse", "main")
    r = run(q, "rebase", "--abort", crash=point)
    assert r.returncode == -9
    assert "interrupted rebase --abort" in run(q, "status").stdout
    r = run(q, "rebase", finish)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[-1] == (
        "finished the interrupted `patchq rebase --abort`: "
        "target, series, patches and lock are as before the rebase"
    )
    # It is true: the state from before the rebase, byte for byte (main moved on since).
    after = snapshot(up, q)
    assert git(up, "rev-parse", "main") == main
    assert {k: v for k, v in after.items() if k != "refs"} == {
        k: v for k, v in before.items() if k != "refs"
    }
    assert "saved" not in r.stderr  # nothing of the person's was found on the way


def test_a_plain_abort_says_it_aborted(tmp_path: Path) -> None:
    _, q, _ = stopped(tmp_path)
    r = run(q, "rebase", "--abort")
    assert (r.returncode, r.stderr) == (
        0,
        "rebase aborted; target, series, patches and lock are as before\n",
    )


def test_a_file_torn_by_a_killed_undo_is_not_taken_for_the_persons(tmp_path: Path) -> None:
    """`undo` checks out the state before the operation: a kill inside that checkout
    leaves a file cut short on its way there. Recovery compares it with the tree the
    checkout was writing (not only with where HEAD points) and stashes nothing."""
    up, q, base = build(tmp_path)
    applied_all(up, q, base)
    whole = (up / "f.txt").read_text()
    before = snapshot(up, q)
    assert run(q, "pop", "-a").returncode == 0
    assert run(q, "undo", crash="git:index-locked").returncode == -9
    assert "interrupted undo pop" in run(q, "status").stdout
    (up / "f.txt").write_text(whole[: len(whole) // 2])  # cut short mid-write
    r = run(q, "recover", "--continue")
    assert r.returncode == 0, r.stderr
    assert "stash" not in r.stderr and "removed" in r.stderr
    assert git(up, "rev-parse", "-q", "--verify", "refs/stash", check=False) == ""
    assert snapshot(up, q) == before


@pytest.mark.parametrize("mode", ["--abort", "--continue"])
def test_recovering_a_killed_undo_says_it_finished_that_undo(tmp_path: Path, mode: str) -> None:
    """An undo goes back; killed, both `recover --abort` and `--continue` can only carry
    it on back: what they say is that they finished it, never that they undid it."""
    up, q, base = build(tmp_path)
    applied_all(up, q, base)
    before_pop = snapshot(up, q)
    assert run(q, "pop").returncode == 0
    r = run(q, "undo", crash="journal:recorded")
    assert r.returncode == -9
    r = run(q, "recover", mode)
    assert r.returncode == 0, r.stderr
    last = r.stderr.splitlines()[-1]
    assert last.startswith("finished the interrupted `patchq undo pop`"), last
    assert "undid" not in r.stderr
    after = snapshot(up, q)
    assert {k: v for k, v in after.items() if k != "refs"} == {
        k: v for k, v in before_pop.items() if k != "refs"
    }
