"""DEP-3 authorship honoured: a description with a line of spaces
does not hide `Author:`/`From:`; the commits `apply` makes and `export --mbox` credit the
patch's author; `lint` says when a patch names no author it can read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchq.core.header import header_info

from ..conftest import git

LINES = "".join(f"line {i}\n" for i in range(1, 31))


def hunk(n: int, new: str) -> str:
    lo, hi = max(1, n - 3), min(30, n + 3)
    body = "".join(f"-line {i}\n+{new}\n" if i == n else f" line {i}\n" for i in range(lo, hi + 1))
    k = hi - lo + 1
    return f"--- a/f.c\n+++ b/f.c\n@@ -{lo},{k} +{lo},{k} @@\n{body}"


# A description whose paragraphs are parted by a line of one space (or a tab), not " .":
# the fields below it were lost before.
SPACED = (
    "Description: use the system zlib\n"
    " The bundled copy is older than the one the archive ships.\n"
    " \n"
    " Linking the system one keeps security updates in one place.\n"
    "Author: Jane Packager <jane@example.org>\n"
    "Forwarded: not-needed\n"
    "Last-Update: 2024-03-02\n"
    "---\n"
)
TABBED = (
    "Description: fix the man page\n"
    " First paragraph.\n"
    "\t\n"
    " Second paragraph.\n"
    "From: Tab Author <tab@example.org>\n"
    "---\n"
)
NO_AUTHOR = "Description: silence a warning\nForwarded: no\n---\n"


@pytest.mark.parametrize(
    "header,who,body",
    [
        (SPACED, ("Jane Packager", "jane@example.org"), "older than the one the archive ships."),
        (TABBED, ("Tab Author", "tab@example.org"), "First paragraph.\n\nSecond paragraph."),
    ],
)
def test_a_line_of_spaces_in_the_description_does_not_hide_the_author(
    header: str, who: tuple[str, str], body: str
) -> None:
    info = header_info(header.encode())
    assert (info.author_name, info.author_email) == who
    assert body in info.body and "Author" not in info.body and "From" not in info.body


def test_a_line_of_spaces_before_mail_text_still_ends_the_fields() -> None:
    """Only a field DEP-3 knows (or more of the value) carries the block on."""
    info = header_info(b"Subject: tidy\n \nSigned-off-by: Someone <s@example.org>\n")
    assert info.subject == "tidy" and info.author_name is None


def cli(pkg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(pkg), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )


@pytest.fixture
def package(tmp_path: Path) -> tuple[Path, Path, str]:
    """An upstream checkout and a Debian package folder whose debian/patches holds a
    patch with a spaced description, one with a tab line and `From:`, one without an
    author, and the patch repo's `series` and `patches` linked into it."""
    up = tmp_path / "upstream"
    up.mkdir()
    git(up, "init", "-q", "-b", "main")
    (up / "f.c").write_text(LINES)
    git(up, "add", "-A")
    git(up, "commit", "-q", "-m", "release 2.0")
    base = git(up, "rev-parse", "HEAD").strip()
    pkg = tmp_path / "zlib-user-2.0"
    dp = pkg / "debian" / "patches"
    dp.mkdir(parents=True)
    (dp / "system-zlib.patch").write_text(SPACED + hunk(4, "use system zlib"))
    (dp / "man-page.patch").write_text(TABBED + hunk(15, "fixed man page"))
    (dp / "quiet.patch").write_text(NO_AUTHOR + hunk(26, "quiet"))
    (dp / "series").write_text("system-zlib.patch\nman-page.patch\nquiet.patch\n")
    (pkg / "series").symlink_to("debian/patches/series")
    (pkg / "patches").symlink_to("debian/patches")
    (pkg / "patchq.toml").write_text('target = "../upstream"\n')
    return up, pkg, base


def test_commits_and_mbox_credit_the_patch_author(
    package: tuple[Path, Path, str], tmp_path: Path
) -> None:
    up, pkg, base = package
    r = cli(pkg, "apply", "--onto", base)
    assert r.returncode == 0, r.stderr
    log = git(up, "log", "--reverse", "--format=%an <%ae>|%s", f"{base}..HEAD")
    assert log.splitlines() == [
        "Jane Packager <jane@example.org>|use the system zlib",
        "Tab Author <tab@example.org>|fix the man page",
        # No author in the header: the person's git identity (the sealed test's).
        "Up Stream <up@example.org>|silence a warning",
    ]
    mbox = tmp_path / "out.mbox"
    r = cli(pkg, "export", "--mbox", str(mbox))
    assert r.returncode == 0, r.stderr
    froms = [ln for ln in mbox.read_text().splitlines() if ln.startswith("From: ")]
    assert froms == [
        "From: Jane Packager <jane@example.org>",
        "From: Tab Author <tab@example.org>",
        "From: Up Stream <up@example.org>",
    ]
    # git am takes the mbox with the same authors.
    am = tmp_path / "am"
    am.mkdir()
    git(am, "init", "-q", "-b", "main")
    (am / "f.c").write_text(LINES)
    git(am, "add", "-A")
    git(am, "commit", "-q", "-m", "release 2.0")
    git(am, "am", "-q", str(mbox))
    assert git(am, "log", "-1", "--skip=2", "--format=%an <%ae>").strip() == (
        "Jane Packager <jane@example.org>"
    )


def test_lint_names_the_patch_without_an_author(package: tuple[Path, Path, str]) -> None:
    _, pkg, _ = package
    r = cli(pkg, "lint")
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines() == [
        "patches/quiet.patch: warning: names no author patchq can read (DEP-3 `Author:`, "
        "or a mail `From:`): its commits and `export --mbox` credit your git identity instead"
    ]
    # With an author it can read, lint is clean (exit 0).
    quiet = pkg / "debian" / "patches" / "quiet.patch"
    quiet.write_text(quiet.read_text().replace("Forwarded: no\n", "Author: Q <q@example.org>\n"))
    r = cli(pkg, "lint")
    assert (r.returncode, r.stdout) == (0, ""), r.stdout
    assert "no findings" in r.stderr
