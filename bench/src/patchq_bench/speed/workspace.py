"""The speed bench's workspace: the window of history, the throw-away clone, its fresh
state before every run, and the processes run in it (timed, with peak RSS, git counted).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# Fixed identity and dates for the commits git am makes, so runs are comparable.
IDENT_ENV = {
    "GIT_COMMITTER_NAME": "patchq bench",
    "GIT_COMMITTER_EMAIL": "bench@patchq.invalid",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}
# Variables that would point git at another repository/index than the one we mean.
SCRUB = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "QUILT_PATCHES",
    "QUILT_SERIES",
    "QUILT_PC",
    "PATCHQ_TARGET",
)

# Extra environment for every patchq process (PYTHONPATH of a --snapshot).
PATCHQ_ENV: dict[str, str] = {}


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.update(IDENT_ENV)
    env["LC_ALL"] = "C"
    env.update(extra)
    return env


class BenchError(Exception):
    """A setup step failed: the benchmark cannot go on (not a tool failing on the series)."""


# --- running processes --------------------------------------------------------------------


@dataclass
class Proc:
    rc: int
    out: bytes
    err: bytes
    seconds: float
    maxrss_kb: int  # peak RSS of the process and the children it waited for


TIME = shutil.which("time", path="/usr/bin:/bin")
MEASURE_RSS = [False]  # [True] during the untimed check pass only


def run(
    argv: list[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input_data: bytes | None = None,
) -> Proc:
    """Run one process; its wall time, and (in the check pass) its peak RSS.

    Peak RSS comes from GNU time's %M (the child's own high-water mark) when
    /usr/bin/time is there: a child forked from this Python process inherits the parent's
    high-water mark across exec on Linux, so wait4's ru_maxrss would never read below
    Python's own size. Without GNU time the wait4 figure is reported, an upper bound.
    The wrapper costs a fork, so it is used only in the untimed pass.
    """
    rss_file = None
    if MEASURE_RSS[0] and TIME:
        fd, rss_file = tempfile.mkstemp(prefix="rss-")
        os.close(fd)
        argv = [TIME, "-f", "%M", "-o", rss_file, "--", *argv]
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env or base_env(),
            stdout=fo,
            stderr=fe,
            stdin=subprocess.PIPE if input_data is not None else subprocess.DEVNULL,
        )
        if input_data is not None:
            assert p.stdin is not None
            p.stdin.write(input_data)
            p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        # ru_maxrss is in kilobytes on Linux (bytes on macOS).
        rss = ru.ru_maxrss // 1024 if sys.platform == "darwin" else ru.ru_maxrss
        if rss_file is not None:
            try:
                nums = re.findall(r"^\d+$", Path(rss_file).read_text(), re.M)
                rss = int(nums[-1]) if nums else 0
            finally:
                os.unlink(rss_file)
        return Proc(p.returncode, fo.read(), fe.read(), seconds, rss)


def git(
    repo: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    input_data: bytes | None = None,
) -> str:
    p = run(["git", "-C", str(repo), *args], env=env, input_data=input_data)
    if check and p.rc != 0:
        raise BenchError(f"git {' '.join(args)} failed in {repo}: {first_line(p.err)}")
    return p.out.decode("utf-8", "replace").strip()


def first_line(err: bytes) -> str:
    for line in err.decode("utf-8", "replace").splitlines():
        if line.strip():
            return line.strip()
    return "(no message on stderr)"


# --- choosing the window ----------------------------------------------------------------


def pick_window(repo: Path, end: str, count: int) -> list[str]:
    """The newest `count` consecutive commits on the first-parent line at or before `end`
    in which every commit is a non-merge, non-empty commit whose only parent is the
    previous one. Returned oldest first; the base is the oldest one's parent.

    Walking `git log --first-parent END`, a merge commit, a root commit, or a commit with
    no file changes (git am and quilt reject empty patches) ends the current run; the
    first run that reaches `count` commits wins, so A..B is a straight line and
    `git format-patch A..B` yields exactly these commits.
    """
    log = run(
        [
            "git",
            "-C",
            str(repo),
            "log",
            "--first-parent",
            "--format=%x01%H %P",
            "--name-only",
            "--no-renames",
            end,
        ]
    )
    if log.rc != 0:
        raise BenchError(f"git log {end} failed: {first_line(log.err)}")
    window: list[str] = []  # newest first
    for rec in log.out.decode("utf-8", "replace").split("\x01")[1:]:
        head, _, files = rec.partition("\n")
        sha, *parents = head.split()
        if len(parents) != 1 or not files.strip():
            window = []  # a merge, the root or an empty commit breaks the line
            continue
        # On a first-parent walk the next (older) record is this one's parent, so the
        # commits collected so far each have the previous one as their only parent.
        window.append(sha)
        if len(window) == count:
            return list(reversed(window))
    raise BenchError(
        f"no run of {count} consecutive non-merge commits on the first-parent line of {end}"
    )


# --- building the target and the series --------------------------------------------------


@dataclass
class Setup:
    tmp: Path
    target: Path
    queue: Path  # the queue every tool reads; restored from `pristine` before each run
    pristine: Path
    base: str
    head: str
    drift: str | None  # BASE~D, the drifted upstream (None without drift rows)
    commits: list[str]
    patches: list[Path]
    expected_tree: str
    stats: dict[str, object] = field(default_factory=dict)
    up: str | None = None  # HEAD+D on the first-parent line: where the series landed

    @property
    def count(self) -> int:
        return len(self.patches)


def prepare(
    src: Path, end: str, count: int, tmp: Path, raw_checkout: bool, *, drift: int | None
) -> Setup:
    commits = pick_window(src, end, count)
    base = git(src, "rev-parse", f"{commits[0]}^")
    head = commits[-1]
    drift_id = None
    if drift is not None:
        # BASE~D: D steps back on BASE's first-parent line (see README, "Drift upstream").
        drift_id = git(
            src, "rev-parse", "--verify", "-q", f"{base}~{drift}^{{commit}}", check=False
        )
        if not drift_id:
            raise BenchError(
                f"{base[:12]}~{drift} does not exist: the first-parent line "
                f"below the window is shorter than --drift {drift}"
            )
    target = tmp / "target"
    # A local clone sharing the source's object store: nothing is ever written to it.
    git(tmp, "clone", "-q", "--shared", "--no-checkout", str(src), str(target))
    for key, value in (
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
        ("core.logAllRefUpdates", "false"),
        ("advice.detachedHead", "false"),
    ):
        # No auto-gc after git am (it runs `maintenance --auto`), no reflogs: each run
        # starts from the same objects and refs.
        git(target, "config", key, value)
    if raw_checkout:
        # Check files out byte for byte as the blobs hold them (no eol=crlf conversion):
        # the patches are diffs of blobs, and quilt/patch work on the files themselves.
        (target / ".git" / "info").mkdir(exist_ok=True)
        (target / ".git" / "info" / "attributes").write_text("* -text\n")
    git(target, "checkout", "-q", "-f", "--detach", base)
    pristine = tmp / "queue.orig"
    (pristine / "patches").mkdir(parents=True)
    # format-patch defaults (no --binary tweak, no renames flag): what a user gets.
    git(src, "format-patch", "-q", "-o", str(pristine / "patches"), f"{base}..{head}")
    names = sorted(p.name for p in (pristine / "patches").glob("*.patch"))
    if len(names) != count:
        raise BenchError(f"format-patch wrote {len(names)} patches for {count} commits")
    (pristine / "series").write_text("".join(n + "\n" for n in names))
    queue = tmp / "queue"
    shutil.copytree(pristine, queue)
    patches = [queue / "patches" / n for n in names]
    expected = git(src, "rev-parse", f"{head}^{{tree}}")
    sections = sum(p.read_bytes().count(b"\ndiff --git ") for p in patches)
    tree_files = len(git(target, "ls-tree", "-r", "--name-only", base).splitlines())
    series_files = set(
        git(src, "log", "--format=", "--name-only", "--no-renames", f"{base}..{head}").splitlines()
    ) - {""}
    stats: dict[str, object] = {
        "file_changes": sections,
        "tree_files": tree_files,
        "patch_bytes": sum(p.stat().st_size for p in patches),
        "series_files": len(series_files),
    }
    if drift_id is not None:
        drift_files = set(
            git(src, "diff", "--name-only", "--no-renames", drift_id, base).splitlines()
        ) - {""}
        stats.update(
            drift_commits=drift,
            drift_files=len(drift_files),
            drift_files_in_series=len(drift_files & series_files),
        )
    up = None
    if drift is not None:
        # HEAD+D: D steps after the window on the first-parent line of the repository's
        # HEAD, an upstream that took the whole series (rebase-up). None where the window
        # ends less than D commits before that line's tip (use --end REV~D).
        later = git(
            src, "rev-list", "--first-parent", "--ancestry-path", "--reverse", f"{head}..HEAD"
        ).split()
        up = later[drift - 1] if len(later) >= drift else None
        stats.update(up_commits=drift if up else 0)
    return Setup(
        tmp, target, queue, pristine, base, head, drift_id, commits, patches, expected, stats, up
    )


def reset(s: Setup, start: str) -> None:
    """Fresh state: START detached and clean, no branches, no tool state, no new objects,
    the queue as format-patch wrote it (a finished rebase rewrites it)."""
    t = s.target
    gd = t / ".git"
    for d in ("rebase-apply", "rebase-merge", "patchq"):
        shutil.rmtree(gd / d, ignore_errors=True)
    shutil.rmtree(t / ".pc", ignore_errors=True)  # quilt's state
    git(t, "checkout", "-q", "-f", "--detach", start)
    for ref in git(t, "for-each-ref", "--format=%(refname)", "refs/heads").splitlines():
        git(t, "update-ref", "-d", ref)
    git(t, "clean", "-fdxq")
    shutil.rmtree(s.queue, ignore_errors=True)
    shutil.copytree(s.pristine, s.queue)
    # Drop every object a previous run wrote, loose or packed (the clone's own store holds
    # nothing else: its history lives in the source via objects/info/alternates), so no
    # tool finds the objects of an earlier run already written.
    objects = gd / "objects"
    for sub in objects.iterdir():
        if len(sub.name) == 2 and all(c in "0123456789abcdef" for c in sub.name):
            shutil.rmtree(sub, ignore_errors=True)
    if (objects / "pack").is_dir():
        for f in (objects / "pack").iterdir():
            f.unlink()
    shutil.rmtree(gd / "logs", ignore_errors=True)


def worktree_tree(s: Setup) -> str:
    """The tree of the target's working tree (quilt's .pc excluded), via a temporary index."""
    idx = s.tmp / "check.index"
    idx.unlink(missing_ok=True)
    env = base_env(GIT_INDEX_FILE=str(idx))
    git(s.target, "read-tree", s.base, env=env)
    git(s.target, "add", "-A", "-f", "--", ".", ":(exclude).pc", env=env)
    tree = git(s.target, "write-tree", env=env)
    idx.unlink(missing_ok=True)
    return tree


# --- counting git processes ---------------------------------------------------------------


class GitShim:
    """A `git` first on PATH that logs each invocation, then execs the real git."""

    def __init__(self, tmp: Path) -> None:
        real = shutil.which("git")
        if real is None:
            raise BenchError("git not found on PATH")
        self.dir = tmp / "git-shim"
        self.dir.mkdir(exist_ok=True)
        self.log = tmp / "git-shim.log"
        shim = self.dir / "git"
        shim.write_text(
            f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shlex.quote(str(self.log))}\n"
            f'exec {shlex.quote(real)} "$@"\n'
        )
        shim.chmod(0o755)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        self.log.unlink(missing_ok=True)
        return dict(env, PATH=f"{self.dir}{os.pathsep}{env.get('PATH', '')}")

    def calls(self) -> dict[str, int]:
        """git subcommand -> how many processes since the last env()."""
        try:
            lines = self.log.read_text().splitlines()
        except FileNotFoundError:
            return {}
        by: Counter[str] = Counter()
        for line in lines:
            words = line.split()
            sub, i = "(none)", 0
            while i < len(words):
                w = words[i]
                if w in ("-c", "-C", "--git-dir", "--work-tree", "--namespace"):
                    i += 2
                    continue
                if w.startswith("-"):
                    i += 1
                    continue
                sub = w
                break
            by[sub] += 1
        return dict(sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))


# --- the rows -----------------------------------------------------------------------------
