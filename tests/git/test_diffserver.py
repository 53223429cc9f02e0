"""The diff server gives merge3 git's own diff, exactly, from one process per run.

Its edit scripts must equal merge3's Python Myers (itself git's, byte for byte); merges
that send every diff to it must equal `git merge-file`; no user configuration may change
its answer; file lines that look like its protocol must not confuse it; and it must
clean up after itself and fail loudly if git goes away.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from patchq.core import merge3
from patchq.core.errors import GitError
from patchq.core.patch import split_lines
from patchq.git.diffserver import DiffServer
from patchq.git.repo import GitRepo

from ..conftest import wall_clock
from ..core.test_merge3 import CASES, LABELS, _blank_runs, _large, _small, git_merge


def python_script(a: bytes, b: bytes) -> merge3.Script:
    la, lb = split_lines(a), split_lines(b)
    ids = {line: k for k, line in enumerate(dict.fromkeys(la + lb))}
    return merge3.diff([ids[x] for x in la], [ids[x] for x in lb])


@pytest.fixture
def server() -> Iterator[DiffServer]:
    s = DiffServer()
    yield s
    s.close()


def test_scripts_equal_the_python_diff(server: DiffServer) -> None:
    rng = random.Random(11)
    pairs = [(b, o) for o, b, _ in (_small(rng) for _ in range(300))]
    pairs += [(b, t) for _, b, t in (_large(rng) for _ in range(4))]
    pairs += [(b, o) for o, b, _ in (_blank_runs(rng) for _ in range(60))]
    pairs += [(b, o) for o, b, _ in CASES.values()]
    for i, (a, b) in enumerate(pairs):
        assert server.script(a, b) == python_script(a, b), (i, a, b)


def test_merges_through_the_server_equal_git_merge_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: DiffServer
) -> None:
    """With FAR_LINES below zero every diff of every merge is the server's."""
    monkeypatch.setattr(merge3, "FAR_LINES", -1)
    calls = []

    def far(a: bytes, b: bytes) -> Callable[[], merge3.Script]:
        calls.append(1)
        return server.ask(a, b)

    rng = random.Random(5)
    cases = [_small(rng) for _ in range(120)] + [_large(rng) for _ in range(2)]
    cases += list(CASES.values())
    for i, (ours, base, theirs) in enumerate(cases):
        got = merge3.merge(ours, base, theirs, LABELS, far=far)
        assert got is not None
        assert (got[0], min(got[1], 127)) == git_merge(tmp_path, ours, base, theirs), i
    assert len(calls) == 2 * len(cases)


def test_answers_read_out_of_order_are_each_their_own(server: DiffServer) -> None:
    """Questions go out before answers are read; reading a later answer first reads the
    earlier ones and keeps them."""
    rng = random.Random(9)
    pairs = [(b, o) for o, b, _ in (_small(rng) for _ in range(30))]
    asked = [server.ask(a, b) for a, b in pairs]
    for k in [*range(29, -1, -3), *range(30)]:
        assert asked[k]() == python_script(*pairs[k]), k


def test_lines_that_look_like_the_protocol_are_only_lines(server: DiffServer) -> None:
    marker = server._end  # the end line itself, as file content
    a = b"".join(
        [
            b"@@ -1 +1 @@\n",
            b"\\ No newline at end of file\n",
            marker,
            b"--- a/f\n",
            b"+++ b/f\n",
            b"diff --git a/f b/f\n",
            b"keep\n",
        ]
        * 3
    )
    b = a.replace(b"keep\n", b"changed\n", 1).replace(marker, b"x\n", 1)
    for x, y in ((a, b), (b, a), (a, a + marker), (marker, b""), (b"", marker)):
        assert server.script(x, y) == python_script(x, y)


def test_user_configuration_does_not_change_the_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Settings that would change git diff's output, in the user's global config and in
    the environment, are not read."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[diff]\n\talgorithm = histogram\n\tindentHeuristic = true\n"
        "\tsuppressBlankEmpty = true\n\tcontext = 9\n\tinterHunkContext = 5\n"
        "\tnoprefix = true\n\tmnemonicPrefix = true\n[color]\n\tui = always\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'diff.algorithm'='patience'")
    rng = random.Random(2)
    s = DiffServer()
    try:
        for _ in range(80):
            ours, base, _ = _blank_runs(rng)
            assert s.script(base, ours) == python_script(base, ours)
    finally:
        s.close()


def test_close_stops_git_and_removes_the_store() -> None:
    s = DiffServer()
    s.script(b"a\n", b"b\n")
    where = Path(s.dir)
    assert any((where / "objects").iterdir())
    proc = s._proc
    s.close()
    assert proc.poll() is not None
    assert not where.exists()


def test_the_store_on_disk_is_bounded(monkeypatch: pytest.MonkeyPatch, server: DiffServer) -> None:
    monkeypatch.setattr("patchq.git.diffserver._KEEP", 64 << 10)
    for i in range(40):
        a = b"".join(b"%d line %d\n" % (i, k) for k in range(2000))
        assert server.script(a, a + b"end\n") == [(2000, 2000, 0, 1)]
    on_disk = sum(f.stat().st_size for f in Path(server.dir, "objects").rglob("*") if f.is_file())
    assert on_disk <= (64 << 10) + 4 * 60_000  # the cap, plus the last request's files


def test_a_server_that_died_is_an_error(server: DiffServer) -> None:
    server._proc.kill()
    server._proc.wait()
    with pytest.raises(GitError, match="diff-tree stopped answering"):
        server.script(b"a\n", b"b\n")


def test_one_server_serves_every_long_merge_of_a_repo(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    g = GitRepo(tmp_path / "repo")
    before = g.processes
    base = b"".join(b"line %d\n" % i for i in range(3000))
    try:
        for k in range(5):
            ours = base.replace(b"line 7", b"ours %d" % k).replace(b"line 29", b"x")
            theirs = base.replace(b"line 2990\n", b"theirs\n")
            got = g.merge_file(ours, base, theirs, LABELS)
            assert got == git_merge(tmp_path, ours, base, theirs)
        assert g.processes == before + 1
        assert g._differ is not None
        where = g._differ.dir
    finally:
        g.close()
    assert not os.path.exists(where)


def test_files_of_unanswered_questions_stay(
    monkeypatch: pytest.MonkeyPatch, server: DiffServer
) -> None:
    """The store trims itself only between questions: asking a second question before
    reading the first must not remove files git has yet to read."""
    monkeypatch.setattr("patchq.git.diffserver._KEEP", 1)
    big = [b"".join(b"%d:%d\n" % (k, i) for i in range(3000)) for k in range(4)]
    asked = [server.ask(big[k], big[k + 1]) for k in range(3)]
    for k in (2, 0, 1):
        assert asked[k]() == python_script(big[k], big[k + 1])


def test_stores_of_killed_runs_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed before close (SIGKILL, a CI timeout's SIGTERM) leaves its store; the
    next server removes it when its process is gone, and nothing else."""
    monkeypatch.setattr("patchq.git.diffserver._scratch", lambda: str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"patchq-diff-{dead.pid}-abc123"
    (stale / "objects").mkdir(parents=True)
    alive = tmp_path / f"patchq-diff-{os.getppid()}-def456"
    alive.mkdir()
    other = tmp_path / "patchq-diff-12345"  # not a store's name
    other.mkdir()
    s = DiffServer()
    try:
        assert Path(s.dir).parent == tmp_path
        assert not stale.exists() and alive.exists() and other.exists()
        assert s.script(b"a\n", b"b\n") == [(0, 0, 1, 1)]
    finally:
        s.close()


@pytest.mark.parametrize("where", ["start", "ask"])
def test_a_store_that_cannot_be_written_leaves_the_diff_to_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A full /dev/shm (Docker gives 64 MB) or a git that will not start must not stop a
    run: its long diffs are then made in Python, with the same answer."""
    import errno

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "start":
        monkeypatch.setattr(DiffServer, "__init__", full)
    else:
        monkeypatch.setattr(DiffServer, "_put", full)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    g = GitRepo(tmp_path / "repo")
    base = b"".join(b"line %d\n" % i for i in range(3000))
    ours = base.replace(b"line 7", b"ours").replace(b"line 29", b"x")
    theirs = base.replace(b"line 2990\n", b"theirs\n")
    try:
        for _ in range(2):
            assert g.merge_file(ours, base, theirs, LABELS) == git_merge(
                tmp_path, ours, base, theirs
            )
            theirs += b"more\n"
        assert g._differ_failed
    finally:
        g.close()


def test_close_does_not_wait_for_answers_nobody_reads() -> None:
    """A run that stops between asking and reading (an error in between) must not hang on
    close while git is blocked writing a long answer into a full pipe."""
    import time

    s = DiffServer()
    a = b"".join(b"%d\n" % i for i in range(40000))
    b = b"".join(b"%d\n" % (i * 7) for i in range(40000))
    for _ in range(3):
        s.ask(a, b)  # long answers, never read
    time.sleep(0.5)
    started = time.monotonic()
    s.close()
    wall_clock("diffserver: close with unread long answers", time.monotonic() - started, 2.0)
    assert s._proc.poll() is not None and not os.path.exists(s.dir)


def test_a_server_nobody_closed_cleans_up_when_collected() -> None:
    import gc

    s = DiffServer()
    s.script(b"a\n", b"b\n")
    proc, where = s._proc, s.dir
    del s
    gc.collect()
    assert proc.poll() is not None and not os.path.exists(where)
