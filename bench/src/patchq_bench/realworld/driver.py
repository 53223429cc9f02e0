"""The realworld bench's driver: patchq run on one case as a user runs it (apply the old
series on the old release, rebase onto the new one, in each mode), GNU patch beside it,
and the pure helpers that read what the runs printed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from patchq_bench.realworld import scoring as rc  # the split, cost and region rules

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
    *,
    gnu_on_old: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Steps 1-3 of the module doc for one case, then the region verdict of every method's
    use (scoring.score_uses); returns its log record. MODE `accept-all` rebases with
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
