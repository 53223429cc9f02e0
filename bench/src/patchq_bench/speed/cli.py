#!/usr/bin/env python3
"""Benchmark patchq's whole-series commands against git am, git am -3, quilt and git apply.

Point it at any git repository (a checkout or a bare mirror):

    patchq-bench speed --repo PATH [--counts 50,300,1000] [--drift 100] [--runs 3]
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
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchq_bench.paths import REPO as PROJECT
from patchq_bench.speed.builds import (
    fs_type,
    machine,
    patchq_commit,
    peers,
    snapshot_rev,
    with_baseline,
)
from patchq_bench.speed.report import (
    md_report,
    print_series,
    process_table,
    targets,
    text_table,
    write_md,
)
from patchq_bench.speed.rows import DRIFT_KEYS, ROW_KEYS, ROWS, Ctx, Row, bench_series
from patchq_bench.speed.workspace import PATCHQ_ENV, BenchError, git, prepare, run


def parse_counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("counts must be at least 1")
    return counts


def parser(prog: str | None = None) -> argparse.ArgumentParser:
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
        "block the speed bench wrote before, keeps the rest of the file)",
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
    return ap


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = parser(prog)
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
    command = " ".join(
        shlex.quote(x)
        for x in [prog or "patchq-bench speed", *(sys.argv[1:] if argv is None else argv)]
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
    try:
        build = _patchq_build(a, tmp)
        if build is None:
            return 2
        patchq_cmd, snapshot = build
        cx = Ctx(patchq_cmd, found["quilt"])
        baseline = None
        if a.baseline:
            try:
                baseline = snapshot_rev(a.baseline, tmp / "baseline")
            except BenchError as e:
                print(f"bench: --baseline: {e}", file=sys.stderr)
                return 2
            rows = with_baseline(rows, baseline[1])
        report: dict[str, Any] = {
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
        try:
            end = git(src, "rev-parse", "--verify", f"{a.end}^{{commit}}")
        except BenchError as e:
            print(f"bench: {e}", file=sys.stderr)
            return 1
        ok = _run_counts(a, Work(src, end, tmp, cx, rows), report)
        _finish(a, report)
        return 0 if ok else 1
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _patchq_build(a: argparse.Namespace, tmp: Path) -> tuple[list[str], Path | None] | None:
    """How patchq is run (its command, and the snapshot it runs, if any); None (said on
    stderr) when the patchq asked for cannot be run."""
    if a.snapshot:
        snapshot = tmp / "src" / "patchq"
        shutil.copytree(
            PROJECT / "src" / "patchq", snapshot, ignore=shutil.ignore_patterns("__pycache__")
        )
        # Byte-compiled, as pip installs it: with PYTHONDONTWRITEBYTECODE set, every run
        # would otherwise compile the sources again (about 60 ms).
        compileall.compile_dir(str(snapshot), quiet=1)
        PATCHQ_ENV["PYTHONPATH"] = str(snapshot.parent)
        return [sys.executable, "-m", "patchq"], snapshot
    patchq_cmd: list[str] = shlex.split(a.patchq)
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
        return None
    return patchq_cmd, None


@dataclass(frozen=True)
class Work:
    """What every series of a run shares: the repository, the end of the windows, the
    temporary folder, the context of the rows, and the rows."""

    src: Path
    end: str
    tmp: Path
    cx: Ctx
    rows: list[Row]


def _run_counts(a: argparse.Namespace, w: Work, report: dict[str, Any]) -> bool:
    """Each N of --counts: its series prepared, its rows run and reported (the JSON
    rewritten after each); False when a row failed or a tree that should equal the
    original does not."""
    needs_drift = any(r.key in DRIFT_KEYS for r in w.rows)
    ok = True
    for count in a.counts:
        t0 = time.perf_counter()
        sub = w.tmp / f"n{count}"
        sub.mkdir()
        try:
            s = prepare(
                w.src,
                w.end,
                count,
                sub,
                not a.checkout_attributes,
                drift=a.drift if needs_drift else None,
            )
        except BenchError as e:
            print(f"bench: N={count}: {e}", file=sys.stderr)
            ok = False
            continue
        print(
            f"\nN={count}: range {s.base[:12]}..{s.head[:12]}, "
            f"{s.stats['file_changes']} file changes, "
            f"{float(str(s.stats['patch_bytes'])) / 1e6:.1f} MB, "
            f"{s.stats['tree_files']}-file tree"
            + (f"; drift onto {s.drift[:12]} (BASE~{a.drift})" if s.drift else ""),
            flush=True,
        )
        results = bench_series(s, w.cx, w.rows, a.runs)
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
    return ok


def _finish(a: argparse.Namespace, report: dict[str, Any]) -> None:
    """The targets and git process counts over every N; the JSON and Markdown written."""
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
