"""Limits of the file system: a read-only patch repo, and a series
name longer than a file name can be.

A rebase whose patch-repo writes must fail (a read-only file system: EROFS, which even
root meets) is refused before it moves the target — HEAD, branches, working tree and
patchq's state as they were — and `rebase --abort` of a rebase stopped before the patch
repo became read-only still puts everything back. A series name longer than file systems
hold is bad input (exit 4) with one bounded error line: the name is shortened.

The read-only patch repo is a read-only bind mount in a private mount namespace
(`unshare -rm`), seen by the one patchq process under test.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import Queue, Result, Upstream, git, run_patchq

TEXT = "".join(f"{i}\n" for i in range(1, 31))
PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -9,3 +9,3 @@\n 9\n-10\n+TEN\n 11\n"


def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount --bind / / 2>/dev/null || mount --bind /tmp /tmp"],
        capture_output=True,
    )
    return probe.returncode == 0


needs_unshare = pytest.mark.skipif(
    not _can_unshare(), reason="needs unshare -rm (user and mount namespaces)"
)


def read_only(folder: Path, *args: str) -> Result:
    """`patchq ARGS` run from `folder`, which that process sees read-only."""
    script = (
        'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && cd "$1" && shift && '
        'exec "$0" -m patchq "$@"'
    )
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, sys.executable, str(folder), *args],
        capture_output=True,
    )
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def target_state(up: Upstream) -> tuple[str, ...]:
    state_dir = up.path / ".git" / "patchq"
    return (
        up.git("rev-parse", "HEAD"),
        up.git("symbolic-ref", "-q", "HEAD") if up.git("branch", "--show-current") else "",
        up.git("for-each-ref"),
        up.git("status", "--porcelain", "--untracked-files=all"),
        up.read("f.txt").decode(),
        " ".join(sorted(p.name for p in state_dir.iterdir())) if state_dir.is_dir() else "",
    )


def repo_state(q: Queue) -> dict[str, bytes]:
    return {
        str(p.relative_to(q.path)): p.read_bytes() for p in sorted(q.path.rglob("*")) if p.is_file()
    }


@pytest.fixture
def applied(upstream: Upstream, queue: Queue, patchq) -> tuple[Upstream, Queue]:  # type: ignore[no-untyped-def]
    upstream.write("f.txt", TEXT)
    base = upstream.commit("base")
    queue.add("p.patch", PATCH)
    assert patchq("apply", "--onto", base).code == 0
    upstream.git("checkout", "-q", "main")
    return upstream, queue


@needs_unshare
def test_a_rebase_refused_by_a_read_only_patch_repo_does_not_move_the_target(
    applied: tuple[Upstream, Queue],
) -> None:
    up, q = applied
    up.write("f.txt", TEXT.replace("1\n", "one\n", 1)).commit("upstream moves")
    up.git("checkout", "-q", "patchq/main")
    before, files = target_state(up), repo_state(q)
    r = read_only(q.path, "rebase", "--onto", "main")
    assert r.code == 5, r.err
    assert len(r.err.splitlines()) == 1 and "read-only file system" in r.err, r.err
    assert target_state(up) == before
    assert repo_state(q) == files
    # Nothing is left to recover; the same rebase works once the patch repo is writable.
    assert "in progress" not in run_patchq("--dir", str(q.path), "status").out
    done = run_patchq("--dir", str(q.path), "rebase", "--onto", "main")
    assert done.code == 0, done.err


@needs_unshare
def test_abort_works_on_a_read_only_patch_repo(applied: tuple[Upstream, Queue]) -> None:
    up, q = applied
    up.git("checkout", "-q", "patchq/main")
    before_all = target_state(up)
    up.git("checkout", "-q", "main")
    up.write("f.txt", TEXT.replace("10\n", "ten\n")).commit("upstream edits the same line")
    up.git("checkout", "-q", "patchq/main")
    files = repo_state(q)
    r = run_patchq("--dir", str(q.path), "rebase", "--onto", "main")
    assert r.code == 3, r.err
    stopped = target_state(up)
    (up.path / "f.txt").write_text(TEXT.replace("10\n", "TEN\n"))  # resolved
    resolved = target_state(up)
    r = read_only(q.path, "rebase", "--continue")
    assert r.code == 5 and "read-only file system" in r.err, r.err
    assert target_state(up) == resolved  # still stopped, the resolution kept
    assert stopped[:3] == resolved[:3]
    r = read_only(q.path, "rebase", "--abort")
    assert r.code == 0, r.err
    after = target_state(up)
    assert after[0] == before_all[0] and after[4] == before_all[4]
    assert "op.json" not in after[5] and "rebase" not in after[5]  # nothing left over
    assert repo_state(q) == files


@pytest.mark.parametrize(
    "name",
    [
        "x" * 300 + ".patch",
        "y" * 5000 + ".patch",
        "/".join(["d" * 200] * 30) + "/z.patch",
    ],
    ids=["300", "5000", "deep"],
)
@pytest.mark.parametrize(
    "args", [("apply",), ("push", "-a"), ("lint",), ("export", "--quilt", "out")]
)
def test_a_series_name_longer_than_a_file_name_is_bad_input_in_one_short_line(
    upstream: Upstream, queue: Queue, name: str, args: tuple[str, ...]
) -> None:
    upstream.write("f.txt", TEXT)
    base = upstream.commit("base")
    git(upstream.path, "checkout", "-q", base)
    (queue.path / "series").write_text(name + "\n")
    before, files = target_state(upstream), repo_state(queue)
    r = run_patchq("--dir", str(queue.path), *args, cwd=queue.path)
    assert r.code == 4, (r.code, r.err[:300])
    text = r.err if args[0] != "lint" else r.out
    assert len(text.splitlines()) == 1 and len(text) < 600, len(text)
    assert "unsafe patch name" in text and "more)…" in text
    assert target_state(upstream) == before and repo_state(queue) == files
    assert not (queue.path / "out").exists()
