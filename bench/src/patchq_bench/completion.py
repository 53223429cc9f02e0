#!/usr/bin/env python3
"""Time shell completion of patch names: what one TAB costs (issue 26, point 9).

    patchq-bench completion [--patches 1000] [--runs 15] [--patchq "CMD"] [--tmpdir DIR]

Builds a target (one file) and a patch repo of N one-line patches, applies them and pops
one, then asks patchq for completions exactly as bash does (`_PATCHQ_COMPLETE=
bash_complete`, COMP_WORDS, COMP_CWORD) for `pop 09`, `push ` and `delete 00`, R times
each. For each it prints the median and the slowest wall time, the median CPU time
(user + system of the child: on a loaded machine closer to what an idle one takes), and
how many git processes the completions started — counted by a `git` on PATH that logs
each call and then runs the real one. The floors beside them: `python -c pass` and
`python -c "import click"`. Standard library only; patchq runs as `python -m patchq`
(or `--patchq "CMD"`), so start-up and imports are counted.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

CASES = (("pop 09", 2), ("push ", 2), ("delete 00", 2))


def run_timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the child from its rusage, stdout) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0
    return wall, usage.ru_utime + usage.ru_stime, out


def git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def build(root: Path, n: int, patchq: list[str], env: dict[str, str]) -> Path:
    up, q = root / "upstream", root / "queue"
    up.mkdir()
    git(up, "init", "-q", "-b", "main", env=env)
    (up / "f.txt").write_text("".join(f"line {i}\n" for i in range(4 * n + 10)))
    git(up, "add", "-A", env=env)
    git(up, "commit", "-q", "-m", "base", env=env)
    (q / "patches").mkdir(parents=True)
    (q / "patchq.toml").write_text('target = "../upstream"\n')
    for i in range(n):
        (q / "patches" / f"{i:04d}.patch").write_text(
            f"--- a/f.txt\n+++ b/f.txt\n@@ -{4 * i + 2},3 +{4 * i + 2},3 @@\n"
            f" line {4 * i + 1}\n-line {4 * i + 2}\n+LINE {4 * i + 2}\n line {4 * i + 3}\n"
        )
    (q / "series").write_text("".join(f"{i:04d}.patch\n" for i in range(n)))
    for args in (["apply"], ["pop"]):
        subprocess.run([*patchq, *args], cwd=q, env=env, check=True, capture_output=True)
    return q


def shim(root: Path, log: Path) -> Path:
    """A folder holding a `git` that logs its arguments, then runs the real git."""
    real = shutil.which("git")
    assert real is not None, "git is not on PATH"
    folder = root / "shim"
    folder.mkdir()
    script = folder / "git"
    logged = f'printf "%s\\n" "$*" >> {shlex.quote(str(log))}'
    script.write_text(f'#!/bin/sh\n{logged}\nexec {shlex.quote(real)} "$@"\n')
    script.chmod(0o755)
    return folder


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--patches", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--patchq", default=f"{shlex.quote(sys.executable)} -m patchq")
    ap.add_argument("--tmpdir", type=Path, default=None)
    a = ap.parse_args(argv)
    patchq = shlex.split(a.patchq)
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.org",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.org",
    )
    if a.patchq == ap.get_default("patchq"):
        # As installed: byte-compiled (PYTHONDONTWRITEBYTECODE would compile every module
        # again on each run, about 0.15 s of work no user's TAB does).
        import patchq as package

        folder = str(Path(package.__file__).parent)
        subprocess.run([sys.executable, "-m", "compileall", "-q", folder], check=True)
    with tempfile.TemporaryDirectory(dir=a.tmpdir) as tmp:
        root = Path(tmp)
        q = build(root, a.patches, patchq, env)
        log = root / "git-calls.log"
        env_c = dict(env, PATH=f"{shim(root, log)}{os.pathsep}{env['PATH']}")
        print(f"patch names, {a.patches} patches, {a.runs} runs each ({' '.join(patchq)})")
        print(f"{'what':<34} {'median':>8} {'slowest':>8} {'cpu':>8}  git")
        floors = (
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("python -c 'import click'", [sys.executable, "-c", "import click"]),
        )
        for label, cmd in floors:
            runs = [run_timed(cmd, env, q) for _ in range(a.runs)]
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            print(
                f"{label:<34} {statistics.median(walls):8.3f} {max(walls):8.3f} "
                f"{statistics.median(cpus):8.3f}"
            )
        for words, cword in CASES:
            log.write_text("")
            comp = dict(
                env_c,
                _PATCHQ_COMPLETE="bash_complete",
                COMP_WORDS=f"patchq {words}",
                COMP_CWORD=str(cword),
            )
            runs = [run_timed(patchq, comp, q) for _ in range(a.runs)]
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            offered = len(runs[-1][2].splitlines())
            calls = len(log.read_text().splitlines())
            print(
                f"{'patchq ' + words + f' ({offered} offered)':<34} "
                f"{statistics.median(walls):8.3f} {max(walls):8.3f} "
                f"{statistics.median(cpus):8.3f}  {calls}"
            )
        print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0
