#!/usr/bin/env python3
"""Harvest real patch series from downstream distributions' git history, by rule.

    patchq-bench harvest [--mirrors MIRRORS] manifest [--out MANIFEST] [--at DATE ...]
    patchq-bench harvest fetch-list [--manifest ...]        # upstream mirrors still missing
    patchq-bench harvest materialize [--manifest ...] [--out DIR] [--jobs 2]
    patchq-bench harvest bumps [--out bench/corpus/refresh-cases.toml] [--since 2018-01-01]
        [--only KEY ...] [--debian-list FILE] [--debian-since DATE] [--at DATE ...]

For each downstream mirror (MIRRORS/OWNER+NAME/repo, as the `fetch` tool leaves them) and
one commit of it (default: the mirror's HEAD), every package that carries patch files is
read the way that distribution's own build reads it:

- Buildroot: package/X/*.patch sorted by name, then package/X/$(X_VERSION)/*.patch;
  `patch -p1`; version from X.mk `X_VERSION`, upstream from `X_SITE`
  (`$(call github,OWNER,REPO,TAG)` names the tag itself).
- Termux (packages/, x11-packages/, root-packages/): X/*.patch and X/*.patch64 in sorted
  order, `patch -p1` after the build's `sed` of @TERMUX_PREFIX@-style placeholders (the
  same substitution is applied here); version from build.sh `TERMUX_PKG_VERSION`,
  upstream and tag from `TERMUX_PKG_SRCURL`.
- MSYS2 (MINGW-packages and MSYS2-packages): the patch files named in PKGBUILD's
  `prepare()`, in the order it names them, with the `-pN` of the command naming them
  (`apply_patch_with_msg` is `patch -Np1`); `pkgver`; upstream from `source` or
  `msys2_repository_url`.
- LibreELEC: X/patches/*.patch sorted, then X/patches/$PKG_VERSION/*.patch, `patch -p1`;
  `PKG_VERSION`, `PKG_URL`.
- Debian packaging on GitHub (git-buildpackage layout: upstream source and debian/ in one
  tree): debian/patches/series in order with its `-pN` options (default -p1), applied to the
  same commit's tree without debian/; version from debian/changelog.

The upstream commit is found by rule: a GitHub URL in the package's source gives the
upstream repository; the tag comes from the URL when it names one that exists in the
mirror, else from the version: `v1.2.3`, `1.2.3`, `NAME-1.2.3`, `NAME_1_2_3`, `release-1.2.3`,
… (first that exists; a 7–40 digit hex version is a commit). Every package that cannot be
taken is counted under its reason in the manifest's `skipped`.

`manifest` writes names and commit ids only (no patch text); `materialize` re-extracts each
case into OUT/CASE/: `patches/` (substituted text), `series` (`NAME -pN` a line), `case.json`,
and `base/`, a git checkout holding the files of the upstream commit that any patch of the
series names (every name of every header, stripped, and any parent that is a symlink):
enough to apply the series as GNU patch and patchq would on the full tree, at a fraction of
its cost. `bumps` finds every commit where a package's version changed and its patch set
changed with it, and writes them in the realworld cases.toml format, split 70/30 into
tuning/validation by sha256 of the case name. Spack and Debian have their own bump rules
(find_bumps_spack: consecutive versions of one package.py whose version-range patch sets
differ; find_bumps_debian / debian_bumps_of: a change of the upstream version in
debian/changelog along the first-parent history, the upstream being the same tree without
debian/, `upstream_strip_dir = "debian"`).

Standard library and the git CLI only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchq_bench.harvest.bumps import (
    VERSION_FILE,
    find_bumps,
    find_bumps_debian,
    find_bumps_spack,
    split_of,
    write_cases_toml,
)
from patchq_bench.harvest.downstreams import build_manifest
from patchq_bench.harvest.materialize import materialize_case
from patchq_bench.harvest.mirrors import mirror_gitdir
from patchq_bench.paths import CORPUS, MIRRORS_ENV, WORK_ENV, outside_repo, path_option

DEFAULT_MANIFEST = CORPUS / "parity-manifest.json"
DEFAULT_BUMPS = CORPUS / "refresh-cases.toml"

# ---------------------------------------------------------------------------------- CLI
SNAPSHOT_DATES = [
    "2025-07-01",
    "2025-01-01",
    "2024-01-01",
    "2023-01-01",
    "2022-01-01",
    "2021-01-01",
    "2020-01-01",
    "2019-01-01",
]
BUMP_KEYS = [*VERSION_FILE, "spack", "debian"]


def load_debian_list(path: Path | None) -> list[str]:
    if path is None or not path.is_file():
        return []
    return [
        ln.split("#")[0].strip() for ln in path.read_text().splitlines() if ln.split("#")[0].strip()
    ]


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    path_option(ap, "--mirrors", MIRRORS_ENV, "folder of local git mirrors, OWNER+NAME/repo")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("manifest")
    m.add_argument("--out", type=Path, default=DEFAULT_MANIFEST)
    m.add_argument("--debian-list", type=Path, default=CORPUS / "debian-repos.txt")
    m.add_argument("--only", nargs="*")
    m.add_argument(
        "--at",
        nargs="*",
        default=SNAPSHOT_DATES,
        help="also harvest each downstream at its last commit before these dates",
    )
    f = sub.add_parser("fetch-list")
    f.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    f.add_argument("--top", type=int, default=0)
    f.add_argument(
        "--needed",
        action="store_true",
        help="every mirror the cases need (missing ones marked), not the missing upstreams",
    )
    z = sub.add_parser("materialize")
    z.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    path_option(z, "--out", WORK_ENV, "where the cases go, outside the repository", "parity")
    z.add_argument("--jobs", type=int, default=2)
    z.add_argument("--only", nargs="*")
    b = sub.add_parser("bumps")
    b.add_argument("--out", type=Path, default=DEFAULT_BUMPS)
    b.add_argument("--since", default="2018-01-01")
    b.add_argument("--only", nargs="*")
    b.add_argument("--limit", type=int, default=0)
    b.add_argument("--debian-list", type=Path, default=CORPUS / "debian-repos.txt")
    b.add_argument(
        "--debian-since",
        default="1970-01-01",
        help="Debian: first-parent history read from this date (default: all of it; the "
        "repositories are small and most of their history is older than --since)",
    )
    b.add_argument(
        "--at",
        nargs="*",
        default=SNAPSHOT_DATES,
        help="Spack: also read package.py at the last commit before these dates",
    )
    return ap


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    args = parser(prog).parse_args(argv)
    run = {
        "manifest": manifest,
        "fetch-list": fetch_list,
        "materialize": materialize,
        "bumps": bumps,
    }
    return run[args.cmd](args)


def manifest(args: argparse.Namespace) -> int:
    """Every series each downstream carries, at HEAD and the snapshot dates: the parity
    manifest (names and ids only)."""
    man = build_manifest(args.mirrors, load_debian_list(args.debian_list), args.only, args.at)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(man, indent=1) + "\n")
    n = sum(len(c["patches"]) for c in man["cases"])
    print(f"{len(man['cases'])} series, {n} patches -> {args.out}")
    for k, v in man["skipped_packages"].items():
        print(f"  skipped {v} packages ({man['skipped_patches'].get(k, 0)} patches): {k}")
    return 0


def fetch_list(args: argparse.Namespace) -> int:
    """The mirrors to fetch: the missing upstreams by patches waiting, or every one needed."""
    man = json.loads(args.manifest.read_text())
    if args.needed:
        need: Counter[str] = Counter()
        for c in man["cases"]:
            need[c["downstream_repo"]] += 0
            need[c["upstream_repo"]] += len(c["patches"])
        for repo in sorted(need, key=str.lower):
            gone = "" if mirror_gitdir(args.mirrors, repo) else "\tmissing"
            print(f"github:{repo}{gone}")
        return 0
    items = list(man["missing_upstreams"].items())
    for repo, n in items[: args.top or None]:
        print(f"github:{repo}\t{n}")
    return 0


def materialize(args: argparse.Namespace) -> int:
    """The manifest's cases into --out, from the mirrors."""
    man = json.loads(args.manifest.read_text())
    cases = [c for c in man["cases"] if not args.only or c["name"] in args.only]
    outside_repo(args.out, "--out").mkdir(parents=True, exist_ok=True)
    t = time.time()
    res: Counter[str] = Counter()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for r in ex.map(lambda c: materialize_case(args.mirrors, c, args.out), cases):
            res[r] += 1
    names = [c["name"] for c in cases]
    (args.out / "index.json").write_text(json.dumps(names, indent=0) + "\n")
    print(f"materialized {res['ok']} of {len(cases)} cases in {time.time() - t:.0f}s; {dict(res)}")
    return 0 if res["ok"] == len(cases) else 1


def bumps(args: argparse.Namespace) -> int:
    """Every qualifying version bump of each downstream, written as refresh cases."""
    keys = [k for k in BUMP_KEYS if not args.only or k in args.only]
    allcases: list[dict[str, Any]] = []

    def one(key: str) -> tuple[str, list[dict[str, Any]], Counter[str], float]:
        t = time.time()
        try:
            lim = args.limit or None
            if key == "spack":
                cases, reasons = find_bumps_spack(args.mirrors, args.since, lim, args.at)
            elif key == "debian":
                repos = load_debian_list(args.debian_list)
                cases, reasons = find_bumps_debian(args.mirrors, repos, args.debian_since, lim)
            else:
                cases, reasons = find_bumps(args.mirrors, key, args.since, lim)
        except RuntimeError as e:  # one unreadable mirror does not lose the others
            cases, reasons = [], Counter({f"mirror unreadable: {str(e)[-120:]}": 1})
        return key, cases, reasons, time.time() - t

    header = (
        "# Version-bump refresh cases found by patchq-bench harvest bumps (every bump\n"
        "# that qualifies, none chosen by hand): names and commit ids only.\n"
        "# Format: the shared realworld corpus's cases.toml; split = tuning|validation\n"
        '# by sha256(name)[0] < 0.7*256. substitute = "termux": sed the\n'
        "# @TERMUX_...@ placeholders as Termux's build does before applying.\n"
        '# upstream_strip_dir = "debian": the upstream of a Debian packaging repository\n'
        "# is the same commit's tree without that folder (realworld builds it)."
    )
    done: dict[str, list[dict[str, Any]]] = {}
    with concurrent.futures.ThreadPoolExecutor(max(1, len(keys))) as ex:
        futs = [ex.submit(one, k) for k in keys]
        for fut in concurrent.futures.as_completed(futs):
            key, cases, reasons, secs = fut.result()
            print(
                f"{key}: {len(cases)} bumps in {secs:.0f}s; not taken: {dict(reasons)}",
                file=sys.stderr,
            )
            done[key] = cases
            # downstream order, whatever finished first; written after each downstream
            allcases = [c for k in keys if k in done for c in done[k]]
            seen: Counter[str] = Counter()
            for c in allcases:
                seen[c["name"]] += 1
                if seen[c["name"]] > 1:
                    c["name"] = c["name"].rsplit("~", 1)[0] + f"~{seen[c['name']]}"
                    c["split"] = split_of(c["name"])
            write_cases_toml(allcases, args.out, header)
    n = sum(len(c["old_series"]) for c in allcases)
    ups = len({c["upstream_repo"] for c in allcases})
    print(f"{len(allcases)} bumps, {n} old-series patches, {ups} upstream projects -> {args.out}")
    return 0
