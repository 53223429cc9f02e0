"""Version bumps: a downstream's consecutive releases of a package with the series the
maintainer carried on each, written as refresh cases (the realworld bench's corpus).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchq_bench.harvest.downstreams import (
    PATCH_NAME,
    SPACK_PACKAGES,
    Package,
    clean_version,
    debian_series,
    github_of,
    harvest_buildroot,
    harvest_libreelec,
    harvest_msys2,
    harvest_termux,
    resolve_upstream,
    snapshot_commits,
    spack_patch_files,
    spack_recipe,
)
from patchq_bench.harvest.mirrors import DOWNSTREAMS, Blobs, git, ls_tree, mirror_gitdir

# ------------------------------------------------------------------------ version bumps
VERSION_FILE = {
    "buildroot": lambda d, name: f"{d}/{name}.mk",
    "termux": lambda d, name: f"{d}/build.sh",
    "msys2-mingw": lambda d, name: f"{d}/PKGBUILD",
    "msys2-msys": lambda d, name: f"{d}/PKGBUILD",
    "libreelec": lambda d, name: f"{d}/package.mk",
}


def package_at(
    mirrors: Path, key: str, gd: Path, blobs: Blobs, commit: str, *, pkgdir: str
) -> Package | None:
    """The one package in PKGDIR at COMMIT, read as its downstream reads it."""
    files = blobs.tree(f"{commit}:{pkgdir}", pkgdir)
    if not files:
        return None
    if key == "buildroot":
        pkgs = list(harvest_buildroot(files, blobs, commit))
    elif key == "termux":
        pkgs = list(harvest_termux(files, blobs, commit))
    elif key in ("msys2-mingw", "msys2-msys"):
        pkgs = list(harvest_msys2(files, blobs, commit, key))
    elif key == "libreelec":
        pkgs = list(harvest_libreelec(files, blobs, commit))
    else:
        return None
    return pkgs[0] if pkgs else None


def unversioned(name: str) -> str:
    """A patch file name without the version numbers in it (Spack names a patch for the
    versions it serves: bart_path-0.5.00.patch, makefile_12.patch): the base name with every
    run of digits and dots (with the separator before it) taken out."""
    base = PATCH_NAME.sub("", name.rsplit("/", 1)[-1])
    return re.sub(r"[-_.]?v?\d+(?:[._]\d+)*", "", base).lower()


def successor_map(
    old: list[str], new: list[str], texts: dict[str, bytes], versioned_names: bool = False
) -> dict[str, str]:
    """old patch -> the new patch that continues it (same name, same Subject:, same name
    without its number; with VERSIONED_NAMES also the same name without its version
    numbers), or '' when none does."""

    def subject(t: bytes) -> str | None:
        m = re.search(rb"^Subject: *(?:\[[^\]]*\] *)?(.+)$", t, re.M)
        return m.group(1).decode("utf-8", "replace").strip() if m else None

    def bare(n: str) -> str:
        return re.sub(r"^\d+[-_]", "", n.rsplit("/", 1)[-1])

    out: dict[str, str] = {}
    taken: set[str] = set()
    for o in old:
        cand = None
        if o in new:
            cand = o
        else:
            so = subject(texts.get("old:" + o, b""))
            for n in new:
                if n in taken:
                    continue
                if (so and so == subject(texts.get("new:" + n, b""))) or bare(n) == bare(o):
                    cand = n
                    break
        if cand is None and versioned_names:
            cand = next(
                (
                    n
                    for n in new
                    if n not in taken and n not in old and unversioned(n) == unversioned(o)
                ),
                None,
            )
        if cand and cand not in taken:
            taken.add(cand)
            out[o] = cand
        else:
            out[o] = ""
    return out


def _touching_commits(
    gd: Path, key: str, since: str
) -> tuple[int, list[tuple[str, str, str, list[str]]]]:
    """The commits since `since` that touch a package's build file or patches in the
    downstream `key` (id, parent, subject, paths), and how deep a package's folder is
    (-1: LibreELEC's, read from the path)."""
    if key == "buildroot":
        specs = ["package/*/*.mk", "package/*/*.patch", "package/*/*/*.patch"]
        depth = 2
    elif key == "termux":
        specs = [f"{top}/*/*" for top in ("packages", "x11-packages", "root-packages")]
        depth = 2
    elif key == "libreelec":
        specs = ["packages/**/package.mk", "packages/**/*.patch"]
        depth = -1
    else:
        specs = ["*/PKGBUILD", "*/*.patch", "*/*.diff"]
        depth = 1
    log = git(
        gd,
        "log",
        "--no-merges",
        "--no-renames",  # rename detection reads blobs, and a snapshot may lack big ones
        f"--since={since}",
        "--format=@%H %P%x09%s",
        "--name-only",
        "HEAD",
        "--",
        *specs,
    ).decode("utf-8", "replace")
    commits: list[tuple[str, str, str, list[str]]] = []
    for block in log.split("\n@")[0:]:
        block = block.lstrip("@")
        if not block.strip():
            continue
        head, *paths = block.split("\n")
        ids, _, subj = head.partition("\t")
        idl = ids.split()
        if len(idl) != 2:
            continue
        commits.append((idl[0], idl[1], subj, [p for p in paths if p.strip()]))
    return depth, commits


def find_bumps(
    mirrors: Path, key: str, since: str, limit: int | None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    repo, prefix, dist = DOWNSTREAMS[key]
    gd = mirror_gitdir(mirrors, repo)
    reasons: Counter[str] = Counter()
    if gd is None:
        reasons["downstream mirror not fetched"] += 1
        return [], reasons
    depth, commits = _touching_commits(gd, key, since)
    blobs = Blobs(gd)
    out: list[dict[str, Any]] = []
    try:
        for c, parent, subj, paths in commits:
            groups: dict[str, list[str]] = {}
            for p in paths:
                if key == "libreelec":
                    d = p.split("/patches/")[0] if "/patches/" in p else p.rsplit("/", 1)[0]
                else:
                    d = "/".join(p.split("/")[:depth])
                groups.setdefault(d, []).append(p)
            for d, ps in groups.items():
                name = d.rsplit("/", 1)[-1]
                vf = VERSION_FILE[key](d, name)
                if vf not in ps or not any(
                    PATCH_NAME.search(p) or p.endswith(".patch64") for p in ps
                ):
                    continue
                old = package_at(mirrors, key, gd, blobs, parent, pkgdir=d)
                new = package_at(mirrors, key, gd, blobs, c, pkgdir=d)
                if old is None or new is None or not old.patches or not new.patches:
                    reasons["no patches before or after"] += 1
                    continue
                if old.version == new.version or not old.version or not new.version:
                    reasons["version unchanged"] += 1
                    continue
                if old.upstream_repo is None or old.upstream_repo != new.upstream_repo:
                    reasons["upstream not on GitHub (or moved)"] += 1
                    continue
                oc, otag, r1 = resolve_upstream(mirrors, old, gd, parent)
                nc, ntag, r2 = resolve_upstream(mirrors, new, gd, c)
                if r1 or r2:
                    reasons[r1 or r2 or ""] += 1
                    continue
                strip = {s for _, s in old.patches + new.patches}
                if len(strip) != 1:
                    reasons["mixed strip levels"] += 1
                    continue
                cut = len(d) + 1
                old_series = [p[cut:] for p, _ in old.patches]
                new_series = [p[cut:] for p, _ in new.patches]
                texts = {}
                for p, _ in old.patches:
                    texts["old:" + p[cut:]] = blobs.read(f"{parent}:{p}") or b""
                for p, _ in new.patches:
                    texts["new:" + p[cut:]] = blobs.read(f"{c}:{p}") or b""
                succ = successor_map(old_series, new_series, texts)
                added = [n for n in new_series if n not in succ.values()]
                cname = re.sub(
                    r"[^A-Za-z0-9_.+-]", "_", f"{prefix}-{name}-{old.version}-to-{new.version}"
                )
                out.append(
                    {
                        "name": cname,
                        "split": split_of(cname),
                        "upstream_repo": old.upstream_repo,
                        "old_ref": otag,
                        "old_commit": oc,
                        "new_ref": ntag,
                        "new_commit": nc,
                        "downstream_repo": repo,
                        "downstream_old_commit": parent,
                        "downstream_new_commit": c,
                        "downstream_commit_subject": subj,
                        "patch_dir": d,
                        "series_rule": SERIES_RULE[key],
                        "strip": strip.pop(),
                        "substitute": old.subst or "",
                        "old_series": old_series,
                        "new_series": new_series,
                        "added": added,
                        "successor": succ,
                    }
                )
                if limit and len(out) >= limit:
                    return out, reasons
    finally:
        blobs.close()
    return out, reasons


def _vsort_key(v: str) -> tuple[Any, ...]:
    """Order versions numerically where they are numbers (1.10 after 1.9); a part that is
    not a number sorts before any number at that place (1.0rc1 before 1.0.1)."""
    return tuple((1, int(x), "") if x.isdigit() else (0, 0, x) for x in re.split(r"[.\-_+~]", v))


def bump_case(
    prefix: str,
    name: str,
    versions: tuple[str, str],
    up: tuple[str, str | None, str | None, str | None, str | None],
    ds: tuple[str, str, str, str],
    *,
    key: str,
    series: tuple[list[str], list[str]],
    strip: int,
    texts: dict[str, bytes],
) -> dict[str, Any]:
    """One bump as refresh-cases.toml writes it. UP = (repo, old ref, old commit, new ref,
    new commit); DS = (repo, old commit, new commit, subject); SERIES = (old, new) names
    relative to the patch folder; TEXTS = their bytes under "old:NAME" / "new:NAME"."""
    old_series, new_series = series
    succ = successor_map(old_series, new_series, texts, versioned_names=key == "spack")
    cname = re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{prefix}-{name}-{versions[0]}-to-{versions[1]}")
    return {
        "name": cname,
        "split": split_of(cname),
        "upstream_repo": up[0],
        "old_ref": up[1],
        "old_commit": up[2],
        "new_ref": up[3],
        "new_commit": up[4],
        "downstream_repo": ds[0],
        "downstream_old_commit": ds[1],
        "downstream_new_commit": ds[2],
        "downstream_commit_subject": ds[3],
        "series_rule": SERIES_RULE[key],
        "strip": strip,
        "substitute": "",
        "old_series": old_series,
        "new_series": new_series,
        "added": [n for n in new_series if n not in succ.values()],
        "successor": succ,
    }


def find_bumps_spack(
    mirrors: Path, since: str, limit: int | None, dates: Sequence[str] = ()
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Spack keeps every version's patches side by side in one package.py. At HEAD (and at
    the last commit before each of DATES, where the packages are in the same layout): for
    every two consecutive listed versions v_old < v_new of a package (deprecated and branch
    versions left out) where both get a non-empty set of the patch(...) calls whose `when=`
    is a pure version range, and the two sets differ, v_old -> v_new is a bump: the old
    series is v_old's patches in package.py order, the new one v_new's; both upstream
    commits are the tags of v_old and v_new (resolve_upstream). Successors as for the other
    downstreams, and also the same name without its version numbers (`unversioned`:
    bart_path-0.5.00.patch -> bart_path-0.6.00.patch). A bump seen at an earlier
    snapshot with the same patch files (blob ids) is counted once."""
    repo, prefix, _dist = DOWNSTREAMS["spack"]
    reasons: Counter[str] = Counter()
    gd = mirror_gitdir(mirrors, repo)
    if gd is None:
        reasons["downstream mirror not fetched"] += 1
        return [], reasons
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    blobs = Blobs(gd)
    try:
        for _label, at in snapshot_commits(gd, list(dates)):
            commit = git(gd, "rev-parse", "--verify", at + "^{commit}").decode().strip()
            subject = git(gd, "log", "-1", "--format=%s", commit).decode("utf-8", "replace")
            files = ls_tree(gd, commit, "/".join(SPACK_PACKAGES))
            for d, names in sorted(spack_patch_files(files).items()):
                rec = spack_recipe(d, blobs.text(f"{commit}:{d}/package.py") or "", names)
                ordered = sorted(dict.fromkeys(rec.versions), key=_vsort_key)
                for v_old, v_new in itertools.pairwise(ordered):
                    old, new = rec.series(v_old), rec.series(v_new)
                    if not old or not new:
                        continue
                    if [p for p, _ in old] == [p for p, _ in new]:
                        continue
                    ident = json.dumps([d, v_old, v_new, [files[p][1] for p, _ in old + new]])
                    if ident in seen:
                        reasons["same bump at a later snapshot"] += 1
                        continue
                    seen.add(ident)
                    strip = {lvl for _, lvl in old + new}
                    if len(strip) != 1:
                        reasons["mixed strip levels"] += 1
                        continue
                    up_repo = github_of(rec.url)[0] if rec.url else None
                    ends = []
                    for v, series in ((v_old, old), (v_new, new)):
                        pkg = Package("spack", rec.name, d, series, v, upstream_repo=up_repo)
                        ends.append(resolve_upstream(mirrors, pkg, gd, commit))
                    why = ends[0][2] or ends[1][2]
                    if why:
                        reasons[why] += 1
                        continue
                    cut = len(d) + 1
                    texts = {}
                    for side, series in (("old", old), ("new", new)):
                        for p, _ in series:
                            texts[f"{side}:{p[cut:]}"] = blobs.read(f"{commit}:{p}") or b""
                    case = bump_case(
                        prefix,
                        rec.name,
                        (v_old, v_new),
                        (str(up_repo), ends[0][1], ends[0][0], ends[1][1], ends[1][0]),
                        (repo, commit, commit, subject),
                        key="spack",
                        series=([p[cut:] for p, _ in old], [p[cut:] for p, _ in new]),
                        strip=strip.pop(),
                        texts=texts,
                    )
                    case["patch_dir"] = d
                    out.append(case)
                    if limit and len(out) >= limit:
                        return out, reasons
    finally:
        blobs.close()
    return out, reasons


def debian_version(changelog: str | None) -> tuple[str, str] | None:
    """(full version without epoch, upstream version) of debian/changelog's top entry; the
    upstream version is the full one without its Debian revision (after the last '-'). A
    native version (no revision) gives None."""
    m = re.match(r"\s*\S+ \(([^)\s]+)\)", changelog or "")
    if not m:
        return None
    full = clean_version(m.group(1))
    if "-" not in full:
        return None
    return full, full.rsplit("-", 1)[0]


@dataclass
class DebState:
    commit: str
    subject: str
    full: str | None  # top changelog version (no epoch), None: no changelog or native
    upstream: str | None  # its upstream part
    source: str  # id of the tree without debian/ (the upstream source)
    series: list[tuple[str, int]] | None
    patch_blobs: dict[str, str]  # patch name -> blob id


def _tree_entries(data: bytes) -> Iterator[tuple[str, str, str]]:
    i = 0
    while i < len(data):
        sp = data.index(b" ", i)
        nul = data.index(b"\0", sp)
        yield (
            data[i:sp].decode(),
            data[sp + 1 : nul].decode("utf-8", "surrogateescape"),
            data[nul + 1 : nul + 21].hex(),
        )
        i = nul + 21


def debian_states(gd: Path, blobs: Blobs, since: str) -> list[DebState]:
    """Every commit of HEAD's first-parent history since SINCE, oldest first, as harvest
    reads it: the changelog's top version, the upstream tree's identity, the series."""
    log = git(gd, "log", "--first-parent", "--reverse", f"--since={since}", "--format=%H%x09%s")
    cache: dict[str, Any] = {}
    out: list[DebState] = []
    for line in log.decode("utf-8", "replace").splitlines():
        c, _, subj = line.partition("\t")
        top = blobs.read(f"{c}^{{tree}}") or b""
        entries = list(_tree_entries(top))
        source = hashlib.sha1(
            b"".join(f"{m} {n} {h}\n".encode() for m, n, h in entries if n != "debian")
        ).hexdigest()
        deb = next((h for m, n, h in entries if n == "debian" and m == "40000"), None)
        full = up = None
        series = None
        pblobs: dict[str, str] = {}
        if deb is not None:
            dfiles = blobs.tree(deb, "debian", depth=3)
            ch = dfiles.get("debian/changelog")
            if ch:
                if ch[1] not in cache:
                    cache[ch[1]] = debian_version(
                        (blobs.read(ch[1]) or b"")[:4096].decode("utf-8", "replace")
                    )
                v = cache[ch[1]]
                if v:
                    full, up = v
            se = dfiles.get("debian/patches/series")
            if se:
                series = debian_series((blobs.read(se[1]) or b"").decode("utf-8", "replace"))
            pblobs = {
                p[len("debian/patches/") :]: ms[1]
                for p, ms in dfiles.items()
                if p.startswith("debian/patches/")
            }
        out.append(DebState(c, subj, full, up, source, series, pblobs))
    return out


def debian_bumps_of(
    states: Sequence[DebState], reasons: Counter[str]
) -> list[tuple[DebState, DebState]]:
    """The (old, new) states of every bump in one repository's first-parent history.

    The history is cut into runs of commits whose top changelog entry has the same upstream
    version. Where a run of version A is followed by a run of version B (A != B, neither
    native nor without a changelog):
    - old = the last commit of A's run whose tree without debian/ is still the one the run
      began with (gbp merges the new upstream source before the changelog names it: the
      commits after that merge hold B's source under A's changelog);
    - new = the last commit of B's run whose top changelog entry is still B's first one
      (B's first Debian revision: the series as first released for B) and whose tree
      without debian/ is still the one B's run began with (the same rule: the next
      version's source may be merged before the changelog names it).
    It is a bump when the tree without debian/ differs between old and new, both have
    debian/patches/series, old's series is not empty, every patch it names is there,
    and the series or a patch file of it differs between them."""
    runs: list[list[DebState]] = []
    for st in states:
        if runs and runs[-1][0].upstream == st.upstream:
            runs[-1].append(st)
        else:
            runs.append([st])
    out: list[tuple[DebState, DebState]] = []
    for a, b in itertools.pairwise(runs):
        if a[0].upstream is None or b[0].upstream is None:
            reasons["no changelog version (or a native one) before or after"] += 1
            continue
        old = [s for s in a if s.source == a[0].source][-1]
        new = b[0]
        for s in b:
            if s.full != b[0].full:
                break
            if s.source == b[0].source:
                new = s
        if old.source == new.source:
            reasons["upstream source unchanged"] += 1
            continue
        if not old.series or new.series is None:
            reasons["no patches before or after"] += 1
            continue
        if any(n not in st.patch_blobs for st in (old, new) for n, _ in st.series or []):
            reasons["series names a patch file that is not there"] += 1
            continue
        if old.series == new.series and all(
            old.patch_blobs[n] == new.patch_blobs[n] for n, _ in old.series
        ):
            reasons["series and patches unchanged"] += 1
            continue
        out.append((old, new))
    return out


def find_bumps_debian(
    mirrors: Path, repos: Sequence[str], since: str, limit: int | None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Debian packaging on GitHub: every bump of debian_bumps_of in each repository's
    first-parent history. The upstream is the same repository: both "upstream commits"
    are the old and new commits themselves, with `upstream_strip_dir = "debian"` (the
    materializer builds case-old/case-new from their trees without debian/)."""
    reasons: Counter[str] = Counter()
    out: list[dict[str, Any]] = []
    for repo in repos:
        gd = mirror_gitdir(mirrors, repo)
        if gd is None:
            reasons["downstream mirror not fetched"] += 1
            continue
        blobs = Blobs(gd)
        try:
            states = debian_states(gd, blobs, since)
            for old, new in debian_bumps_of(states, reasons):
                series = [n for n, _ in old.series or []], [n for n, _ in new.series or []]
                strip = {s for _, s in (old.series or []) + (new.series or [])}
                if len(strip) != 1:
                    reasons["mixed strip levels"] += 1
                    continue
                texts = {}
                for side, st, names in (("old", old, series[0]), ("new", new, series[1])):
                    for n in names:
                        texts[f"{side}:{n}"] = blobs.read(st.patch_blobs[n]) or b""
                case = bump_case(
                    "db",
                    repo.split("/")[1],
                    (str(old.upstream), str(new.upstream)),
                    (repo, old.commit, old.commit, new.commit, new.commit),
                    (repo, old.commit, new.commit, new.subject),
                    key="debian",
                    series=series,
                    strip=strip.pop(),
                    texts=texts,
                )
                case["patch_dir"] = "debian/patches"
                case["upstream_strip_dir"] = "debian"
                out.append(case)
                if limit and len(out) >= limit:
                    return out, reasons
        finally:
            blobs.close()
    return out, reasons


_MSYS2_RULE = "msys2: the patch files PKGBUILD prepare() names, in that order, with its -pN"
SERIES_RULE = {
    "buildroot": "buildroot: every *.patch in patch_dir (then in its $(VERSION) folder) "
    "in file-name order, patch -p1",
    "termux": "termux: every *.patch and *.patch64 in patch_dir in sorted order, after sed "
    "of @TERMUX_...@ placeholders, patch -p1",
    "msys2-mingw": _MSYS2_RULE,
    "msys2-msys": _MSYS2_RULE,
    "libreelec": "libreelec: patches/*.patch then patches/$PKG_VERSION/*.patch in file-name "
    "order, patch -p1",
    "spack": "spack: the patch(...) calls of package.py on files of patch_dir whose when= is "
    "a pure version range holding for the version, in package.py order, level= as -pN",
    "debian": "debian: debian/patches/series in order with its -pN, on the same commit's "
    "tree without debian/",
}


def split_of(name: str) -> str:
    return "tuning" if hashlib.sha256(name.encode()).digest()[0] < int(0.7 * 256) else "validation"


def toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def write_cases_toml(cases: list[dict[str, Any]], path: Path, header: str) -> None:
    lines = [header.rstrip() + "\n"]
    for c in cases:
        lines.append("\n[[case]]\n")
        for k in (
            "name",
            "split",
            "upstream_repo",
            "old_ref",
            "old_commit",
            "new_ref",
            "new_commit",
            "downstream_repo",
            "downstream_old_commit",
            "downstream_new_commit",
            "downstream_commit_subject",
            "patch_dir",
            "series_rule",
        ):
            lines.append(f"{k} = {toml_str(str(c[k]))}\n")
        lines.append(f"strip = {int(c['strip'])}\n")
        if c.get("substitute"):
            lines.append(f"substitute = {toml_str(c['substitute'])}\n")
        if c.get("upstream_strip_dir"):
            lines.append(f"upstream_strip_dir = {toml_str(c['upstream_strip_dir'])}\n")
        for k in ("old_series", "new_series", "added"):
            lines.append(f"{k} = [" + ", ".join(toml_str(x) for x in c[k]) + "]\n")
        lines.append("[case.successor]\n")
        for o, n in c["successor"].items():
            lines.append(f"{toml_str(o)} = {toml_str(n)}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
