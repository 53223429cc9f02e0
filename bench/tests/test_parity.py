"""The apply-parity bench on a fixture corpus: harvest, materialize and parity end to end.

The test builds, from files it writes itself (no network, no fetched mirror), a tiny
Buildroot, Termux and MSYS2 downstream and their upstream projects as git repositories in
the mirror layout `patchq-bench harvest` reads (MIRRORS/OWNER+NAME/repo). The downstreams carry
300 small generated patches of varied shapes (git, quilt with timestamps, `Index:` lines,
offsets, new files, context that needs GNU patch's fuzz, Termux placeholders). Then
`harvest manifest`, `harvest materialize` and `parity` run as a user runs them, and the
totals must be the ones the fixture was built to give.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

# The bench's commands, run as a user runs them (`patchq-bench harvest …`).
HARVEST = ("-m", "patchq_bench", "harvest")
PARITY = ("-m", "patchq_bench", "parity")
PER_SERIES = 30


def git_env() -> dict[str, str]:
    """The sealed environment (conftest), with a plain identity and git's own dates."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
    }


pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")


def git(cwd: Path, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def commit_all(repo: Path, msg: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg)


def new_repo(mirrors: Path, name: str) -> Path:
    repo = mirrors / name.replace("/", "+") / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


def file_lines(proj: int, f: int) -> list[str]:
    return [f"proj{proj} file{f} line {k}" for k in range(40)]


def make_upstream(mirrors: Path, proj: int, termux_paths: bool = False) -> None:
    repo = new_repo(mirrors, f"up/proj{proj}")
    for f in range(PER_SERIES):
        lines = file_lines(proj, f)
        if termux_paths and f == 0:
            lines[20] = "prefix = /data/data/com.termux/files/usr"
        (repo / "src").mkdir(exist_ok=True)
        (repo / "src" / f"f{f}.c").write_text("\n".join(lines) + "\n")
    commit_all(repo, "release")
    git(repo, "tag", "v1.0")


def hunk(lines: list[str], at: int, new: str, shift: int = 0, fuzz: bool = False) -> str:
    """A 3-context hunk changing line AT; SHIFT moves the header's line numbers (offset);
    FUZZ changes the first context line, so it only applies with fuzz 1."""
    pre = lines[at - 3 : at + 4]
    if fuzz:
        pre = ["changed context", *pre[1:]]
    body = [" " + x for x in pre[:3]] + ["-" + pre[3], "+" + new] + [" " + x for x in pre[4:]]
    start = at - 3 + 1 + shift
    return f"@@ -{start},7 +{start},7 @@\n" + "\n".join(body) + "\n"


def make_patch(proj: int, f: int, shape: str, rnd: random.Random, placeholder: bool) -> str:
    lines = file_lines(proj, f)
    if placeholder:
        lines[20] = "prefix = @TERMUX_PREFIX@"
    at = 20 if placeholder else rnd.randint(5, 34)
    new = f"changed by patch {f}"
    path = f"src/f{f}.c"
    if shape == "git":
        head = (
            f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n"
            f"--- a/{path}\n+++ b/{path}\n"
        )
        return "From: x\nSubject: [PATCH] git style\n\n---\n" + head + hunk(lines, at, new)
    if shape == "quilt":
        ts = "\t2020-01-01 00:00:00.000000000 +0000"
        head = f"--- proj-1.0.orig/{path}{ts}\n+++ proj-1.0/{path}{ts}\n"
        return "Description: quilt style\n\n" + head + hunk(lines, at, new)
    if shape == "index":
        head = (
            f"Index: proj-1.0/{path}\n{'=' * 67}\n--- proj-1.0.orig/{path}\n+++ proj-1.0/{path}\n"
        )
        return head + hunk(lines, at, new)
    if shape == "offset":
        return f"--- a/{path}\n+++ b/{path}\n" + hunk(lines, at, new, shift=rnd.choice([-2, 3]))
    if shape == "new":
        return f"--- /dev/null\n+++ b/src/new{f}.c\n@@ -0,0 +1,2 @@\n+new file {f}\n+second line\n"
    if shape == "fuzz":
        return f"--- a/{path}\n+++ b/{path}\n" + hunk(lines, at, new, fuzz=True)
    assert shape == "broken"
    return f"--- a/{path}\n+++ b/{path}\n@@ -3,3 +3,3 @@\n not\n-there\n+at all\n not\n"


SHAPES = ["git", "quilt", "index", "offset", "new"]


def series_patches(proj: int, rnd: random.Random, kind: str) -> list[str]:
    """PER_SERIES patches on project PROJ, each on its own file. KIND: clean (no fuzz),
    fuzz (one patch needs fuzz 1), broken (one patch applies nowhere), termux (one
    patch whose context holds a placeholder)."""
    out = []
    for f in range(PER_SERIES):
        shape = SHAPES[(f + proj) % len(SHAPES)]
        if kind == "fuzz" and f == 7:
            shape = "fuzz"
        if kind == "broken" and f == 11:
            shape = "broken"
        if kind == "termux" and f == 0:
            shape = "quilt"
        out.append(make_patch(proj, f, shape, rnd, placeholder=kind == "termux" and f == 0))
    return out


def build_fixture(mirrors: Path) -> dict[str, str]:
    """The three downstreams and ten upstreams; returns series name -> kind."""
    rnd = random.Random(25)
    kinds: dict[str, str] = {}
    plan = [
        ("buildroot", 0, "clean"),
        ("buildroot", 1, "fuzz"),
        ("buildroot", 2, "broken"),
        ("buildroot", 3, "clean"),
        ("termux", 4, "termux"),
        ("termux", 5, "fuzz"),
        ("termux", 6, "clean"),
        ("msys2", 7, "clean"),
        ("msys2", 8, "fuzz"),
        ("msys2", 9, "clean"),
    ]
    br = new_repo(mirrors, "buildroot/buildroot")
    tx = new_repo(mirrors, "termux/termux-packages")
    ms = new_repo(mirrors, "msys2/MINGW-packages")
    for ds, proj, kind in plan:
        make_upstream(mirrors, proj, termux_paths=kind == "termux")
        patches = series_patches(proj, rnd, kind)
        if ds == "buildroot":
            d = br / "package" / f"pkg{proj}"
            d.mkdir(parents=True)
            (d / f"pkg{proj}.mk").write_text(
                f"PKG{proj}_VERSION = 1.0\n"
                f"PKG{proj}_SITE = $(call github,up,proj{proj},v$(PKG{proj}_VERSION))\n"
            )
            for i, text in enumerate(patches):
                (d / f"{i:04d}-change.patch").write_text(text)
            kinds[f"br-pkg{proj}"] = kind
        elif ds == "termux":
            d = tx / "packages" / f"pkg{proj}"
            d.mkdir(parents=True)
            (d / "build.sh").write_text(
                'TERMUX_PKG_VERSION="1.0"\n'
                f"TERMUX_PKG_SRCURL=https://github.com/up/proj{proj}/archive/refs/tags/"
                "v${TERMUX_PKG_VERSION}.tar.gz\n"
            )
            for i, text in enumerate(patches):
                (d / f"p{i:02d}.patch").write_text(text)
            kinds[f"tx-pkg{proj}"] = kind
        else:
            d = ms / f"mingw-w64-pkg{proj}"
            d.mkdir(parents=True)
            names = [f"{i:03d}-fix.patch" for i in range(len(patches))]
            for n, text in zip(names, patches, strict=True):
                (d / n).write_text(text)
            order = list(reversed(names))  # prepare() order, not name order
            (d / "PKGBUILD").write_text(
                f"_realname=pkg{proj}\npkgver=1.0\n"
                f'source=("https://github.com/up/proj{proj}/archive/v${{pkgver}}.tar.gz"\n'
                + "".join(f"        {n}\n" for n in names)
                + ")\n\nprepare() {\n  cd ${_realname}-${pkgver}\n"
                + "".join(f'  patch -Np1 -i "${{srcdir}}/{n}"\n' for n in order)
                + "}\n"
            )
            kinds[f"mw-mingw-w64-pkg{proj}"] = kind
    for repo in (br, tx, ms):
        commit_all(repo, "packages")
    return kinds


def test_harvest_and_parity_on_a_fixture_corpus(tmp_path: Path) -> None:
    mirrors = tmp_path / "mirrors"
    kinds = build_fixture(mirrors)
    manifest = tmp_path / "manifest.json"
    py = sys.executable

    def run(*args: str) -> str:
        r = subprocess.run([py, *args], capture_output=True, text=True, env=git_env(), cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    run(*HARVEST, "--mirrors", str(mirrors), "manifest", "--out", str(manifest), "--at",
        "--debian-list", str(tmp_path / "none.txt"))  # fmt: skip
    man = json.loads(manifest.read_text())
    cases = {c["name"]: c for c in man["cases"]}
    assert set(cases) == set(kinds)
    assert sum(len(c["patches"]) for c in cases.values()) == 10 * PER_SERIES
    assert {c["upstream_tag"] for c in cases.values()} == {"v1.0"}
    # MSYS2 order is prepare()'s, not the file names'
    ms = [p["path"].rsplit("/", 1)[1] for p in cases["mw-mingw-w64-pkg7"]["patches"]]
    assert ms == sorted(ms, reverse=True)
    assert (
        "patch text" not in manifest.read_text() and "changed by patch" not in manifest.read_text()
    )

    corpus = tmp_path / "corpus"
    run(*HARVEST, "--mirrors", str(mirrors), "materialize", "--manifest", str(manifest),
        "--out", str(corpus))  # fmt: skip
    placeholder = (corpus / "tx-pkg4" / "patches" / "p00.patch").read_text()
    assert "/data/data/com.termux/files/usr" in placeholder and "@TERMUX" not in placeholder
    # base/ holds the upstream files the series names, nothing else (a new file is not there)
    base_files = set(git(corpus / "br-pkg0" / "base", "ls-files").split())
    named = {f"src/f{f}.c" for f in range(PER_SERIES) if SHAPES[f % len(SHAPES)] != "new"}
    assert base_files == named

    results = tmp_path / "results.json"
    md = tmp_path / "PARITY.md"
    run(*PARITY, "--corpus", str(corpus), "--results", str(results), "--md", str(md),
        "--work", str(tmp_path / "work"), "--patchq", f"{py} -m patchq")  # fmt: skip
    out = json.loads(results.read_text())
    recs = out["cases"]
    expected_gnu = {
        "clean": "clean-F0",
        "termux": "clean-F0",
        "fuzz": "needs-fuzz",
        "broken": "fails",
    }
    assert {n: r["gnu"] for n, r in recs.items()} == {n: expected_gnu[k] for n, k in kinds.items()}
    s = out["summary"]
    assert (s["series"], s["patches"]) == (10, 300)
    assert (s["gnu_applies_series"], s["gnu_applies_patches"]) == (9, 270)
    # patchq makes GNU patch's tree on every series GNU applies, at both levels; at -F0 the
    # three series that need fuzz are refused by both (patchq: exit 3, naming --fuzz)
    assert s["F0"]["series"] == {"same": 9}
    assert s["F2"]["series"] == {"same": 9}
    assert sum(1 for r in recs.values() if r.get("F0", {}).get("both_refused")) == 3
    assert (
        "| `patchq apply` vs `patch -F0` | 9 | 270 | 9 (270 patches) | 0 | 0 (0 patches) |"
        in md.read_text()
    )

    # resumable: a second run finds every case done and runs nothing
    again = subprocess.run(
        [py, *PARITY, "--corpus", str(corpus), "--results", str(results), "--md", str(md),
         "--work", str(tmp_path / "work"), "--patchq", f"{py} -m patchq"],
        capture_output=True, text=True, env=git_env(), cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 0 and "10 cases, 0 to run" in again.stderr
    assert out["meta"]["patchq_runs"] == "worker" and out["meta"]["gnu_cache_hits"] == 0

    # GNU patch's verdicts come from the cache for a new results file, except where a
    # case changed; each patchq run as its own process gives the same outcomes.
    first = (corpus / "br-pkg0" / "series").read_text().split()[0]
    with (corpus / "br-pkg0" / "patches" / first).open("a") as f:
        f.write("trailing note\n")
    cache = results.with_suffix(".gnu.json")
    results2 = tmp_path / "results2.json"
    run(*PARITY, "--corpus", str(corpus), "--results", str(results2), "--gnu-cache",
        str(cache), "--md", str(md), "--work", str(tmp_path / "work"), "--patchq",
        f"{py} -m patchq", "--process-per-run")  # fmt: skip
    out2 = json.loads(results2.read_text())
    assert out2["meta"]["patchq_runs"] == "own process each"
    assert out2["meta"]["gnu_cache_hits"] == 9
    assert [n for n, r in out2["cases"].items() if not r["gnu_cached"]] == ["br-pkg0"]

    def outcomes(recs: dict[str, Any]) -> dict[str, Any]:
        keep = ("outcome", "patchq_rc", "mechanism", "methods", "normalisations")
        return {
            n: [r["gnu"], r.get("gnu_statuses")]
            + [{k: v for k, v in r.get(lvl, {}).items() if k in keep} for lvl in ("F0", "F2")]
            for n, r in recs.items()
        }

    same = outcomes(recs)
    same["br-pkg0"] = outcomes(out2["cases"])["br-pkg0"]  # changed: a note after a diff
    assert outcomes(out2["cases"]) == same
    assert [x["outcome"] for x in same["br-pkg0"][2:]] == ["same", "same"]
    assert {r["phases"]["patchq"] > 0 for r in out2["cases"].values() if "F0" in r} == {True}

    # --sample N: the series whose name's sha256 is 0 mod N; --fresh runs GNU patch again
    results3 = tmp_path / "results3.json"
    run(*PARITY, "--corpus", str(corpus), "--results", str(results3), "--gnu-cache",
        str(cache), "--md", str(md), "--work", str(tmp_path / "work"), "--patchq",
        f"{py} -m patchq", "--sample", "3", "--fresh")  # fmt: skip
    out3 = json.loads(results3.read_text())
    chosen = {n for n in kinds if int(hashlib.sha256(n.encode()).hexdigest(), 16) % 3 == 0}
    assert set(out3["cases"]) == chosen and out3["meta"]["gnu_cache_hits"] == 0
    assert "**Sample: every 3-th series" in md.read_text()


def test_bumps_finds_a_version_bump_with_its_refreshed_series(tmp_path: Path) -> None:
    """A Buildroot package bumped from 1.0 to 1.1 with its series refreshed (one patch
    kept, one renumbered, one dropped, one added) is found, with both upstream commits,
    the successor map and a split; a commit that changes a patch but not the version is
    not a bump."""
    mirrors = tmp_path / "mirrors"
    up = new_repo(mirrors, "up/proj0")
    (up / "a.c").write_text("one\n")
    commit_all(up, "1.0")
    git(up, "tag", "v1.0")
    (up / "a.c").write_text("one\ntwo\n")
    commit_all(up, "1.1")
    git(up, "tag", "v1.1")
    br = new_repo(mirrors, "buildroot/buildroot")
    d = br / "package" / "pkg0"
    d.mkdir(parents=True)
    mk = "PKG0_VERSION = {}\nPKG0_SITE = $(call github,up,proj0,v$(PKG0_VERSION))\n"
    (d / "pkg0.mk").write_text(mk.format("1.0"))
    for name, subject in (
        ("0001-keep.patch", "keep"),
        ("0002-drop.patch", "drop"),
        ("0003-renum.patch", "renum"),
    ):
        (d / name).write_text(f"Subject: [PATCH] {subject}\n---\n--- a/a.c\n+++ b/a.c\n")
    commit_all(br, "package/pkg0: new")
    (d / "0001-keep.patch").write_text("Subject: [PATCH] keep\n---\n--- a/a.c\n+++ b/a.c\n\n")
    commit_all(br, "package/pkg0: touch a patch, same version")
    (d / "pkg0.mk").write_text(mk.format("1.1"))
    (d / "0002-drop.patch").unlink()
    (d / "0003-renum.patch").rename(d / "0002-renum.patch")
    (d / "0003-new.patch").write_text("Subject: [PATCH] new\n---\n--- a/a.c\n+++ b/a.c\n")
    commit_all(br, "package/pkg0: bump to version 1.1")

    out = tmp_path / "bumps.toml"
    r = subprocess.run(
        [sys.executable, *HARVEST, "--mirrors", str(mirrors), "bumps", "--only", "buildroot",
         "--since", "2000-01-01", "--out", str(out)],
        capture_output=True, text=True, env=git_env(),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    cases = tomllib.loads(out.read_text())["case"]
    assert len(cases) == 1
    c = cases[0]
    assert c["name"] == "br-pkg0-1.0-to-1.1"
    assert (c["old_ref"], c["new_ref"]) == ("v1.0", "v1.1")
    assert c["old_commit"] == git(up, "rev-parse", "v1.0").strip()
    assert c["new_commit"] == git(up, "rev-parse", "v1.1").strip()
    assert c["downstream_new_commit"] == git(br, "rev-parse", "HEAD").strip()
    assert c["downstream_old_commit"] == git(br, "rev-parse", "HEAD~1").strip()
    assert c["old_series"] == ["0001-keep.patch", "0002-drop.patch", "0003-renum.patch"]
    assert c["new_series"] == ["0001-keep.patch", "0002-renum.patch", "0003-new.patch"]
    assert c["successor"] == {
        "0001-keep.patch": "0001-keep.patch",
        "0002-drop.patch": "",
        "0003-renum.patch": "0002-renum.patch",
    }
    assert c["added"] == ["0003-new.patch"]
    first = hashlib.sha256(c["name"].encode()).digest()[0]
    assert c["split"] == ("tuning" if first < int(0.7 * 256) else "validation")


def run_bumps(mirrors: Path, out: Path, *args: str) -> list[dict[str, Any]]:
    r = subprocess.run(
        [sys.executable, *HARVEST, "--mirrors", str(mirrors), "bumps", "--out", str(out),
         *args],
        capture_output=True, text=True, env=git_env(),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    cases: list[dict[str, Any]] = tomllib.loads(out.read_text()).get("case", [])
    return cases


def test_debian_bumps_take_the_old_source_and_the_first_revision_of_the_new(
    tmp_path: Path,
) -> None:
    """A git-buildpackage repository: the new upstream source is merged while the changelog
    still names 1.0 (that commit is not the old side), then the changelog names 1.1-1 with
    the series refreshed, then 1.1-2 adds a patch (not the new side: the first revision is).
    The bump is found with both sides, the strip level, the successor map and
    upstream_strip_dir; a repository whose series never changes gives none."""
    mirrors = tmp_path / "mirrors"
    repo = new_repo(mirrors, "someone/pkg")
    deb = repo / "debian"
    (deb / "patches").mkdir(parents=True)

    def state(src: str, version: str, series: dict[str, str], msg: str) -> str:
        (repo / "a.c").write_text(src)
        (deb / "changelog").write_text(
            f"pkg (1:{version}) unstable; urgency=medium\n\n  * x\n\n -- A <a@b>  Mon, 1 Jan 2024\n"
        )
        for f in (deb / "patches").iterdir():
            f.unlink()
        (deb / "patches" / "series").write_text("".join(f"{n} -p1\n" for n in series))
        for n, text in series.items():
            (deb / "patches" / n).write_text(text)
        commit_all(repo, msg)
        return git(repo, "rev-parse", "HEAD").strip()

    fix = "--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-{}\n+fixed\n"
    old = state("one\n", "1.0-1", {"fix.patch": fix.format("one")}, "1.0-1")
    merged = state("two\n", "1.0-1", {"fix.patch": fix.format("one")}, "merge upstream 1.1")
    new = state("two\n", "1.1-1", {"fix.patch": fix.format("two")}, "refresh for 1.1")
    state("two\n", "1.1-2", {"fix.patch": fix.format("two"), "more.patch": "x"}, "1.1-2")
    assert merged not in (old, new)
    quiet = new_repo(mirrors, "someone/quiet")  # native version: no Debian revision
    (quiet / "debian").mkdir()
    (quiet / "debian" / "changelog").write_text("quiet (2.0) unstable; urgency=low\n")
    commit_all(quiet, "native")
    repos = tmp_path / "repos.txt"
    repos.write_text("# list\nsomeone/pkg\nsomeone/quiet\nsomeone/absent\n")

    cases = run_bumps(mirrors, tmp_path / "b.toml", "--only", "debian", "--debian-list",
                      str(repos))  # fmt: skip
    assert len(cases) == 1
    c = cases[0]
    assert c["name"] == "db-pkg-1.0-to-1.1"
    assert c["upstream_repo"] == c["downstream_repo"] == "someone/pkg"
    assert (c["old_commit"], c["new_commit"]) == (old, new)
    assert (c["downstream_old_commit"], c["downstream_new_commit"]) == (old, new)
    assert c["upstream_strip_dir"] == "debian" and c["patch_dir"] == "debian/patches"
    assert c["old_series"] == c["new_series"] == ["fix.patch"]
    assert c["successor"] == {"fix.patch": "fix.patch"} and c["added"] == []
    assert c["strip"] == 1
    first = hashlib.sha256(c["name"].encode()).digest()[0]
    assert c["split"] == ("tuning" if first < int(0.7 * 256) else "validation")


def test_spack_bumps_pair_consecutive_versions_whose_patch_sets_differ(tmp_path: Path) -> None:
    """package.py lists 1.2, 1.1, 1.0 (and a deprecated 0.9): 1.0 gets common + fix-1.0,
    1.1 and 1.2 common + fix-1.1, so 1.0 -> 1.1 is the one bump (1.1 -> 1.2 has the same
    set); fix-1.0.patch is continued by fix-1.1.patch (same name without its version);
    a patch whose `when=` names a compiler is not taken."""
    mirrors = tmp_path / "mirrors"
    up = new_repo(mirrors, "up/tool")
    for v in ("0.9", "1.0", "1.1", "1.2"):
        (up / "a.c").write_text(f"{v}\n")
        commit_all(up, v)
        git(up, "tag", f"v{v}")
    sp = new_repo(mirrors, "spack/spack-packages")
    d = sp / "repos" / "spack_repo" / "builtin" / "packages" / "tool"
    d.mkdir(parents=True)
    (d / "package.py").write_text(
        "class Tool(CMakePackage):\n"
        '    git = "https://github.com/up/tool.git"\n'
        '    version("1.2", sha256="0")\n'
        '    version("1.0", sha256="0")\n'
        '    version("1.1", sha256="0")\n'
        '    version("0.9", sha256="0", deprecated=True)\n'
        '    patch("common.patch")\n'
        '    patch("fix-1.0.patch", when="@:1.0")\n'
        '    patch("fix-1.1.patch", when="@1.1:")\n'
        '    patch("gcc.patch", when="@1.2 %gcc")\n'
    )
    for n in ("common", "fix-1.0", "fix-1.1", "gcc"):
        (d / f"{n}.patch").write_text(f"--- a/a.c\n+++ b/a.c\n# {n}\n")
    commit_all(sp, "tool")

    cases = run_bumps(mirrors, tmp_path / "b.toml", "--only", "spack", "--at")
    assert [c["name"] for c in cases] == ["sp-tool-1.0-to-1.1"]
    c = cases[0]
    assert (c["old_ref"], c["new_ref"]) == ("v1.0", "v1.1")
    assert c["old_commit"] == git(up, "rev-parse", "v1.0").strip()
    assert c["new_commit"] == git(up, "rev-parse", "v1.1").strip()
    head = git(sp, "rev-parse", "HEAD").strip()
    assert c["downstream_old_commit"] == c["downstream_new_commit"] == head
    assert c["old_series"] == ["common.patch", "fix-1.0.patch"]
    assert c["new_series"] == ["common.patch", "fix-1.1.patch"]
    assert c["successor"] == {"common.patch": "common.patch", "fix-1.0.patch": "fix-1.1.patch"}
    assert "upstream_strip_dir" not in c
