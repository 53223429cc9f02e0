"""A symlinked `series` stays a symlink.

Debian's layout: the patch repo is the package folder, whose `series` is a symlink to
`debian/patches/series` (and `patches` one to `debian/patches`). Every writer — new,
refresh, rename, delete, import, float/sink, rebase --continue, undo and the journal's
rollback — writes through the link to the file it points to, atomically there; the link
itself is never replaced, and `debian/patches/series` is the series patchq works on. A
link out of the patch repo is still refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import git

LINES = "".join(f"line {i}\n" for i in range(1, 31))


def hunk(n: int, old: str, new: str) -> str:
    """A quilt-style hunk changing line `n` of f.c (context 3)."""
    lo, hi = max(1, n - 3), min(30, n + 3)
    body = "".join(f"-{old}\n+{new}\n" if i == n else f" line {i}\n" for i in range(lo, hi + 1))
    k = hi - lo + 1
    return f"--- a/f.c\n+++ b/f.c\n@@ -{lo},{k} +{lo},{k} @@\n{body}"


def dep3(subject: str, author: str = "A Packager <ap@example.org>") -> str:
    return f"Description: {subject}\nAuthor: {author}\nForwarded: not-needed\n---\n"


def cli(pkg: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(pkg), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, EDITOR="true", **env),
    )


def ok(pkg: Path, *args: str) -> str:
    r = cli(pkg, *args)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


def tree(root: Path) -> dict[str, tuple[str, str]]:
    """Every entry under `root`, links not followed: ("link", target) or ("file", text)."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if rel.startswith((".patchq", ".git")):
                continue
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = ("file", p.read_text())
    return out


@pytest.fixture
def debian(tmp_path: Path) -> tuple[Path, Path, str]:
    """An upstream checkout and a Debian package folder: debian/patches/{series,*.patch},
    with `series`, `series.lock` (not there yet) and `patches` linked into it."""
    up = tmp_path / "upstream"
    up.mkdir()
    git(up, "init", "-q", "-b", "main")
    (up / "f.c").write_text(LINES)
    git(up, "add", "-A")
    git(up, "commit", "-q", "-m", "release 1.0")
    base = git(up, "rev-parse", "HEAD").strip()
    pkg = tmp_path / "foo-1.0"
    dp = pkg / "debian" / "patches"
    dp.mkdir(parents=True)
    (pkg / "debian" / "control").write_text("Source: foo\n")
    (dp / "0001-fix-build.patch").write_text(dep3("fix the build") + hunk(3, "line 3", "CC ?= cc"))
    (dp / "0002-paths.patch").write_text(dep3("FHS paths") + hunk(15, "line 15", "/usr/share"))
    (dp / "0003-docs.patch").write_text(dep3("docs") + hunk(26, "line 26", "see man page"))
    (dp / "series").write_text(
        "# Debian-specific\n0001-fix-build.patch\n0002-paths.patch\n0003-docs.patch\n"
    )
    (pkg / "series").symlink_to("debian/patches/series")
    (pkg / "series.lock").symlink_to("debian/patches/series.lock")  # dangling until written
    (pkg / "patches").symlink_to("debian/patches")
    (pkg / "patchq.toml").write_text('target = "../upstream"\n')
    return up, pkg, base


LINKS = {
    "series": ("link", "debian/patches/series"),
    "series.lock": ("link", "debian/patches/series.lock"),
    "patches": ("link", "debian/patches"),
}


def links_kept(pkg: Path) -> dict[str, tuple[str, str]]:
    """The package's tree, after checking the three links are still links there and
    nothing else was written beside them (no plain `series`, no temporary file)."""
    now = tree(pkg)
    assert {k: now[k] for k in LINKS} == LINKS
    assert not [k for k in now if k.rsplit("/", 1)[-1].startswith(".") and k.endswith(".tmp")]
    return now


def series_of(pkg: Path) -> str:
    return (pkg / "debian" / "patches" / "series").read_text()


def test_every_writer_goes_through_the_links_and_undo_restores_them(
    debian: tuple[Path, Path, str],
) -> None:
    up, pkg, base = debian
    dp = pkg / "debian" / "patches"
    ok(pkg, "apply", "--onto", base)
    links_kept(pkg)
    assert (dp / "series.lock").is_file()  # the lock was written where its link points

    # new, then refresh: the series and the new patch file land in debian/patches.
    ok(pkg, "new", "0004-more.patch")
    assert series_of(pkg).endswith("0003-docs.patch\n0004-more.patch\n")
    (up / "f.c").write_text((up / "f.c").read_text().replace("line 8\n", "eight\n"))
    ok(pkg, "refresh")
    links_kept(pkg)
    assert "+eight" in (dp / "0004-more.patch").read_text()

    # rename, then undo: the link names the renamed file, then the old one again, and
    # the whole package folder is back as it was, byte for byte and link for link.
    before_rename = links_kept(pkg)
    ok(pkg, "rename", "0004-more.patch", "0004-eight.patch")
    assert "0004-eight.patch" in series_of(pkg) and (dp / "0004-eight.patch").is_file()
    assert not (dp / "0004-more.patch").exists()
    links_kept(pkg)
    ok(pkg, "undo")
    assert links_kept(pkg) == before_rename

    # float and sink reorder debian/patches/series.
    ok(pkg, "float", "0001-fix-build.patch")
    assert series_of(pkg).splitlines()[-1] == "0001-fix-build.patch"
    ok(pkg, "sink", "0001-fix-build.patch")
    assert series_of(pkg).splitlines()[1] == "0001-fix-build.patch"
    links_kept(pkg)

    # delete (popped first) and import.
    ok(pkg, "pop")
    ok(pkg, "delete", "-r", "0004-more.patch")
    assert "0004-more.patch" not in series_of(pkg) and not (dp / "0004-more.patch").exists()
    extra = pkg.parent / "0005-extra.patch"
    extra.write_text(dep3("extra") + hunk(20, "line 20", "twenty"))
    ok(pkg, "import", str(extra))
    assert series_of(pkg).endswith("0005-extra.patch\n") and (dp / "0005-extra.patch").is_file()
    links_kept(pkg)


def test_rebase_continue_writes_through_the_links(debian: tuple[Path, Path, str]) -> None:
    up, pkg, base = debian
    ok(pkg, "apply", "--onto", base)
    git(up, "checkout", "-q", "main")
    (up / "f.c").write_text(LINES.replace("line 15\n", "line fifteen\n"))
    git(up, "commit", "-q", "-am", "upstream edits line 15")
    r = cli(pkg, "rebase", "--onto", "main")
    assert r.returncode == 3, r.stderr
    text = (up / "f.c").read_text()
    start, end = text.index("<<<<<<< "), text.index(">>>>>>> ")
    end = text.index("\n", end) + 1
    (up / "f.c").write_text(text[:start] + "/usr/share/fifteen\n" + text[end:])
    ok(pkg, "rebase", "--continue")
    links_kept(pkg)
    assert "+/usr/share/fifteen" in (pkg / "debian/patches/0002-paths.patch").read_text()
    assert main_base(up) in (pkg / "debian/patches/series.lock").read_text()
    assert ok(pkg, "verify") is not None


def main_base(up: Path) -> str:
    return git(up, "rev-parse", "main").strip()


@pytest.mark.parametrize("point", ["journal:file-written", "journal:done"])
def test_a_rolled_back_transaction_leaves_the_links_and_their_files(
    debian: tuple[Path, Path, str], point: str
) -> None:
    """Ctrl-C in the middle of `rename`: the journal puts back the bytes of the files the
    links point to, and the links themselves were never touched."""
    _, pkg, base = debian
    ok(pkg, "apply", "--onto", base)
    before = links_kept(pkg)
    r = cli(
        pkg,
        "rename",
        "0002-paths.patch",
        "0002-fhs.patch",
        PATCHQ_CRASH_AT=point,
        PATCHQ_CRASH_SIGNAL="INT",
    )
    assert r.returncode == 130 and "Traceback" not in r.stderr, r.stderr
    assert links_kept(pkg) == before


def test_a_series_link_out_of_the_patch_repo_is_still_refused(
    debian: tuple[Path, Path, str], tmp_path: Path
) -> None:
    _, pkg, base = debian
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "series").write_text((pkg / "debian/patches/series").read_text())
    (pkg / "series").unlink()
    (pkg / "series").symlink_to(outside / "series")
    before = (outside / "series").read_text()
    r = cli(pkg, "new", "0009-x.patch")
    assert r.returncode == 5 and "symlink out of the patch repo" in r.stderr, r.stderr
    assert (outside / "series").read_text() == before
    assert (pkg / "series").is_symlink()


def test_in_the_package_checkout_itself_the_linked_files_are_not_the_users_edits(
    debian: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """gbp-style: the package folder is the target too. What patchq writes through the
    links (debian/patches/series, the patches) is its own, not an edit that blocks the
    next command."""
    _, pkg, _ = debian
    (pkg / "f.c").write_text(LINES)
    (pkg / "patchq.toml").write_text("")
    git(pkg, "init", "-q", "-b", "main")
    git(pkg, "add", "-A")
    git(pkg, "commit", "-q", "-m", "foo 1.0 with its debian/ folder")
    ok(pkg, "apply", "--onto", "main")
    ok(pkg, "new", "0004-more.patch")
    (pkg / "f.c").write_text((pkg / "f.c").read_text().replace("line 8\n", "eight\n"))
    ok(pkg, "refresh")
    ok(pkg, "rename", "0004-more.patch", "0004-eight.patch")
    ok(pkg, "pop", "-a")
    ok(pkg, "push", "-a")
    links_kept(pkg)
    assert series_of(pkg).endswith("0003-docs.patch\n0004-eight.patch\n")
    assert "+eight" in (pkg / "debian/patches/0004-eight.patch").read_text()
    # The linked series and lock, seen again through `patches/`, are no stray patches.
    r = cli(pkg, "lint")
    assert "patches/series" not in r.stdout + r.stderr, r.stdout
