"""Headerless ecosystems: recipes whose patches carry no header and
`diff -u a.c.orig a.c` names. `lint` accepts them when the repo says so (`lint-allow` in
patchq.toml, or `lint --allow`), so `patchq lint && git commit` works there; `init` in a
folder that already holds a `series` keeps it; `import --order LIST DIR` takes the
recipe's own order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import git, new_repo

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "patchq", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )


def orig_style(path: str, n: int, old: str, new: str) -> str:
    """A bare `diff -u path.orig path` of a 20-line file, as recipes' patches are made."""
    lo, hi = max(1, n - 3), min(20, n + 3)
    body = "".join(f"-{old}\n+{new}\n" if i == n else f" line {i}\n" for i in range(lo, hi + 1))
    k = hi - lo + 1
    return (
        f"--- pkg-1.0/{path}.orig\t2024-01-01 10:00:00.000000000 +0100\n"
        f"+++ pkg-1.0/{path}\t2024-01-01 10:05:00.000000000 +0100\n"
        f"@@ -{lo},{k} +{lo},{k} @@\n{body}"
    )


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    """A patch repo holding a recipe's bare patches: no header, `.orig` names."""
    repo = tmp_path / "feedstock"
    (repo / "patches").mkdir(parents=True)
    (repo / "patches" / "fix-cmake.patch").write_text(
        orig_style("CMakeLists.txt", 4, "line 4", "X")
    )
    (repo / "patches" / "no-rpath.patch").write_text(orig_style("src/Makefile", 9, "line 9", "Y"))
    (repo / "series").write_text("fix-cmake.patch\nno-rpath.patch\n")
    (repo / "patchq.toml").write_text("")
    return repo


def test_lint_accepts_headerless_orig_patches_when_the_repo_says_so(recipe: Path) -> None:
    r = cli(recipe, "lint")
    assert r.returncode == 1
    assert sorted({ln.split(": warning: ")[1][:20] for ln in r.stdout.splitlines()}) == [
        "has no header: say w",
        "the names 'CMakeList",
        "the names 'src/Makef",
    ]
    # The flag, once a kind or comma-separated; one kind alone leaves the other.
    r = cli(recipe, "lint", "--allow", "no-header")
    assert r.returncode == 1 and "no header" not in r.stdout and ".orig" in r.stdout
    assert cli(recipe, "lint", "--allow", "no-header", "--allow", "orig-names").returncode == 0
    assert cli(recipe, "lint", "--allow", "no-header,orig-names").returncode == 0
    # The config key: `patchq lint && git commit` works in such a repo.
    (recipe / "patchq.toml").write_text('lint-allow = ["no-header", "orig-names"]\n')
    git(recipe, "init", "-q", "-b", "main")
    git(recipe, "add", "-A")
    done = subprocess.run(
        [
            "sh",
            "-c",
            f'"{sys.executable}" -m patchq lint && git commit -q -m "recipe patches"',
        ],
        cwd=recipe,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(recipe, "log", "--format=%s").strip() == "recipe patches"
    # Names that differ otherwise than by a backup suffix are still worth a look.
    (recipe / "patches" / "no-rpath.patch").write_text(
        orig_style("src/Makefile", 9, "line 9", "Y").replace("src/Makefile.orig", "src/Make.in")
    )
    r = cli(recipe, "lint")
    assert r.returncode == 1 and "'src/Make.in', 'src/Makefile' differ" in r.stdout


def test_lint_allow_refuses_an_unknown_kind(recipe: Path) -> None:
    r = cli(recipe, "lint", "--allow", "no-headers")
    assert r.returncode == 4 and "no such kind" in r.stderr and "no-header" in r.stderr
    (recipe / "patchq.toml").write_text('lint-allow = ["everything"]\n')
    r = cli(recipe, "lint")
    assert r.returncode == 4 and "`lint-allow` holds 'everything'" in r.stdout + r.stderr


def test_init_in_a_folder_with_a_series_keeps_it(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "debian" / "patches").mkdir(parents=True)
    series = "# from upstream\n01-fix.patch -p1\n#02-disabled.patch\n"
    (pkg / "debian" / "patches" / "series").write_text(series)
    (pkg / "debian" / "patches" / "01-fix.patch").write_text(orig_style("a.c", 3, "line 3", "Z"))
    (pkg / "series").symlink_to("debian/patches/series")
    (pkg / "patches").symlink_to("debian/patches")
    r = cli(pkg, "init")
    assert r.returncode == 0, r.stderr
    assert "around its series (1 patch, kept as it is)" in r.stderr
    assert (pkg / "patchq.toml").is_file()
    assert os.readlink(pkg / "series") == "debian/patches/series"
    assert (pkg / "debian" / "patches" / "series").read_text() == series
    assert cli(pkg, "series").stdout == "01-fix.patch\n"
    # A queue is there now: a second init refuses and changes nothing.
    config = (pkg / "patchq.toml").read_bytes()
    r = cli(pkg, "init")
    assert r.returncode == 4 and "already exists" in r.stderr
    assert (pkg / "patchq.toml").read_bytes() == config
    # A plain folder without a series still gets an empty one.
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli(empty, "init")
    assert r.returncode == 0 and "initialised an empty patch queue" in r.stderr
    assert (empty / "series").read_text() == ""


def test_import_order_takes_the_recipes_order(tmp_path: Path) -> None:
    up = tmp_path / "upstream"
    base = new_repo(up, {"a.c": LINES}, "1.0")
    recipe = tmp_path / "recipe"
    recipe.mkdir()
    # Each builds on the one before in the recipe's order; name order would fail.
    (recipe / "zz-first.patch").write_text(orig_style("a.c", 5, "line 5", "one"))
    (recipe / "aa-second.patch").write_text(orig_style("a.c", 5, "one", "two"))
    (recipe / "mm-third.diff").write_text(orig_style("a.c", 5, "two", "three"))
    (recipe / "unused.patch").write_text(orig_style("a.c", 9, "line 9", "nine"))
    (recipe / "build.sh").write_text("make\n")
    order = tmp_path / "order.txt"
    order.write_text(
        "# as meta.yaml lists them\nzz-first.patch\naa-second.patch\n\nmm-third.diff\n"
    )
    repo = tmp_path / "queue"
    repo.mkdir()
    (repo / "patchq.toml").write_text(
        'target = "../upstream"\nlint-allow = ["no-header", "orig-names"]\n'
    )
    (repo / "series").write_text("")
    r = cli(repo, "import", "--order", str(order), str(recipe))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["zz-first.patch", "aa-second.patch", "mm-third.diff"]
    assert f"skipped {recipe}/unused.patch: not named in order.txt" in r.stderr
    assert cli(repo, "series").stdout.split() == [
        "zz-first.patch",
        "aa-second.patch",
        "mm-third.diff",
    ]
    r = cli(repo, "apply", "--onto", base)
    assert r.returncode == 0, r.stderr
    assert (up / "a.c").read_text() == LINES.replace("line 5\n", "three\n")
    assert cli(repo, "lint").returncode == 0


def test_import_order_errors_change_nothing(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe"
    recipe.mkdir()
    (recipe / "a.patch").write_text(orig_style("a.c", 5, "line 5", "one"))
    order = tmp_path / "order.txt"
    order.write_text("a.patch\nmissing.patch\n")
    repo = tmp_path / "queue"
    repo.mkdir()
    (repo / "series").write_text("")
    r = cli(repo, "import", "--order", str(order), str(recipe))
    assert r.returncode == 4 and f"{order}:2" in r.stderr and "missing.patch" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert (repo / "series").read_text() == "" and not (repo / "patches").exists()
    r = cli(repo, "import", "--order", str(order), str(recipe / "a.patch"))
    assert r.returncode == 4 and "--order takes the folder" in r.stderr


def test_init_adopts_a_patches_folder_in_place(tmp_path: Path) -> None:
    """A package folder with `patches/` and no series (Buildroot's layout): `init` makes
    the series of the patch files already there, in the name order such a build applies
    them, names what it skipped, and `import` is not needed (it would find them taken)."""
    up = tmp_path / "upstream"
    base = new_repo(up, {"a.c": LINES}, "1.0")
    pkg = tmp_path / "pkg"
    (pkg / "patches").mkdir(parents=True)
    files = {
        "0002-second.patch": orig_style("a.c", 12, "line 12", "TWELVE"),
        "0001-first.patch": orig_style("a.c", 3, "line 3", "THREE"),
        "0003-third.diff": orig_style("a.c", 18, "line 18", "EIGHTEEN"),
    }
    for name, text in files.items():
        (pkg / "patches" / name).write_text(text)
    (pkg / "patches" / "README").write_text("notes\n")
    before = {p.name: p.read_bytes() for p in (pkg / "patches").iterdir()}
    r = cli(pkg, "init", "--target", "../upstream")
    assert r.returncode == 0, r.stderr
    assert "around the 3 patches already in patches/, in name order" in r.stderr
    assert "skipped " in r.stderr and "README: not a patch" in r.stderr
    assert (pkg / "series").read_text() == "0001-first.patch\n0002-second.patch\n0003-third.diff\n"
    assert {p.name: p.read_bytes() for p in (pkg / "patches").iterdir()} == before
    r = cli(pkg, "apply", "--onto", base)
    assert r.returncode == 0, r.stderr
    assert cli(pkg, "verify").returncode == 0

    # A file there that is not a patch at all: refused, nothing written.
    bad = tmp_path / "bad"
    (bad / "patches").mkdir(parents=True)
    (bad / "patches" / "0001-broken.patch").write_text("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n")
    r = cli(bad, "init")
    assert r.returncode == 4 and "0001-broken.patch" in r.stderr, r.stderr
    assert sorted(p.name for p in bad.iterdir()) == ["patches"]
