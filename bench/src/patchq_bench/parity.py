#!/usr/bin/env python3
"""Apply parity: patchq against GNU patch on every materialized real series.

    patchq-bench parity --corpus DIR --results FILE [--jobs 2]
                            [--md bench/PARITY.md]
                            [--patchq "CMD"] [--only NAME ...] [--sample N] [--fresh]
                            [--process-per-run]

Each case (written by `patchq-bench harvest materialize`: base/ a git checkout of the upstream
files the series names, patches/, series with `-pN`) is applied four ways on a copy of base/:

- GNU patch, patch by patch: `patch -pN -F0 --batch -N` and `patch -pN --batch -N` (its
  default fuzz, 2); a series "applies" at a level when every patch does;
- patchq, as a user runs it: a fresh patch repo holding the series, then
  `patchq apply --onto HEAD --json` and `patchq apply --onto HEAD --fuzz 2 --json`.

At each level (`patchq apply` against `patch -F0`; `--fuzz 2` against the default) the
outcome is one of:

- same: both applied and the trees are identical (git tree ids), or both refused;
- refused-allowed: GNU patch applied, patchq refused with exit 4 for a reason on the fixed
  list of unsafe cases of DESIGN §4 (absolute path, `..` component, `.git` spelling,
  symlink, unsafe mode);
- different: anything else (patchq failed where GNU applied, applied where GNU failed, or
  made another tree), with the mechanism as far as the error or the differing files tell.

Parallel (--jobs), resumable (a case whose key and patchq version are in --results is not
run again; --fresh starts over), and --results is rewritten after every case so partial
results can be read while a run goes on. Standard library, git and GNU patch; patchq only
through its command line.

Speed (issue 25: the corpus in under 30 minutes on 2 cores):
- patchq's command lines run in one long-lived process per job (`parity_worker.py`, the
  `--patchq` interpreter in place of `-m patchq`, calling the `main` that `python -m
  patchq` calls), not two process starts per case; `--process-per-run` runs each as its
  own process, as before. Where the command is not `... -m patchq`, each run is a process.
- GNU patch's verdicts (per level: applied or not, the tree id, each patch's status) are
  kept in `--gnu-cache` (default: beside --results), keyed by the case's manifest key,
  a digest of its series, patches and base tree, and `patch --version`: GNU patch is run
  again only where one of those changed, and for a difference (to name the differing
  files). `--fresh` runs GNU patch on every case and rewrites the cache.
- `--sample N` takes every N-th series by the sha256 of its name (hash mod N == 0).
- Each case records where its time went (`phases`: copies of base/, GNU patch, its tree
  ids, patchq), summed in the results' meta.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import re
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchq_bench.paths import BENCH, WORK_ENV, outside_repo, path_option
from patchq_bench.paths import REPO as ROOT

HERE = Path(__file__).resolve().parent  # parity_worker.py is run from here, by its path
TIMEOUT = 300

IDENT = {
    "GIT_AUTHOR_NAME": "parity",
    "GIT_AUTHOR_EMAIL": "parity@invalid",
    "GIT_COMMITTER_NAME": "parity",
    "GIT_COMMITTER_EMAIL": "parity@invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}

# DESIGN §4: "absolute paths, `..` components, paths through symlinks, `.git` in any
# spelling git refuses, and non-canonical modes are refused (exit 4)". Nothing else is an
# allowed refusal.
ALLOWED = [
    ("absolute path", re.compile(r"absolute path")),
    ("'..' component", re.compile(r"has a '\.\.' component|'\.\.' component between backslashes")),
    (".git spelling", re.compile(r"goes into \.git|git reads as its own file")),
    ("symlink", re.compile(r"symlink|goes through a submodule")),
    ("unsafe mode", re.compile(r"file mode")),
]

# What a patchq error says, in the words of issue 25's mechanisms (first match wins).
MECHANISMS = [
    (
        "ambiguous placement (patchq needs a unique match)",
        re.compile(r"ambiguous|more than one place"),
    ),
    ("overlapping diffs of one file / hunks out of order", re.compile(r"out of order or overlap")),
    (
        "hunk line counts (header counts differ from the body)",
        re.compile(r"truncated hunk|header says|hunk goes on|line counts"),
    ),
    ("patch ends in the middle of a line", re.compile(r"truncated line")),
    ("hunk needs fuzz (patchq exact/offset only)", re.compile(r"--fuzz|fuzz")),
    (
        "file names (diff --git vs ---/+++ / missing file)",
        re.compile(r"does not exist|no such file|already exists|not in the target"),
    ),
    (
        "parse: not a patch / malformed",
        re.compile(r"not a patch|malformed|cannot parse|no diff|garbage|parse"),
    ),
    (
        "context or removed lines not found",
        re.compile(r"context|removed lines|does not apply|not in the file"),
    ),
    ("line endings", re.compile(r"line ending|CRLF")),
]


def run(
    cmd: list[str], cwd: Path | None = None, timeout: int = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    env = child_env()
    try:
        return subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, errors="replace", timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timeout after {timeout}s")


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PATCHQ_TARGET"}
    env.update(IDENT)
    env["LC_ALL"] = "C"
    env["QUILT_PATCHES"] = "patches"
    return env


class Worker:
    """One `parity_worker.py` process: patchq's `main` called once per command line."""

    def __init__(self, cmd: list[str]) -> None:
        self.cmd = cmd
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=child_env(),
            )
        return self.proc

    def call(self, argv: list[str], cwd: Path, timeout: int = TIMEOUT) -> tuple[int, str, str]:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"argv": argv, "cwd": str(cwd)}) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            return 124 if not ready else 70, "", f"worker: no answer after {timeout}s"
        ans = json.loads(line)
        return int(ans["rc"]), ans["out"], ans["err"]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


_workers = threading.local()
_all_workers: list[Worker] = []


def worker_cmd(pq: list[str]) -> list[str] | None:
    """The worker's command for a `--patchq` command `... python -m patchq`, else None."""
    if len(pq) >= 3 and pq[-2:] == ["-m", "patchq"]:
        return [*pq[:-2], str(HERE / "parity_worker.py")]
    return None


def patchq_run(pq: list[str], args: list[str], cwd: Path, use_worker: bool) -> tuple[int, str, str]:
    """Run `pq args` in `cwd`: in this job's worker, or as its own process."""
    cmd = worker_cmd(pq) if use_worker else None
    if cmd is None:
        r = run([*pq, *args], cwd=cwd)
        return r.returncode, r.stdout, r.stderr
    w = getattr(_workers, "w", None)
    if w is None:
        w = _workers.w = Worker(cmd)
        _all_workers.append(w)
    return w.call(args, cwd)


def copy_base(case: Path, dest: Path) -> None:
    shutil.copytree(case / "base", dest, symlinks=True)


def tree_of(work: Path) -> str:
    run(["git", "add", "-A", "-f", "."], cwd=work)
    return run(["git", "write-tree"], cwd=work).stdout.strip()


def read_series(case: Path) -> list[tuple[str, int]]:
    out = []
    for line in (case / "series").read_text().splitlines():
        parts = line.split()
        strip = 1
        for p in parts[1:]:
            if p.startswith("-p"):
                strip = int(p[2:])
        out.append((parts[0], strip))
    return out


def gnu_status(stdout: str) -> str:
    if "with fuzz" in stdout:
        return "fuzz"
    if re.search(r"succeeded at \d+ \(offset", stdout):
        return "offset"
    return "clean"


def gnu_apply(
    case: Path, work: Path, fuzz: int | None, phases: defaultdict[str, float] | None = None
) -> dict[str, Any]:
    """GNU patch walks the series; stops at the first patch it cannot apply."""
    phases = defaultdict(float) if phases is None else phases
    dest = work / f"gnu-{'F0' if fuzz == 0 else 'default'}"
    t = time.perf_counter()
    copy_base(case, dest)
    phases["copy"] += time.perf_counter() - t
    t = time.perf_counter()
    per: dict[str, str] = {}
    res: dict[str, Any] = {"ok": True, "patches": per}
    for name, strip in read_series(case):
        cmd = [
            "patch",
            f"-p{strip}",
            "--batch",
            "-N",
            "--no-backup-if-mismatch",
            "-r",
            "-",
            "-i",
            str(case / "patches" / name),
        ]
        if fuzz is not None:
            cmd.insert(2, f"-F{fuzz}")
        r = run(cmd, cwd=dest, timeout=120)
        if r.returncode != 0:
            per[name] = "failed"
            res.update(ok=False, failed=name, error=(r.stdout + r.stderr).strip().splitlines()[-3:])
            break
        per[name] = gnu_status(r.stdout)
    phases["gnu patch"] += time.perf_counter() - t
    if res["ok"]:
        t = time.perf_counter()
        res["tree"] = tree_of(dest)
        phases["gnu tree id"] += time.perf_counter() - t
    res["dir"] = str(dest)
    return res


def patchq_apply(
    pq: list[str],
    case: Path,
    work: Path,
    fuzz: int,
    use_worker: bool = True,
    *,
    phases: defaultdict[str, float] | None = None,
) -> dict[str, Any]:
    phases = defaultdict(float) if phases is None else phases
    target = work / f"pq-F{fuzz}"
    t = time.perf_counter()
    copy_base(case, target)
    repo = work / f"pq-repo-F{fuzz}"
    (repo / "patches").mkdir(parents=True)
    (repo / "patchq.toml").write_text("strip = 1\nfuzz = 0\nguards = []\n")
    shutil.copyfile(case / "series", repo / "series")
    for name, _ in read_series(case):
        shutil.copyfile(case / "patches" / name, repo / "patches" / name)
    args = ["--dir", str(repo), "--target", str(target), "apply", "--onto", "HEAD", "--json"]
    if fuzz:
        args += ["--fuzz", str(fuzz)]
    phases["copy"] += time.perf_counter() - t
    t = time.perf_counter()
    rc, stdout, stderr = patchq_run(pq, args, repo, use_worker)
    phases["patchq"] += time.perf_counter() - t
    r = subprocess.CompletedProcess(args, rc, stdout, stderr)
    res: dict[str, Any] = {
        "rc": r.returncode,
        "seconds": round(time.perf_counter() - t, 2),
        "dir": str(target),
    }
    if r.returncode == 0:
        try:
            out = json.loads(r.stdout)
            res["tree"] = out.get("tree")
            res["methods"] = dict(
                Counter(
                    h.get("status", "?")
                    for p in out.get("patches", [])
                    for f in p.get("files", [])
                    for h in f.get("hunks", [])
                )
            )
            norms = [n for p in out.get("patches", []) for n in p.get("normalisations", [])]
            if norms:
                res["normalisations"] = len(norms)
        except ValueError:
            res["tree"] = None
        if not res.get("tree"):
            res["tree"] = run(["git", "rev-parse", "HEAD^{tree}"], cwd=target).stdout.strip()
    else:
        lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
        err = next(
            (ln for ln in lines if ln.startswith("patchq: ")),
            lines[-1] if lines else f"exit {r.returncode}",
        )
        res["error"] = err[:400]
    return res


def allowed_refusal(pqres: dict[str, Any]) -> str | None:
    if pqres["rc"] != 4:
        return None
    for reason, rx in ALLOWED:
        if rx.search(pqres.get("error", "")):
            return reason
    return None


def mechanism(error: str) -> str:
    text = re.sub(r"^patchq: [^:]*(?::\d+)?: ", "", error)
    for name, rx in MECHANISMS:
        if rx.search(text):
            return name
    return "other: " + text[:80]


def differing_files(a: Path, b: Path) -> list[str]:
    r = run(["diff", "-rq", "--no-dereference", "--exclude=.git", str(a), str(b)])
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"Files (\S+) and (\S+) differ", line)
        if m:
            out.append(os.path.relpath(m.group(1), a))
        else:
            m = re.match(r"Only in (.+): (.+)$", line)
            if m:
                out.append(
                    os.path.relpath(
                        os.path.join(m.group(1), m.group(2)),
                        a if m.group(1).startswith(str(a)) else b,
                    )
                    + " (only one side)"
                )
            else:
                out.append(line[:120])
    if not out:  # same bytes, other modes
        modes = [
            dict(
                (ln.split("\t", 1)[1], ln.split()[0])
                for ln in run(["git", "ls-files", "-s"], cwd=d).stdout.splitlines()
            )
            for d in (a, b)
        ]
        out = [
            f"mode {p}: GNU {modes[0][p]}, patchq {modes[1].get(p)}"
            for p in sorted(modes[0])
            if modes[0][p] != modes[1].get(p)
        ] or ["(file modes differ)"]
    return out[:10]


def compare(gnu: dict[str, Any], pq: dict[str, Any], fuzz_refusal: bool = False) -> dict[str, Any]:
    """One level's outcome. FUZZ_REFUSAL: GNU patch fails here only for want of fuzz (it
    applies at its default), so patchq must refuse as a conflict (exit 3, naming --fuzz)."""
    if gnu["ok"] and pq["rc"] == 0:
        if gnu["tree"] == pq.get("tree"):
            return {"outcome": "same"}
        files = differing_files(Path(gnu["dir"]), Path(pq["dir"]))
        kind = "tree differs"
        if any("only one side" in f for f in files):
            kind = "tree differs: a file only one tool created or deleted"
        elif all(f.startswith(("mode ", "(file modes")) for f in files):
            kind = "tree differs: file modes"
        return {"outcome": "different", "mechanism": kind, "files": files}
    if gnu["ok"]:
        reason = allowed_refusal(pq)
        if reason:
            return {"outcome": "refused-allowed", "reason": reason, "error": pq.get("error")}
        return {
            "outcome": "different",
            "mechanism": "patchq refused: " + mechanism(pq.get("error", "")),
            "error": pq.get("error"),
        }
    if pq["rc"] == 0:
        return {
            "outcome": "different",
            "mechanism": "patchq applied where GNU patch failed",
            "gnu_failed": gnu.get("failed"),
        }
    if fuzz_refusal and pq["rc"] != 3:
        return {
            "outcome": "different",
            "mechanism": "patchq refused, not for want of fuzz: " + mechanism(pq.get("error", "")),
            "error": pq.get("error"),
        }
    return {"outcome": "same", "both_refused": True}


def case_digest(case: Path) -> str:
    """What GNU patch's verdict on a case depends on: its series, patches and base tree."""
    h = hashlib.sha256((case / "series").read_bytes())
    for name, _ in read_series(case):
        h.update(b"\0" + name.encode() + b"\0" + (case / "patches" / name).read_bytes())
    base = run(["git", "rev-parse", "HEAD^{tree}"], cwd=case / "base").stdout.strip()
    return h.hexdigest()[:24] + ":" + base


def gnu_version() -> str:
    return run(["patch", "--version"]).stdout.splitlines()[0].strip()


class GnuCache:
    """GNU patch's verdicts by case key, digest and GNU version (`--gnu-cache`)."""

    def __init__(self, path: Path | None, fresh: bool, version: str) -> None:
        self.path, self.version, self.lock = path, version, threading.Lock()
        self.data: dict[str, Any] = {}
        if path is not None and path.is_file() and not fresh:
            self.data = json.loads(path.read_text()).get("cases", {})
        self.hits = 0

    def key(self, case: Path, meta: dict[str, Any]) -> str:
        return f"{meta.get('key')}:{case_digest(case)}:{self.version}"

    def get(self, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        with self.lock:
            got = self.data.get(key)
            if got is None:
                return None
            self.hits += 1
            return dict(got["F0"]), dict(got["default"])

    def put(self, key: str, g0: dict[str, Any], g2: dict[str, Any]) -> None:
        strip = [{k: v for k, v in g.items() if k != "dir"} for g in (g0, g2)]
        with self.lock:
            self.data[key] = {"F0": strip[0], "default": strip[1]}

    def save(self) -> None:
        if self.path is None:
            return
        with self.lock:
            text = json.dumps({"gnu": self.version, "cases": self.data}, indent=0)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text + "\n")
        tmp.replace(self.path)


def run_case(
    pq: list[str],
    case: Path,
    work_root: Path,
    use_worker: bool = True,
    cache: GnuCache | None = None,
) -> dict[str, Any]:
    meta = json.loads((case / "case.json").read_text())
    work = Path(tempfile.mkdtemp(prefix=case.name[:40] + "-", dir=work_root))
    t = time.perf_counter()
    phases: defaultdict[str, float] = defaultdict(float)
    try:
        key = cache.key(case, meta) if cache is not None else None
        got = cache.get(key) if cache is not None and key is not None else None
        if got is not None:
            g0, g2 = got
        else:
            g0 = gnu_apply(case, work, 0, phases)
            g2 = gnu_apply(case, work, None, phases)
            if cache is not None and key is not None:
                cache.put(key, g0, g2)
        rec: dict[str, Any] = {
            "name": case.name,
            "key": meta.get("key"),
            "distribution": meta.get("distribution"),
            "downstream_repo": meta.get("downstream_repo"),
            "upstream_repo": meta.get("upstream_repo"),
            "upstream_tag": meta.get("upstream_tag"),
            "patches": len(read_series(case)),
            "gnu": "clean-F0" if g0["ok"] else "needs-fuzz" if g2["ok"] else "fails",
            "gnu_statuses": g2["patches"],
        }
        if not g2["ok"]:
            rec["gnu_failed"] = {"patch": g2.get("failed"), "error": g2.get("error")}
            # GNU patch does not apply it on its own release: outside the parity measure.
            return rec
        p0 = patchq_apply(pq, case, work, 0, use_worker, phases=phases)
        p2 = patchq_apply(pq, case, work, 2, use_worker, phases=phases)
        # A cached verdict has no tree to show: where the trees differ, GNU patch runs
        # again to name the differing files.
        if g0["ok"] and p0["rc"] == 0 and g0["tree"] != p0.get("tree") and "dir" not in g0:
            g0 = gnu_apply(case, work, 0, phases)
        if g2["ok"] and p2["rc"] == 0 and g2["tree"] != p2.get("tree") and "dir" not in g2:
            g2 = gnu_apply(case, work, None, phases)
        rec["F0"] = compare(g0, p0, fuzz_refusal=not g0["ok"]) | {
            "patchq_rc": p0["rc"],
            "patchq_seconds": p0["seconds"],
        }
        rec["F2"] = compare(g2, p2) | {"patchq_rc": p2["rc"], "patchq_seconds": p2["seconds"]}
        for lvl, p in (("F0", p0), ("F2", p2)):
            if "methods" in p:
                rec[lvl]["methods"] = p["methods"]
            if "normalisations" in p:
                rec[lvl]["normalisations"] = p["normalisations"]
        return rec
    finally:
        rec_time = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        shutil.rmtree(work, ignore_errors=True)
        phases["clean up"] += time.perf_counter() - t
        try:
            rec["seconds"] = rec_time
            rec["phases"] = {k: round(v, 3) for k, v in sorted(phases.items())}
            rec["gnu_cached"] = got is not None
        except NameError:
            pass


# ------------------------------------------------------------------------------ report
def summarize(results: dict[str, Any]) -> dict[str, Any]:
    recs = list(results.values())
    s: dict[str, Any] = {
        "series": len(recs),
        "patches": sum(r["patches"] for r in recs),
        "downstreams": sorted({r["distribution"] for r in recs if r.get("distribution")}),
        "upstreams": len({r["upstream_repo"] for r in recs}),
        "gnu": dict(Counter(r["gnu"] for r in recs)),
    }
    applied = [r for r in recs if r["gnu"] != "fails"]
    s["gnu_applies_series"] = len(applied)
    s["gnu_applies_patches"] = sum(r["patches"] for r in applied)
    s["gnu_applies_downstreams"] = sorted({r["distribution"] for r in applied})
    s["gnu_applies_upstreams"] = len({r["upstream_repo"] for r in applied})
    for lvl in ("F0", "F2"):
        c: Counter[str] = Counter()
        cp: Counter[str] = Counter()
        mech: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        for r in applied:
            o = r.get(lvl)
            if not o:
                continue
            c[o["outcome"]] += 1
            cp[o["outcome"]] += r["patches"]
            if o["outcome"] == "different":
                mech[o["mechanism"]] += 1
            if o["outcome"] == "refused-allowed":
                reasons[o["reason"]] += 1
        s[lvl] = {
            "series": dict(c),
            "patches": dict(cp),
            "mechanisms": dict(mech.most_common()),
            "refusals": dict(reasons),
        }
    return s


def write_md(
    results: dict[str, Any],
    path: Path,
    command: str,
    seconds: float | None,
    total: int | None = None,
    *,
    meta: dict[str, Any] | None = None,
) -> None:
    meta = meta or {}
    s = summarize(results)
    recs = sorted(results.values(), key=lambda r: r["name"])
    g = s["gnu"]
    by_dist: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        by_dist[r.get("distribution") or "?"].append(r)
    L = [
        "# Apply parity: patchq against GNU patch on real distribution series",
        "",
        "Generated by `patchq-bench parity`. Corpus: `bench/corpus/parity-manifest.json`,",
        "harvested by rule with `patchq-bench harvest` (see `bench/corpus/README.md`).",
        "",
        f"Command: `{command}`" + (f" ({seconds:.0f} s)" if seconds else ""),
        "",
        *(
            [
                f"**Sample: every {meta['sample']}-th series by the sha256 of its name "
                f"({len(results)} of the corpus's {meta.get('corpus_total')} series)**, not "
                "the full corpus.",
                "",
            ]
            if meta.get("sample")
            else []
        ),
        *(
            [
                f"Where the time went (seconds summed over cases, {meta.get('patchq_runs')}"
                f" for patchq, {meta.get('gnu_cache_hits', 0)} GNU verdicts from the cache; "
                f"{meta.get('cpu_seconds')} CPU seconds in all; "
                f"load average at the end {meta.get('load')}): "
                + ", ".join(f"{k} {v}" for k, v in meta["phases"].items()),
                "",
            ]
            if meta.get("phases")
            else []
        ),
        *(
            [
                f"**Partial run: {len(results)} of the {total} series of the corpus so far** "
                "(the cases run in a hash order of their names, so this is a sample across "
                "downstreams and projects; `patchq-bench parity` resumes where it stopped).",
                "",
            ]
            if total and len(results) < total
            else []
        ),
        f"Materialized: {s['patches']} patches in {s['series']} series, "
        f"{len(s['downstreams'])} downstreams ({', '.join(s['downstreams'])}), "
        f"{s['upstreams']} upstream projects.",
        "",
        f"GNU patch applies {s['gnu_applies_patches']} patches in {s['gnu_applies_series']} "
        f"series on the release they were made for ({g.get('clean-F0', 0)} series at `-F0`, "
        f"{g.get('needs-fuzz', 0)} more only with its default fuzz; {g.get('fails', 0)} series "
        "fail and are outside the measure), from "
        f"{len(s['gnu_applies_downstreams'])} downstreams and "
        f"{s['gnu_applies_upstreams']} upstream projects.",
        "",
        "## Summary (series GNU patch applies)",
        "",
        "| level | series | patches | same tree / both refuse | refused (allowed, DESIGN §4) "
        "| different |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for lvl, label in (
        ("F0", "`patchq apply` vs `patch -F0`"),
        ("F2", "`patchq apply --fuzz 2` vs `patch`"),
    ):
        c, cp = s[lvl]["series"], s[lvl]["patches"]
        tot = sum(c.values())
        L.append(
            f"| {label} | {tot} | {sum(cp.values())} | {c.get('same', 0)} "
            f"({cp.get('same', 0)} patches) | {c.get('refused-allowed', 0)} | "
            f"{c.get('different', 0)} ({cp.get('different', 0)} patches) |"
        )
    L += _md_details(s, recs, by_dist)
    path.write_text("\n".join(L) + "\n")


def _md_details(
    s: dict[str, Any], recs: list[dict[str, Any]], by_dist: dict[str, list[dict[str, Any]]]
) -> list[str]:
    """The report below its summary: per downstream, the differences by mechanism, and
    every difference."""
    L = ["", "## Per downstream (series GNU patch applies; F0 / F2)", ""]
    L += [
        "| downstream | series | patches | upstreams | same F0 | different F0 | same F2 "
        "| different F2 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for dist, rs in sorted(by_dist.items()):
        ap = [r for r in rs if r["gnu"] != "fails"]
        cnt = {
            (lvl, o): sum(1 for r in ap if r.get(lvl, {}).get("outcome") == o)
            for lvl in ("F0", "F2")
            for o in ("same", "different")
        }
        L.append(
            f"| {dist} | {len(ap)} | {sum(r['patches'] for r in ap)} | "
            f"{len({r['upstream_repo'] for r in ap})} | {cnt['F0', 'same']} | "
            f"{cnt['F0', 'different']} | {cnt['F2', 'same']} | {cnt['F2', 'different']} |"
        )
    for lvl in ("F0", "F2"):
        L += ["", f"## Differences at {lvl}, by mechanism", ""]
        if not s[lvl]["mechanisms"]:
            L.append("None.")
        for m, n in s[lvl]["mechanisms"].items():
            L.append(f"- {n} series: {m}")
        if s[lvl]["refusals"]:
            L += [
                "",
                "Allowed refusals: "
                + ", ".join(f"{k}: {v}" for k, v in s[lvl]["refusals"].items()),
            ]
    L += [
        "",
        "## Every difference",
        "",
        "| case | level | mechanism | detail |",
        "|---|---|---|---|",
    ]
    if not any(r.get(lvl, {}).get("outcome") == "different" for r in recs for lvl in ("F0", "F2")):
        L = L[:-2] + ["None."]
    for r in recs:
        for lvl in ("F0", "F2"):
            o = r.get(lvl)
            if o and o["outcome"] == "different":
                detail = (
                    o.get("error") or ", ".join(o.get("files", [])) or o.get("gnu_failed") or ""
                )
                detail = detail.replace("|", "\\|").replace("\n", " ")[:160]
                L.append(f"| {r['name']} | {lvl} | {o['mechanism']} | `{detail}` |")
    return L


def save(results: dict[str, Any], path: Path, meta: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps({"meta": meta, "summary": summarize(results), "cases": results}, indent=1) + "\n"
    )
    tmp.replace(path)


def patchq_version(pq: list[str]) -> str:
    """What decides whether old results still hold: the program's version and a digest of
    the patchq sources beside this bench (the code `-m patchq` runs from this checkout)."""
    r = run([*pq, "--version"])
    h = hashlib.sha256()
    for f in sorted((ROOT / "src" / "patchq").rglob("*.py")):
        h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    return (r.stdout.strip() or r.stderr.strip()) + " src:" + h.hexdigest()[:16]


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    path_option(
        ap, "--corpus", WORK_ENV, "the materialized cases (harvest materialize --out)", "parity"
    )
    path_option(
        ap, "--results", WORK_ENV, "the results JSON, outside the repository", "parity-results.json"
    )
    ap.add_argument("--md", type=Path, default=BENCH / "PARITY.md")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--patchq", default=f"{sys.executable} -m patchq")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "parity-work")
    ap.add_argument("--only", nargs="*")
    ap.add_argument(
        "--sample", type=int, metavar="N", help="every N-th series (sha256 of its name mod N == 0)"
    )
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--gnu-cache", type=Path, help="default: --results with .gnu.json")
    ap.add_argument(
        "--process-per-run",
        action="store_true",
        help="each patchq command line its own process (no parity_worker.py)",
    )
    ap.add_argument(
        "--report",
        action="store_true",
        help="only write --md from --results (e.g. of a run going on)",
    )
    return ap


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    args = parser(prog).parse_args(argv)
    if args.report:
        old = json.loads(args.results.read_text())
        index = args.corpus / "index.json"
        total = old["meta"].get("total") or (
            len(json.loads(index.read_text())) if index.is_file() else None
        )
        old_meta = old["meta"]
        write_md(
            old["cases"],
            args.md,
            old_meta["command"],
            old_meta.get("seconds"),
            total,
            meta=old_meta,
        )
        return 0
    outside_repo(args.results, "--results")
    outside_repo(args.work, "--work")
    pq = args.patchq.split()
    if os.sep in pq[0] and not os.path.isabs(pq[0]):
        pq[0] = os.path.abspath(pq[0])
    names, corpus_total = case_names(args)
    version = patchq_version(pq)
    cache = GnuCache(
        args.gnu_cache or args.results.with_suffix(".gnu.json"), args.fresh, gnu_version()
    )
    use_worker = not args.process_per_run
    results: dict[str, Any] = {}
    if args.results.is_file() and not args.fresh:
        old = json.loads(args.results.read_text())
        if old.get("meta", {}).get("patchq") == version:
            results = {k: v for k, v in old.get("cases", {}).items() if k in set(names)}
    keys = {n: json.loads((args.corpus / n / "case.json").read_text()).get("key") for n in names}
    todo = [n for n in names if results.get(n, {}).get("key") != keys[n]]
    # a hash order mixes downstreams and projects, so partial results are a fair sample
    todo.sort(key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    args.work.mkdir(parents=True, exist_ok=True)
    given = argv if argv is not None else sys.argv[1:]
    command = " ".join([prog or "patchq-bench parity", *given])
    meta: dict[str, Any] = {
        "patchq": version,
        "corpus": str(args.corpus),
        "command": command,
        "total": len(names),
        "sample": args.sample,
        "corpus_total": corpus_total,
        "gnu": cache.version,
        "patchq_runs": "own process each" if not use_worker or not worker_cmd(pq) else "worker",
    }
    t = time.time()
    print(f"{len(names)} cases, {len(todo)} to run", file=sys.stderr)
    run_all(args, Batch(pq, use_worker, cache, keys, todo), results, meta)
    for w in _all_workers:
        w.close()
    meta["seconds"] = round(time.time() - t)
    phases: defaultdict[str, float] = defaultdict(float)
    for n in todo:
        for k, v in results.get(n, {}).get("phases", {}).items():
            phases[k] += v
    by_cost = sorted(phases.items(), key=lambda kv: kv[1], reverse=True)  # as most_common
    meta["phases"] = {k: round(v) for k, v in by_cost}
    meta["gnu_cache_hits"] = cache.hits
    meta["load"] = [round(x, 2) for x in os.getloadavg()]
    # CPU seconds of this run and every process it waited for (GNU patch, git, the
    # workers): what the run costs on dedicated cores, whatever else the machine runs.
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    meta["cpu_seconds"] = round(own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime)
    save(results, args.results, meta)
    cache.save()
    write_md(results, args.md, command, meta["seconds"], len(names), meta=meta)
    s = summarize(results)
    shown = ("series", "patches", "gnu_applies_series", "gnu_applies_patches", "F0", "F2")
    print(json.dumps({k: s[k] for k in shown}, indent=1))
    return 0


def case_names(args: argparse.Namespace) -> tuple[list[str], int]:
    """The materialized cases to run (--only, --sample), and how many the corpus holds."""
    index = args.corpus / "index.json"
    names = (
        json.loads(index.read_text())
        if index.is_file()
        else sorted(p.name for p in args.corpus.iterdir() if (p / "case.json").is_file())
    )
    names = [
        n for n in names if not n.endswith(".part") and (args.corpus / n / "case.json").is_file()
    ]
    if args.only:
        names = [n for n in names if n in args.only]
    corpus_total = len(names)
    if args.sample:
        names = [
            n for n in names if int(hashlib.sha256(n.encode()).hexdigest(), 16) % args.sample == 0
        ]
    return names, corpus_total


@dataclasses.dataclass(frozen=True)
class Batch:
    """The cases to run and how: patchq's command, in a worker or not, GNU patch's
    verdict cache, and each case's key."""

    pq: list[str]
    use_worker: bool
    cache: GnuCache
    keys: dict[str, Any]
    todo: list[str]


def run_all(
    args: argparse.Namespace, b: Batch, results: dict[str, Any], meta: dict[str, Any]
) -> None:
    """Run the cases side by side, saving the results every ten cases."""
    pq, use_worker, cache, keys, todo = b.pq, b.use_worker, b.cache, b.keys, b.todo
    lock = threading.Lock()
    t = time.time()
    done = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = {
            ex.submit(run_case, pq, args.corpus / n, args.work, use_worker, cache): n for n in todo
        }
        for fut in concurrent.futures.as_completed(futs):
            n = futs[fut]
            try:
                rec = fut.result()
            except Exception as e:  # a harness fault: record it, go on
                rec = {
                    "name": n,
                    "key": keys[n],
                    "patches": 0,
                    "gnu": "fails",
                    "harness_error": repr(e)[:300],
                    "upstream_repo": "?",
                }
            with lock:
                results[n] = rec
                done += 1
                if done % 10 == 0 or done == len(todo):
                    save(results, args.results, meta)
                    cache.save()
                    print(f"  {done}/{len(todo)} in {time.time() - t:.0f}s", file=sys.stderr)
