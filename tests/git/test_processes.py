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

from ..conftest import Queue, Upstream, git, line_series


def _series(up: Upstream, queue: Queue, n: int) -> str:
    return line_series(up, queue, n, new_every=7)


def _count(tmp: Path, queue: Queue, base: str, *args: str, ok: tuple[int, ...] = (0,)) -> int:
    return len(_commands(tmp, queue, base, *args, ok=ok))


def _commands(
    tmp: Path, queue: Queue, base: str, *args: str, ok: tuple[int, ...] = (0,)
) -> list[str]:
    """The git commands (first argument) one patchq run starts."""
    log = tmp / "git.log"
    shim_dir = tmp / "shim"
    shim_dir.mkdir(exist_ok=True)
    real = shutil.which("git")
    assert real
    shim = shim_dir / "git"
    shim.write_text(f'#!/bin/sh\necho "$1 $2" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{shim_dir}{os.pathsep}{os.environ['PATH']}")
    log.unlink(missing_ok=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "patchq",
            "--dir",
            str(queue.path),
            *(args or ("apply",)),
            "--onto",
            base,
        ],
        env=env,
        capture_output=True,
    )
    assert proc.returncode in ok, proc.stderr.decode()
    return [line if line == SERVER else line.split()[0] for line in log.read_text().splitlines()]


SERVER = "diff-tree --stdin"  # the diff server merges use for long diffs


def test_git_processes_do_not_grow_with_the_series(
    tmp_path: Path, upstream: Upstream, queue: Queue
) -> None:
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


def _drift(up: Upstream, base: str, n: int) -> str:
    """An upstream that rewrote every line the series changes and the line before every
    other hunk: half the hunks conflict, half need the 3-way merge."""
    up.git("checkout", "-q", "-f", base)
    lines = [f"line {i}\n" for i in range(4 * n + 10)]
    for i in range(n):
        if i % 2:
            lines[4 * i + 1] = f"upstream {4 * i + 1}\n"
        else:
            lines[4 * i + 2] = f"upstream {4 * i + 2}\n"
    up.write("f.txt", "".join(lines))
    return up.commit("drift")


def test_drift_replay_processes_do_not_grow_with_conflicts(
    tmp_path: Path, upstream: Upstream, queue: Queue
) -> None:
    """check and rebase --dry-run merge in process: the git processes they start are the
    same for 20 and 200 patches although every patch needs a 3-way merge. The one
    difference allowed is the diff server (`git diff-tree --stdin`), started once a diff
    is too long for Python: at 200 patches the file is, and one serves every merge."""
    counts = {}
    for n in (20, 200):
        up = Upstream(tmp_path / f"up{n}")
        up.path.mkdir()
        git(up.path, "init", "-q", "-b", "main")
        q = Queue(tmp_path / f"q{n}")
        (q.path / "patches").mkdir(parents=True)
        (q.path / "patchq.toml").write_text(f'target = "{up.path}"\n')
        (q.path / "series").write_text("")
        base = _series(up, q, n)
        subprocess.run(
            [sys.executable, "-m", "patchq", "--dir", str(q.path), "apply", "--onto", base],
            check=True,
            capture_output=True,
        )
        drift = _drift(up, base, n)
        up.git("checkout", "-q", "-f", "patchq/main")
        (tmp_path / f"c{n}").mkdir()
        counts[n] = (
            _commands(tmp_path / f"c{n}", q, drift, "check", ok=(3,)),
            _commands(tmp_path / f"c{n}", q, drift, "rebase", "--dry-run", ok=(3,)),
        )
    for few, many in zip(counts[20], counts[200], strict=True):
        assert [c for c in few if c != SERVER] == [c for c in many if c != SERVER]
        assert few.count(SERVER) == 0 and many.count(SERVER) == 1, (few, many)
        # Provenance (DESIGN §4) adds two for the whole range, whatever the series:
        # one `log -p` and one `patch-id` that also takes every patch of the series.
        assert few.count("patch-id") == 1 and many.count("patch-id") == 1, many
        assert len(many) <= 10, many
