"""Special files are refused without being opened, and big or
pathological inputs cost bounded time and memory.

A FIFO in `patches/` (or as `series`, `series.lock`, `patchq.toml`) would make a plain
`open` wait forever for a writer; a device may never end. Each is refused from its
`stat`, with one line and exit 4, in a subprocess with a deadline so a hang fails the
test instead of stalling the suite.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import Queue, Upstream

PATCH = "One\n\n---\n--- /dev/null\n+++ b/one.txt\n@@ -0,0 +1 @@\n+one\n"


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "patchq", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,  # a hang is a failure, not a stalled suite
    )


def make_special(path: Path, kind: str) -> socket.socket | None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        return s
    elif kind == "device":
        try:
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
        except PermissionError:
            pytest.skip("no permission to make a device node here")
    return None


@pytest.fixture
def applied(upstream: Upstream, queue: Queue) -> tuple[Upstream, Queue, str]:
    upstream.write("a.txt", "a\n")
    base = upstream.commit("base")
    return upstream, queue, base


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
def test_a_special_file_in_patches_is_refused_unopened(
    applied: tuple[Upstream, Queue, str], kind: str
) -> None:
    up, queue, base = applied
    queue.add("one.patch", PATCH)
    with (queue.path / "series").open("a") as f:
        f.write("special.patch\n")
    sock = make_special(queue.path / "patches" / "special.patch", kind)
    try:
        for cmd in (
            ("apply", "--onto", base),
            ("export", "--quilt", str(queue.path.parent / "out")),
        ):
            r = cli("--dir", str(queue.path), *cmd)
            assert r.returncode == 4, (cmd, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert "special.patch" in r.stderr and "patchq does not open it" in r.stderr
            assert "Traceback" not in r.stderr
        assert up.git("status", "--porcelain") == "" and up.git("branch") == "* main\n"
        r = cli("--dir", str(queue.path), "lint")
        assert "special.patch" in r.stderr + r.stdout and "Traceback" not in r.stderr
    finally:
        if sock is not None:
            sock.close()


@pytest.mark.parametrize("name", ["series", "series.lock", "patchq.toml"])
def test_a_fifo_as_a_patch_repo_file_is_refused_unopened(
    applied: tuple[Upstream, Queue, str], name: str
) -> None:
    _, queue, base = applied
    keep = (queue.path / "patchq.toml").read_text()
    (queue.path / name).unlink(missing_ok=True)
    os.mkfifo(queue.path / name)
    if name != "patchq.toml":
        (queue.path / "patchq.toml").write_text(keep)
    cmd = "verify" if name == "series.lock" else "status"
    r = cli("--dir", str(queue.path), cmd)
    assert r.returncode == 4, r.stderr
    assert name in r.stderr and "named pipe" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_import_refuses_a_fifo_in_a_quilt_folder_but_reads_a_named_pipe(
    applied: tuple[Upstream, Queue, str], tmp_path: Path
) -> None:
    _, queue, _ = applied
    quilt = tmp_path / "quilt"
    quilt.mkdir()
    (quilt / "series").write_text("a.patch\nb.patch\n")
    (quilt / "a.patch").write_text(PATCH)
    os.mkfifo(quilt / "b.patch")
    r = cli("--dir", str(queue.path), "import", "--quilt", str(quilt))
    assert r.returncode == 4, r.stderr
    assert "b.patch" in r.stderr and "named pipe" in r.stderr, r.stderr
    assert (queue.path / "series").read_text() == ""
    # A pipe the user names on purpose (`import <(curl …)`) is read to its end.
    r = subprocess.run(
        [
            "bash",
            "-c",
            f'{sys.executable} -m patchq --dir "$1" import <(cat "$2")',
            "-",
            str(queue.path),
            str(quilt / "a.patch"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0, r.stderr
    assert len((queue.path / "series").read_text().splitlines()) == 1
