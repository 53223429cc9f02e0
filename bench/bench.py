#!/usr/bin/env python3
"""Benchmark patchq's whole-series commands against git am, git am -3, quilt and git apply.

Point it at any git repository (a checkout or a bare mirror):

    python3 bench/bench.py --repo PATH [--counts 50,300,1000] [--drift 100] [--runs 3]
                           [--json out.json] [--md bench/RESULTS.md]

For each N of --counts it takes the newest N consecutive non-merge commits on the
first-parent line of --end, turns them into a series with `git format-patch`, and, in a
throw-away clone (the repository itself is never written to), times on that same series:
`patchq apply`, `patchq push -a`, `patchq check` (onto the series' own base, and onto
the drifted upstream BASE~D), `patchq rebase` onto BASE~D (to the first conflict, and
`--dry-run` over every patch), and the peers `git am`, `git am -3` onto BASE~D (to its
first stop, and with `git am --skip` at every stop), a `git apply` loop, `quilt push -a`
and the floor, one `git apply --cached` of the whole series into a temporary index. It
also counts the git processes every patchq run starts. See bench/README.md for the rules
(window, drift upstream, fresh state, what each timing includes).

Standard library only; patchq is run as its command-line program, exactly as a user
runs it, never imported.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import io
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent

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
    src: Path, end: str, count: int, tmp: Path, raw_checkout: bool, drift: int | None
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
    for d in objects.iterdir():
        if len(d.name) == 2 and all(c in "0123456789abcdef" for c in d.name):
            shutil.rmtree(d, ignore_errors=True)
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


@dataclass
class Outcome:
    ok: bool
    seconds: float
    maxrss_kb: int
    processes: int = 1
    error: str = ""
    summary: str = ""  # what happened to the series (outcomes, where it stopped)
    counts: dict[str, int] = field(default_factory=dict)
    stopped: bool = False  # ended early, at a conflict: ms/patch is not meaningful
    git_calls: dict[str, int] | None = None


@dataclass
class Ctx:
    patchq: list[str]
    quilt: str | None
    shim: GitShim | None = None  # set during the check pass: count patchq's git processes
    env: dict[str, str] = field(default_factory=dict)  # extra environment for patchq


STATUS_ORDER = ("clean", "offset", "fuzz", "merge", "conflict", "upstreamed", "missing")
OUTCOME_ORDER = ("unchanged", "refreshed", "merged", "upstreamed", "conflict", "dropped")


def describe(counts: Counter[str] | dict[str, int], order: tuple[str, ...]) -> str:
    keys = [k for k in order if counts.get(k)] + sorted(k for k in counts if k not in order)
    return ", ".join(f"{counts[k]} {k}" for k in keys)


def patchq(s: Setup, cx: Ctx, *args: str, counted: bool = False) -> Proc:
    env = base_env(**{**PATCHQ_ENV, **cx.env})
    if counted and cx.shim is not None:
        env = cx.shim.env(env)
    return run(
        [*cx.patchq, "--dir", str(s.queue), "--target", str(s.target), *args], cwd=s.target, env=env
    )


def fail(p: Proc, what: str = "") -> Outcome:
    return Outcome(False, p.seconds, p.maxrss_kb, 1, f"{what}exit {p.rc}: {first_line(p.err)}")


def finish(cx: Ctx, o: Outcome) -> Outcome:
    if cx.shim is not None:
        o.git_calls = cx.shim.calls()
    return o


def load_json(p: Proc) -> dict | None:
    try:
        doc = json.loads(p.out)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def setup_applied(s: Setup, cx: Ctx) -> None:
    """check and rebase start from an applied series with its series.lock, as after `apply`."""
    reset(s, s.base)
    p = patchq(s, cx, "apply", "--onto", s.base)
    if p.rc != 0:
        raise RowSetupError(f"setup `patchq apply` failed: exit {p.rc}: {first_line(p.err)}")


class RowSetupError(Exception):
    pass


def row_apply(s: Setup, cx: Ctx) -> Outcome:
    p = patchq(s, cx, "apply", "--onto", s.base, counted=True)
    if p.rc != 0:
        return finish(cx, fail(p))
    return finish(cx, Outcome(True, p.seconds, p.maxrss_kb))


def row_push(s: Setup, cx: Ctx) -> Outcome:
    # No lock, no stack, BASE checked out detached: push -a starts from HEAD.
    p = patchq(s, cx, "push", "-a", counted=True)
    if p.rc != 0:
        return finish(cx, fail(p))
    return finish(cx, Outcome(True, p.seconds, p.maxrss_kb))


def make_row_check(onto: Callable[[Setup], str]) -> Callable[[Setup, Ctx], Outcome]:
    def row_check(s: Setup, cx: Ctx) -> Outcome:
        p = patchq(s, cx, "check", "--onto", onto(s), "--json", counted=True)
        doc = load_json(p)
        if p.rc not in (0, 1, 3) or doc is None:
            return finish(cx, fail(p))
        counts = Counter(str(x.get("status")) for x in doc.get("patches", []))
        return finish(
            cx,
            Outcome(
                True,
                p.seconds,
                p.maxrss_kb,
                summary=f"exit {p.rc}: " + describe(counts, STATUS_ORDER),
                counts=dict(counts),
            ),
        )

    return row_check


def row_rebase(s: Setup, cx: Ctx) -> Outcome:
    assert s.drift is not None
    return rebase_onto(s, cx, s.drift)


def row_rebase_up(s: Setup, cx: Ctx) -> Outcome:
    if s.up is None:
        return Outcome(
            False,
            0.0,
            0,
            error=f"no commit {s.stats.get('drift_commits')} first-parent steps after the "
            "window (use --end HEAD~D)",
        )
    return rebase_onto(s, cx, s.up)


def rebase_onto(s: Setup, cx: Ctx, onto: str) -> Outcome:
    p = patchq(s, cx, "rebase", "--onto", onto, "--json", counted=True)
    doc = load_json(p)
    if p.rc not in (0, 3) or doc is None:
        return finish(cx, fail(p))
    done = doc.get("patches", [])
    counts = Counter(str(d.get("outcome", d.get("status"))) for d in done)
    if p.rc == 0:
        o = Outcome(
            True,
            p.seconds,
            p.maxrss_kb,
            counts=dict(counts),
            summary=f"finished: {describe(counts, OUTCOME_ORDER)}",
        )
    else:
        o = Outcome(
            True,
            p.seconds,
            p.maxrss_kb,
            counts=dict(counts),
            stopped=True,
            summary=f"stopped at conflict after {len(done)} "
            f"patch{'' if len(done) == 1 else 'es'} "
            f"(at {doc.get('conflict') or '?'})",
        )
    o = finish(cx, o)
    if p.rc == 3:  # untimed: the documented way out
        a = patchq(s, cx, "rebase", "--abort")
        if a.rc != 0:
            o.summary += f"; `rebase --abort` failed: exit {a.rc}: {first_line(a.err)}"
    return o


def row_rebase_dry(s: Setup, cx: Ctx) -> Outcome:
    assert s.drift is not None
    p = patchq(s, cx, "rebase", "--onto", s.drift, "--dry-run", "--json", counted=True)
    doc = load_json(p)
    if p.rc not in (0, 3) or doc is None:
        return finish(cx, fail(p))
    counts = Counter(str(d.get("outcome")) for d in doc.get("patches", []))
    return finish(
        cx,
        Outcome(
            True,
            p.seconds,
            p.maxrss_kb,
            counts=dict(counts),
            summary=describe(counts, OUTCOME_ORDER),
        ),
    )


def row_git_am(s: Setup, cx: Ctx) -> Outcome:
    p = run(["git", "am", "-q", "--keep-cr", "--no-3way", *map(str, s.patches)], cwd=s.target)
    if p.rc != 0:
        return fail(p)
    return Outcome(True, p.seconds, p.maxrss_kb)


def am_applied(s: Setup) -> int:
    assert s.drift is not None
    return int(git(s.target, "rev-list", "--count", f"{s.drift}..HEAD"))


def row_git_am3(s: Setup, cx: Ctx) -> Outcome:
    """git am -3 onto the drifted upstream, up to its first stop (a person is needed)."""
    p = run(["git", "am", "-q", "-3", "--keep-cr", *map(str, s.patches)], cwd=s.target)
    if p.rc == 0:
        return Outcome(True, p.seconds, p.maxrss_kb, summary=f"all {s.count} applied")
    if not (s.target / ".git" / "rebase-apply").is_dir():
        return fail(p)
    n = am_applied(s)
    return Outcome(
        True,
        p.seconds,
        p.maxrss_kb,
        stopped=True,
        counts={"applied": n},
        summary=f"stopped at patch {n + 1} after {n} applied",
    )


def row_git_am3_skip(s: Setup, cx: Ctx) -> Outcome:
    """git am -3 onto the drifted upstream, `git am --skip` at every stop, to the end."""
    total, rss, procs = 0.0, 0, 0
    out = b""
    argv = ["git", "am", "-3", "--keep-cr", *map(str, s.patches)]
    while True:
        p = run(argv, cwd=s.target)
        total += p.seconds
        rss = max(rss, p.maxrss_kb)
        procs += 1
        out += p.out + p.err
        if p.rc == 0:
            break
        if not (s.target / ".git" / "rebase-apply").is_dir() or procs > s.count + 1:
            return Outcome(False, total, rss, procs, f"exit {p.rc}: {first_line(p.err)}")
        argv = ["git", "am", "--skip"]
    text = out.decode("utf-8", "replace")
    stops = procs - 1
    fallback = text.count("Falling back to patching base and 3-way merge")
    failed_merge = text.count("Failed to merge in the changes")
    applied = am_applied(s)
    counts = {
        "applied": applied,
        "merged": fallback - failed_merge,
        "skipped": stops,
        "merge_conflicts": failed_merge,
    }
    return Outcome(
        True,
        total,
        rss,
        procs,
        counts=counts,
        summary=f"{applied} applied ({fallback - failed_merge} by 3-way merge), "
        f"{stops} stopped and skipped ({failed_merge} merge conflicts)",
    )


def row_git_apply_loop(s: Setup, cx: Ctx) -> Outcome:
    total, rss = 0.0, 0
    for i, patch in enumerate(s.patches):
        p = run(["git", "apply", "-p1", str(patch)], cwd=s.target)
        total += p.seconds
        rss = max(rss, p.maxrss_kb)
        if p.rc != 0:
            return Outcome(
                False, total, rss, i + 1, f"{patch.name}: exit {p.rc}: {first_line(p.err)}"
            )
    return Outcome(True, total, rss, len(s.patches))


def floor_index(s: Setup) -> Path:
    return s.tmp / "floor.index"


def setup_floor(s: Setup, cx: Ctx) -> None:
    reset(s, s.base)
    idx = floor_index(s)
    idx.unlink(missing_ok=True)
    git(s.target, "read-tree", s.base, env=base_env(GIT_INDEX_FILE=str(idx)))


def row_floor(s: Setup, cx: Ctx) -> Outcome:
    """One `git apply --cached` over every patch into a temporary index; read-tree untimed."""
    p = run(
        ["git", "apply", "--cached", "-p1", *map(str, s.patches)],
        cwd=s.target,
        env=base_env(GIT_INDEX_FILE=str(floor_index(s))),
    )
    if p.rc != 0:
        return fail(p)
    return Outcome(True, p.seconds, p.maxrss_kb)


def quilt_env(s: Setup) -> dict[str, str]:
    return base_env(
        QUILT_PATCHES=str(s.queue / "patches"), QUILT_SERIES=str(s.queue / "series"), QUILT_PC=".pc"
    )


def row_quilt(s: Setup, cx: Ctx) -> Outcome:
    assert cx.quilt is not None
    p = run([cx.quilt, "--quiltrc=-", "push", "-a", "-q"], cwd=s.target, env=quilt_env(s))
    if p.rc != 0:
        return Outcome(False, p.seconds, p.maxrss_kb, 1, f"exit {p.rc}: {quilt_error(s, cx.quilt)}")
    return Outcome(True, p.seconds, p.maxrss_kb)


def quilt_error(s: Setup, quilt: str) -> str:
    """Which patch quilt stopped at and why: push it once more, verbosely (untimed)."""
    p = run([quilt, "--quiltrc=-", "push"], cwd=s.target, env=quilt_env(s))
    lines = [ln.strip() for ln in (p.out + p.err).decode("utf-8", "replace").splitlines()]
    name = next(
        (ln.removeprefix("Applying patch ") for ln in lines if ln.startswith("Applying patch ")),
        "?",
    )
    why, current = "", ""
    for ln in lines:
        if ln.startswith("patching file "):
            current = ln.removeprefix("patching file ")
        elif "FAILED" in ln or "can't find file" in ln or "malformed" in ln.lower():
            why = f"{current}: {ln}" if current else ln
            break
    return f"{name}: {why or (lines[-1] if lines else 'no message')}"


@dataclass
class Row:
    key: str  # --tools name
    label: str
    onto: str  # "BASE" or "DRIFT": the upstream the row works on
    patchq: bool  # a patchq command (git processes counted, compared with peers)
    setup: Callable[[Setup, Ctx], None]
    fn: Callable[[Setup, Ctx], Outcome]
    tree: str | None = None  # how to read its result tree: "head", "worktree", "floor"


def fresh_base(s: Setup, cx: Ctx) -> None:
    reset(s, s.base)


def fresh_drift(s: Setup, cx: Ctx) -> None:
    assert s.drift is not None
    reset(s, s.drift)


ROWS = [
    Row("apply", "patchq apply", "BASE", True, fresh_base, row_apply, "head"),
    Row("push", "patchq push -a", "BASE", True, fresh_base, row_push, "head"),
    Row("check", "patchq check", "BASE", True, setup_applied, make_row_check(lambda s: s.base)),
    Row(
        "check-drift",
        "patchq check",
        "DRIFT",
        True,
        setup_applied,
        make_row_check(lambda s: s.drift or ""),
    ),
    Row("rebase", "patchq rebase (to 1st conflict)", "DRIFT", True, setup_applied, row_rebase),
    Row(
        "rebase-dry", "patchq rebase --dry-run (all)", "DRIFT", True, setup_applied, row_rebase_dry
    ),
    Row("rebase-up", "patchq rebase (to its end)", "UP", True, setup_applied, row_rebase_up),
    Row("am", "git am", "BASE", False, fresh_base, row_git_am, "head"),
    Row("am3", "git am -3 (to 1st stop)", "DRIFT", False, fresh_drift, row_git_am3),
    Row(
        "am3-skip",
        "git am -3, --skip each stop (all)",
        "DRIFT",
        False,
        fresh_drift,
        row_git_am3_skip,
    ),
    Row("loop", "git apply loop", "BASE", False, fresh_base, row_git_apply_loop, "worktree"),
    Row("quilt", "quilt push -a", "BASE", False, fresh_base, row_quilt, "worktree"),
    Row(
        "floor",
        "git apply --cached (1 process, floor)",
        "BASE",
        False,
        setup_floor,
        row_floor,
        "floor",
    ),
]
ROW_KEYS = [r.key for r in ROWS]
DRIFT_KEYS = {r.key for r in ROWS if r.onto in ("DRIFT", "UP")}
# Ratio columns: patchq/peer for each patchq row (peer = one of these rows).
RATIO_PEERS = ["am", "am3-skip", "loop", "quilt", "floor", "apply"]
BASELINE = "@baseline"  # key suffix of a --baseline twin row
RATIO_LABELS = {
    "baseline": "same command, --baseline build",
    "am": "git am",
    "am3-skip": "git am -3 (all)",
    "loop": "apply loop",
    "quilt": "quilt",
    "floor": "floor",
    "apply": "patchq apply",
}


def result_tree(s: Setup, how: str) -> str:
    """The tree a row produced (checked once, untimed)."""
    if how == "head":
        return git(s.target, "rev-parse", "HEAD^{tree}")
    if how == "floor":
        return git(s.target, "write-tree", env=base_env(GIT_INDEX_FILE=str(floor_index(s))))
    return worktree_tree(s)


# --- one series ---------------------------------------------------------------------------


def bench_series(s: Setup, cx: Ctx, rows: list[Row], runs: int) -> dict[str, dict]:
    """The untimed check pass (result trees, outcomes, peak RSS, git processes), then
    `runs` timed rounds, round-robin over the rows; returns one record per row."""
    results: dict[str, dict] = {}
    for row in rows:
        r = results[row.key] = {
            "key": row.key,
            "tool": row.label,
            "onto": row.onto,
            "patchq": row.patchq,
            "times_s": [],
        }
        if row.key == "quilt" and cx.quilt is None:
            r.update(status="missing", error="quilt not installed")
            continue
        try:
            row.setup(s, cx)
        except RowSetupError as e:
            r.update(status="failed", error=str(e))
            print(f"  {row.label}: FAILED: {e}", flush=True)
            continue
        cx.shim = s_shim(s) if row.patchq else None
        MEASURE_RSS[0] = True
        try:
            o = row.fn(s, cx)
        finally:
            MEASURE_RSS[0] = False
            cx.shim = None
        r["peak_rss_kb"] = o.maxrss_kb
        if o.git_calls is not None:
            r["git_processes"] = sum(o.git_calls.values())
            r["git_calls"] = o.git_calls
        if not o.ok:
            r.update(status="failed", error=o.error)
            print(f"  {row.label}: FAILED: {o.error}", flush=True)
            continue
        r.update(
            status="ok",
            processes=o.processes,
            summary=o.summary,
            counts=o.counts,
            stopped=o.stopped,
        )
        if row.tree:
            r["tree"] = result_tree(s, row.tree)
            r["tree_ok"] = r["tree"] == s.expected_tree
        print(
            f"  check pass: {row.label} onto {row.onto}: {o.seconds:.2f} s"
            + (f", {r['git_processes']} git processes" if "git_processes" in r else "")
            + (f"; {o.summary}" if o.summary else "")
            + ("" if r.get("tree_ok", True) else "; TREE DIFFERS FROM THE ORIGINAL"),
            flush=True,
        )

    for i in range(runs):
        for row in rows:
            r = results[row.key]
            if r["status"] != "ok":
                continue
            try:
                row.setup(s, cx)
            except RowSetupError as e:
                r.update(status="failed", error=f"run {i + 1}: {e}")
                continue
            o = row.fn(s, cx)
            if not o.ok:
                r.update(status="failed", error=f"run {i + 1}: {o.error}")
                continue
            r["times_s"].append(round(o.seconds, 4))
        print(f"  run {i + 1}/{runs} done", flush=True)
    reset(s, s.base)

    for r in results.values():
        if r["status"] != "ok":
            continue
        med = statistics.median(r["times_s"])
        r["median_s"] = round(med, 4)
        r["ms_per_patch"] = None if r.get("stopped") else round(med * 1000 / s.count, 3)
    for r in results.values():
        if r["status"] == "ok" and r["patchq"]:
            r["ratios"] = {
                p: round(r["median_s"] / results[p]["median_s"], 3)
                for p in RATIO_PEERS
                if p in results and results[p]["status"] == "ok" and p != r["key"]
            }
            twin = results.get(r["key"] + BASELINE)
            if twin and twin["status"] == "ok":
                r["ratios"]["baseline"] = round(r["median_s"] / twin["median_s"], 3)
    return results


_SHIMS: dict[Path, GitShim] = {}


def s_shim(s: Setup) -> GitShim:
    if s.tmp not in _SHIMS:
        _SHIMS[s.tmp] = GitShim(s.tmp)
    return _SHIMS[s.tmp]


def snapshot_rev(rev: str, dest: Path) -> tuple[str, Path]:
    """src/patchq of this project as of `rev`, byte-compiled in `dest`: (its description,
    the folder to put on PYTHONPATH)."""
    sha = git(PROJECT, "rev-parse", "--verify", f"{rev}^{{commit}}")
    dest.mkdir(parents=True)
    archive = run(["git", "-C", str(PROJECT), "archive", "--format=tar", sha, "src/patchq"])
    if archive.rc != 0:
        raise BenchError(f"git archive {rev}: {first_line(archive.err)}")
    # Regular files under src/patchq only, written by hand: `extractall(filter=...)` is
    # missing from Python 3.11 before 3.11.4 (Debian 12's python3 is 3.11.2).
    with tarfile.open(fileobj=io.BytesIO(archive.out)) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if not member.isfile() or parts[:2] != ("src", "patchq") or ".." in parts:
                continue
            source = tar.extractfile(member)
            assert source is not None
            (dest / member.name).parent.mkdir(parents=True, exist_ok=True)
            (dest / member.name).write_bytes(source.read())
    compileall.compile_dir(str(dest / "src" / "patchq"), quiet=1)
    subject = git(PROJECT, "log", "-1", "--format=%h %s", sha)
    return subject, dest / "src"


def with_baseline(rows: list[Row], pythonpath: Path) -> list[Row]:
    """Each patchq row followed by its twin that runs the baseline build."""

    def twin(row: Row) -> Row:
        def on(cx: Ctx) -> Ctx:
            return replace(
                cx, patchq=[sys.executable, "-m", "patchq"], env={"PYTHONPATH": str(pythonpath)}
            )

        return Row(
            row.key + BASELINE,
            row.label + " [baseline]",
            row.onto,
            True,
            lambda s, cx: row.setup(s, on(cx)),
            lambda s, cx: row.fn(s, on(cx)),
            row.tree,
        )

    out: list[Row] = []
    for row in rows:
        out.append(row)
        if row.patchq:
            out.append(twin(row))
    return out


# --- machine and reporting -----------------------------------------------------------------


def machine() -> dict[str, object]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gv = run(["git", "--version"]).out.decode().strip()
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "git": gv.removeprefix("git version "),
        "os": platform.platform(),
    }


def fs_type(path: Path) -> str:
    p = run(["df", "--output=fstype", str(path)])
    lines = p.out.decode().split()
    return lines[-1] if p.rc == 0 and len(lines) > 1 else "unknown filesystem"


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def patchq_commit(snapshot: Path | None) -> str:
    p = run(["git", "-C", str(PROJECT), "rev-parse", "--short", "HEAD"])
    if p.rc != 0:
        return "unknown"
    rev = p.out.decode().strip()
    dirty = run(["git", "-C", str(PROJECT), "status", "--porcelain", "--", "src"])
    if dirty.rc == 0 and dirty.out.strip():
        rev += " (+ uncommitted changes in src/)"
    if snapshot is not None:
        rev += f"; run from a snapshot of src/patchq, sha256 {tree_digest(snapshot)[:12]}"
    return rev


def peers(install: bool) -> tuple[dict[str, str | None], list[str]]:
    """Where each peer is (None: missing); quilt installed with apt-get when asked."""
    notes = []
    quilt = shutil.which("quilt")
    if quilt is None and install:
        apt = shutil.which("apt-get")
        if apt:
            print("bench: quilt missing; apt-get install -y quilt", flush=True)
            p = run([apt, "install", "-y", "quilt"])
            if p.rc != 0:
                notes.append(f"apt-get install quilt failed: {first_line(p.err)}")
            quilt = shutil.which("quilt")
        else:
            notes.append("quilt missing and no apt-get to install it")
    found = {
        "git": shutil.which("git"),
        "git am": shutil.which("git"),
        "quilt": quilt,
        "GNU time (peak RSS)": TIME,
    }
    return found, notes


def fmt_rss(kb: int | None) -> str:
    return f"{kb / 1024:.0f} MiB" if kb else "–"


HEADERS = [
    "command",
    "onto",
    "median s",
    "min–max s",
    "ms/patch",
    "peak RSS",
    "git procs",
    "result",
]


def table_rows(results: dict[str, dict]) -> list[list[str]]:
    rows = []
    for r in results.values():
        if r["status"] != "ok":
            rows.append(
                [
                    r["tool"],
                    r["onto"],
                    r["status"],
                    "–",
                    "–",
                    "–",
                    str(r.get("git_processes", "–")),
                    r.get("error", ""),
                ]
            )
            continue
        result = r.get("summary") or ""
        if "tree_ok" in r:
            tree = "tree = original" if r["tree_ok"] else f"TREE DIFFERS ({r['tree'][:12]})"
            result = f"{tree}; {result}" if result else tree
        mpp = r.get("ms_per_patch")
        rows.append(
            [
                r["tool"],
                r["onto"],
                f"{r['median_s']:.3f}",
                f"{min(r['times_s']):.2f}–{max(r['times_s']):.2f}",
                "–" if mpp is None else f"{mpp:.2f}",
                fmt_rss(r.get("peak_rss_kb")),
                str(r.get("git_processes", "–")),
                result,
            ]
        )
    return rows


def ratio_rows(results: dict[str, dict]) -> tuple[list[str], list[list[str]]]:
    cols = [p for p in RATIO_PEERS if p in results and results[p]["status"] == "ok"]
    if any(k.endswith(BASELINE) for k in results):
        cols.insert(0, "baseline")
    rows = []
    for r in results.values():
        if r["status"] != "ok" or not r["patchq"] or r["key"].endswith(BASELINE):
            continue
        cells = []
        for p in cols:
            v = r.get("ratios", {}).get(p)
            cells.append("–" if v is None else f"{v:.2f}")
        rows.append([f"{r['tool']} ({r['onto']})", *cells])
    return ["patchq command", *(RATIO_LABELS[c] for c in cols)], rows


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return "\n".join(lines)


def md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    return out


def ratio(results: dict[str, dict], a: str, b: str) -> float | None:
    ra, rb = results.get(a), results.get(b)
    if not ra or not rb or ra["status"] != "ok" or rb["status"] != "ok":
        return None
    return ra["median_s"] / rb["median_s"]


# (label, numerator row, denominator row, bound): patchq/peer must be at most `bound`.
TARGETS = [
    ("apply ≥10x faster than git am (patchq/peer ≤ 0.10)", "apply", "am", 0.10),
    ("apply ≥10x faster than quilt push -a", "apply", "quilt", 0.10),
    ("push -a ≥10x faster than git am", "push", "am", 0.10),
    ("push -a ≥10x faster than quilt push -a", "push", "quilt", 0.10),
    ("apply within 5x of the floor (issue 5, at 1,000)", "apply", "floor", 5.0),
    ("apply within 2x of the floor (DESIGN §6)", "apply", "floor", 2.0),
    ("check with drift within 2x of apply", "check-drift", "apply", 2.0),
]


def targets(series: list[dict]) -> tuple[list[str], list[list[str]]]:
    headers = ["target (issue 5)", *(f"N={x['count']}" for x in series)]
    rows = []
    for label, a, b, bound in TARGETS:
        cells = []
        for x in series:
            v = ratio(x["rows"], a, b)
            cells.append("–" if v is None else f"{v:.2f} {'✓' if v <= bound else '✗'}")
        rows.append([label, *cells])
    cells = []
    for x in series:
        rss = [
            r.get("peak_rss_kb") or 0
            for r in x["rows"].values()
            if r["patchq"] and r["status"] == "ok"
        ]
        m = max(rss, default=0)
        cells.append("–" if not m else f"{fmt_rss(m)} {'✓' if m <= 300 * 1024 else '✗'}")
    rows.append(["peak RSS of every patchq run ≤ 300 MB", *cells])
    return headers, rows


def process_table(series: list[dict]) -> tuple[list[str], list[list[str]], list[str]]:
    """git processes per patchq run, per command and N; and which commands grow with N."""
    headers = [
        "patchq command",
        *(f"N={x['count']}" for x in series),
        f"by git subcommand (N={series[-1]['count']})" if series else "",
    ]
    rows, growing = [], []
    keys = [k for r in ROWS if r.patchq for k in (r.key, r.key + BASELINE)]
    for k in keys:
        counts = [x["rows"].get(k, {}).get("git_processes") for x in series]
        if all(c is None for c in counts):
            continue
        first = next(x["rows"][k] for x in series if k in x["rows"])
        last = series[-1]["rows"].get(k, {})
        calls = last.get("git_calls") or {}
        rows.append(
            [
                f"{first['tool']} ({first['onto']})",
                *("–" if c is None else str(c) for c in counts),
                ", ".join(f"{n} {sub}" for sub, n in calls.items()),
            ]
        )
        known = [c for c in counts if c is not None]
        if len(set(known)) > 1:
            stops = any(x["rows"].get(k, {}).get("stopped") for x in series)
            growing.append(
                f"{first['tool']} ({first['onto']}): "
                + " → ".join(str(c) for c in known)
                + (" (it stops at a different patch at each N)" if stops else "")
            )
    return headers, rows, growing + per_patch(series)


def per_patch(series: list[dict]) -> list[str]:
    """What a single N shows of a count that grows with the series: a git subcommand one
    patchq run starts at least N times (once per patch), or more than once beyond the
    fewest runs of it seen for the same command (at any N, in either build, --baseline)."""
    seen: list[tuple[str, int, dict, dict[str, int]]] = []
    for x in series:
        for k, r in x["rows"].items():
            if r.get("patchq") and r.get("git_calls") is not None:
                seen.append((k.removesuffix(BASELINE), x["count"], r, r["git_calls"]))
    fewest: dict[tuple[str, str], int] = {}
    for cmd, _, _, calls in seen:
        for sub in calls:
            fewest[(cmd, sub)] = min(c.get(sub, 0) for other, _, _, c in seen if other == cmd)
    out = []
    for cmd, n, r, calls in seen:
        what = f"{r['tool']} ({r['onto']}, N={n})"
        for sub, c in calls.items():
            low = fewest[(cmd, sub)]
            if n >= 2 and c >= n:
                out.append(f"{what}: {c} `git {sub}`, one per patch")
            elif c > low + 1:
                out.append(f"{what}: {c} `git {sub}`, where the fewest seen is {low}")
    return out


def series_heading(x: dict) -> list[str]:
    st, rng = x["stats"], x["range"]
    out = [f"### N = {x['count']}: `{rng['base'][:12]}..{rng['head'][:12]}`", ""]
    out.append(
        f"- series: {x['count']} commits, {st['file_changes']} file changes in "
        f"{st['series_files']} files, {st['patch_bytes'] / 1e6:.1f} MB of patches, "
        f"{st['tree_files']}-file tree at BASE"
    )
    if rng.get("drift"):
        out.append(
            f"- drift: DRIFT = BASE~{st['drift_commits']} = `{rng['drift'][:12]}`; "
            f"BASE and DRIFT differ in {st['drift_files']} files, "
            f"{st['drift_files_in_series']} of them touched by the series"
        )
    return out


def md_report(report: dict) -> str:
    m = report["machine"]
    out = [
        f"Written by `bench/bench.py` on {report['date']}; see `bench/README.md` for "
        "what each row measures.",
        "",
    ]
    out.append(f"- command: `{report['command']}`")
    out.append(f"- repository: `{report['repository']}` (window ends at `{report['end']}`)")
    out.append(f"- patchq {report['patchq_commit']}; patchq run as `{report['patchq_cmd']}`")
    if report.get("baseline"):
        out.append(
            f"- baseline: src/patchq as of {report['baseline']}, each patchq row timed "
            "beside its `[baseline]` twin in the same rounds"
        )
    out.append(f"- runs: {report['runs']} per row, round-robin; median reported")
    out.append(
        f"- machine: {m['nproc']} CPUs, {m['cpu']}; Python {m['python']}; "
        f"git {m['git']}; {m['os']}; clones in `{report['tmpdir']}` "
        f"({report['tmpdir_fs']})"
    )
    missing = [k for k, v in report["peers"].items() if v is None]
    out.append(
        f"- peers: {', '.join(f'{k} `{v}`' for k, v in report['peers'].items() if v)}"
        + (f"; missing: {', '.join(missing)}" if missing else "; none missing")
    )
    out.extend(f"- note: {n}" for n in report.get("notes", []))
    out.append("")
    for x in report["series"]:
        out.extend(series_heading(x))
        out.append("")
        out.extend(md_table(HEADERS, table_rows(x["rows"])))
        out.append("")
        h, rows = ratio_rows(x["rows"])
        if rows and len(h) > 1:
            out.append(f"patchq/peer at N = {x['count']} (below 1: patchq is faster):")
            out.append("")
            out.extend(md_table(h, rows))
            out.append("")
    if report["series"]:
        out.append("### Targets of issue 5 (patchq/peer; ✓ met, ✗ not met)")
        out.append("")
        out.extend(md_table(*targets(report["series"])))
        out.append("")
        h, rows, growing = process_table(report["series"])
        out.append("### git processes started by one patchq run")
        out.append("")
        out.extend(md_table(h, rows))
        out.append("")
        out.append("Grows with N: " + ("; ".join(growing) if growing else "none") + ".")
        out.append("")
    return "\n".join(out)


BEGIN, END = "<!-- bench.py:begin -->", "<!-- bench.py:end -->"


def write_md(path: Path, body: str) -> None:
    """Replace the generated block of `path` (between the markers), keeping what is around
    it; a new file gets a title."""
    block = f"{BEGIN}\n{body}\n{END}\n"
    text = path.read_text() if path.exists() else ""
    if BEGIN in text and END in text:
        before, _, rest = text.partition(BEGIN)
        _, _, after = rest.partition(END)
        text = before + block.rstrip("\n") + after
    else:
        text = "# patchq benchmark results\n\n" + block + ("\n" + text if text.strip() else "")
    path.write_text(text)


def print_series(x: dict) -> None:
    print()
    print("\n".join(series_heading(x)).replace("### ", ""))
    print(text_table(HEADERS, table_rows(x["rows"])))
    h, rows = ratio_rows(x["rows"])
    if rows and len(h) > 1:
        print(f"\npatchq/peer at N = {x['count']} (below 1: patchq is faster)")
        print(text_table(h, rows))
    print(flush=True)


# --- main ---------------------------------------------------------------------------------


def parse_counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("counts must be at least 1")
    return counts


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--repo", type=Path, help="any git repository (bare is fine); required")
    ap.add_argument(
        "--counts",
        type=parse_counts,
        default=[50, 300, 1000],
        help="series lengths, comma-separated (50,300,1000)",
    )
    ap.add_argument("--end", default="HEAD", help="newest commit of the windows (HEAD)")
    ap.add_argument(
        "--drift",
        type=int,
        default=100,
        help="the drifted upstream is BASE~DRIFT (100); see README",
    )
    ap.add_argument("--runs", type=int, default=3, help="timed runs per row; median (3)")
    ap.add_argument(
        "--tools",
        default=",".join(ROW_KEYS),
        help="comma-separated subset of " + ",".join(ROW_KEYS),
    )
    ap.add_argument(
        "--json", type=Path, help="write the full result as JSON here (rewritten after each N)"
    )
    ap.add_argument(
        "--md",
        type=Path,
        help="write the Markdown report here (replaces the "
        "block bench.py wrote before, keeps the rest of the file)",
    )
    ap.add_argument(
        "--patchq",
        default="patchq",
        help="how to run patchq (a command line, default: patchq on PATH)",
    )
    ap.add_argument(
        "--snapshot",
        action="store_true",
        help="copy this project's src/patchq first and run that copy "
        "(python -m patchq), so edits to src/ during the run do not leak in",
    )
    ap.add_argument(
        "--baseline",
        metavar="REV",
        help="also time src/patchq as of git revision REV of this project, each patchq row "
        "beside its twin in the same round-robin, and report new/baseline ratios (the "
        "before/after check of a change, in one run)",
    )
    ap.add_argument(
        "--install-peers", action="store_true", help="apt-get install -y quilt if it is missing"
    )
    ap.add_argument(
        "--checkout-attributes",
        action="store_true",
        help="keep the repository's eol/text attributes in the target checkout "
        "(default: files checked out byte for byte; see README)",
    )
    ap.add_argument(
        "--tmpdir", type=Path, help="where the throw-away clones go (default: $TMPDIR or /tmp)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument(
        "--render",
        type=Path,
        metavar="JSON",
        help="run nothing: write the report of an earlier --json to --md",
    )
    a = ap.parse_args(argv)
    if a.render:
        if not a.md:
            ap.error("--render needs --md")
        write_md(a.md, md_report(json.loads(a.render.read_text())))
        return 0
    if a.repo is None:
        ap.error("--repo is required")
    if a.runs < 1 or a.drift < 1:
        ap.error("--runs and --drift must be at least 1")
    wanted = [t.strip() for t in a.tools.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in ROW_KEYS]
    if unknown:
        ap.error(f"unknown --tools {','.join(unknown)} (known: {','.join(ROW_KEYS)})")
    rows = [r for r in ROWS if r.key in wanted]
    if a.snapshot and a.patchq != "patchq":
        ap.error("--snapshot runs the project's own src/patchq; do not combine with --patchq")
    command = "python3 " + " ".join(
        shlex.quote(x)
        for x in [os.path.relpath(__file__), *(sys.argv[1:] if argv is None else argv)]
    )

    src = a.repo.resolve()
    if run(["git", "-C", str(src), "rev-parse", "--git-dir"]).rc != 0:
        print(f"bench: {src} is not a git repository", file=sys.stderr)
        return 2
    found, notes = peers(a.install_peers)
    missing = [k for k, v in found.items() if v is None]
    print(
        "peers: "
        + ", ".join(f"{k} {v}" for k, v in found.items() if v)
        + (f"; MISSING: {', '.join(missing)}" if missing else "; none missing"),
        flush=True,
    )
    for n in notes:
        print(f"bench: {n}", file=sys.stderr)

    tmp = Path(tempfile.mkdtemp(prefix="patchq-bench-", dir=a.tmpdir))
    snapshot = None
    if a.snapshot:
        snapshot = tmp / "src" / "patchq"
        shutil.copytree(
            PROJECT / "src" / "patchq", snapshot, ignore=shutil.ignore_patterns("__pycache__")
        )
        # Byte-compiled, as pip installs it: with PYTHONDONTWRITEBYTECODE set, every run
        # would otherwise compile the sources again (about 60 ms).
        compileall.compile_dir(str(snapshot), quiet=1)
        patchq_cmd = [sys.executable, "-m", "patchq"]
        PATCHQ_ENV["PYTHONPATH"] = str(snapshot.parent)
    else:
        patchq_cmd = shlex.split(a.patchq)
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            # A build run from its sources then compiles every module on every run (about
            # 0.15 s), while --snapshot and --baseline builds are byte-compiled.
            print(
                "bench: PYTHONDONTWRITEBYTECODE is set: a patchq run from sources compiles "
                "them on every run; use --snapshot, or byte-compile the build first",
                file=sys.stderr,
            )
        if shutil.which(patchq_cmd[0]) is None:
            print(
                f"bench: {patchq_cmd[0]!r} not found on PATH (pip install -e . first)",
                file=sys.stderr,
            )
            return 2
    cx = Ctx(patchq_cmd, found["quilt"])
    baseline = None
    if a.baseline:
        try:
            baseline = snapshot_rev(a.baseline, tmp / "baseline")
        except BenchError as e:
            print(f"bench: --baseline: {e}", file=sys.stderr)
            shutil.rmtree(tmp, ignore_errors=True)
            return 2
        rows = with_baseline(rows, baseline[1])
    report: dict = {
        "date": time.strftime("%Y-%m-%d"),
        "command": command,
        "repository": str(src),
        "end": a.end,
        "runs": a.runs,
        "drift": a.drift,
        "patchq_commit": patchq_commit(snapshot),
        "patchq_cmd": " ".join(shlex.quote(x) for x in patchq_cmd)
        + (f" (PYTHONPATH={snapshot.parent})" if snapshot else ""),
        "baseline": baseline[0] if baseline else None,
        "machine": machine(),
        "tmpdir": str(tmp.parent),
        "tmpdir_fs": fs_type(tmp.parent),
        "peers": found,
        "notes": notes,
        "series": [],
    }
    needs_drift = any(r.key in DRIFT_KEYS for r in rows)
    ok = True
    try:
        try:
            end = git(src, "rev-parse", "--verify", f"{a.end}^{{commit}}")
        except BenchError as e:
            print(f"bench: {e}", file=sys.stderr)
            return 1
        for count in a.counts:
            t0 = time.perf_counter()
            sub = tmp / f"n{count}"
            sub.mkdir()
            try:
                s = prepare(
                    src,
                    end,
                    count,
                    sub,
                    not a.checkout_attributes,
                    a.drift if needs_drift else None,
                )
            except BenchError as e:
                print(f"bench: N={count}: {e}", file=sys.stderr)
                ok = False
                continue
            print(
                f"\nN={count}: range {s.base[:12]}..{s.head[:12]}, "
                f"{s.stats['file_changes']} file changes, "
                f"{s.stats['patch_bytes'] / 1e6:.1f} MB, {s.stats['tree_files']}-file tree"
                + (f"; drift onto {s.drift[:12]} (BASE~{a.drift})" if s.drift else ""),
                flush=True,
            )
            results = bench_series(s, cx, rows, a.runs)
            x = {
                "count": count,
                "range": {
                    "base": s.base,
                    "head": s.head,
                    "drift": s.drift,
                    "first": s.commits[0],
                    "last": s.commits[-1],
                },
                "stats": s.stats,
                "rows": results,
                "wall_s": round(time.perf_counter() - t0, 1),
            }
            report["series"].append(x)
            print_series(x)
            if a.json:
                a.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
            for r in results.values():
                if r["status"] == "failed" or r.get("tree_ok") is False:
                    ok = False
            if not a.keep:
                shutil.rmtree(sub, ignore_errors=True)

        if report["series"]:
            print(text_table(*targets(report["series"])))
            h, prow, growing = process_table(report["series"])
            print("\ngit processes per patchq run")
            print(text_table(h, prow))
            print("grows with N: " + ("; ".join(growing) if growing else "none"))
            report["git_processes_grow"] = growing
        if a.json:
            a.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        if a.md:
            write_md(a.md, md_report(report))
        return 0 if ok else 1
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
