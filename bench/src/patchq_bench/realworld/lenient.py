"""patchq against GNU patch on every patch of the real-world corpus, on both releases.

For each case of --cases (realworld's OUT/cases, made by the shared corpus's materialize.py) and
each of its two releases (the old series on X, the new series on Y), the series is
walked patch by patch on a checkout of the release. GNU patch (`patch -p1 -N --batch`)
applies each patch at fuzz 0, or else with `--fuzz 2`; patchq applies the same patch to
the same tree (`patchq apply`, with `--fuzz 2` only where GNU patch needed fuzz) and the
two trees are compared. A patch GNU patch cannot apply is skipped by both, as a
distribution's build would stop there. The table says, per case and release: patches,
how GNU patch took them, how many patchq applied to the same bytes, how many it refused
(with the reason) and how many differ. Target: differing = 0.

Then every series is applied whole with `patchq apply` on its release (with `--fuzz 2`
where GNU patch needed fuzz for any patch), and its tree compared with GNU patch's.

Usage: patchq-bench lenient [--cases DIR] [--only NAME…]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from patchq_bench.paths import WORK_ENV, path_option

PATCHQ = [sys.executable, "-m", "patchq"]
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=ENV)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} in {cwd}: {proc.stderr.strip()}")
    return proc


def git(cwd: Path, *args: str) -> str:
    return run(["git", *args], cwd).stdout.strip()


@dataclass
class Row:
    case: str
    release: str
    patches: int = 0
    gnu_exact: int = 0
    gnu_fuzz: int = 0
    gnu_fails: int = 0
    same: int = 0
    refused: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    hinted: int = 0  # of the GNU-fuzz patches, how many patchq's fuzz-0 error named fuzz 2
    normalised: int = 0  # patches that needed a normalisation
    whole: str = ""  # the whole series with `patchq apply`: same / differs / refused


def gnu(tree: Path, patch: Path, fuzz: int, dry: bool) -> bool:
    cmd = ["patch", "-p1", "-N", "--batch", "--no-backup-if-mismatch", "-r", "-"]
    cmd += ["-F0"] if fuzz == 0 else ["--fuzz", str(fuzz)]
    if dry:
        cmd.append("--dry-run")
    with patch.open("rb") as f:
        proc = subprocess.run(cmd, cwd=tree, stdin=f, capture_output=True)
    return proc.returncode == 0


def tree_of(work: Path) -> str:
    git(work, "add", "-A")
    return git(work, "write-tree")


def patchq_apply(
    work: Path, prepo: Path, names: list[str], fuzz: int, base: str
) -> tuple[str | None, str]:
    """Apply `names` from the patch repo onto `base` with patchq: (tree or None, error)."""
    (prepo / "series").write_text("".join(n + "\n" for n in names))
    lock = prepo / "series.lock"
    if lock.exists():
        lock.unlink()
    cmd = [*PATCHQ, "--dir", str(prepo), "--target", str(work), "apply", "-v", "--onto", base]
    cmd += ["--branch", "bench/patchq"]
    if fuzz:
        cmd += ["--fuzz", str(fuzz)]
    proc = run(cmd, work, check=False)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?"
    tree = git(work, "rev-parse", "HEAD^{tree}")
    return tree, proc.stderr


def one_release(case_dir: Path, release: str, tmp: Path) -> Row:
    series_dir = case_dir / ("old-series" if release == "old" else "new-series")
    ref = "case-old" if release == "old" else "case-new"
    row = Row(case_dir.name, release)
    work = tmp / f"{case_dir.name}-{release}"
    run(
        [
            "git",
            "clone",
            "-q",
            "--shared",
            "--no-checkout",
            str(case_dir / "upstream.git"),
            str(work),
        ],
        tmp,
    )
    git(work, "checkout", "-q", "-B", "bench/gnu", f"origin/{ref}")
    git(work, "config", "core.autocrlf", "false")
    prepo = tmp / f"{case_dir.name}-{release}-queue"
    (prepo / "patches").mkdir(parents=True)
    (prepo / "patchq.toml").write_text("")
    names = [n for n in (series_dir / "series").read_text().split("\n") if n.strip()]
    for n in names:
        shutil.copyfile(series_dir / n, prepo / "patches" / n)
    start = git(work, "rev-parse", "HEAD")
    applied: list[str] = []
    need_fuzz = False
    for n in names:
        row.patches += 1
        patch = prepo / "patches" / n
        base = git(work, "rev-parse", "HEAD")
        fuzz = 0 if gnu(work, patch, 0, True) else 2 if gnu(work, patch, 2, True) else -1
        if fuzz < 0:
            row.gnu_fails += 1
            continue
        ok = gnu(work, patch, fuzz, False)
        assert ok, (n, fuzz)
        want = tree_of(work)
        git(work, "commit", "-q", "--allow-empty", "-m", n)
        gnu_head = git(work, "rev-parse", "HEAD")
        if fuzz == 0:
            row.gnu_exact += 1
        else:
            row.gnu_fuzz += 1
            need_fuzz = True
        got, said = patchq_apply(work, prepo, [n], 0, base)
        if got is None and fuzz:
            if "applies with fuzz 2, as GNU patch would" in said:
                row.hinted += 1
            got, said = patchq_apply(work, prepo, [n], 2, base)
        if got is not None and "needed normalisation" in said:
            row.normalised += 1
        if got is None:
            row.refused.append(f"{n}: {said}")
        elif got == want:
            row.same += 1
        else:
            row.differing.append(n)
        git(work, "checkout", "-q", "-f", "bench/gnu")
        git(work, "reset", "-q", "--hard", gnu_head)
        applied.append(n)
    # The whole series in one `patchq apply`, as a maintainer would run it.
    final = git(work, "rev-parse", "HEAD^{tree}")
    got, said = patchq_apply(work, prepo, applied, 2 if need_fuzz else 0, start)
    row.whole = "same" if got == final else "differs" if got else f"refused: {said}"
    git(work, "checkout", "-q", "-f", "bench/gnu")
    return row


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    path_option(
        ap,
        "--cases",
        WORK_ENV,
        "the materialized cases (realworld's OUT/cases)",
        "realworld",
        "cases",
    )
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args(argv)
    index = args.cases / "index.json"
    if not index.is_file():
        print(f"no {index}: run ../shared/realworld/materialize.py first", file=sys.stderr)
        return 2
    cases = [Path(c["dir"]) for c in json.loads(index.read_text())]
    if args.only:
        cases = [c for c in cases if c.name in args.only]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="patchq-lenient-") as t:
        for c in cases:
            for release in ("old", "new"):
                rows.append(one_release(c, release, Path(t)))
                r = rows[-1]
                print(
                    f"{r.case} {r.release}: {r.patches} patches, {r.same} same, "
                    f"{len(r.refused)} refused, {len(r.differing)} differing",
                    file=sys.stderr,
                )
    head = (
        "| case | release | patches | GNU fuzz 0 | GNU fuzz 2 | GNU fails | same bytes "
        "| refused | differing | fuzz-2 hint | normalised | whole series |"
    )
    print(head)
    print("|" + "---|" * 12)
    tot = Row("**total**", "")
    for r in rows:
        print(
            f"| {r.case} | {r.release} | {r.patches} | {r.gnu_exact} | {r.gnu_fuzz} "
            f"| {r.gnu_fails} | {r.same} | {len(r.refused)} | {len(r.differing)} "
            f"| {r.hinted}/{r.gnu_fuzz} | {r.normalised} | {r.whole} |"
        )
        tot.patches += r.patches
        tot.gnu_exact += r.gnu_exact
        tot.gnu_fuzz += r.gnu_fuzz
        tot.gnu_fails += r.gnu_fails
        tot.same += r.same
        tot.refused += [f"{r.case} {r.release} {x}" for x in r.refused]
        tot.differing += [f"{r.case} {r.release} {x}" for x in r.differing]
        tot.hinted += r.hinted
        tot.normalised += r.normalised
    wholes = sum(r.whole == "same" for r in rows)
    print(
        f"| {tot.case} | | {tot.patches} | {tot.gnu_exact} | {tot.gnu_fuzz} | {tot.gnu_fails} "
        f"| {tot.same} | {len(tot.refused)} | {len(tot.differing)} | {tot.hinted}/{tot.gnu_fuzz} "
        f"| {tot.normalised} | {wholes}/{len(rows)} same |"
    )
    for x in tot.refused:
        print(f"refused: {x}")
    for x in tot.differing:
        print(f"differing: {x}")
    for r in rows:
        if r.whole != "same":
            print(f"whole series {r.case} {r.release}: {r.whole}")
    return 1 if tot.differing else 0
