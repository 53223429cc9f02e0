"""Faults of the environment are clear errors, not internal errors.

A full disk, a read-only or forbidden folder, a file where a folder must be, a name
longer than file systems hold: one line naming the path, exit 5 (4 for a name the
user or a patch chose), no traceback, and nothing half-written. The disk-full case is
injected at patchq's one write function (`store/files._write`), at every write of a
command in turn, so each point where a write can fail is shown to roll back.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.store import files

from ..conftest import Queue, Result, Upstream

Run = Callable[..., Result]
PATCH = "{0}\n\n---\n--- /dev/null\n+++ b/{0}.txt\n@@ -0,0 +1 @@\n+{0}\n"


def state(up: Upstream, queue: Queue) -> dict[str, object]:
    """The patch repo's files, the target's refs, HEAD, index and working tree."""
    out: dict[str, object] = {}
    for root in (queue.path, up.path):
        for dirpath, _dirs, names in os.walk(root):
            if "/.git/objects" in dirpath or dirpath.endswith("/.git/logs"):
                continue
            for n in names:
                p = Path(dirpath) / n
                if n in ("index", "ORIG_HEAD", "packed-refs") or "/.git/logs" in str(p):
                    continue
                out[str(p)] = p.read_bytes()
    out["refs"] = up.git("for-each-ref")
    out["HEAD"] = up.git("rev-parse", "HEAD")
    out["status"] = up.git("status", "--porcelain", "--ignored")
    out["index"] = up.git("ls-files", "-s")
    return out


def full_at(monkeypatch: pytest.MonkeyPatch, k: int) -> list[int]:
    """Make the k-th write (1-based) fail as a full disk does; returns the write count."""
    seen = [0]
    real = files._write

    def write(f, data):  # type: ignore[no-untyped-def]
        seen[0] += 1
        if seen[0] == k:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), getattr(f, "name", None))
        real(f, data)

    monkeypatch.setattr(files, "_write", write)
    return seen


def sweep(
    monkeypatch: pytest.MonkeyPatch, up: Upstream, queue: Queue, run: Callable[[], Result]
) -> int:
    """Fail each write of `run` in turn: every failure is one line, exit 5, no change."""
    before = state(up, queue)
    k = 1
    while True:
        seen = full_at(monkeypatch, k)
        r = run()
        if seen[0] < k:  # fewer writes than k: the command ran through
            assert r.code == 0, r.err
            return k - 1
        assert r.code == 5, (k, r.err)
        assert len(r.err.strip().splitlines()) == 1, r.err
        assert "no space left on device" in r.err and "internal error" not in r.err, r.err
        assert str(queue.path) in r.err or str(up.path) in r.err, r.err  # names the path
        assert state(up, queue) == before, f"write {k} failing left a change"
        assert not list(queue.path.rglob("*.tmp")), "a temporary file was left"
        k += 1


@pytest.fixture
def target(upstream: Upstream) -> tuple[Upstream, str]:
    upstream.write("a.txt", "a\n")
    return upstream, upstream.commit("base")


def test_disk_full_at_every_write_of_import(
    target: tuple[Upstream, str],
    queue: Queue,
    patchq: Run,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    up, _ = target
    for n in ("one", "two"):
        (tmp_path / f"{n}.diff").write_text(PATCH.format(n))
    writes = sweep(
        monkeypatch,
        up,
        queue,
        lambda: patchq("import", str(tmp_path / "one.diff"), str(tmp_path / "two.diff")),
    )
    assert writes >= 3  # two patches and the series
    assert len(queue.series().splitlines()) == 2


def test_disk_full_at_every_write_of_apply_and_push(
    target: tuple[Upstream, str], queue: Queue, patchq: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    up, base = target
    queue.add("one.patch", PATCH.format("one")).add("two.patch", PATCH.format("two"))
    assert sweep(monkeypatch, up, queue, lambda: patchq("apply", "--onto", base)) >= 2
    assert (up.path / "two.txt").read_text() == "two\n"
    monkeypatch.undo()
    assert patchq("pop", "-a").code == 0
    assert sweep(monkeypatch, up, queue, lambda: patchq("push", "-a")) >= 1


def test_a_file_where_a_folder_must_be(
    target: tuple[Upstream, str], queue: Queue, patchq: Run, tmp_path: Path
) -> None:
    up, base = target
    queue.add("one.patch", PATCH.format("one"))
    # The target's state folder is a file: a one-line fault, nothing changed.
    (up.path / ".git" / "patchq").write_text("not a folder\n")
    before = state(up, queue)
    r = patchq("apply", "--onto", base)
    assert r.code == 5 and len(r.err.strip().splitlines()) == 1, r.err
    assert ".git/patchq" in r.err and "internal error" not in r.err, r.err
    assert state(up, queue) == before
    (up.path / ".git" / "patchq").unlink()
    # patches/ is a file: import cannot write its patch.
    (queue.path / "patches" / "one.patch").unlink()
    (queue.path / "patches").rmdir()
    (queue.path / "patches").write_text("")
    (tmp_path / "x.diff").write_text(PATCH.format("x"))
    r = patchq("import", str(tmp_path / "x.diff"))
    assert r.code in (4, 5) and len(r.err.strip().splitlines()) == 1, r.err
    assert "internal error" not in r.err and "patches" in r.err, r.err


@pytest.mark.skipif(os.geteuid() == 0, reason="root is not denied by file modes")
def test_a_read_only_patch_repo(
    target: tuple[Upstream, str], queue: Queue, patchq: Run, tmp_path: Path
) -> None:
    up, _ = target
    (tmp_path / "x.diff").write_text(PATCH.format("x"))
    for p in (queue.path / "patches", queue.path):
        p.chmod(0o555)
    try:
        before = state(up, queue)
        r = patchq("import", str(tmp_path / "x.diff"))
        assert r.code == 5 and len(r.err.strip().splitlines()) == 1, r.err
        assert "permission denied" in r.err.lower() and str(queue.path) in r.err, r.err
        assert state(up, queue) == before
    finally:
        for p in (queue.path, queue.path / "patches"):
            p.chmod(0o755)


def test_a_name_longer_than_file_systems_hold(
    target: tuple[Upstream, str], queue: Queue, patchq: Run
) -> None:
    up, base = target
    assert patchq("apply", "--onto", base).code == 0
    before = state(up, queue)
    r = patchq("new", "x" * 300 + ".patch")
    assert r.code == 4 and len(r.err.strip().splitlines()) == 1, r.err
    assert "longer than 255 bytes" in r.err, r.err
    assert state(up, queue) == before
