"""Distribution layouts: folders without a series, Debian's
`debian/patches`, patches in sub-folders; the same change imported twice; the files of
patches a rebase takes out of the series, and `delete` of a commented-out entry."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import Queue, Result, Upstream, run_patchq
from ..rebase.test_check_rebase import BASE, advance, make_patch, sub

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def files_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".patchq" not in p.parts
    }


def dep3(subject: str) -> str:
    return f"Description: {subject}\nAuthor: A Packager <ap@example.org>\nForwarded: no\n---\n"


def one_line(path: str, n: int, old: str, new: str, prefix: bool = True) -> str:
    """A `diff -u`-style hunk changing line `n` of a 20-line file (context 3)."""
    lo = max(1, n - 3)
    hi = min(20, n + 3)
    body = "".join(f"-{old}\n+{new}\n" if i == n else f" line {i}\n" for i in range(lo, hi + 1))
    a, b = (f"a/{path}", f"b/{path}") if prefix else (path, path)
    k = hi - lo + 1
    return f"--- {a}\n+++ {b}\n@@ -{lo},{k} +{lo},{k} @@\n{body}"


@pytest.fixture
def src(upstream: Upstream) -> str:
    upstream.write("src/main.c", LINES).write("Makefile", LINES)
    return upstream.commit("release 1.0")


# --- folders without a series (OpenWrt, Buildroot) ---------------------------------------


def test_a_folder_without_series_is_taken_in_sorted_name_order(
    src: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    pdir = tmp_path / "openwrt" / "package" / "foo" / "patches"
    (pdir / "files").mkdir(parents=True)
    # Each patch builds on the one before it in name order: any other order fails.
    (pdir / "100-third.patch").write_text(dep3("third") + one_line("src/main.c", 5, "L5", "M5"))
    (pdir / "010-first.patch").write_text(dep3("first") + one_line("src/main.c", 5, "line 5", "K5"))
    (pdir / "020-second.diff").write_text(dep3("second") + one_line("src/main.c", 5, "K5", "L5"))
    (pdir / "README").write_text("how these patches were made\n")
    (pdir / "030-gz.patch.gz").write_bytes(b"\x1f\x8b not really")
    (pdir / "files" / "extra.patch").write_text(one_line("Makefile", 2, "line 2", "X"))
    r = patchq("import", str(pdir))  # a plain folder argument, as with --quilt
    assert r.code == 0, r.err
    assert r.out.split() == ["010-first.patch", "020-second.diff", "100-third.patch"]
    assert queue.series() == "010-first.patch\n020-second.diff\n100-third.patch\n"
    assert f"skipped {pdir}/README: not a patch" in r.err
    assert f"skipped {pdir}/030-gz.patch.gz: a compressed patch" in r.err
    assert f"skipped {pdir}/files: a folder" in r.err
    assert (queue.path / "patches" / "020-second.diff").read_bytes() == (
        pdir / "020-second.diff"
    ).read_bytes()
    r = patchq("apply", "--onto", src)
    assert r.code == 0, r.err
    assert upstream.read("src/main.c") == sub(LINES, "line 5\n", "M5\n").encode()
    assert patchq("lint").code == 0


def test_buildroot_package_folder_and_unsafe_names(
    src: str, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    pkg = tmp_path / "buildroot" / "package" / "foo"
    pkg.mkdir(parents=True)
    (pkg / "foo.mk").write_text("FOO_VERSION = 1.0\n")
    (pkg / "Config.in").write_text("config BR2_PACKAGE_FOO\n")
    (pkg / "0001-fix.patch").write_text(dep3("fix") + one_line("Makefile", 3, "line 3", "X3"))
    (pkg / "0002-more.patch").write_text(dep3("more") + one_line("Makefile", 12, "line 12", "X"))
    # The package folder itself, through --quilt: the .mk and Config.in are not patches.
    r = patchq("import", "--quilt", str(pkg))
    assert r.code == 0, r.err
    assert queue.series() == "0001-fix.patch\n0002-more.patch\n"
    assert "foo.mk: not a patch" in r.err and "Config.in: not a patch" in r.err
    # A name a series line cannot hold is refused, naming it; nothing is written.
    other = tmp_path / "other"
    other.mkdir()
    (other / "a fix.patch").write_text(one_line("Makefile", 8, "line 8", "Y"))
    before = files_of(queue.path)
    r = patchq("import", str(other))
    assert r.code == 4 and "'a fix.patch' cannot be named in a series line" in r.err
    assert len(r.err.strip().splitlines()) == 1 and files_of(queue.path) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x\n")
    r = patchq("import", "--quilt", str(empty))
    assert r.code == 4 and "no series file and no *.patch or *.diff files" in r.err
    assert patchq("import", str(tmp_path / "nowhere"), str(other)).code == 4


# --- Debian ---------------------------------------------------------------------------


def test_debian_package_root_with_subfolders_strip_levels_and_comments(
    src: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    pkg = tmp_path / "foo-1.0"
    dp = pkg / "debian" / "patches"
    (dp / "upstream").mkdir(parents=True)
    (dp / "debian").mkdir()
    (pkg / "debian" / "control").write_text("Source: foo\n")
    series = (
        "# Backported from upstream\n"
        "upstream/0001-fix-build.patch\n"
        "\n"
        "# Debian-specific changes\n"
        "debian/0002-paths.patch -p0\n"
        "#debian/0003-disabled.patch\n"
    )
    (dp / "series").write_text(series)
    (dp / "upstream" / "0001-fix-build.patch").write_text(
        dep3("fix the build") + one_line("Makefile", 4, "line 4", "CC ?= cc")
    )
    (dp / "debian" / "0002-paths.patch").write_text(
        dep3("FHS paths") + one_line("src/main.c", 10, "line 10", "/usr/share", prefix=False)
    )
    (dp / "debian" / "0003-disabled.patch").write_text("not imported\n")
    r = patchq("import", str(pkg))  # the package root: debian/patches/series under it
    assert r.code == 0, r.err
    assert r.out.split() == ["upstream/0001-fix-build.patch", "debian/0002-paths.patch"]
    # Comments (a commented-out patch too) and -p0 come along verbatim.
    assert queue.series() == series
    assert not (queue.path / "patches" / "debian" / "0003-disabled.patch").exists()
    r = patchq("apply", "--onto", src)
    assert r.code == 0, r.err
    assert upstream.read("src/main.c") == sub(LINES, "line 10\n", "/usr/share\n").encode()
    assert upstream.read("Makefile") == sub(LINES, "line 4\n", "CC ?= cc\n").encode()
    assert patchq("lint").code == 0
    # The same package given as its debian/ folder finds the same series.
    (queue.path / "series").write_text("")
    for p in (queue.path / "patches").rglob("*.patch"):
        p.unlink()
    r = patchq("import", "--quilt", str(pkg / "debian"))
    assert r.code == 0, r.err
    assert queue.series() == series


# --- the same change twice --------------------------------------------------------------


def test_importing_a_change_the_series_already_makes_is_refused(
    src: str, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    git_style = (
        "From: Dev <dev@example.org>\nSubject: [PATCH] fix the build\n\n"
        "diff --git a/Makefile b/Makefile\nindex 1111111..2222222 100644\n"
        + one_line("Makefile", 6, "line 6", "CFLAGS += -fPIC")
    )
    queue.add("0001-fix-build.patch", git_style)
    # The same fix from a mailing list: another header, quilt style, another context
    # size and line numbers (made against a file with two more lines on top).
    ctx1 = one_line("Makefile", 6, "line 6", "CFLAGS += -fPIC").split("@@", 2)[2]
    small = "".join(x for x in ctx1.splitlines(True) if x.strip() not in ("line 3", "line 9"))
    mailed = (
        "Description: build with -fPIC\nOrigin: list\n---\n"
        "--- foo.orig/Makefile\n+++ foo/Makefile\n@@ -6,5 +6,5 @@\n" + small.lstrip("\n")
    )
    (tmp_path / "fpic.patch").write_text(mailed)
    before = files_of(queue.path)
    r = patchq("import", str(tmp_path / "fpic.patch"))
    assert r.code == 4
    assert "fpic.patch makes the same change as 0001-fix-build.patch, already in the series" in (
        r.err
    )
    assert "--force" in r.err and len(r.err.strip().splitlines()) == 1
    assert files_of(queue.path) == before
    # A different change to the same lines is no duplicate.
    (tmp_path / "other.patch").write_text(mailed.replace("-fPIC", "-fPIE"))
    assert patchq("import", str(tmp_path / "other.patch")).code == 0
    # --force takes it anyway; lint then names both, as a warning (exit 1).
    r = patchq("import", "--force", str(tmp_path / "fpic.patch"))
    assert r.code == 0, r.err
    r = patchq("lint")
    assert r.code == 1
    assert (
        "patches/fpic.patch: warning: makes the same change as patches/0001-fix-build.patch"
        in r.out + r.err
    )
    # Two copies inside one import are refused too, naming both.
    d = tmp_path / "twice"
    d.mkdir()
    (d / "01-a.patch").write_text(one_line("Makefile", 15, "line 15", "Z"))
    (d / "02-b.patch").write_text(dep3("again") + one_line("Makefile", 15, "line 15", "Z"))
    r = patchq("import", str(d))
    assert r.code == 4 and "02-b.patch makes the same change as 01-a.patch, imported with it" in (
        r.err
    )


# --- patches a rebase takes out of the series ---------------------------------------------


def gone_scenario(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> tuple[str, str, str]:
    """A series of three on f.txt: a.patch stays, fixes/e.patch is taken upstream by one
    commit (then upstream moves on), h.patch conflicts. Returns (base, taker, onto)."""
    upstream.write("f.txt", BASE).write("g.txt", "g\n")
    base = upstream.commit("base")
    a = make_patch(upstream, dep3("a"), {"f.txt": sub(BASE, "line 5\n", "A5\n")})
    e = make_patch(upstream, dep3("e"), {"f.txt": sub(BASE, "line 20\n", "E20\n")})
    h = make_patch(upstream, dep3("h"), {"f.txt": sub(BASE, "line 32\n", "H32\n")})
    queue.add("a.patch", a).add("fixes/e.patch", e).add("h.patch", h)
    assert patchq("apply", "--onto", base).code == 0
    advance(upstream, "unrelated", {"g.txt": "g2\n"})
    taker = advance(upstream, "take e", {"f.txt": sub(BASE, "line 20\n", "E20\n")})
    onto = advance(
        upstream,
        "edit h's line",
        {"f.txt": sub(sub(BASE, "line 20\n", "E20\n"), "line 32\n", "Line thirty-two\n")},
    )
    return base, taker, onto


def test_upstreamed_and_dropped_files_leave_patches_and_delete_takes_the_comment(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base, taker, onto = gone_scenario(upstream, queue, patchq)
    r = patchq("check", "--onto", "main", "--json")
    doc = {p["name"]: p for p in json.loads(r.out)["patches"]}
    assert doc["fixes/e.patch"]["status"] == "upstreamed"
    assert doc["fixes/e.patch"]["hunks"][0]["drift"] == [taker]
    assert patchq("rebase", "--onto", "main").code == 3
    r = patchq("rebase", "--skip")
    assert r.code == 0, r.err
    # The comment names the commit that took e (the one check named), not onto.
    assert queue.series() == (
        f"a.patch\n# upstreamed in {taker[:12]}: fixes/e.patch\n# dropped in {onto[:12]}: h.patch\n"
    )
    # Their files are gone, so a build applying every file in patches/ skips them.
    assert sorted(files_of(queue.path / "patches")) == ["a.patch"]
    assert patchq("lint").code == 0
    assert patchq("verify").code == 0
    # `delete` removes a commented-out entry; an unknown name is still refused.
    before = files_of(queue.path)
    r = patchq("delete", "nope.patch")
    assert r.code == 4 and files_of(queue.path) == before
    r = patchq("delete", "fixes/e.patch")
    assert r.code == 0, r.err
    assert queue.series() == f"a.patch\n# dropped in {onto[:12]}: h.patch\n"
    (queue.path / "series").write_text(queue.series() + "#old.patch -p0\n# old.patch is prose\n")
    assert patchq("delete", "old.patch").code == 0
    assert queue.series() == f"a.patch\n# dropped in {onto[:12]}: h.patch\n# old.patch is prose\n"
    assert patchq("delete", "h.patch").code == 0
    assert queue.series() == "a.patch\n# old.patch is prose\n"


def test_retired_move_keeps_the_files_aside_and_a_killed_finish_restores_them(
    upstream: Upstream,
    queue: Queue,
    patchq: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nretired = "move"\n')
    base, taker, onto = gone_scenario(upstream, queue, patchq)
    # Only the upstreamed patch leaves: no conflict, the rebase finishes in one run.
    (queue.path / "series").write_text("a.patch\nfixes/e.patch\n")
    (queue.path / "patches" / "h.patch").unlink()
    assert patchq("apply", "--onto", base).code == 0
    e = (queue.path / "patches" / "fixes" / "e.patch").read_bytes()
    before = files_of(queue.path)
    monkeypatch.setenv("PATCHQ_CRASH_AT", "journal:file-written")
    r = run_patchq("--dir", str(queue.path), "rebase", "--onto", "main")
    assert r.code != 0
    monkeypatch.delenv("PATCHQ_CRASH_AT")
    r = patchq("rebase", "--abort")
    assert r.code == 0, r.err
    assert files_of(queue.path) == before
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    after = files_of(queue.path / "patches")
    assert sorted(after) == [".upstreamed/fixes/e.patch", "a.patch"]
    assert after[".upstreamed/fixes/e.patch"] == e
    assert patchq("lint").code == 0
    assert patchq("delete", "-r", "fixes/e.patch").code == 0
    assert sorted(files_of(queue.path / "patches")) == ["a.patch"]
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nretired = "keep"\n')
    r = patchq("series")
    assert r.code == 4 and "`retired` must be" in r.err
