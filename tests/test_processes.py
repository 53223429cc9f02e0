"""The number of git processes a whole-series run starts must not grow with the series.

A `git` shim first on PATH logs every invocation (GitPython's persistent cat-file
included), then the real CLI applies a 20- and a 200-patch series.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from .conftest import Queue, Upstream


def _series(up: Upstream, queue: Queue, n: int) -> str:
    up.write("f.txt", "".join(f"line {i}\n" for i in range(4 * n + 10)))
    base = up.commit("base")
    for i in range(n):
        queue.add(f"{i:04d}.patch",
                  f"--- a/f.txt\n+++ b/f.txt\n@@ -{4 * i + 2},3 +{4 * i + 2},3 @@\n"
                  f" line {4 * i + 1}\n-line {4 * i + 2}\n+LINE {4 * i + 2}\n line {4 * i + 3}\n")
        if i % 7 == 0:
            queue.add(f"{i:04d}-new.patch",
                      f"--- /dev/null\n+++ b/dir{i}/new.txt\n@@ -0,0 +1 @@\n+new {i}\n")
    return base


def _count(tmp: Path, queue: Queue, base: str) -> int:
    log = tmp / "git.log"
    shim_dir = tmp / "shim"
    shim_dir.mkdir(exist_ok=True)
    real = shutil.which("git")
    assert real
    shim = shim_dir / "git"
    shim.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{shim_dir}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, "-m", "patchq", "--dir", str(queue.path), "apply",
                           "--onto", base], env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    return len(log.read_text().splitlines())


def test_git_processes_do_not_grow_with_the_series(tmp_path: Path, upstream: Upstream,
                                                   queue: Queue) -> None:
    base = _series(upstream, queue, 200)
    many = _count(tmp_path, queue, base)
    # The same repo and queue cut down to 20 patches.
    names = queue.series().split()[:20]
    (queue.path / "series").write_text("".join(n + "\n" for n in names))
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=upstream.path, check=True)
    (queue.path / "series.lock").unlink()
    (tmp_path / "few").mkdir()
    few = _count(tmp_path / "few", queue, base)
    assert many == few, (many, few)
    # cat-file --batch, config, rev-parse/status/checkout: a handful, whatever the length.
    assert many <= 8, many
