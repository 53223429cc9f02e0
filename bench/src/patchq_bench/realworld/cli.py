#!/usr/bin/env python3
"""Drive patchq through real downstream series refreshes and score it beside its peers.

    patchq-bench realworld --out DIR [--mirrors MIRRORS] [--corpus CORPUS]
        [--cases FILE ...] [--only NAME ...] [--split all|tuning|validation]
        [--mode both|default|accept-all] [--md bench/REALWORLD.md]
        [--precision-md bench/PRECISION.md] [--no-materialize] [--rescore] [--report-only]

The corpus is ../shared/realworld/ (cases.toml, materialize.py, peers.py; see its README)
plus this folder's realworld-cases.toml. Nothing fetched is stored here: the case files
name repositories, commits and file names, and materialize.py takes every case out of
local git mirrors (MIRRORS/OWNER+NAME/repo) each time. A case whose mirror is missing is
skipped and named. A case with `upstream_strip_dir = "DIR"` (a Debian packaging repository,
whose "upstream" is its own tree) gets case-old/case-new without that top-level folder:
one commit on top of old_commit/new_commit whose tree drops it (`without_dir`); where
that tree holds its series already applied (GNU patch does not apply the series forward
but applies it in reverse to the end: dgit's "patches applied" layout), the upstream is
that tree with the series reversed (`series_unapplied`, noted in case.json), each side
one commit (`flat_commit`: old a root, new on top of it).

For each materialized case (upstream.git with branches case-old = X and case-new = Y,
old-series/, new-series/, case.json):

 1. Old series on the old release. A scratch clone of upstream.git at X and a patch repo
    made with `patchq init` holding old-series/ (series + patches/). `patchq apply --onto
    case-old` at fuzz 0; a patch it refuses is recorded with patchq's error and taken out
    of the series, and apply is run again, until the rest applies. Then the same from the
    whole series with `--fuzz 2` (only when fuzz 0 left a patch out). GNU patch walks the
    same series on X at `-F0` and at its default fuzz 2 for comparison, and the trees are
    compared where both applied the same patches.
 2. Rebase onto the new release. `patchq rebase --onto case-new` from the best apply of
    step 1 (with `--fuzz` as --rebase-fuzz says); at every stop `patchq rebase --skip`
    (a stop is never credited as a refresh) until it finishes.
 3. The refreshed series is written to OUT/patchq/CASE/ in peers.py's candidate format:
    `series` lists the patches patchq kept, under the old names, with patchq's refreshed
    files beside it; an upstreamed, skipped or refused patch is left out (= dropped).
 4. peers.py scores git apply, GNU patch, git am -3, wiggle and the patchq candidate
    against the maintainer's own refresh; the report (--md) puts patchq beside them per
    case, per kind of change, and for step 1, and lists patchq's failures grouped by cause.

Scoring (bench/src/patchq_bench/realworld/scoring.py holds the rules, in its docstring):

- **Split.** Each case is `tuning` (70%) or `validation` (30%) by the sha256 of its name,
  for every case file. `--split` runs one part or both; per-case and per-patch results are
  printed and reported for the tuning part only, the validation part as totals; its raw
  results (logs, candidates, peers.json) go to OUT/sealed/ and are not to be read.
- **Cost per tool.** Per patch: same as the maintainer, wrong (applied but not the
  maintainer's, or left out without a stop although the maintainer kept it), or a miss
  (a stop or a failure); cost = misses + 3 × wrong, a default-mode stop that the
  `--accept all` run gets right counting half a miss.
- **Modes.** `default` runs patchq's rebase as it is; `accept-all` adds `--accept all`
  (candidate `patchq-accept`) when `patchq rebase --help` lists `--accept`, and is reported
  "unsupported" otherwise.
- **Precision per method.** Every hunk patchq placed with a method in a patch it kept (or
  recorded upstreamed) is a use; it is right when the region its hunk produced equals the
  maintainer's file at the aligned place. The tables (validation with the DESIGN §4.1 tier,
  and tuning) go to the report and to --precision-md with the command and the case files'
  revision.

Every patchq command of a case, its exit code, its stderr and the per-patch outcome
(applied exact/offset/fuzz on X, then unchanged/refreshed/merged/upstreamed/stopped and
skipped on Y, with the placement method of each hunk) is kept in OUT/logs/CASE.json.

Standard library only; patchq runs as its command-line program (`--patchq`, default this
Python's `-m patchq`), as a user runs it. Needs git, GNU patch and wiggle.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import functools
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchq_bench.paths import BENCH, MIRRORS_ENV, REPO, WORK_ENV, outside_repo, path_option
from patchq_bench.realworld import scoring as rc  # the split, cost and region rules
from patchq_bench.realworld.cases import (
    DROP_DRIVER,
    Job,
    first_by_hash,
    load_cases,
    log_path,
    materialize_case,
    merge_peers,
    part_dir,
    run_job,
)
from patchq_bench.realworld.driver import CANDIDATE, MODES, PEER_TOOLS, run
from patchq_bench.realworld.report import Part, build_report, corpus_revision, precision_md, row

LOCAL_CASES = BENCH / "realworld-cases.toml"
# The shared corpus folder (cases.toml, materialize.py, peers.py), kept beside no checkout
# in particular: named by --corpus or this variable.
CORPUS_ENV = "PATCHQ_REALWORLD_CORPUS"


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _corpus_options(ap)
    _run_options(ap)
    return ap


def _corpus_options(ap: argparse.ArgumentParser) -> None:
    """Where the cases come from, which of them run, and where the results go."""
    path_option(
        ap, "--mirrors", MIRRORS_ENV, "folder of local git mirrors, OWNER+NAME/repo", always=False
    )
    path_option(
        ap,
        "--corpus",
        CORPUS_ENV,
        "the shared corpus folder with materialize.py and peers.py",
        always=False,
    )
    ap.add_argument(
        "--cases",
        type=Path,
        nargs="*",
        default=None,
        help=f"case files to materialize, e.g. a harvested manifest (default: CORPUS/cases.toml "
        f"and {LOCAL_CASES.name})",
    )
    ap.add_argument("--only", nargs="*", default=[], help="run only these case names")
    ap.add_argument(
        "--split",
        choices=["all", "tuning", "validation"],
        default="all",
        help="which part of the corpus to run (scoring.split_of: sha256 of the case "
        "name); the validation part is only ever reported as totals (default: %(default)s)",
    )
    ap.add_argument(
        "--mode",
        choices=["both", "default", "accept-all"],
        default="both",
        help="patchq's rebase as it is, with `--accept all` (when its rebase has the option; "
        "else reported unsupported), or both (default: %(default)s)",
    )
    path_option(
        ap,
        "--out",
        WORK_ENV,
        "work folder, outside the repository: cases/, patchq/ (candidates), logs/, "
        "peers.json, sealed/ (the validation part's raw results, not to be read)",
        "realworld",
    )
    ap.add_argument(
        "--md",
        type=Path,
        default=None,
        help="write the report here (e.g. bench/REALWORLD.md; default: OUT/REALWORLD.md)",
    )
    ap.add_argument(
        "--brief-md",
        type=Path,
        default=None,
        help="also write the report's totals only (no per-case or per-patch table) here, "
        "e.g. bench/RESULTS-issue24.md",
    )
    ap.add_argument(
        "--precision-md",
        type=Path,
        default=None,
        help="write the per-method precision table here (e.g. bench/PRECISION.md; default: "
        "OUT/PRECISION.md)",
    )


def _run_options(ap: argparse.ArgumentParser) -> None:
    """How patchq and its peers are run, and what of a run is redone."""
    ap.add_argument(
        "--patchq",
        default=None,
        help=f'how to run patchq (default: "{sys.executable} -m patchq")',
    )
    ap.add_argument(
        "--rebase-fuzz",
        default="none",
        choices=["none", "same", "0", "1", "2", "3"],
        help="fuzz for the rebase: none = patchq's default, same = what apply needed on X "
        "(default: %(default)s)",
    )
    ap.add_argument(
        "--tools", default=",".join(PEER_TOOLS), help="peers to score (default: %(default)s)"
    )
    ap.add_argument(
        "--no-materialize",
        action="store_true",
        help="reuse the cases already under OUT/cases (a case folder that is a symbolic link "
        "to another run's is refused: copy it; materializing replaces such a link)",
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="rebuild the reports from the last run's files under OUT (run.json, logs/, "
        "peers.json, sealed/)",
    )
    ap.add_argument(
        "--rescore",
        action="store_true",
        help="judge the method uses of the last run under OUT again (scoring.score_uses "
        "on its logs and candidates), then rebuild the reports",
    )
    ap.add_argument("--no-peers", action="store_true", help="only drive patchq and write its logs")
    ap.add_argument(
        "--verify-only",
        action="store_true",
        help="only materialize the cases under OUT/cases and check them with GNU patch; print "
        "how many pass and how many are dropped by reason, per case-name prefix and part "
        "(tuning drops named, validation ones counted only); no patchq run",
    )
    ap.add_argument(
        "--jobs", type=int, default=1, help="cases run side by side (default: %(default)s)"
    )
    ap.add_argument(
        "--limit",
        type=int,
        default=None,
        help="run only the first K cases of each part ordered by the sha256 of their name "
        "(the rule for a prefix when a whole part cannot be run in the time)",
    )
    ap.add_argument(
        "--tuning-limit",
        type=int,
        default=None,
        help="the same for the tuning part alone (default: --limit)",
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="keep the results of cases already finished (or dropped) under OUT",
    )
    ap.add_argument(
        "--patchq-rev",
        default="",
        help="the commit the measured patchq was taken from, for the record (e.g. the "
        "commit of a frozen `git archive` snapshot given with --patchq)",
    )


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    a = parser(prog).parse_args(argv)
    pq_cmd = shlex.split(a.patchq) if a.patchq else [sys.executable, "-m", "patchq"]
    out: Path = outside_repo(a.out, "--out").resolve()
    if a.rescore:
        return rescore(out, a.md, a.precision_md, a.brief_md)
    if a.report_only:
        return write_report(out, a.md, a.precision_md, a.brief_md)
    trouble = _cannot_run(a, pq_cmd, out)
    if trouble:
        print(f"realworld: {trouble}", file=sys.stderr)
        return 2
    modes, accept_status = _modes(a.mode, pq_cmd)
    if not modes:
        print("realworld: no mode to run (--mode accept-all is unsupported)", file=sys.stderr)
        return 1
    cases_files, by_name, names = _cases(a)
    if not names:
        print("realworld: no case to run (see --only, --split)", file=sys.stderr)
        return 1
    n_val = sum(1 for n in names if rc.split_of(n) == "validation")
    print(
        f"{len(names) - n_val} tuning and {n_val} validation cases; modes: {', '.join(modes)}; "
        f"{a.jobs} jobs",
        flush=True,
    )
    if a.verify_only:
        return verify_only(a.corpus, a.mirrors, [by_name[n] for n in names], out, a.jobs)
    tools = [t for t in a.tools.split(",") if t]
    jobs = [
        Job(
            n,
            a.corpus,
            a.mirrors,
            by_name[n],
            out,
            pq_cmd,
            modes,
            a.rebase_fuzz,
            tools,
            not a.no_materialize,
            a.resume,
            not a.no_peers,
        )
        for n in names
    ]
    done, skipped = _run_jobs(jobs, a.jobs, n_val)
    if a.no_peers:
        return 0
    cand_tools = [*tools, *(CANDIDATE[m] for m in modes)]
    for split in rc.SPLITS:
        part = [n for n in done if rc.split_of(n) == split]
        if part:
            merge_peers(out, split, part, cand_tools)
    command = " ".join(
        shlex.quote(x)
        for x in ["patchq-bench realworld", *(argv if argv is not None else sys.argv[1:])]
    )
    run_rec = {
        "command": command,
        "date": datetime.date.today().isoformat(),
        "patchq": patchq_version(pq_cmd, a.patchq_rev),
        "skipped": skipped,
        "cases": done,
        "split": a.split,
        "modes": modes,
        "accept": accept_status,
        "corpus": corpus_revision(cases_files),
    }
    (out / "run.json").write_text(json.dumps(run_rec, indent=1) + "\n")
    return write_report(out, a.md, a.precision_md, a.brief_md)


def _cannot_run(a: argparse.Namespace, pq_cmd: list[str], out: Path) -> str | None:
    """Why the run cannot start (before anything is written), or None."""
    trouble = runs_anywhere(pq_cmd)
    if trouble is not None:
        # Every case would fail as a "driver failure" (sealed: no reason shown for the
        # validation part) and leave its drop mark: refused before anything is written.
        return f"--patchq {a.patchq or ''!r}: {trouble}"
    cases_dir = out / "cases"
    if cases_dir.is_symlink() and not a.no_materialize:
        return (
            f"{cases_dir} links to {os.path.realpath(cases_dir)}: materializing "
            "would write into that run's cases — give --no-materialize to reuse them, or "
            "another --out"
        )
    for flag, value in (("--mirrors", a.mirrors), ("--corpus", a.corpus)):
        if value is None:
            return f"{flag} is needed to run cases (or its environment variable)"
    for exe in ("git", "patch", *(("wiggle",) if "wiggle" in a.tools else ())):
        if not shutil.which(exe):
            return f"{exe} not found (apt-get install patch wiggle)"
    if not (a.corpus / "materialize.py").is_file():
        return f"no materialize.py in {a.corpus} (--corpus)"
    cases_dir.mkdir(parents=True, exist_ok=True)
    return None


def _modes(mode: str, pq_cmd: list[str]) -> tuple[list[str], str]:
    """The modes to run for `--mode`, and whether the `--accept all` run is possible."""
    accept_status = "not asked"
    modes = [m for m in MODES if mode in ("both", m)]
    if "accept-all" in modes:
        accept_status = "run" if supports_accept(pq_cmd) else "unsupported"
        if accept_status == "unsupported":
            modes.remove("accept-all")
            print("accept-all mode: unsupported (patchq rebase has no --accept)", flush=True)
    return modes, accept_status


def _cases(a: argparse.Namespace) -> tuple[list[Path], dict[str, dict[str, Any]], list[str]]:
    """The case files read, every case by name, and the names to run, in order."""
    cases_files = a.cases if a.cases else [a.corpus / "cases.toml", LOCAL_CASES]
    cases_files = [c.resolve() for c in cases_files if c.is_file()]
    for cf in cases_files:
        for msg in split_disagreements(cf):
            print(f"realworld: {msg}", file=sys.stderr)
    by_name = {str(c["name"]): c for c in load_cases(cases_files)}
    names = [n for n in by_name if not a.only or n in a.only]
    names = rc.select(names, a.split)
    if a.limit is not None or a.tuning_limit is not None:
        tun = [n for n in names if rc.split_of(n) == "tuning"]
        val = [n for n in names if rc.split_of(n) == "validation"]
        tlim = a.tuning_limit if a.tuning_limit is not None else a.limit
        names = first_by_hash(val, a.limit) + first_by_hash(tun, tlim)
    return cases_files, by_name, names


def _run_jobs(jobs: list[Job], workers: int, n_val: int) -> tuple[list[str], list[str]]:
    """Run the cases side by side: the names finished (in the jobs' order) and a line for
    each case dropped (its reason named for the tuning part only)."""
    skipped: list[str] = []
    done_set: set[str] = set()
    val_done = 0
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_job, j): j.name for j in jobs}
        for fut in concurrent.futures.as_completed(futures):
            n = futures[fut]
            sealed = rc.split_of(n) == "validation"
            try:
                res = fut.result()
            except Exception as e:  # noqa: BLE001  (a worker's crash: counted, the run goes on)
                res = {"name": n, "dropped": DROP_DRIVER, "lines": [], "error": repr(e)[:300]}
            for line in res["lines"]:
                print(line, flush=True)
            if res["dropped"]:
                err = "" if sealed else f" — {res.get('error')}" if res.get("error") else ""
                skipped.append(f"{n}: {res['dropped']}{err}")
                if not sealed:
                    print(f"DROP {n:40} {res['dropped']}{err}", flush=True)
            else:
                done_set.add(n)
            if sealed:
                val_done += 1
                print(f"validation case {val_done} of {n_val} done", flush=True)
    return [j.name for j in jobs if j.name in done_set], skipped


def _verify_one(args: tuple[Path, Path, dict[str, Any], Path]) -> tuple[str, int, str]:
    corpus, mirrors, case, cases_dir = args
    reason = materialize_case(corpus, mirrors, case, cases_dir)
    return str(case["name"]), len(case["old_series"]), reason


def verify_only(
    corpus: Path, mirrors: Path, cases: Sequence[dict[str, Any]], out: Path, jobs: int
) -> int:
    """--verify-only: materialize and GNU-check CASES; print the totals per case-name prefix
    (the downstream: br, tx, mw, ms, le, sp, db) and part, naming tuning drops only."""
    tally: Counter[tuple[str, str, str]] = Counter()
    patches: Counter[tuple[str, str, str]] = Counter()
    todo = [(corpus, mirrors, c, out / "cases") for c in cases]
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        for name, n, reason in pool.map(_verify_one, todo):
            split = rc.split_of(name)
            key = (name.split("-", 1)[0], split, reason or "passes GNU patch")
            tally[key] += 1
            patches[key] += n
            if reason and split == "tuning":
                print(f"DROP {name:40} {reason}", flush=True)
    print("| prefix | part | result | bumps | old-series patches |")
    print("|---|---|---|---:|---:|")
    for key in sorted(tally):
        print(row(*key, tally[key], patches[key]))
    return 0


def rescore(out: Path, md: Path | None, precision: Path | None, brief: Path | None = None) -> int:
    """The region verdicts of a finished run again, from its logs and candidates."""
    try:
        run_rec = json.loads((out / "run.json").read_text())
    except (OSError, ValueError) as e:
        print(f"realworld: no finished run in {out}: {e}", file=sys.stderr)
        return 1
    work = out / "work" / "rescore"
    work.mkdir(parents=True, exist_ok=True)
    for n in run_rec["cases"]:
        for mode in run_rec.get("modes", ["default"]):
            path = log_path(out, n, mode)
            rec = json.loads(path.read_text())
            cand = part_dir(out, n) / CANDIDATE[mode] / n
            rec["uses"] = rc.score_uses(
                out / "cases" / n, cand, rec["rebase"]["hunks"], rec["rebase"]["outcomes"], work
            )
            path.write_text(json.dumps(rec, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    again = f"patchq-bench realworld --out {shlex.quote(str(out))} --rescore"
    commit = run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]).stdout.strip()
    run_rec["command"] = run_rec["command"].split("\n")[0] + f"\n{again}  # at {commit}"
    (out / "run.json").write_text(json.dumps(run_rec, indent=1) + "\n")
    return write_report(out, md, precision, brief)


def split_disagreements(cases_file: Path) -> list[str]:
    """A case file may carry its own `split` per case (a harvested manifest does): where
    it disagrees with scoring.split_of, say so (the name's hash decides here)."""
    import tomllib

    try:
        doc = tomllib.loads(cases_file.read_text())
    except (OSError, ValueError) as e:
        return [f"{cases_file}: not read ({e})"]
    bad = [
        str(c.get("name"))
        for c in doc.get("case", [])
        if isinstance(c, dict) and "split" in c and c["split"] != rc.split_of(str(c.get("name")))
    ]
    if not bad:
        return []
    return [
        f"{cases_file}: {len(bad)} cases carry a `split` other than the sha256 rule's "
        f"(e.g. {bad[0]}); the rule's is used"
    ]


def runs_anywhere(pq_cmd: list[str]) -> str | None:
    """Why the patchq command does not run where the drivers run it (each case's own
    folder, not this one: a relative path such as `.venv/bin/python` is not found there),
    or None when `--version` answers from another folder."""
    with tempfile.TemporaryDirectory(prefix="realworld-cwd-") as elsewhere:
        try:
            r = run([*pq_cmd, "--version"], cwd=elsewhere)
        except OSError as e:
            return f"does not start ({e.strerror}); give it with absolute paths"
    if r.returncode != 0:
        said = (r.stderr.strip() or r.stdout.strip()).splitlines()
        first = said[0] if said else f"exit {r.returncode}"
        return f"does not run outside this folder ({first}); give it with absolute paths"
    return None


def supports_accept(pq_cmd: list[str]) -> bool:
    """Does this patchq's `rebase` take `--accept`? (Read from `patchq rebase --help`.)"""
    r = run([*pq_cmd, "rebase", "--help"])
    return r.returncode == 0 and re.search(r"(?m)^\s*--accept\b", r.stdout) is not None


def patchq_version(pq_cmd: list[str], rev: str = "") -> str:
    """Which patchq was measured: its --version and the commit it was taken from (REV), else
    the commit of this checkout."""
    version = run([*pq_cmd, "--version"]).stdout.strip()
    if rev:
        return f"{version} (snapshot of commit {rev})"
    commit = run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    src = run(["git", "-C", str(REPO), "log", "-1", "--format=%h", "--", "src"])
    if commit.returncode == 0:
        version += f" (checkout at {commit.stdout.strip()}"
        version += f", src/ last changed in {src.stdout.strip()})" if src.stdout.strip() else ")"
    return version


def load_part(out: Path, split: str, names: Sequence[str], modes: Sequence[str]) -> Part:
    base = out / "sealed" if split == "validation" else out
    peers = json.loads((base / "peers.json").read_text())
    logs: dict[str, dict[str, dict[str, Any]]] = {m: {} for m in MODES}
    for n in names:
        for m in modes:
            logs[m][n] = json.loads(log_path(out, n, m).read_text())
    if "default" not in modes:  # only the accept-all run: its logs stand in for the tables
        return Part(peers, logs["accept-all"], logs["accept-all"])
    return Part(peers, logs["default"], logs["accept-all"])


def write_report(
    out: Path, md: Path | None, precision: Path | None = None, brief: Path | None = None
) -> int:
    """Build the reports from a finished run's files (run.json, logs/, peers.json, sealed/)."""
    try:
        run_rec = json.loads((out / "run.json").read_text())
        modes = run_rec.get("modes", ["default"])
        parts: dict[str, Part] = {}
        for split in rc.SPLITS:
            names = [n for n in run_rec["cases"] if rc.split_of(n) == split]
            if names:
                parts[split] = load_part(out, split, names, modes)
    except (OSError, ValueError, KeyError) as e:
        print(f"realworld: no finished run in {out}: {e}", file=sys.stderr)
        return 1
    date = run_rec["date"] + (f", {run_rec['patchq']}" if run_rec.get("patchq") else "")
    accept = run_rec.get("accept", "not asked")
    tuning = parts.get("tuning") or Part({"tools": [], "cases": []}, {})
    if not tuning.peers.get("tools") and "validation" in parts:
        tuning.peers = {"tools": parts["validation"].peers["tools"], "cases": []}
    report = functools.partial(
        build_report,
        tuning.peers,
        tuning.logs,
        run_rec["command"],
        date,
        run_rec["skipped"],
        validation=parts.get("validation"),
        accept_logs=tuning.accept_logs,
        accept_status=accept,
    )
    text = report()
    md_path = md or (out / "REALWORLD.md")
    md_path.write_text(text)
    print(f"wrote {md_path}")
    if brief is not None:
        brief.write_text(report(brief=True))
        print(f"wrote {brief}")
    ordered = [(s, parts[s]) for s in ("validation", "tuning") if s in parts]
    ptext = precision_md(
        ordered,
        run_rec["command"],
        run_rec.get("corpus", []),
        run_rec.get("patchq", ""),
        run_rec["date"],
        accept_status=accept,
    )
    p_path = precision or (out / "PRECISION.md")
    p_path.write_text(ptext)
    print(f"wrote {p_path}")
    return 0
