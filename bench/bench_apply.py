#!/usr/bin/env python3
"""Benchmark `patchq apply` against git am, a git apply loop, the one-process floor and quilt.

Point it at any git repository (a checkout or a bare mirror):

    python3 bench/bench_apply.py --repo PATH [--count 300] [--end REF] [--runs 3]
                                 [--json out.json] [--md bench/RESULTS.md]

It takes the newest COUNT consecutive non-merge commits on the first-parent line of
--end, turns them into a series with `git format-patch`, and applies that same series
with every tool onto the parent of the oldest commit, in a throw-away clone of the
repository (the repository itself is never written to). See bench/README.md for the
rules (window choice, fresh state, what each timing includes).

Standard library only; patchq is run as its command-line program, exactly as a user
runs it, never imported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
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
SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
         "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR",
         "GIT_PREFIX", "QUILT_PATCHES", "QUILT_SERIES", "QUILT_PC")


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


def run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
        input_data: bytes | None = None) -> Proc:
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
        p = subprocess.Popen(argv, cwd=cwd, env=env or base_env(), stdout=fo, stderr=fe,
                             stdin=subprocess.PIPE if input_data is not None
                             else subprocess.DEVNULL)
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


def git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
        input_data: bytes | None = None) -> str:
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

    Walking `git rev-list --first-parent --parents END`, a merge commit, a root commit, or
    a commit with no file changes (git am and quilt reject empty patches) ends the current
    run; the first run that reaches `count` commits wins, so A..B is a straight line and
    `git format-patch A..B` yields exactly these commits.
    """
    log = run(["git", "-C", str(repo), "log", "--first-parent", "--format=%x01%H %P",
               "--name-only", "--no-renames", end])
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
    raise BenchError(f"no run of {count} consecutive non-merge commits on the first-parent "
                     f"line of {end}")


# --- building the target and the series --------------------------------------------------

@dataclass
class Setup:
    tmp: Path
    target: Path
    queue: Path
    base: str
    head: str
    commits: list[str]
    patches: list[Path]
    expected_tree: str
    stats: dict[str, object] = field(default_factory=dict)


def prepare(src: Path, end: str, count: int, tmp: Path, raw_checkout: bool) -> Setup:
    commits = pick_window(src, end, count)
    base = git(src, "rev-parse", f"{commits[0]}^")
    head = commits[-1]
    target = tmp / "target"
    # A local clone sharing the source's object store: nothing is ever written to it.
    git(tmp, "clone", "-q", "--shared", "--no-checkout", str(src), str(target))
    for key, value in (("gc.auto", "0"), ("maintenance.auto", "false"),
                       ("core.logAllRefUpdates", "false"), ("advice.detachedHead", "false")):
        # No auto-gc after git am (it runs `maintenance --auto`), no reflogs: each run
        # starts from the same objects and refs.
        git(target, "config", key, value)
    if raw_checkout:
        # Check files out byte for byte as the blobs hold them (no eol=crlf conversion):
        # the patches are diffs of blobs, and quilt/patch work on the files themselves.
        (target / ".git" / "info").mkdir(exist_ok=True)
        (target / ".git" / "info" / "attributes").write_text("* -text\n")
    git(target, "checkout", "-q", "-f", "--detach", base)
    queue = tmp / "queue"
    (queue / "patches").mkdir(parents=True)
    # format-patch defaults (no --binary tweak, no renames flag): what a user gets.
    git(src, "format-patch", "-q", "-o", str(queue / "patches"), f"{base}..{head}")
    names = sorted(p.name for p in (queue / "patches").glob("*.patch"))
    if len(names) != count:
        raise BenchError(f"format-patch wrote {len(names)} patches for {count} commits")
    (queue / "series").write_text("".join(n + "\n" for n in names))
    patches = [queue / "patches" / n for n in names]
    expected = git(src, "rev-parse", f"{head}^{{tree}}")
    sections = sum(p.read_bytes().count(b"\ndiff --git ") for p in patches)
    tree_files = len(git(target, "ls-tree", "-r", "--name-only", base).splitlines())
    stats = {"file_changes": sections, "tree_files": tree_files,
             "patch_bytes": sum(p.stat().st_size for p in patches)}
    return Setup(tmp, target, queue, base, head, commits, patches, expected, stats)


def reset(s: Setup) -> None:
    """Fresh state: BASE detached and clean, no branches, no tool state, no new objects."""
    t = s.target
    gd = t / ".git"
    for d in ("rebase-apply", "rebase-merge", "patchq"):
        shutil.rmtree(gd / d, ignore_errors=True)
    shutil.rmtree(t / ".pc", ignore_errors=True)  # quilt's state
    git(t, "checkout", "-q", "-f", "--detach", s.base)
    for ref in git(t, "for-each-ref", "--format=%(refname)", "refs/heads").splitlines():
        git(t, "update-ref", "-d", ref)
    git(t, "clean", "-fdxq")
    (s.queue / "series.lock").unlink(missing_ok=True)
    # Drop every object a previous run wrote (the clone's own store holds nothing else:
    # its history lives in the source via objects/info/alternates), so no tool finds
    # the objects of an earlier run already written.
    objects = gd / "objects"
    for d in objects.iterdir():
        if len(d.name) == 2 and all(c in "0123456789abcdef" for c in d.name):
            shutil.rmtree(d, ignore_errors=True)
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


# --- the tools ----------------------------------------------------------------------------

@dataclass
class Outcome:
    ok: bool
    seconds: float
    maxrss_kb: int
    processes: int
    error: str = ""


def tool_patchq(s: Setup, patchq: list[str]) -> Outcome:
    p = run([*patchq, "--dir", str(s.queue), "--target", str(s.target), "apply",
             "--onto", s.base], cwd=s.target)
    if p.rc != 0:
        return Outcome(False, p.seconds, p.maxrss_kb, 1, f"exit {p.rc}: {first_line(p.err)}")
    return Outcome(True, p.seconds, p.maxrss_kb, 1)


def tool_git_am(s: Setup) -> Outcome:
    p = run(["git", "am", "-q", "--keep-cr", "--no-3way", *map(str, s.patches)], cwd=s.target)
    if p.rc != 0:
        return Outcome(False, p.seconds, p.maxrss_kb, 1, f"exit {p.rc}: {first_line(p.err)}")
    return Outcome(True, p.seconds, p.maxrss_kb, 1)


def tool_git_apply_loop(s: Setup) -> Outcome:
    total, rss = 0.0, 0
    for i, patch in enumerate(s.patches):
        p = run(["git", "apply", "-p1", str(patch)], cwd=s.target)
        total += p.seconds
        rss = max(rss, p.maxrss_kb)
        if p.rc != 0:
            return Outcome(False, total, rss, i + 1,
                           f"{patch.name}: exit {p.rc}: {first_line(p.err)}")
    return Outcome(True, total, rss, len(s.patches))


def floor_index(s: Setup) -> Path:
    return s.tmp / "floor.index"


def floor_setup(s: Setup) -> None:
    idx = floor_index(s)
    idx.unlink(missing_ok=True)
    git(s.target, "read-tree", s.base, env=base_env(GIT_INDEX_FILE=str(idx)))


def tool_floor(s: Setup) -> Outcome:
    """One `git apply --cached` over every patch into a temporary index; read-tree untimed."""
    floor_setup(s)
    p = run(["git", "apply", "--cached", "-p1", *map(str, s.patches)], cwd=s.target,
            env=base_env(GIT_INDEX_FILE=str(floor_index(s))))
    if p.rc != 0:
        return Outcome(False, p.seconds, p.maxrss_kb, 1, f"exit {p.rc}: {first_line(p.err)}")
    return Outcome(True, p.seconds, p.maxrss_kb, 1)


def quilt_env(s: Setup) -> dict[str, str]:
    return base_env(QUILT_PATCHES=str(s.queue / "patches"), QUILT_SERIES=str(s.queue / "series"),
                    QUILT_PC=".pc")


def tool_quilt(s: Setup, quilt: str) -> Outcome:
    p = run([quilt, "--quiltrc=-", "push", "-a", "-q"], cwd=s.target, env=quilt_env(s))
    if p.rc != 0:
        return Outcome(False, p.seconds, p.maxrss_kb, 1, f"exit {p.rc}: {quilt_error(s, quilt)}")
    return Outcome(True, p.seconds, p.maxrss_kb, 1)


def quilt_error(s: Setup, quilt: str) -> str:
    """Which patch quilt stopped at and why: push it once more, verbosely (untimed)."""
    p = run([quilt, "--quiltrc=-", "push"], cwd=s.target, env=quilt_env(s))
    lines = [ln.strip() for ln in (p.out + p.err).decode("utf-8", "replace").splitlines()]
    name = next((ln.removeprefix("Applying patch ") for ln in lines
                 if ln.startswith("Applying patch ")), "?")
    why, current = "", ""
    for ln in lines:
        if ln.startswith("patching file "):
            current = ln.removeprefix("patching file ")
        elif "FAILED" in ln or "can't find file" in ln or "malformed" in ln.lower():
            why = f"{current}: {ln}" if current else ln
            break
    return f"{name}: {why or (lines[-1] if lines else 'no message')}"


def result_tree(s: Setup, tool: str) -> str:
    """The tree each tool produced (checked once, untimed)."""
    if tool in ("patchq apply", "git am"):
        return git(s.target, "rev-parse", "HEAD^{tree}")
    if tool.startswith("git apply --cached"):
        return git(s.target, "write-tree", env=base_env(GIT_INDEX_FILE=str(floor_index(s))))
    return worktree_tree(s)


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
    return {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "git": gv.removeprefix("git version "), "os": platform.platform()}


def fs_type(path: Path) -> str:
    p = run(["df", "--output=fstype", str(path)])
    lines = p.out.decode().split()
    return lines[-1] if p.rc == 0 and len(lines) > 1 else "unknown filesystem"


def patchq_commit() -> str:
    p = run(["git", "-C", str(PROJECT), "rev-parse", "--short", "HEAD"])
    if p.rc != 0:
        return "unknown"
    rev = p.out.decode().strip()
    dirty = run(["git", "-C", str(PROJECT), "status", "--porcelain", "--", "src"])
    if dirty.rc == 0 and dirty.out.strip():
        rev += " (+ uncommitted changes in src/)"
    return rev


def fmt_rss(kb: int | None) -> str:
    return f"{kb / 1024:.0f} MiB" if kb else "–"


def table_rows(results: list[dict], count: int) -> list[list[str]]:
    rows = []
    for r in results:
        if r["status"] == "ok":
            ratio = f"{r['ratio']:.2f}x" if r.get("ratio") is not None else "–"
            rows.append([r["tool"], f"{r['median_s']:.3f}", f"{r['ms_per_patch']:.2f}", ratio,
                         fmt_rss(r.get("peak_rss_kb")),
                         {True: "yes", False: "NO", None: "–"}[r.get("tree_ok")]])
        else:
            rows.append([r["tool"], r["status"], "–", "–", "–", "–"])
    return rows


def failure_notes(results: list[dict]) -> list[str]:
    return [f"{r['tool']}: {r['status']}: {r.get('error', '')}" for r in results
            if r["status"] != "ok"]


HEADERS = ["tool", "median s", "ms/patch", "tool/patchq", "peak RSS", "tree = git am"]


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADERS)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADERS, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return "\n".join(lines)


def md_section(report: dict) -> str:
    m, rng = report["machine"], report["range"]
    rows = table_rows(report["results"], rng["count"])
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    repo = Path(report["repository"])
    name = repo.parent.name if repo.name in ("repo", ".git") else repo.name
    out = [f"## {rng['count']} patches of {name} "
           f"({report['date']})", ""]
    out.append(f"- command: `{report['command']}`")
    out.append(f"- repository: `{report['repository']}`, range "
               f"`{rng['base'][:12]}..{rng['head'][:12]}` ({rng['count']} commits, "
               f"{report['stats']['file_changes']} file changes, "
               f"{report['stats']['patch_bytes'] / 1e6:.1f} MB of patches, "
               f"{report['stats']['tree_files']}-file tree)")
    out.append(f"- patchq {report['patchq_commit']}; runs: {report['runs']} (median); "
               f"result tree check: {report['tree_check']}")
    out.append(f"- machine: {m['nproc']} CPUs, {m['cpu']}; Python {m['python']}; "
               f"git {m['git']}; {m['os']}; clone in `{report['tmpdir']}` "
               f"({fs_type(Path(report['tmpdir']))})")
    out.append("")
    out.append("| " + " | ".join(HEADERS) + " |")
    out.append("|" + "|".join("---" for _ in HEADERS) + "|")
    for r in esc:
        out.append("| " + " | ".join(r) + " |")
    out.append("")
    notes = failure_notes(report["results"])
    if notes:
        out.extend(f"- {n}" for n in notes)
        out.append("")
    return "\n".join(out) + "\n"


# --- main ---------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True, type=Path, help="any git repository (bare is fine)")
    ap.add_argument("--count", type=int, default=300, help="patches in the series (300)")
    ap.add_argument("--end", default="HEAD", help="newest commit of the window (HEAD)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per tool; median (3)")
    ap.add_argument("--json", type=Path, help="write the full result as JSON here")
    ap.add_argument("--md", type=Path, help="append a Markdown section here")
    ap.add_argument("--patchq", default="patchq",
                    help="how to run patchq (a command line, default: patchq on PATH)")
    ap.add_argument("--tools", default="patchq,am,loop,floor,quilt",
                    help="comma-separated subset of patchq,am,loop,floor,quilt")
    ap.add_argument("--checkout-attributes", action="store_true",
                    help="keep the repository's eol/text attributes in the target checkout "
                         "(default: files checked out byte for byte; see README)")
    ap.add_argument("--tmpdir", type=Path,
                    help="where the throw-away clone goes (default: $TMPDIR or /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args(argv)
    if a.count < 1 or a.runs < 1:
        ap.error("--count and --runs must be at least 1")
    command = "python3 " + " ".join(shlex.quote(x) for x in
                                    [os.path.relpath(__file__), *(argv or sys.argv[1:])])

    src = a.repo.resolve()
    if run(["git", "-C", str(src), "rev-parse", "--git-dir"]).rc != 0:
        print(f"bench: {src} is not a git repository", file=sys.stderr)
        return 2
    patchq = shlex.split(a.patchq)
    if shutil.which(patchq[0]) is None:
        print(f"bench: {patchq[0]!r} not found on PATH (pip install -e . first)", file=sys.stderr)
        return 2
    quilt = shutil.which("quilt")
    wanted = {t.strip() for t in a.tools.split(",") if t.strip()}

    tmp = Path(tempfile.mkdtemp(prefix="patchq-bench-", dir=a.tmpdir))
    try:
        try:
            end = git(src, "rev-parse", "--verify", f"{a.end}^{{commit}}")
            s = prepare(src, end, a.count, tmp, not a.checkout_attributes)
        except BenchError as e:
            print(f"bench: {e}", file=sys.stderr)
            return 1
        print(f"repository {src}\nrange {s.base[:12]}..{s.head[:12]}: {a.count} commits, "
              f"{s.stats['file_changes']} file changes, "
              f"{s.stats['patch_bytes'] / 1e6:.1f} MB, {s.stats['tree_files']}-file tree",
              flush=True)

        tools: list[tuple[str, object]] = []
        if "patchq" in wanted:
            tools.append(("patchq apply", lambda: tool_patchq(s, patchq)))
        if "am" in wanted:
            tools.append(("git am", lambda: tool_git_am(s)))
        if "loop" in wanted:
            tools.append(("git apply loop", lambda: tool_git_apply_loop(s)))
        if "floor" in wanted:
            tools.append(("git apply --cached (1 process, floor)", lambda: tool_floor(s)))
        if "quilt" in wanted:
            tools.append(("quilt push -a", (lambda: tool_quilt(s, quilt)) if quilt else None))

        # 1. One untimed pass per tool: does it apply the series, and to which tree?
        results: dict[str, dict] = {}
        trees: dict[str, str] = {}
        for name, fn in tools:
            r = results[name] = {"tool": name, "times_s": []}
            if fn is None:
                r.update(status="missing", error="not installed")
                continue
            reset(s)
            MEASURE_RSS[0] = True
            try:
                o = fn()  # type: ignore[operator]
            finally:
                MEASURE_RSS[0] = False
            r["peak_rss_kb"] = o.maxrss_kb
            if not o.ok:
                r.update(status="failed", error=o.error)
                print(f"  {name}: FAILED: {o.error}", flush=True)
                continue
            r["status"] = "ok"
            r["processes"] = o.processes
            trees[name] = result_tree(s, name)
            r["tree"] = trees[name]
        ref_tree = trees.get("git am")
        tree_check = "not possible (patchq or git am failed)"
        if ref_tree is not None:
            for name, r in results.items():
                if name in trees:
                    r["tree_ok"] = trees[name] == ref_tree
        if "patchq apply" in trees and ref_tree is not None:
            if trees["patchq apply"] == ref_tree:
                tree_check = (f"patchq's result tree equals git am's "
                              f"({ref_tree[:12]}"
                              f"{', the original commit' if ref_tree == s.expected_tree else ''})")
                print(f"check: {tree_check}", flush=True)
            else:
                tree_check = (f"MISMATCH: patchq {trees['patchq apply'][:12]} != "
                              f"git am {ref_tree[:12]}")
                bar = "!" * 78
                print(f"{bar}\nWARNING: patchq's result tree {trees['patchq apply']} differs "
                      f"from git am's {ref_tree}\n{bar}", file=sys.stderr, flush=True)

        # 2. Timed runs, round-robin so that drift in machine load hits every tool alike.
        for i in range(a.runs):
            for name, fn in tools:
                r = results[name]
                if r["status"] != "ok":
                    continue
                reset(s)
                o = fn()  # type: ignore[operator]
                if not o.ok:
                    r.update(status="failed", error=f"run {i + 1}: {o.error}")
                    continue
                r["times_s"].append(round(o.seconds, 4))
            print(f"run {i + 1}/{a.runs} done", flush=True)
        reset(s)

        base_t = None
        pq = results.get("patchq apply")
        if pq and pq["status"] == "ok":
            base_t = statistics.median(pq["times_s"])
        for r in results.values():
            if r["status"] != "ok":
                continue
            med = statistics.median(r["times_s"])
            r["median_s"] = round(med, 4)
            r["ms_per_patch"] = round(med * 1000 / a.count, 3)
            r["ratio"] = round(med / base_t, 3) if base_t else None

        report = {
            "date": time.strftime("%Y-%m-%d"),
            "command": command,
            "repository": str(src),
            "range": {"base": s.base, "head": s.head, "count": a.count, "end": a.end,
                      "first": s.commits[0], "last": s.commits[-1]},
            "stats": s.stats,
            "runs": a.runs,
            "patchq_commit": patchq_commit(),
            "machine": machine(),
            "tmpdir": str(tmp.parent),
            "tree_check": tree_check,
            "results": list(results.values()),
        }
        print()
        print(text_table(table_rows(report["results"], a.count)))
        for n in failure_notes(report["results"]):
            print(n)
        print("(tool/patchq: how many times slower than patchq; peak RSS: the largest "
              "single process of the tool, from the untimed check pass)")
        if a.json:
            a.json.write_text(json.dumps(report, indent=2) + "\n")
        if a.md:
            new = not a.md.exists() or a.md.stat().st_size == 0
            with a.md.open("a") as f:
                if new:
                    f.write("# patchq apply benchmark results\n\nWritten by "
                            "`bench/bench_apply.py`; see `bench/README.md` for what each "
                            "row measures.\n\n")
                f.write(md_section(report))
        failed = pq is None or pq["status"] != "ok" or ("MISMATCH" in tree_check)
        return 1 if failed else 0
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
