"""The realworld bench's cases: loading the case files, materializing a case from the
mirrors, the rules that drop one, and one case's job (driver, peers, verdicts).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchq_bench.harvest.mirrors import substitute
from patchq_bench.realworld import scoring as rc  # the split, cost and region rules
from patchq_bench.realworld.driver import CANDIDATE, IDENT, SCRUB, drive_case, run

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


def materialize_case(corpus: Path, mirrors: Path, case: dict[str, Any], cases_dir: Path) -> str:
    """One case into CASES_DIR/NAME with the shared materialize.py, the series as the build
    feeds them to `patch` (`substitute`, e.g. Termux's placeholders); then GNU patch must
    apply the old series on X and the maintainer's series on Y (materialize.py's --verify
    rule: `-N --batch`, default fuzz). Returns "" or why the case is dropped (DROP_*)."""
    mat = load_module(corpus / "materialize.py", "realworld_materialize")
    orig = getattr(mat, "_realworld_write_series", None) or mat.write_series
    mat._realworld_write_series = orig
    rule = case.get("substitute")

    def write_series(*args: Any, **kwargs: Any) -> tuple[list[str], dict[str, str]]:
        """materialize.py's write_series(dsgit, commit, patch_dir, paths, dest, strip),
        then the downstream's substitution on each file it wrote into `dest`."""
        names, texts = orig(*args, **kwargs)
        dest = kwargs["dest"] if "dest" in kwargs else args[4]
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


def part_dir(out: Path, name: str) -> Path:
    """Where a case's raw results go: OUT, or OUT/sealed for a validation case."""
    return out / "sealed" if rc.split_of(name) == "validation" else out


def log_path(out: Path, name: str, mode: str) -> Path:
    suffix = "" if mode == "default" else f".{mode}"
    return part_dir(out, name) / "logs" / f"{name}{suffix}.json"


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
            rec = drive_case(job.pq_cmd, cdir, base, job.rebase_fuzz, mode, gnu_on_old=gnu)
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
