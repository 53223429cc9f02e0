"""The speed bench's rows: each tool's run on a series (patchq's commands and their peers),
and one series' untimed check pass and timed rounds.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchq_bench.speed.workspace import (
    MEASURE_RSS,
    PATCHQ_ENV,
    GitShim,
    Proc,
    Setup,
    base_env,
    first_line,
    git,
    reset,
    run,
    worktree_tree,
)


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


def load_json(p: Proc) -> dict[str, Any] | None:
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


def bench_series(s: Setup, cx: Ctx, rows: list[Row], runs: int) -> dict[str, dict[str, Any]]:
    """The untimed check pass (result trees, outcomes, peak RSS, git processes), then
    `runs` timed rounds, round-robin over the rows; returns one record per row."""
    results: dict[str, dict[str, Any]] = {}
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
