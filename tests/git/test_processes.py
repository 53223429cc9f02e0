"""The number of git processes a whole-series run starts must not grow with the series.

A `git` shim first on PATH logs every invocation (the persistent cat-file readers
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
            *(("--onto", base) if base else ()),
        ],
        env=env,
        capture_output=True,
    )
    assert proc.returncode in ok, proc.stderr.decode()
    if not log.exists():
        return []  # no git process at all (lint reads only the patch repo)
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


# --- a realistic series: headers that name origins, renames, binary sections -----------


def _realistic(tmp: Path, n: int) -> tuple[Queue, str, str]:
    """A series as real ones come: `git format-patch -M --binary` of `n` downstream
    commits (every patch has its `From <sha>` origin line), a third of them rewritten
    as DEP-3 patches (`Origin: upstream, <url>/commit/<sha>`, `Forwarded`, …), some with
    `(cherry picked from commit …)` in their message, some renaming a file, some changing
    a binary file. Upstream then moves on: it takes some of the changes (the patches that
    name them as their origin are upstreamed), edits the context of others (a 3-way merge)
    and the lines of others (a conflict). Returns the queue, the base and the upstream."""
    up = Upstream(tmp / "up")
    up.path.mkdir(parents=True)
    git(up.path, "init", "-q", "-b", "main")
    size = 4 * n + 10
    lines = [f"line {i}\n" for i in range(size)]
    up.write("f.txt", "".join(lines))
    for i in range(n):
        if i % 4 == 2:
            up.write(f"r{i}.txt", "".join(f"rename {i} line {k}\n" for k in range(12)))
        if i % 4 == 3:
            up.write(f"b{i}.bin", bytes([0, 1, 2, i % 256]) * 64)
    base = up.commit("base")

    # Upstream: every patch of kind 1 lands upstream as its own commit; others drift.
    picked: dict[int, str] = {}
    upstream_lines = list(lines)
    for i in range(n):
        if i % 4 == 1:
            upstream_lines[4 * i + 2] = f"LINE {4 * i + 2}\n"
            up.write("f.txt", "".join(upstream_lines))
            picked[i] = up.commit(f"upstream takes change {i}")
        elif i % 8 == 0:
            upstream_lines[4 * i + 1] = f"upstream context {4 * i + 1}\n"  # merge
        elif i % 8 == 4:
            upstream_lines[4 * i + 2] = f"upstream edit {4 * i + 2}\n"  # conflict
    up.write("f.txt", "".join(upstream_lines))
    onto = up.commit("upstream drift")

    # Downstream: n commits on the base, each with the headers its kind carries.
    up.git("checkout", "-q", "-b", "dev", base)
    for i in range(n):
        kind = i % 4
        message = f"downstream change number {i}"
        if kind in (0, 1):
            cur = up.read("f.txt").decode().splitlines(keepends=True)
            cur[4 * i + 2] = f"LINE {4 * i + 2}\n"
            up.write("f.txt", "".join(cur))
            if kind == 1:
                message += f"\n\n(cherry picked from commit {picked[i]})"
        elif kind == 2:
            up.git("mv", f"r{i}.txt", f"renamed-{i}.txt")
            text = up.read(f"renamed-{i}.txt").replace(b"line 5\n", b"line five\n")
            up.write(f"renamed-{i}.txt", text)
        else:
            up.write(f"b{i}.bin", bytes([3, 0, 4, i % 256]) * 64)
        up.commit(message)
    out = tmp / "fp"
    up.git("format-patch", "-q", "-M", "--binary", "-o", str(out), f"{base}..dev")
    up.git("checkout", "-q", "-f", "main")

    q = Queue(tmp / "q")
    (q.path / "patches").mkdir(parents=True)
    (q.path / "patchq.toml").write_text(f'target = "{up.path}"\n')
    (q.path / "series").write_text("")
    for i, p in enumerate(sorted(out.iterdir())):
        data = p.read_bytes()
        if i % 3 == 2:  # DEP-3: a Debian-style header instead of the mail's
            head, _, diff = data.partition(b"\n---\n")
            sha = data.split(b" ", 2)[1].decode()
            origin = picked.get(i, sha)
            data = (
                f"Description: downstream change number {i}\n"
                f"Origin: upstream, https://git.example.org/project/commit/{origin}\n"
                "Forwarded: not-needed\nLast-Update: 2024-01-01\n---\n"
            ).encode() + diff
        q.add(p.name, data)
    return q, base, onto


def test_realistic_series_processes_do_not_grow(tmp_path: Path) -> None:
    """Provenance asks git once for the whole series: every format-patch patch names its
    origin, and asking git about each one (a `rev-list` per patch) would grow with it.
    At two lengths of a series with origins (From lines, cherry-picks, DEP-3), renames
    and binary sections, apply, check, rebase --dry-run and a rebase start the same git
    processes."""
    runs: dict[int, list[list[str]]] = {}
    for n in (12, 48):
        q, base, onto = _realistic(tmp_path / f"n{n}", n)
        # patchq applies no binary patch: lint reads the whole series, the rest run
        # without the binary patches.
        got = [_commands(tmp_path / f"n{n}", q, "", "lint", ok=(0, 1))]
        names = q.series().split()
        binary = {x for x in names if b"GIT binary patch" in (q.path / "patches" / x).read_bytes()}
        assert binary
        (q.path / "series").write_text("".join(f"{x}\n" for x in names if x not in binary))
        got.append(_commands(tmp_path / f"n{n}", q, base, "apply"))
        for args, ok in (
            (("check",), (1, 3)),
            (("rebase", "--dry-run"), (0, 1, 3)),
            (("rebase",), (0, 1, 3)),
        ):
            got.append(_commands(tmp_path / f"n{n}", q, onto, *args, ok=ok))
        runs[n] = got
    # The series at 48 patches does name origins upstream holds, and conflicts.
    for few, many in zip(runs[12], runs[48], strict=True):
        assert sorted(c for c in few if c != SERVER) == sorted(c for c in many if c != SERVER), (
            few,
            many,
        )
        assert many.count(SERVER) <= 1
        assert len(many) <= 20, many
    check_many = runs[48][2]
    assert check_many.count("rev-list") == 1, check_many  # every origin, one query
    assert check_many.count("patch-id") == 1, check_many
