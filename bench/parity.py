#!/usr/bin/env python3
"""Apply parity: patchq against GNU patch on every materialized real series.

    python3 bench/parity.py [--corpus /work/corpus/parity] [--jobs 2]
                            [--results /work/corpus/parity-results.json] [--md bench/PARITY.md]
                            [--patchq "CMD"] [--only NAME ...] [--fresh]

Each case (written by `bench/harvest.py materialize`: base/ a git checkout of the upstream
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
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
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
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PATCHQ_TARGET"}
    env.update(IDENT)
    env["LC_ALL"] = "C"
    env["QUILT_PATCHES"] = "patches"
    try:
        return subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, errors="replace", timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timeout after {timeout}s")


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


def gnu_apply(case: Path, work: Path, fuzz: int | None) -> dict[str, Any]:
    """GNU patch walks the series; stops at the first patch it cannot apply."""
    dest = work / f"gnu-{'F0' if fuzz == 0 else 'default'}"
    copy_base(case, dest)
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
    if res["ok"]:
        res["tree"] = tree_of(dest)
    res["dir"] = str(dest)
    return res


def patchq_apply(pq: list[str], case: Path, work: Path, fuzz: int) -> dict[str, Any]:
    target = work / f"pq-F{fuzz}"
    copy_base(case, target)
    repo = work / f"pq-repo-F{fuzz}"
    (repo / "patches").mkdir(parents=True)
    (repo / "patchq.toml").write_text("strip = 1\nfuzz = 0\nguards = []\n")
    shutil.copyfile(case / "series", repo / "series")
    for name, _ in read_series(case):
        shutil.copyfile(case / "patches" / name, repo / "patches" / name)
    args = [*pq, "--dir", str(repo), "--target", str(target), "apply", "--onto", "HEAD", "--json"]
    if fuzz:
        args += ["--fuzz", str(fuzz)]
    t = time.perf_counter()
    r = run(args, cwd=repo)
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


def run_case(pq: list[str], case: Path, work_root: Path) -> dict[str, Any]:
    meta = json.loads((case / "case.json").read_text())
    work = Path(tempfile.mkdtemp(prefix=case.name[:40] + "-", dir=work_root))
    t = time.perf_counter()
    try:
        g0 = gnu_apply(case, work, 0)
        g2 = gnu_apply(case, work, None)
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
        p0 = patchq_apply(pq, case, work, 0)
        p2 = patchq_apply(pq, case, work, 2)
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
        shutil.rmtree(work, ignore_errors=True)
        try:
            rec["seconds"] = rec_time
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
) -> None:
    s = summarize(results)
    recs = sorted(results.values(), key=lambda r: r["name"])
    g = s["gnu"]
    by_dist: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        by_dist[r.get("distribution") or "?"].append(r)
    L = [
        "# Apply parity: patchq against GNU patch on real distribution series",
        "",
        "Generated by `bench/parity.py` (issue 25). Corpus: `bench/corpus/parity-manifest.json`,",
        "harvested by rule with `bench/harvest.py` (see `bench/corpus/README.md`).",
        "",
        f"Command: `{command}`" + (f" ({seconds:.0f} s)" if seconds else ""),
        "",
        *(
            [
                f"**Partial run: {len(results)} of the {total} series of the corpus so far** "
                "(the cases run in a hash order of their names, so this is a sample across "
                "downstreams and projects; `parity.py` resumes where it stopped).",
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
    L += ["", "## Per downstream (series GNU patch applies; F0 / F2)", ""]
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
    for r in recs:
        for lvl in ("F0", "F2"):
            o = r.get(lvl)
            if o and o["outcome"] == "different":
                detail = (
                    o.get("error") or ", ".join(o.get("files", [])) or o.get("gnu_failed") or ""
                )
                detail = detail.replace("|", "\\|").replace("\n", " ")[:160]
                L.append(f"| {r['name']} | {lvl} | {o['mechanism']} | `{detail}` |")
    path.write_text("\n".join(L) + "\n")


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=Path("/work/corpus/parity"))
    ap.add_argument("--results", type=Path, default=Path("/work/corpus/parity-results.json"))
    ap.add_argument("--md", type=Path, default=HERE / "PARITY.md")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--patchq", default=f"{sys.executable} -m patchq")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "parity-work")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument(
        "--report",
        action="store_true",
        help="only write --md from --results (e.g. of a run going on)",
    )
    args = ap.parse_args(argv)
    if args.report:
        old = json.loads(args.results.read_text())
        index = args.corpus / "index.json"
        total = old["meta"].get("total") or (
            len(json.loads(index.read_text())) if index.is_file() else None
        )
        write_md(old["cases"], args.md, old["meta"]["command"], None, total)
        return 0
    pq = args.patchq.split()
    if os.sep in pq[0] and not os.path.isabs(pq[0]):
        pq[0] = os.path.abspath(pq[0])
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
    version = patchq_version(pq)
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
    lock = threading.Lock()
    command = "python3 bench/parity.py " + " ".join(argv if argv is not None else sys.argv[1:])
    meta = {"patchq": version, "corpus": str(args.corpus), "command": command, "total": len(names)}
    t = time.time()
    done = 0
    print(f"{len(names)} cases, {len(todo)} to run", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = {ex.submit(run_case, pq, args.corpus / n, args.work): n for n in todo}
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
                    print(f"  {done}/{len(todo)} in {time.time() - t:.0f}s", file=sys.stderr)
    meta["seconds"] = round(time.time() - t)
    save(results, args.results, meta)
    write_md(results, args.md, command, meta["seconds"], len(names))
    s = summarize(results)
    print(
        json.dumps(
            {
                k: s[k]
                for k in (
                    "series",
                    "patches",
                    "gnu_applies_series",
                    "gnu_applies_patches",
                    "F0",
                    "F2",
                )
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
