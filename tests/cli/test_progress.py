"""Long runs show a counter on a terminal, and nothing elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ..conftest import Queue, Upstream, line_series


def _stderr(queue: Queue, *args: str, tty: bool) -> tuple[int, bytes]:
    cmd = [sys.executable, "-m", "patchq", "--dir", str(queue.path), *args]
    if not tty:
        proc = subprocess.run(cmd, capture_output=True)
        return proc.returncode, proc.stderr
    leader, follower = os.openpty()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=follower)
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other side is closed and drained
                break
            if not chunk:
                break
            out += chunk
        return proc.returncode, out
    finally:
        os.close(leader)


@pytest.mark.parametrize(
    "command, label",
    [
        (("check",), b"checking"),
        (("rebase", "--dry-run"), b"replaying"),
        (("rebase",), b"rebasing"),
    ],
)
def test_replays_count_their_patches_on_a_terminal(
    upstream: Upstream, queue: Queue, command: tuple[str, ...], label: bytes
) -> None:
    base = line_series(upstream, queue, 25)
    subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(queue.path), "apply", "--onto", base],
        check=True,
        capture_output=True,
    )
    upstream.git("checkout", "-q", "-f", base)
    upstream.write("g.txt", "upstream moved on\n")
    onto = upstream.commit("drift")
    upstream.git("checkout", "-q", "-f", "patchq/main")
    code, err = _stderr(queue, *command, "--onto", onto, tty=True)
    assert code == 0, err
    assert label + b" 1/25 0000.patch" in err and label + b" 25/25 0024.patch" in err
    # The counter is wiped once the run is over: nothing of it stays on the screen.
    assert b"\r\x1b[K" in err[err.rfind(label) :]
    if command != ("rebase",):  # the real rebase has moved the stack; the rest can rerun
        code, err = _stderr(queue, *command, "--onto", onto, tty=False)
        assert code == 0 and label not in err, err
