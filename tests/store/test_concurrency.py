"""Two patchq processes on one patch repo or one target never interleave their writes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ..conftest import Queue, Upstream, held_lock, wall_clock

DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+{}\n"


def patchq_proc(queue: Queue, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "patchq", "--dir", str(queue.path), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )


def test_concurrent_imports_both_land(queue: Queue, tmp_path: Path) -> None:
    names = []
    for i in range(8):
        f = tmp_path / f"fix{i}.patch"
        f.write_text(DIFF.format(i))
        names.append(f)
    # Told to wait (--wait), each takes its turn; none lost another's line, since each
    # read the series under the lock.
    procs = [patchq_proc(queue, "--wait=60", "import", str(f)) for f in names]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err.decode()
    assert sorted(queue.series().split()) == sorted(f"fix{i}.patch" for i in range(8))


def test_a_held_patch_repo_lock_makes_writers_busy_or_wait_then_exit_5(
    queue: Queue, tmp_path: Path
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, os, sys, time\n"
                f"fd = os.open({str(queue.path)!r}, os.O_RDONLY)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                "print('held', flush=True)\n"
                "time.sleep(30)\n"
            ),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        (tmp_path / "x.patch").write_text(DIFF.format("x"))
        # At once: busy, naming the holder and the folder it holds.
        p = patchq_proc(queue, "import", str(tmp_path / "x.patch"))
        _, err = p.communicate(timeout=60)
        assert p.returncode == 5
        assert err.decode().startswith(f"patchq: busy: patchq (pid {holder.pid}) holds ")
        assert "--wait" in err.decode()
        # With --wait=SECONDS it waits that long for its turn, then says the same.
        start = time.monotonic()
        p = patchq_proc(queue, "--wait=2.5", "import", str(tmp_path / "x.patch"))
        _, err = p.communicate(timeout=60)
        waited = time.monotonic() - start
        assert p.returncode == 5 and "busy:" in err.decode()
        wall_clock("import: wait for a busy patch repo", waited, at_least=2.5)
        assert queue.series() == ""
    finally:
        holder.kill()
        holder.wait()
    # The holder died: its lock went with it.
    p = patchq_proc(queue, "import", str(tmp_path / "x.patch"))
    assert p.wait(timeout=60) == 0
    assert queue.series() == "x.patch\n"


def test_second_command_on_a_busy_target_exits_5(upstream: Upstream, queue: Queue) -> None:
    upstream.write("a.txt", "a\n")
    base = upstream.commit("base")
    queue.add("1.patch", DIFF.format("A"))
    state = upstream.path / ".git" / "patchq"
    state.mkdir(parents=True)
    with held_lock(state / "lock") as pid:
        p = patchq_proc(queue, "apply", "--onto", base)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 5
        assert f"busy: patchq (pid {pid}) holds " in err.decode()
        assert "patchq/main" not in upstream.git("branch")
