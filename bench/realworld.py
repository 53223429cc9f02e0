#!/usr/bin/env python3
"""Drive patchq through real downstream series refreshes and score it beside its peers.

    .venv/bin/python bench/realworld.py [--mirrors /work/.mirror] [--out /tmp/realworld-patchq]
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

Scoring (bench/refresh_corpus.py holds the rules, in its docstring):

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
import hashlib
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import refresh_corpus as rc  # noqa: E402  (beside this file: the split, cost and region rules)

# ../shared/realworld from the main checkout; ../../shared/realworld from a worktree
# under wt/ (the first that exists).
_CORPORA = [p / "shared" / "realworld" for p in list(HERE.parents)[1:3]]
DEFAULT_CORPUS = next((d for d in _CORPORA if (d / "materialize.py").is_file()), _CORPORA[0])
LOCAL_CASES = HERE / "realworld-cases.toml"
PEER_TOOLS = ("git-apply", "patch", "git-am-3", "wiggle")
# patchq's run modes and the candidate (peers.py column) each writes.
MODES = ("default", "accept-all")
CANDIDATE = {"default": "patchq", "accept-all": "patchq-accept"}
CLASSES = (
    "identical",
    "header-only",
    "refreshed-offsets",
    "refreshed-context",
    "modified",
    "dropped",
)
SCRUB = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "PATCHQ_TARGET",
)
IDENT = {
    "GIT_AUTHOR_NAME": "realworld",
    "GIT_AUTHOR_EMAIL": "realworld@invalid",
    "GIT_COMMITTER_NAME": "realworld",
    "GIT_COMMITTER_EMAIL": "realworld@invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}
# What the log keeps of each hunk patchq recorded on Y (index: the hunk's place in its
# file's section of the old patch; moved_to: where a `moved` hunk went).
HUNK_KEYS = ("file", "index", "status", "method", "reason", "offset", "fuzz", "moved_to")
# `patchq: patches/NAME: …` or `patchq: patches/NAME:LINE: …` names the patch at fault.
PATCH_AT_FAULT = re.compile(r"^patchq: patches/(?P<name>[^:\n]+?)(?::\d+)?: ", re.M)


# ------------------------------------------------------------------------- processes
def run(
    cmd: Sequence[str], cwd: Path | str | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.update(IDENT)
    env["LC_ALL"] = "C"
    return subprocess.run(
        list(cmd),
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        errors="replace",
    )


def git(cwd: Path, *args: str, check: bool = True) -> str:
    r = run(["git", *args], cwd=cwd)
    if check and r.returncode != 0:
        raise RuntimeError("git {}: {}".format(" ".join(args), r.stderr.strip()))
    return r.stdout


def scratch_clone(upstream_git: Path, dest: Path, ref: str) -> None:
    """A throw-away clone of the case's upstream, checked out at REF byte for byte."""
    if dest.exists():
        shutil.rmtree(dest)
    r = run(["git", "clone", "-q", "--shared", "--no-checkout", str(upstream_git), str(dest)])
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    for key, value in (
        ("core.autocrlf", "false"),
        ("gc.auto", "0"),
        ("commit.gpgsign", "false"),
        ("core.hooksPath", "/dev/null"),
    ):
        git(dest, "config", key, value)
    (dest / ".git" / "info").mkdir(exist_ok=True)
    (dest / ".git" / "info" / "attributes").write_text(
        "* -text -eol -ident -filter -working-tree-encoding\n"
    )
    git(dest, "update-ref", "--no-deref", "HEAD", "origin/" + ref)
    for branch in ("case-old", "case-new"):
        git(dest, "branch", "-q", "-f", branch, "origin/" + branch)
    git(dest, "checkout", "-q", "-f", ref)


# ------------------------------------------------------------------------- pure helpers
def patch_at_fault(stderr: str) -> str | None:
    """The patch a patchq error names (`patchq: patches/NAME[:LINE]: …`), if any."""
    m = PATCH_AT_FAULT.search(stderr)
    return m.group("name") if m else None


def error_line(stderr: str) -> str:
    """The line of patchq's stderr that says what went wrong (the last of a traceback)."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return ""
    if any(ln.startswith("Traceback") for ln in lines):
        return "crash: " + lines[-1]
    for ln in lines:
        if ln.startswith("patchq: "):
            return ln
    return lines[-1]


def cause_of(error: str) -> str:
    """Group an error by what it says, not where: names, paths, numbers and ids go."""
    text = error
    if text.startswith("crash: "):
        return "crash (traceback): " + re.sub(r"\d+", "N", text[7:])[:120]
    text = re.sub(r"^patchq: patches/[^:]+?(?::\d+)?: ", "", text)
    # "NAME does not apply to SHA: conflict in FILE (upstream: …) — …" → "conflict"
    text = re.sub(r"^\S+ does not apply to [0-9a-f]+: ", "", text)
    text = re.sub(r"\(upstream: .*?\)(?= — |$)", "(upstream: …)", text)
    text = re.sub(r"^patch does not apply: .*?: hunk #", "patch does not apply: FILE: hunk #", text)
    text = re.sub(r"conflict in [^(]+?(?= \(|$| —)", "conflict in FILE", text)
    text = re.sub(r"`[^`]*`", "`…`", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\b[0-9a-f]{7,40}\b", "SHA", text)
    text = re.sub(r"\d+", "N", text)
    return text.split(" — ")[0].strip()


def hunk_trouble(hunks: Iterable[dict[str, Any]]) -> str:
    """What the hunks that did not place say (status and reason), once each, for grouping."""
    seen: list[str] = []
    for h in hunks:
        status = str(h.get("method") or h.get("status") or "")
        if status in ("exact", "clean", "offset", "fuzz", "merge", "merged", ""):
            continue
        reason = re.sub(
            r"\S+ (is gone|already exists) upstream", r"FILE \1 upstream", h.get("reason") or ""
        )
        word = status + (": " + reason if reason else "")
        if word not in seen:
            seen.append(word)
    return "; ".join(seen)


def fuzz_outcome(statuses: Iterable[str]) -> str:
    """One word for how a patch applied, from its hunks' statuses."""
    seen = set(statuses)
    for word in ("fuzz", "offset"):
        if word in seen:
            return word
    return "exact"


def gnu_status(output: str) -> str:
    if "with fuzz" in output:
        return "fuzz"
    if "(offset" in output:
        return "offset"
    return "clean"


def candidate_series(final: dict[str, Any]) -> list[str]:
    """The patches a finished rebase kept, in order (an upstreamed or skipped one is left out)."""
    kept = []
    for p in final.get("patches", []):
        if p.get("outcome") not in ("upstreamed", "dropped"):
            kept.append(p["name"])
    return kept


# ------------------------------------------------------------------------- patchq driver
class Patchq:
    """One case's patch repo and target, and the log of every patchq command run on them."""

    def __init__(self, cmd: list[str], patch_repo: Path, target: Path, log: list[dict[str, Any]]):
        self.cmd = cmd
        self.patch_repo = patch_repo
        self.target = target
        self.log = log

    def __call__(self, *args: str, step: str) -> subprocess.CompletedProcess[str]:
        argv = [*self.cmd, "--dir", str(self.patch_repo), "--target", str(self.target), *args]
        t = time.perf_counter()
        r = run(argv, cwd=self.patch_repo)
        self.log.append(
            {
                "step": step,
                "args": list(args),
                "rc": r.returncode,
                "seconds": round(time.perf_counter() - t, 3),
                "stderr": r.stderr.strip()[-4000:],
            }
        )
        return r

    def json(self, r: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
        try:
            out = json.loads(r.stdout)
        except ValueError:
            return None
        return out if isinstance(out, dict) else None


def new_patch_repo(
    pq_cmd: list[str], case_dir: Path, work: Path, ref: str, log: list[dict[str, Any]]
) -> Patchq:
    """A scratch target at REF and a fresh patch repo holding the old series."""
    target = work / "target"
    scratch_clone(case_dir / "upstream.git", target, ref)
    repo = work / "patches-repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    pq = Patchq(pq_cmd, repo, target, log)
    r = pq("init", "--target", str(target), step="init")
    if r.returncode != 0:
        raise RuntimeError("patchq init: " + error_line(r.stderr))
    src = case_dir / "old-series"
    for f in sorted(src.iterdir()):
        if f.name != "series":
            shutil.copyfile(f, repo / "patches" / f.name)
    return pq


def write_series(pq: Patchq, names: Sequence[str], strip: int) -> None:
    suffix = "" if strip == 1 else f" -p{strip}"
    (pq.patch_repo / "series").write_text("".join(n + suffix + "\n" for n in names))


def apply_on_old(
    pq: Patchq, names: Sequence[str], strip: int, fuzz: int
) -> tuple[dict[str, str], dict[str, str]]:
    """Apply the old series on X, taking out each patch patchq refuses, until the rest
    applies. Returns ({applied patch: exact|offset|fuzz}, {refused patch: error})."""
    todo = list(names)
    refused: dict[str, str] = {}
    while todo:
        write_series(pq, todo, strip)
        r = pq("apply", "--onto", "case-old", "--fuzz", str(fuzz), "--json", step=f"apply-f{fuzz}")
        if r.returncode == 0:
            out = pq.json(r) or {}
            applied = {}
            for p in out.get("patches", []):
                hunks = [
                    h.get("status", "") for f in p.get("files", []) for h in f.get("hunks", [])
                ]
                applied[p["name"]] = fuzz_outcome(hunks)
            for n in todo:
                applied.setdefault(n, "exact")
            return applied, refused
        culprit = patch_at_fault(r.stderr)
        if culprit not in todo:  # an error that names no patch of the series: nothing applies
            for n in todo:
                refused[n] = error_line(r.stderr) or f"exit {r.returncode}"
            return {}, refused
        refused[culprit] = error_line(r.stderr)
        todo.remove(culprit)
    write_series(pq, [], strip)
    return {}, refused


def rebase_onto_new(
    pq: Patchq, fuzz: int | None, limit: int, accept: bool = False
) -> dict[str, Any]:
    """Rebase onto Y, skipping at every stop. Returns the finished run's JSON plus `stops`
    ({patch: error}) and `error` (a failure that was not a stop). ACCEPT passes
    `--accept all`; its exit 1 ("done, review the proposals") is then a finished run."""
    extra = [] if fuzz is None else ["--fuzz", str(fuzz)]
    if accept:
        extra += ["--accept", "all"]
    r = pq("rebase", "--onto", "case-new", *extra, "--json", step="rebase")
    stops: dict[str, str] = {}
    for _ in range(limit + 1):
        if r.returncode != 3:
            break
        out = pq.json(r) or {}
        name = out.get("conflict") or patch_at_fault(r.stderr) or "?"
        stops[name] = error_line(r.stderr)
        r = pq("rebase", "--skip", "--json", step="skip")
    final = pq.json(r) or {}
    final["stops"] = stops
    if accept and r.returncode == 1 and final.get("finished"):
        final["accepted_proposals"] = True
    elif r.returncode != 0:
        final["error"] = error_line(r.stderr) or f"exit {r.returncode}"
        final["rc"] = r.returncode
    return final


def gnu_patch_on_old(
    case_dir: Path, work: Path, names: Sequence[str], strip: int, fuzz: int
) -> tuple[dict[str, str], str]:
    """GNU patch walks the old series on X at -F FUZZ, leaving out what it rejects.
    Returns ({patch: clean|offset|fuzz|failed}, tree id of the result)."""
    tree = work / f"gnu-f{fuzz}"
    scratch_clone(case_dir / "upstream.git", tree, "case-old")
    res = {}
    for n in names:
        p = str(case_dir / "old-series" / n)
        base = ["patch", f"-p{strip}", "-N", "--batch", "--no-backup-if-mismatch", f"-F{fuzz}"]
        dry = run([*base, "--dry-run", "-i", p], cwd=tree)
        if dry.returncode != 0:
            res[n] = "failed"
            continue
        real = run([*base, "-i", p], cwd=tree)
        res[n] = gnu_status(real.stdout) if real.returncode == 0 else "failed"
    git(tree, "add", "-A", "-f")
    tree_id = git(tree, "write-tree").strip()
    shutil.rmtree(tree, ignore_errors=True)
    return res, tree_id


def drive_case(
    pq_cmd: list[str],
    case_dir: Path,
    out: Path,
    rebase_fuzz: str,
    mode: str = "default",
    gnu_on_old: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Steps 1-3 of the module doc for one case, then the region verdict of every method's
    use (refresh_corpus.score_uses); returns its log record. MODE `accept-all` rebases with
    `--accept all` and writes its candidate under OUT/patchq-accept/. GNU_ON_OLD: GNU
    patch's walk of the old series on X from an earlier mode's record (it is the same)."""
    case = json.loads((case_dir / "case.json").read_text())
    name, strip, names = case["name"], int(case["strip"]), list(case["old_series"])
    work = out / "work" / name
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    log: list[dict[str, Any]] = []
    rec: dict[str, Any] = {"name": name, "mode": mode, "patches": names, "commands": log}
    t0 = time.perf_counter()

    if gnu_on_old is None and rc.split_of(name) == "validation":
        # GNU patch's walk on X feeds only the tuning part's per-case table of the old
        # release; a validation case is reported as totals, so it is not run (two checkouts)
        gnu_on_old = {"fuzz0": {}, "fuzz2": {}, "fuzz2_tree": None}
    if gnu_on_old is None:
        gnu0, _ = gnu_patch_on_old(case_dir, work, names, strip, 0)
        gnu2, gnu2_tree = gnu_patch_on_old(case_dir, work, names, strip, 2)
        gnu_on_old = {"fuzz0": gnu0, "fuzz2": gnu2, "fuzz2_tree": gnu2_tree}
    gnu2, gnu2_tree = gnu_on_old["fuzz2"], gnu_on_old["fuzz2_tree"]
    rec["gnu_on_old"] = gnu_on_old

    pq = new_patch_repo(pq_cmd, case_dir, work, "case-old", log)
    applied0, refused0 = apply_on_old(pq, names, strip, 0)
    applied2, refused2, used = applied0, refused0, 0
    if refused0:
        pq = new_patch_repo(pq_cmd, case_dir, work, "case-old", log)
        applied2, refused2 = apply_on_old(pq, names, strip, 2)
        used = 2
    rec["patchq_on_old"] = {
        "fuzz0": {"applied": applied0, "refused": refused0},
        "fuzz2": {"applied": applied2, "refused": refused2},
        "fuzz_used": used,
    }
    same_set = sorted(applied2) == sorted(n for n, s in gnu2.items() if s != "failed")
    tree_same = None
    if same_set and applied2:
        head_tree = git(pq.target, "rev-parse", "HEAD^{tree}").strip()
        tree_same = head_tree == gnu2_tree
        if not tree_same:
            diff = git(pq.target, "diff", "--name-only", "--no-renames", head_tree, gnu2_tree)
            rec["patchq_on_old"]["files_differing_from_gnu"] = diff.split()
    rec["patchq_on_old"]["same_tree_as_gnu_fuzz2"] = tree_same

    fuzz = {"same": used, "none": None}.get(rebase_fuzz, None)
    if rebase_fuzz not in ("same", "none"):
        fuzz = int(rebase_fuzz)
    final: dict[str, Any] = {"patches": [], "stops": {}}
    if applied2:
        final = rebase_onto_new(pq, fuzz, len(names), accept=mode == "accept-all")
    rec["rebase"] = {
        "fuzz": fuzz,
        "finished": bool(final.get("finished")),
        "error": final.get("error"),
        "stops": final.get("stops", {}),
        "outcomes": {p["name"]: p.get("outcome") for p in final.get("patches", [])},
        "methods": {
            p["name"]: [h.get("method") or h.get("status") for h in p.get("hunks", [])]
            for p in final.get("patches", [])
        },
        "hunks": {
            p["name"]: [{k: h.get(k) for k in HUNK_KEYS} for h in p.get("hunks", [])]
            for p in final.get("patches", [])
        },
    }
    per_patch = {}
    for n in names:
        if n in refused2:
            per_patch[n] = {"on_old": "refused", "error": refused2[n]}
            continue
        o = rec["rebase"]["outcomes"].get(n)
        entry: dict[str, Any] = {"on_old": applied2.get(n, "?"), "on_new": o}
        if n in rec["rebase"]["stops"]:
            entry["on_new"] = "stopped, skipped"
            entry["error"] = rec["rebase"]["stops"][n]
        elif o is None:
            entry["on_new"] = "not reached"
            entry["error"] = final.get("error")
        entry["methods"] = rec["rebase"]["methods"].get(n, [])
        entry["hunks"] = rec["rebase"]["hunks"].get(n, [])
        per_patch[n] = entry
    rec["per_patch"] = per_patch

    cand = out / CANDIDATE[mode] / name
    if cand.exists():
        shutil.rmtree(cand)
    cand.mkdir(parents=True)
    if final.get("finished") or not applied2:
        kept = candidate_series(final)
        for n in kept:
            shutil.copyfile(pq.patch_repo / "patches" / n, cand / n)
        (cand / "series").write_text("".join(n + "\n" for n in kept))
        rec["candidate"] = kept
    else:  # patchq did not finish: no series, peers.py counts every patch as failed
        rec["candidate"] = None
    try:
        rec["uses"] = rc.score_uses(
            case_dir, cand, rec["rebase"]["hunks"], rec["rebase"]["outcomes"], work
        )
    except (RuntimeError, OSError, ValueError) as e:  # the region pass failed: counted
        rec["uses"] = []
        rec["uses_error"] = str(e)[:400]
    rec["seconds"] = round(time.perf_counter() - t0, 2)
    shutil.rmtree(work, ignore_errors=True)
    return rec


# ------------------------------------------------------------------------- corpus
# Why a bump is not measured (counted by reason in the report; the rule, not a choice).
DROP_MIRROR = "a mirror is missing"
DROP_MATERIALIZE = "not materialized (a commit or patch file is not in the mirror)"
DROP_OLD = "the old series does not apply on the old release (GNU patch)"
DROP_NEW = "the maintainer's new series does not apply on the new release (GNU patch)"
DROP_DRIVER = "driver failure"
DROP_PEERS = "peers.py failed on the case"
DROP_MARK = "dropped.txt"  # in a case folder: the reason it was dropped at materialization


def mark_dropped(cdir: Path, reason: str) -> None:
    """Leave the drop mark in a case folder of this run's own: never through a link (the
    case folder, or OUT/cases itself, linked to another run's, whose cases this run only
    reads with --no-materialize)."""
    if cdir.is_symlink() or cdir.parent.is_symlink():
        return
    (cdir / DROP_MARK).write_text(reason + "\n")


DROP_LINK = "the case folder is a symbolic link (another run's): not written through"


def load_module(path: Path, name: str) -> Any:
    """A module of the shared corpus folder (materialize.py, peers.py), imported by path."""
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_cases(cases_files: Sequence[Path]) -> list[dict[str, Any]]:
    """Every case of the case files, in file order; a name seen again is left out."""
    import tomllib

    seen: dict[str, dict[str, Any]] = {}
    for cf in cases_files:
        for c in tomllib.loads(cf.read_text()).get("case", []):
            seen.setdefault(str(c["name"]), c)
    return list(seen.values())


def substitute(text: bytes, rule: str | None) -> bytes:
    """The text the downstream build feeds to `patch` (harvest.py's rule: Termux's sed)."""
    if not rule:
        return text
    import harvest  # beside this file

    out: bytes = harvest.substitute(text, rule)
    return out


def materialize_case(corpus: Path, mirrors: Path, case: dict[str, Any], cases_dir: Path) -> str:
    """One case into CASES_DIR/NAME with the shared materialize.py, the series as the build
    feeds them to `patch` (`substitute`, e.g. Termux's placeholders); then GNU patch must
    apply the old series on X and the maintainer's series on Y (materialize.py's --verify
    rule: `-N --batch`, default fuzz). Returns "" or why the case is dropped (DROP_*)."""
    mat = load_module(corpus / "materialize.py", "realworld_materialize")
    orig = getattr(mat, "_realworld_write_series", None) or mat.write_series
    mat._realworld_write_series = orig
    rule = case.get("substitute")

    def write_series(
        dsgit: str, commit: str, patch_dir: str, paths: list[str], dest: str, strip: int
    ) -> tuple[list[str], dict[str, str]]:
        names, texts = orig(dsgit, commit, patch_dir, paths, dest, strip)
        if rule:
            for n in names:
                f = Path(dest) / n
                data = substitute(f.read_bytes(), rule)
                f.write_bytes(data)
                texts[n] = data.decode("utf-8", "replace")
        return names, texts

    mat.write_series = write_series
    cc = getattr(mat, "_realworld_case_commit", None) or mat.case_commit
    mat._realworld_case_commit = cc
    strip_dir = str(case.get("upstream_strip_dir") or "")

    unapplied: list[str] = []
    made: dict[str, str] = {}

    def case_commit(gitdir: str, commit: str, label: str) -> tuple[str, list[str]]:
        c, miss = cc(gitdir, commit, label)
        if strip_dir:
            c = without_dir(Path(gitdir), c, strip_dir)
            side = "old" if commit == case["old_commit"] else "new"
            names = [f"{case['patch_dir']}/{n}" for n in case[f"{side}_series"]]
            u = series_unapplied(Path(gitdir), commit, c, names, int(case.get("strip", 1)))
            if u is not None:
                c = u
                unapplied.append(side)
            # The packaging history is the downstream's own: its patch-queue commits (the
            # `From <sha>` gbp pq and git-dpm write) and, patches-applied, each patch as a
            # commit and then its reversal. Upstream would seem to hold or to have taken
            # and dropped every patch. The two sides become one import commit each (old a
            # root, new on old), as a tarball-imported upstream branch has them.
            c = flat_commit(Path(gitdir), c, made.get("old") if side == "new" else None)
            made[side] = c
        return c, miss

    mat.case_commit = case_commit
    cdir = cases_dir / case["name"]
    if cdir.is_symlink():
        # Another run's case folder linked in: materialize.py would fail to remove it and
        # the drop below would then write (and delete its upstream.git) through the link.
        # The link is replaced by this run's own folder; the folder it named is untouched.
        cdir.unlink()
    try:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            missing, info = mat.materialize(case, str(mirrors), str(cases_dir), False)
        if unapplied and info is not None:
            info["upstream_unapplied"] = unapplied
            (cdir / "case.json").write_text(json.dumps(info, indent=1))
    except (RuntimeError, subprocess.CalledProcessError, KeyError, OSError):
        reason = DROP_MATERIALIZE
    else:
        reason = DROP_MIRROR if missing else ""
        if not reason:
            if series_fails(cdir, info, "old") is not None:
                reason = DROP_OLD
            elif series_fails(cdir, info, "new") is not None:
                reason = DROP_NEW
    if reason:
        cdir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(cdir / "upstream.git", ignore_errors=True)
        (cdir / DROP_MARK).write_text(reason + "\n")
    return reason


def without_dir(gitdir: Path, commit: str, top: str) -> str:
    """A commit on top of COMMIT whose tree is COMMIT's without its top-level folder TOP
    (a Debian packaging repository's debian/: the upstream source is the rest); COMMIT
    itself when it has no TOP."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.update(IDENT)

    def g(*args: str, data: bytes | None = None) -> bytes:
        r = subprocess.run(
            ["git", "--git-dir", str(gitdir), *args], input=data, capture_output=True, env=env
        )
        if r.returncode != 0:
            raise RuntimeError(r.stderr.decode(errors="replace").strip())
        return r.stdout

    entries = [e for e in g("ls-tree", "-z", commit).split(b"\0") if e]
    kept = [e for e in entries if e.split(b"\t", 1)[1] != top.encode()]
    if len(kept) == len(entries):
        return commit
    tree = g("mktree", "-z", data=b"\0".join(kept) + b"\0").decode().strip()
    msg = f"realworld: {commit} without {top}/ (the upstream source of a packaging repo)\n"
    return g("commit-tree", tree, "-p", commit, data=msg.encode()).decode().strip()


def flat_commit(gitdir: Path, commit: str, parent: str | None) -> str:
    """A commit with COMMIT's tree and only PARENT (or none) for history."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.update(IDENT)
    msg = f"realworld: upstream source of {commit} (history flattened)\n"
    r = subprocess.run(
        ["git", "--git-dir", str(gitdir), "commit-tree", f"{commit}^{{tree}}"]
        + (["-p", parent] if parent else []),
        input=msg.encode(),
        capture_output=True,
        env=env,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode(errors="replace").strip())
    return r.stdout.decode().strip()


def series_unapplied(
    gitdir: Path, source: str, commit: str, paths: Sequence[str], strip: int
) -> str | None:
    """A packaging repository that keeps its upstream source with the series applied
    (dgit's and gbp pq's "patches applied" layout): when GNU patch (`-N --batch`, default
    fuzz) does not apply the series PATHS (read at SOURCE) forward on COMMIT's tree, but
    applies it in reverse, last patch first, to the end, returns a commit on top of COMMIT
    whose tree is that reversed tree (the upstream source); else None. Only the files the
    patches name are taken out of the tree."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env.update(IDENT)

    def g(*args: str, data: bytes | None = None, extra: dict[str, str] | None = None) -> bytes:
        r = subprocess.run(
            ["git", "--git-dir", str(gitdir), *args],
            input=data,
            capture_output=True,
            env={**env, **(extra or {})},
        )
        if r.returncode != 0:
            raise RuntimeError(r.stderr.decode(errors="replace").strip())
        return r.stdout

    texts = [g("cat-file", "blob", f"{source}:{p}") for p in paths]
    if not texts:
        return None
    touched: set[str] = set()
    for t in texts:
        touched.update(_touched(t.decode("utf-8", "replace"), strip))
    have = set(g("ls-tree", "-r", "-z", "--name-only", commit).decode(errors="replace").split("\0"))
    present = sorted(touched & have)
    work = Path(tempfile.mkdtemp(prefix="realworld-unapply-"))
    try:
        for sub, reverse in (("fwd", False), ("rev", True)):
            d = work / sub
            d.mkdir()
            if present:
                arch = g("archive", commit, "--", *present)
                subprocess.run(["tar", "-x", "-C", str(d)], input=arch, check=True)
            order = list(reversed(texts)) if reverse else texts
            ok = True
            for i, t in enumerate(order):
                pf = work / f"{sub}-{i}.patch"
                pf.write_bytes(t)
                cmd = ["patch", f"-p{strip}", "-N", "--batch", "--no-backup-if-mismatch"]
                r = subprocess.run(
                    [*cmd, *(["-R"] if reverse else []), "-d", str(d), "-i", str(pf)],
                    capture_output=True,
                )
                if r.returncode != 0:
                    ok = False
                    break
            if not reverse and ok:
                return None  # the series applies forward: the tree is the upstream source
            if reverse and not ok:
                return None
        d = work / "rev"
        index = {"GIT_INDEX_FILE": str(work / "index"), "GIT_WORK_TREE": str(d)}
        g("read-tree", commit, extra=index)
        for f in sorted(touched):
            fp = d / f
            if fp.is_file() and not fp.is_symlink():
                sha = g("hash-object", "-w", "--no-filters", str(fp)).decode().strip()
                mode = "100755" if os.access(fp, os.X_OK) else "100644"
                g("update-index", "--add", "--cacheinfo", f"{mode},{sha},{f}", extra=index)
            elif not fp.exists():
                g("update-index", "--force-remove", "--", f, extra=index)
        tree = g("write-tree", extra=index).decode().strip()
        msg = f"realworld: {commit} with its series reversed (a patches-applied tree)\n"
        return g("commit-tree", tree, "-p", commit, data=msg.encode()).decode().strip()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _touched(text: str, strip: int) -> list[str]:
    """The files a patch names after stripping (materialize.py's rule, without importing
    it here): both names of every `--- `/`+++ ` header pair that are not /dev/null and stay
    inside the tree."""
    out: list[str] = []
    lines = text.splitlines()
    for a, b in itertools.pairwise(lines):
        if not (a.startswith("--- ") and b.startswith("+++ ")):
            continue
        for line in (a, b):
            name = line[4:].split("\t")[0].strip()
            if name == "/dev/null":
                continue
            parts = name.split("/")
            rest = "/".join(parts[strip:]) if len(parts) > strip else parts[-1]
            if rest and ".." not in rest.split("/"):
                out.append(rest)
    return out


def series_fails(case_dir: Path, info: dict[str, Any], side: str) -> str | None:
    """GNU patch (`-pN -N --batch`, default fuzz) walks the OLD series on case-old or the NEW
    one on case-new, on a tree holding the files its headers name (as they are at that
    commit); returns the first patch it rejects, else None."""
    ref, sdir = ("case-old", "old-series") if side == "old" else ("case-new", "new-series")
    gitdir = case_dir / "upstream.git"
    names = list(info[f"{side}_series"])
    touched = sorted({f for n in names for f in info["touched"][side][n]})
    tmp = case_dir / f"verify-{side}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        if touched:
            ls = run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", "--name-only", ref])
            have = set(ls.stdout.split("\0"))
            # a touched path's parent may be a symlink in the tree: take the parents too
            want = set(touched)
            for f in touched:
                parts = f.split("/")
                want.update("/".join(parts[:i]) for i in range(1, len(parts)))
            present = sorted(want & have)
            if present:
                arch = subprocess.run(
                    ["git", "--git-dir", str(gitdir), "archive", ref, "--", *present],
                    capture_output=True,
                )
                if arch.returncode != 0:
                    return names[0] if names else "?"
                subprocess.run(["tar", "-x", "-C", str(tmp)], input=arch.stdout, check=True)
        for n in names:
            r = run(
                [
                    "patch",
                    f"-p{info['strip']}",
                    "-N",
                    "--batch",
                    "--no-backup-if-mismatch",
                    "-d",
                    str(tmp),
                    "-i",
                    str(case_dir / sdir / n),
                ]
            )
            if r.returncode != 0:
                return str(n)
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_peers(
    corpus: Path, case_dir: Path, work: Path, tools: Sequence[str], candidates: dict[str, str]
) -> dict[str, Any]:
    """peers.py's verdicts on one case (its run_case, imported), the work folder removed."""
    import contextlib
    import io

    peers = load_module(corpus / "peers.py", "realworld_peers")
    said = io.StringIO()
    try:
        # peers.py prints notes naming the case (e.g. "no series in …"): kept out of sight
        # for a validation case, shown for a tuning one
        with contextlib.redirect_stdout(said):
            res: dict[str, Any] = peers.run_case(
                str(case_dir), str(work), [*tools, *candidates], candidates
            )
    finally:
        shutil.rmtree(work / case_dir.name, ignore_errors=True)
    res["_printed"] = said.getvalue()
    return res


@dataclass
class Job:
    """What one case's run needs (it runs in a worker process)."""

    name: str
    corpus: Path
    mirrors: Path
    case: dict[str, Any]
    out: Path
    pq_cmd: list[str]
    modes: list[str]
    rebase_fuzz: str
    tools: list[str]
    materialize: bool
    resume: bool
    peers: bool = True


def case_done(out: Path, name: str, modes: Sequence[str]) -> bool:
    base = part_dir(out, name)
    return (base / "peers" / f"{name}.json").is_file() and all(
        log_path(out, name, m).is_file() for m in modes
    )


def run_job(job: Job) -> dict[str, Any]:
    """Materialize (and verify) one case, drive patchq in each mode, score it with peers.py.
    Returns {name, dropped: reason or "", lines: what to print (tuning cases only)}."""
    name, out = job.name, job.out
    t = time.perf_counter()
    sealed = rc.split_of(name) == "validation"
    res: dict[str, Any] = {"name": name, "dropped": "", "lines": []}
    cdir = out / "cases" / name
    if job.resume and case_done(out, name, job.modes):
        return res
    if cdir.is_symlink() and not job.materialize:
        # --no-materialize would write its drop marks through the link into another run's
        # case: refused (materializing replaces the link instead, in materialize_case).
        res["dropped"] = DROP_LINK
        return res
    if (cdir / DROP_MARK).is_file():
        res["dropped"] = (cdir / DROP_MARK).read_text().strip()
        if job.resume or not job.materialize:
            return res
    if job.materialize or not (cdir / "case.json").is_file():
        res["dropped"] = materialize_case(job.corpus, job.mirrors, job.case, out / "cases")
        if res["dropped"]:
            return res
    base = part_dir(out, name)
    gnu: dict[str, Any] | None = None
    rec: dict[str, Any] = {}
    for mode in job.modes:
        if mode == "accept-all" and rec and quiet_rebase(rec):
            rec = same_run(rec, base, name)
            log_path(out, name, mode).write_text(json.dumps(rec, indent=1) + "\n")
            continue
        try:
            rec = drive_case(job.pq_cmd, cdir, base, job.rebase_fuzz, mode, gnu)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
            res["dropped"] = DROP_DRIVER
            res["error"] = "" if sealed else str(e)[:300]
            mark_dropped(cdir, DROP_DRIVER)
            return res
        gnu = rec["gnu_on_old"]
        path = log_path(out, name, mode)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec, indent=1) + "\n")
        if not sealed:
            oc = Counter(
                str(e.get("on_new") if e["on_old"] != "refused" else "refused on X")
                for e in rec["per_patch"].values()
            )
            counts = ", ".join(f"{k} {v}" for k, v in sorted(oc.items()))
            tag = "" if mode == "default" else f" [{mode}]"
            res["lines"].append(f"{name:40} {counts}{tag}  [{time.perf_counter() - t:.0f}s]")
    candidates = {CANDIDATE[m]: f"{base / CANDIDATE[m]}/{{case}}" for m in job.modes}
    if not job.peers:
        return res
    try:
        pr = run_peers(job.corpus, cdir, out / "peers-work", job.tools, candidates)
    except Exception as e:  # noqa: BLE001  (peers.py is third-party code here: any failure)
        res["dropped"] = DROP_PEERS
        res["error"] = "" if sealed else f"{type(e).__name__}: {str(e)[:300]}"
        mark_dropped(cdir, DROP_PEERS)
        return res
    printed = pr.pop("_printed", "")
    if not sealed:
        res["lines"] += printed.splitlines()
    ppath = base / "peers" / f"{name}.json"
    ppath.parent.mkdir(parents=True, exist_ok=True)
    ppath.write_text(json.dumps(pr, indent=1) + "\n")
    if not sealed:
        tools = [*job.tools, *candidates]
        res["lines"].append(
            f"{name:40} "
            + "  ".join(
                f"{tl} {pr['tools'][tl]['applied']}/{pr['patches']}={pr['tools'][tl]['same']}"
                for tl in tools
            )
        )
    res["seconds"] = round(time.perf_counter() - t, 1)
    return res


def quiet_rebase(rec: dict[str, Any]) -> bool:
    """Did the default run's rebase finish without a stop or an error (or was there nothing
    to rebase)? Then it met no proposal, and `--accept all` cannot change anything."""
    reb = rec["rebase"]
    applied = rec["patchq_on_old"]["fuzz2"]["applied"]
    return not applied or (bool(reb["finished"]) and not reb["stops"] and not reb["error"])


def same_run(rec: dict[str, Any], base: Path, name: str) -> dict[str, Any]:
    """The `--accept all` record of a case whose default rebase met no proposal: the default
    run's, its candidate copied (running it again would give the same result)."""
    dst = base / CANDIDATE["accept-all"] / name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(base / CANDIDATE["default"] / name, dst)
    return {**rec, "mode": "accept-all", "same_as_default_run": True}


def first_by_hash(names: Sequence[str], k: int | None) -> list[str]:
    """The first K names ordered by the sha256 of the name (the rule for a prefix of a part
    when the whole part cannot be run); all of them, in that order, when K is None."""
    ordered = sorted(names, key=lambda n: hashlib.sha256(n.encode("utf-8")).hexdigest())
    return ordered if k is None else ordered[:k]


def merge_peers(out: Path, split: str, names: Sequence[str], tools: Sequence[str]) -> None:
    """The per-case peers.py results of one part, in one peers.json as peers.py writes it."""
    base = out / "sealed" if split == "validation" else out
    cases = [json.loads((base / "peers" / f"{n}.json").read_text()) for n in names]
    (base / "peers.json").write_text(json.dumps({"tools": list(tools), "cases": cases}) + "\n")


def verify_failed(lines: Iterable[str]) -> set[str]:
    """The cases materialize.py --verify wrote but found broken (`OK   NAME … VERIFY
    FAILED`: a series does not apply where it should); peers.py cannot score them."""
    out = set()
    for ln in lines:
        parts = ln.split()
        if len(parts) > 1 and parts[0] == "OK" and ln.rstrip().endswith("VERIFY FAILED"):
            out.add(parts[1])
    return out


# ------------------------------------------------------------------------- report
# The case-name prefixes of the corpus, for the tables (else the mirror's owner is shown).
# case-name prefix -> distribution (the shared cases and bench/harvest.py's prefixes)
DOWNSTREAMS = {
    "br": "Buildroot",
    "tx": "Termux",
    "ms": "MSYS2",
    "mw": "MSYS2",
    "le": "LibreELEC",
    "sp": "Spack",
    "deb": "Debian",
    "db": "Debian",
}


def downstream_of(case: dict[str, Any]) -> str:
    """The distribution a case comes from, by its name's prefix (`deb-openssh-…`: Debian)."""
    prefix = str(case["name"]).split("-", 1)[0]
    return DOWNSTREAMS.get(prefix, str(case["downstream_repo"]).split("/")[0])


def _cell_same(t: dict[str, Any]) -> str:
    return f"{t['same_kept']}+{t['same_dropped']} = {t['same']} ({t['applied_different']})"


def kind_of(case: dict[str, Any], name: str) -> str:
    """The human's change to a patch; a drop is split by what is true of it on Y."""
    c: str = case["human_change"][name]
    if c != "dropped":
        return c
    f = case["facts"][name]
    if f["reverse_applies_on_Y"]:
        return "dropped: already in Y"
    if f["applies_alone_on_Y"]:
        return "dropped: still applies on Y"
    return "dropped: git apply fails on Y"


def row(*cells: object) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def totals(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> dict[str, Counter[str]]:
    """Each tool's sums over the cases of peers.py's per-case counts."""
    keys = ("same", "same_kept", "same_dropped", "applied", "applied_different", "matched")
    tot: dict[str, Counter[str]] = {t: Counter() for t in tools}
    for c in cases:
        for t in tools:
            for k in keys:
                tot[t][k] += c["tools"][t][k]
    return tot


def summary_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    tot = totals(cases, tools)
    npatch = sum(c["patches"] for c in cases)
    nkept = sum(1 for c in cases for n in c["successor"] if c["successor"][n])
    lines = [row("", *tools), "|---|" + "---:|" * len(tools)]
    rows = (
        (f"same as the maintainer (of {npatch})", "same", True),
        (f"— kept patches right (of {nkept})", "same_kept", False),
        (f"— dropped patches left out (of {npatch - nkept})", "same_dropped", False),
        ("applied but not the maintainer's result", "applied_different", False),
        ("applied on Y", "applied", False),
        ("patches whose files equal the maintainer's after the series", "matched", False),
    )
    for label, key, bold in rows:
        lines.append(row(label, *((f"**{tot[t][key]}**" if bold else tot[t][key]) for t in tools)))
    return lines


def case_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    lines = [row("case", "downstream", "N", "kept", "dropped", *tools)]
    lines.append("|---|---|---:|---:|---:|" + "---:|" * len(tools))
    for c in cases:
        nk = sum(1 for n in c["successor"] if c["successor"][n])
        lines.append(
            row(
                c["name"],
                downstream_of(c),
                c["patches"],
                nk,
                c["patches"] - nk,
                *(_cell_same(c["tools"][t]) for t in tools),
            )
        )
    tot = totals(cases, tools)
    npatch = sum(c["patches"] for c in cases)
    nkept = sum(1 for c in cases for n in c["successor"] if c["successor"][n])
    cells = (f"**{_cell_same(tot[t])}**" for t in tools)
    lines.append(row("**total**", "", npatch, nkept, npatch - nkept, *cells))
    return lines


def downstream_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    lines = [row("downstream", "cases", "N", *tools), "|---|---:|---:|" + "---:|" * len(tools)]
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cases:
        by[downstream_of(c)].append(c)
    for ds, cs in sorted(by.items()):
        tot = totals(cs, tools)
        cells = (f"{tot[t]['same']} ({tot[t]['applied_different']})" for t in tools)
        repos = ", ".join(sorted({f"`{c['downstream_repo']}`" for c in cs}))
        lines.append(row(f"{ds} ({repos})", len(cs), sum(c["patches"] for c in cs), *cells))
    return lines


def kind_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    lines = [row("human change", "patches", *tools), "|---|---:|" + "---:|" * len(tools)]
    kinds = [*CLASSES[:-1], "dropped: already in Y", "dropped: git apply fails on Y"]
    kinds.append("dropped: still applies on Y")
    for k in kinds:
        ps = [(c, n) for c in cases for n in c["human_change"] if kind_of(c, n) == k]
        if not ps:
            continue
        cells = []
        for t in tools:
            applied = sum(
                1 for c, n in ps if c["tools"][t]["status"][n] not in ("failed", "already")
            )
            same = sum(1 for c, n in ps if c["tools"][t]["same_as_human"][n])
            cells.append(f"{applied} / {same}")
        lines.append(row(k, len(ps), *cells))
    return lines


def old_release_table(
    cases: Sequence[dict[str, Any]], logs: dict[str, dict[str, Any]]
) -> list[str]:
    lines = [row("case", "N", "patchq fuzz 0", "patchq fuzz 2", "GNU patch -F0", "GNU patch -F2")]
    lines[0] += " same tree |"
    lines.append("|---|---:|---:|---:|---:|---:|---|")
    sums: Counter[str] = Counter()
    for c in cases:
        lg = logs.get(c["name"])
        if not lg:
            continue
        po, go = lg["patchq_on_old"], lg["gnu_on_old"]
        counts = {
            "pq0": len(po["fuzz0"]["applied"]),
            "pq2": len(po["fuzz2"]["applied"]),
            "gnu0": sum(1 for s in go["fuzz0"].values() if s != "failed"),
            "gnu2": sum(1 for s in go["fuzz2"].values() if s != "failed"),
        }
        sums.update(counts)
        sums["n"] += c["patches"]
        same = po.get("same_tree_as_gnu_fuzz2")
        if same is None:
            same_s = "— (different patches applied)"
        elif same:
            same_s = "yes"
        else:
            same_s = "no: " + ", ".join(po.get("files_differing_from_gnu", [])[:4])
        lines.append(row(c["name"], c["patches"], *counts.values(), same_s))
    bold = (f"**{sums[k]}**" for k in ("pq0", "pq2", "gnu0", "gnu2"))
    lines.append(row("**total**", sums["n"], *bold, ""))
    return lines


def outcome_lines(logs: dict[str, dict[str, Any]]) -> list[str]:
    outcomes: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    for lg in logs.values():
        for e in lg["per_patch"].values():
            outcomes["refused on X" if e["on_old"] == "refused" else str(e["on_new"])] += 1
            methods.update(str(m) for m in e.get("methods", []))
    lines = [row("outcome", "patches"), "|---|---:|"]
    lines += [row(k, v) for k, v in outcomes.most_common()]
    lines.append("")
    lines.append(
        "Hunk statuses of the patches rebased (every hunk, those of skipped patches too): "
        + ", ".join(f"{k} {v}" for k, v in methods.most_common())
        + "."
    )
    return lines


def failure_groups(logs: dict[str, dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """Every error patchq gave, keyed by (where, cause), with the patches that got it."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for lg in logs.values():
        for n, e in lg["per_patch"].items():
            if not e.get("error"):
                continue
            where = "X (apply)" if e["on_old"] == "refused" else "Y (rebase)"
            cause = cause_of(e["error"])
            trouble = hunk_trouble(e.get("hunks", []))
            if trouble:
                cause += " — hunks: " + trouble
            groups[(where, cause)].append(f"{lg['name']}/{n}")
    return groups


def failure_table(logs: dict[str, dict[str, Any]]) -> list[str]:
    lines = [row("where", "cause", "patches", "examples"), "|---|---|---:|---|"]
    groups = failure_groups(logs)
    for (where, cause), ps in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        examples = ", ".join(f"`{p}`" for p in ps[:3]) + (" …" if len(ps) > 3 else "")
        lines.append(row(where, cause.replace("|", "\\|"), len(ps), examples))
    return lines


def per_patch_tables(
    cases: Sequence[dict[str, Any]], logs: dict[str, dict[str, Any]], tools: Sequence[str]
) -> list[str]:
    lines: list[str] = []
    for c in cases:
        lg = logs.get(c["name"])
        if not lg:
            continue
        lines += [f"### {c['name']}", ""]
        lines.append(row("patch", "human", "patchq on X", "patchq on Y", "GNU on X", *tools))
        lines.append("|---|---|---|---|---|" + "---|" * len(tools))
        go = lg["gnu_on_old"]
        for n in c["human_change"]:
            e = lg["per_patch"][n]
            on_y = ""
            if e["on_old"] != "refused":
                on_y = f"{e['on_new']} {'/'.join(str(m) for m in e.get('methods', []))}".strip()
            cells = []
            for t in tools:
                ok = " ok" if c["tools"][t]["same_as_human"][n] else ""
                cells.append(f"{c['tools'][t]['status'][n]}{ok}")
            gnu = f"{go['fuzz0'][n]} / {go['fuzz2'][n]}"
            lines.append(row(n, c["human_change"][n], e["on_old"], on_y, gnu, *cells))
        lines.append("")
    return lines


@dataclass
class Part:
    """The measured cases of one split: peers.py's JSON (patchq among the tools as the
    candidates `patchq` and `patchq-accept`) and patchq's logs per mode, by case name."""

    peers: dict[str, Any]
    logs: dict[str, dict[str, Any]]
    accept_logs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def cases(self) -> list[dict[str, Any]]:
        return list(self.peers.get("cases", []))


def part_tallies(part: Part) -> dict[str, rc.Tally]:
    """Every tool's verdict totals over a part (refresh_corpus: same, wrong, stops, cost);
    patchq's stops come from its logs, and a default-mode stop that the `--accept all` run
    got right is half a miss."""
    out: dict[str, rc.Tally] = {}
    for tool in part.peers.get("tools", []):
        t = rc.Tally()
        for c in part.cases:
            pp = None
            if tool == CANDIDATE["default"]:
                pp = part.logs.get(c["name"], {}).get("per_patch", {})
            elif tool == CANDIDATE["accept-all"]:
                pp = part.accept_logs.get(c["name"], {}).get("per_patch", {})
            verdicts = rc.case_verdicts(c, tool, pp)
            accepted: dict[str, str] = {}
            if tool == CANDIDATE["default"] and CANDIDATE["accept-all"] in c["tools"]:
                app = part.accept_logs.get(c["name"], {}).get("per_patch", {})
                accepted = rc.case_verdicts(c, CANDIDATE["accept-all"], app)
            for n, v in verdicts.items():
                t.add(v, accept_right=v == "stop" and accepted.get(n) == "same")
        out[tool] = t
    return out


def cost_table(parts: Sequence[tuple[str, Part]]) -> list[str]:
    """Per split and tool: same, wrong (applied / left out silently), stops, failures, the
    half-misses, misses and cost = misses + 3 × wrong."""
    lines = [
        row(
            "split",
            "tool",
            "patches",
            "same as the maintainer",
            "wrong: applied",
            "wrong: left out silently",
            "stops",
            "failed",
            "stops right with --accept all (½ miss)",
            "misses",
            "**cost**",
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, part in parts:
        for tool, t in part_tallies(part).items():
            lines.append(
                row(
                    label,
                    tool,
                    t.patches,
                    t.same,
                    t.wrong,
                    t.dropped_wrong,
                    t.stops,
                    t.failed,
                    t.half,
                    rc.fmt_num(t.misses),
                    f"**{rc.fmt_num(t.cost)}**",
                )
            )
    return lines


def part_uses(part: Part) -> list[dict[str, Any]]:
    """The method uses the precision is computed from: the `--accept all` run's where it ran
    (in the default mode a proposed method stops and is not seen), else the default run's."""
    logs = part.accept_logs if part.accept_logs else part.logs
    return [u for lg in logs.values() for u in lg.get("uses", [])]


def precision_section(
    parts: Sequence[tuple[str, Part]], accept_status: str, level: str = "##"
) -> list[str]:
    """The per-method tables (validation first: the tiers are fixed from it)."""
    rows = {label: rc.precision_rows(part_uses(p)) for label, p in parts}
    val = rows.get("validation", {})
    tiers = {m: rc.tier(m, val.get(m)) for label in rows for m in rows[label]}
    src = (
        "the `--accept all` run (every proposal taken, so every method's use is seen)"
        if accept_status == "run"
        else "the default run (patchq's `rebase` has no `--accept` yet, so every method "
        "still acts alone and every use is seen there)"
    )
    L = [
        f"Uses are taken from {src}. A use is right when the region its hunk produced (the "
        "lines of patchq's file covered by the refreshed hunk's post-image) equals the "
        "maintainer's refreshed file at the aligned place (bench/refresh_corpus.py's docstring "
        "has the rule); *unscored*: the region or the maintainer's file could not be found. "
        "precision = right / (right + wrong). Besides the methods DESIGN §4.1 makes automatic "
        f'always ({", ".join(rc.ALWAYS_AUTOMATIC)}), a method reaches "automatic" only at '
        f"≥ {100 * rc.EARN_PRECISION:.0f}% precision over ≥ {rc.EARN_USES} scored uses on the "
        "**validation** split; with fewer uses it stays proposed.",
        "",
    ]
    failed = sum(
        1 for _, p in parts for lg in (p.accept_logs or p.logs).values() if lg.get("uses_error")
    )
    if failed:
        L += [f"In {failed} cases the region pass failed: their uses are not counted.", ""]
    for label, _ in parts:
        n_cases = len(dict(parts)[label].cases)
        n_patch = sum(c["patches"] for c in dict(parts)[label].cases)
        L += [f"{level} {label} split ({n_cases} cases, {n_patch} old-series patches)", ""]
        L += rc.precision_table(rows[label], tiers if label == "validation" else None) + [""]
    return L


def skipped_lines(skipped: Sequence[str]) -> list[str]:
    """The bumps not measured, counted by reason and split; named for the tuning part only
    (SKIPPED: `NAME: reason`)."""
    count: Counter[tuple[str, str]] = Counter()
    named: list[str] = []
    for s in skipped:
        name, _, reason = s.partition(": ")
        split = rc.split_of(name)
        count[(reason.split(" — ")[0], split)] += 1
        if split == "tuning":
            named.append(s)
    L = ["Not measured, by reason (the rule drops them; none is chosen by hand):", ""]
    L += [row("reason", "tuning", "validation"), "|---|---:|---:|"]
    for reason in sorted({r for r, _ in count}):
        L.append(row(reason, count[(reason, "tuning")], count[(reason, "validation")]))
    L.append("")
    if named:
        L += ["Tuning cases not measured:", ""] + [f"- `{s}`" for s in named] + [""]
    return L


def build_report(
    peers: dict[str, Any],
    logs: dict[str, dict[str, Any]],
    command: str,
    date: str,
    skipped: Sequence[str],
    validation: Part | None = None,
    accept_logs: dict[str, dict[str, Any]] | None = None,
    accept_status: str = "not asked",
    brief: bool = False,
) -> str:
    """REALWORLD.md from peers.py's JSON (every tool, patchq as a candidate) and patchq's logs:
    PEERS/LOGS are the tuning part, shown per case and per patch; VALIDATION is shown as
    totals only."""
    tuning = Part(peers, logs, accept_logs or {})
    tools: list[str] = list(peers["tools"])
    cases: list[dict[str, Any]] = peers["cases"]
    everything = cases + (validation.cases if validation else [])
    npatch = sum(c["patches"] for c in everything)
    downstreams = sorted({c["downstream_repo"] for c in everything})
    L = ["# patchq on real series refreshes", ""]
    L += [f"Measured {date} with:", "", "```", command, "```", ""]
    L.append(
        f"{len(everything)} cases, {npatch} old-series patches, from {len(downstreams)} "
        f"downstream repositories ({', '.join(f'`{d}`' for d in downstreams)}). Each old series "
        "is applied "
        "on the old upstream release X and carried to the new release Y; the result is "
        "compared, patch by patch, with the refresh the downstream maintainer committed. "
        "patchq: `apply --onto X` (with `--fuzz 2` when fuzz 0 refuses a patch; a patch "
        "refused even then is left out), then `rebase --onto Y` and `rebase --skip` at every "
        "stop (a stop is never credited as a refresh; a skipped patch counts as dropped). "
        "Peers: each walks the old series on Y and leaves out what it cannot apply "
        "(`../shared/realworld/peers.py`, which also scores patchq's refreshed series). "
        "A dropped patch is right when the maintainer dropped it too."
    )
    L.append("")
    L.append(
        f"Split (bench/refresh_corpus.py, fixed by the sha256 of the case name): "
        f"{len(cases)} tuning cases ({sum(c['patches'] for c in cases)} patches), "
        + (
            f"{len(validation.cases)} validation cases "
            f"({sum(c['patches'] for c in validation.cases)} patches)"
            if validation
            else "no validation case in this run"
        )
        + ". Per-case and per-patch results below are of the tuning part only; the "
        "validation part is reported as totals. `--accept all` mode: "
        + {
            "run": "run (column `patchq-accept`).",
            "unsupported": "unsupported (this patchq's `rebase --help` has no `--accept`).",
        }.get(accept_status, "not run.")
    )
    L.append("")
    if skipped:
        L += skipped_lines(skipped)
    parts = [("tuning", tuning)] if cases else []
    if validation is not None and validation.cases:
        parts.append(("validation", validation))
    L += ["## Cost per tool", ""]
    L.append(
        "Per patch, a tool is *same* (handled the maintainer's way), *wrong* (applied but not "
        "the maintainer's result, or left out without a stop although the maintainer kept "
        "it), or a *miss* (a stop or a failure). A patchq stop that the `--accept all` run "
        "gets right is half a miss. **cost = misses + 3 × wrong** (DESIGN §4.1)."
    )
    L += [""] + cost_table(parts) + [""]
    L += ["## Precision per placement method (patchq)", ""]
    L += precision_section(parts, accept_status, "###")
    if not cases:
        return "\n".join(L).rstrip() + "\n"
    L += ["## Tuning part: summary", ""] + summary_table(cases, tools) + [""]
    if brief:  # totals only: the per-case and per-patch tables stay in the full report
        L += ["## Per downstream: same as the maintainer (applied but not the maintainer's)", ""]
        L += downstream_table(cases, tools) + [""]
        L += ["## Per kind of change the maintainer made (applied on Y / same)", ""]
        L += kind_table(cases, tools) + [""]
        L += ["## patchq's outcome per patch on Y", ""] + outcome_lines(logs) + [""]
        return "\n".join(L).rstrip() + "\n"
    L += ["## Per case: same as the maintainer", ""]
    L.append(
        "Cells: kept patches right + dropped patches left out = same; in brackets, patches the "
        "tool applied whose result is not the maintainer's (a wrong refresh, or a patch the "
        "maintainer dropped)."
    )
    L += [""] + case_table(cases, tools) + [""]
    L += ["## Per downstream: same as the maintainer (applied but not the maintainer's)", ""]
    L += downstream_table(cases, tools) + [""]
    L += ["## Per kind of change the maintainer made (applied on Y / same as the maintainer)", ""]
    L += kind_table(cases, tools) + [""]
    L += ["## The old series on the old release X", ""]
    L.append(
        "Patches applied on X, of N: patchq `apply` at fuzz 0 and with `--fuzz 2` (each patch "
        "it refuses taken out and the rest applied again) beside GNU patch walking the same "
        "series at `-F0` and at its default fuzz 2. *same tree*: patchq's fuzz-2 result equals "
        "GNU patch's (compared only where both applied the same patches)."
    )
    L += [""] + old_release_table(cases, logs) + [""]
    L += ["## patchq's outcome per patch on Y", ""] + outcome_lines(logs) + [""]
    L += ["## patchq's failures by cause", ""]
    L.append(
        "Every error patchq gave, on X (a patch `apply` refused) or on Y (a rebase stop, then "
        "skipped), grouped by what it says, with the statuses and reasons of the hunks that "
        "did not place. The full text of each is in the case's log (OUT/logs/CASE.json)."
    )
    L += [""] + failure_table(logs) + [""]
    L += ["## Per patch", ""]
    L.append(
        "patchq: how it applied on X (exact / offset / fuzz / refused), its outcome on Y and "
        "the status of each hunk; GNU: GNU patch on X at -F0 / -F2; then every tool's result "
        "on Y as peers.py saw it (`ok` = same as the maintainer; for patchq `already` = left "
        "out of its series)."
    )
    L += [""] + per_patch_tables(cases, logs, tools)
    return "\n".join(L).rstrip() + "\n"


def precision_md(
    parts: Sequence[tuple[str, Part]],
    command: str,
    revision: Sequence[str],
    patchq: str,
    date: str,
    accept_status: str,
) -> str:
    """bench/PRECISION.md: the per-method tables and what produced them."""
    L = ["# Placement-method precision on real refreshes (DESIGN §4.1)", ""]
    L += ["Produced by:", "", "```", command, "```", ""]
    L += [f"Measured {date} with {patchq}. Corpus revision (case files, their sha256):", ""]
    L += [f"- {r}" for r in revision] + [""]
    L.append(
        '**Methods reach "automatic" only at ≥ 97% precision over ≥ 30 validation uses** '
        "(DESIGN §4.1); the validation table is the one the tiers are fixed from, the tuning "
        "table may be read per patch and is where methods are tuned."
    )
    L.append("")
    if any("realworld/cases.toml" in r or "realworld-cases.toml" in r for r in revision):
        L.append(
            "Caveat: the cases of `../shared/realworld/cases.toml` and "
            "`bench/realworld-cases.toml` were read patch by patch and tuned on before the "
            "split existed, so their validation part is not unseen data; only a harvested "
            "manifest's validation part is."
        )
        L.append("")
    L += precision_section(parts, accept_status)
    return "\n".join(L).rstrip() + "\n"


def corpus_revision(cases_files: Sequence[Path]) -> list[str]:
    """Each case file: its path, the sha256 of its bytes, its case count and, inside a git
    checkout, the last commit that touched it."""
    out = []
    for f in cases_files:
        try:
            data = f.read_bytes()
        except OSError:
            continue
        n = len(re.findall(rb"^\[\[case\]\]", data, re.M))
        shown = str(f)
        if f.is_relative_to(HERE.parent):
            shown = str(f.relative_to(HERE.parent))
        line = f"`{shown}`: sha256 {hashlib.sha256(data).hexdigest()[:16]}, {n} cases"
        r = run(["git", "-C", str(f.parent), "log", "-1", "--format=%h", "--", f.name])
        if r.returncode == 0 and r.stdout.strip():
            line += f", last commit {r.stdout.strip()}"
        out.append(line)
    return out


# ------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="realworld.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--mirrors",
        type=Path,
        default=Path("/work/.mirror"),
        help="folder of local git mirrors, OWNER+NAME/repo (default: %(default)s)",
    )
    ap.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help="the shared corpus folder with materialize.py and peers.py (default: %(default)s)",
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
        help="which part of the corpus to run (refresh_corpus.split_of: sha256 of the case "
        "name); the validation part is only ever reported as totals (default: %(default)s)",
    )
    ap.add_argument(
        "--mode",
        choices=["both", "default", "accept-all"],
        default="both",
        help="patchq's rebase as it is, with `--accept all` (when its rebase has the option; "
        "else reported unsupported), or both (default: %(default)s)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path("/tmp/realworld-patchq"),
        help="work folder: cases/, patchq/ (candidates), logs/, peers.json, sealed/ (the "
        "validation part's raw results, not to be read) (default: %(default)s)",
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
        help="judge the method uses of the last run under OUT again (refresh_corpus.score_uses "
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
    a = ap.parse_args(argv)

    pq_cmd = shlex.split(a.patchq) if a.patchq else [sys.executable, "-m", "patchq"]
    out: Path = a.out.resolve()
    if a.rescore:
        return rescore(out, a.md, a.precision_md, a.brief_md)
    if a.report_only:
        return write_report(out, a.md, a.precision_md, a.brief_md)
    trouble = runs_anywhere(pq_cmd)
    if trouble is not None:
        # Every case would fail as a "driver failure" (sealed: no reason shown for the
        # validation part) and leave its drop mark: refused before anything is written.
        print(f"realworld.py: --patchq {a.patchq or ''!r}: {trouble}", file=sys.stderr)
        return 2
    cases_dir = out / "cases"
    if cases_dir.is_symlink() and not a.no_materialize:
        print(
            f"realworld.py: {cases_dir} links to {os.path.realpath(cases_dir)}: materializing "
            "would write into that run's cases — give --no-materialize to reuse them, or "
            "another --out",
            file=sys.stderr,
        )
        return 2
    cases_dir.mkdir(parents=True, exist_ok=True)
    for exe in ("git", "patch", *(("wiggle",) if "wiggle" in a.tools else ())):
        if not shutil.which(exe):
            print(f"realworld.py: {exe} not found (apt-get install patch wiggle)", file=sys.stderr)
            return 2
    if not (a.corpus / "materialize.py").is_file():
        print(f"realworld.py: no materialize.py in {a.corpus} (--corpus)", file=sys.stderr)
        return 2
    accept_status = "not asked"
    modes = [m for m in MODES if a.mode in ("both", m)]
    if "accept-all" in modes:
        accept_status = "run" if supports_accept(pq_cmd) else "unsupported"
        if accept_status == "unsupported":
            modes.remove("accept-all")
            print("accept-all mode: unsupported (patchq rebase has no --accept)", flush=True)
    if not modes:
        print("realworld.py: no mode to run (--mode accept-all is unsupported)", file=sys.stderr)
        return 1
    skipped: list[str] = []
    cases_files = a.cases if a.cases else [a.corpus / "cases.toml", LOCAL_CASES]
    cases_files = [c.resolve() for c in cases_files if c.is_file()]
    for cf in cases_files:
        for msg in split_disagreements(cf):
            print(f"realworld.py: {msg}", file=sys.stderr)
    by_name = {str(c["name"]): c for c in load_cases(cases_files)}
    names = [n for n in by_name if not a.only or n in a.only]
    names = rc.select(names, a.split)
    if a.limit is not None or a.tuning_limit is not None:
        tun = [n for n in names if rc.split_of(n) == "tuning"]
        val = [n for n in names if rc.split_of(n) == "validation"]
        tlim = a.tuning_limit if a.tuning_limit is not None else a.limit
        names = first_by_hash(val, a.limit) + first_by_hash(tun, tlim)
    if not names:
        print("realworld.py: no case to run (see --only, --split)", file=sys.stderr)
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
    done_set: set[str] = set()
    val_done = 0
    with concurrent.futures.ProcessPoolExecutor(max_workers=a.jobs) as pool:
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
    done = [n for n in names if n in done_set]
    if a.no_peers:
        return 0
    cand_tools = [*tools, *(CANDIDATE[m] for m in modes)]
    for split in rc.SPLITS:
        part = [n for n in done if rc.split_of(n) == split]
        if part:
            merge_peers(out, split, part, cand_tools)
    command = " ".join(
        shlex.quote(x)
        for x in ["bench/realworld.py", *(argv if argv is not None else sys.argv[1:])]
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
        print(f"realworld.py: no finished run in {out}: {e}", file=sys.stderr)
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
    again = f"bench/realworld.py --out {shlex.quote(str(out))} --rescore"
    commit = run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"]).stdout.strip()
    run_rec["command"] = run_rec["command"].split("\n")[0] + f"\n{again}  # at {commit}"
    (out / "run.json").write_text(json.dumps(run_rec, indent=1) + "\n")
    return write_report(out, md, precision, brief)


def split_disagreements(cases_file: Path) -> list[str]:
    """A case file may carry its own `split` per case (a harvested manifest does): where
    it disagrees with refresh_corpus.split_of, say so (the name's hash decides here)."""
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


def part_dir(out: Path, name: str) -> Path:
    """Where a case's raw results go: OUT, or OUT/sealed for a validation case."""
    return out / "sealed" if rc.split_of(name) == "validation" else out


def log_path(out: Path, name: str, mode: str) -> Path:
    suffix = "" if mode == "default" else f".{mode}"
    return part_dir(out, name) / "logs" / f"{name}{suffix}.json"


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
    commit = run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"])
    src = run(["git", "-C", str(HERE.parent), "log", "-1", "--format=%h", "--", "src"])
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
        print(f"realworld.py: no finished run in {out}: {e}", file=sys.stderr)
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
        accept,
    )
    p_path = precision or (out / "PRECISION.md")
    p_path.write_text(ptext)
    print(f"wrote {p_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
