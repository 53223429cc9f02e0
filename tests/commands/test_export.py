"""`export --mbox` (for `git am`) and `export --quilt` (for `quilt push -a`), end to end."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Queue, Runner, Upstream, git
from ..stack.test_stack import P1, P2, A, B, base_copy, needs_quilt, quilt, tree_files, udiff


def series_of_every_kind(up: Upstream, q: Queue) -> str:
    """Free-text, mail, DEP-3 and header-less patches, a -p0 one and a guarded-out one."""
    up.write("a.txt", A).write("b.txt", B)
    base = up.commit("base")
    q.add("p1.patch", P1)
    q.add(
        "p2.patch",
        "From: Bob <bob@example.org>\nDate: Tue, 14 Nov 2023 22:13:20 +0000\n"
        "Subject: [PATCH] Fix b: ünïcode\n\nThe body.\n\n" + P2.split("\n\n", 1)[1],
    )
    q.add(
        "p0.patch",
        "Description: a -p0 patch\nAuthor: Ann <ann@example.org>\n\n"
        "--- a.txt\n+++ a.txt\n@@ -24,3 +24,3 @@\n line 24\n-line 25\n+LINE 25\n"
        " line 26\n",
        " -p0",
    )
    q.add(
        "off.patch",
        udiff("c.txt", "", "new\n")
        .replace("--- a/c.txt", "--- /dev/null")
        .replace(
            "diff --git a/c.txt b/c.txt\n", "diff --git a/c.txt b/c.txt\nnew file mode 100644\n"
        ),
        " #-never",
    )
    q.add("guarded.patch", udiff("b.txt", B, B.replace("b 9\n", "B 9\n")), " #+extra")
    (q.path / "patchq.toml").write_text('target = "../upstream"\nguards = ["never"]\n')
    return base


def test_mbox_export_applies_with_git_am_like_push(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    base = series_of_every_kind(upstream, queue)
    mbox = tmp_path / "series.mbox"
    r = patchq("export", "--mbox", str(mbox))
    assert (r.code, r.out, r.err) == (0, "", f"exported 3 patches to {mbox}\n")
    data = mbox.read_bytes()
    # Header-less: the user's git identity at the base's date, the subject from the header.
    assert data.startswith(
        b"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        b"From: Up Stream <up@example.org>\nDate: Tue, 14 Nov 2023 22:13:20 +0000\n"
        b"Subject: [PATCH 1/3] upper-case line 3\n\n---\n"
        + P1.split("\n\n", 1)[1].encode()
        + b"\nFrom 0000000000000000000000000000000000000000 "
    )
    # The -p0 patch goes out as -p1, which is all git am takes.
    assert data.endswith(
        b"Subject: [PATCH 3/3] a -p0 patch\n\n---\n"
        b"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n"
        b"@@ -24,3 +24,3 @@\n line 24\n-line 25\n+LINE 25\n line 26\n\n"
    )
    assert data.count(b"\nFrom 0000000000000000000000000000000000000000 ") == 2
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream.path), str(clone))
    git(clone, "am", "-q", str(mbox))
    r = patchq("push", "-a")
    assert (r.code, r.err) == (
        0,
        " exact p1.patch\n exact p2.patch\n exact p0.patch\nnow at p0.patch\n",
    )
    assert git(clone, "rev-parse", "HEAD^{tree}") == upstream.git("rev-parse", "HEAD^{tree}")
    # The same authors, dates and messages as the commits push made.
    fmt = "--format=%an <%ae>|%ad|%B"
    assert git(clone, "log", fmt, f"{base}..") == upstream.git("log", fmt, f"{base}..")
    assert git(clone, "log", "--format=%an|%s", f"{base}..").split("\n") == [
        "Ann|a -p0 patch",
        "Bob|Fix b: ünïcode",
        "Up Stream|upper-case line 3",
        "",
    ]


@needs_quilt
def test_quilt_export_pushes_with_quilt(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    base = series_of_every_kind(upstream, queue)
    out = tmp_path / "exported"
    r = patchq("export", "--quilt", str(out))
    assert (r.code, r.out, r.err) == (0, "", f"exported 3 patches to {out}\n")
    # Only the active patches, with their strip levels and bytes.
    assert (out / "series").read_text() == "p1.patch\np2.patch\np0.patch -p0\n"
    assert sorted(p.name for p in out.iterdir()) == ["p0.patch", "p1.patch", "p2.patch", "series"]
    for name in ("p0.patch", "p1.patch", "p2.patch"):
        assert (out / name).read_bytes() == (queue.path / "patches" / name).read_bytes()
    copy = base_copy(upstream, base, tmp_path / "plain")
    env_q = tmp_path / "qrepo"
    env_q.mkdir()
    (env_q / "patches").symlink_to(out)
    (env_q / "series").symlink_to(out / "series")
    q = quilt(copy, env_q, "push", "-a")
    assert (q.returncode, q.stderr) == (0, "")
    assert q.stdout == (
        "Applying patch p1.patch\npatching file a.txt\n\n"
        "Applying patch p2.patch\npatching file b.txt\n\n"
        "Applying patch p0.patch\npatching file a.txt\n\n"
        "Now at patch p0.patch\n"
    )
    assert patchq("push", "-a").code == 0
    assert tree_files(copy) == tree_files(upstream.path)
    # Exporting again is harmless; a folder holding other files is refused, untouched.
    assert patchq("export", "--quilt", str(out)).code == 0
    (out / "p1.patch").write_text("mine\n")
    r = patchq("export", "--quilt", str(out))
    assert (r.code, r.err) == (
        4,
        f"patchq: {out}: {out}/p1.patch exists with other content — export into an empty folder\n",
    )
    assert (out / "p1.patch").read_text() == "mine\n"


def test_quilt_export_never_replaces_a_series(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    series_of_every_kind(upstream, queue)
    before = queue.series()
    # Into the patch repo's own patches/ (where quilt keeps its series): the files are the
    # same, but a different series there is refused.
    (queue.path / "patches" / "series").write_text("p1.patch\n")
    r = patchq("export", "--quilt", str(queue.path / "patches"))
    assert r.code == 4
    assert r.err == (
        f"patchq: {queue.path / 'patches'}: {queue.path / 'patches' / 'series'} "
        "exists with other content — export into an empty folder\n"
    )
    assert (queue.path / "patches" / "series").read_text() == "p1.patch\n"
    r = patchq("export", "--quilt", str(queue.path))
    assert r.code == 4 and queue.series() == before


def test_export_needs_exactly_one_format(queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    r = patchq("export")
    assert (r.code, r.out) == (2, "")
    # (the list of formats grows: --script is another session's)
    assert r.err.splitlines()[-1].startswith("Error: give exactly one of --mbox F")
    r = patchq("export", "--mbox", str(tmp_path / "m"), "--quilt", str(tmp_path / "q"))
    assert r.code == 2 and not (tmp_path / "m").exists() and not (tmp_path / "q").exists()


def test_mbox_export_refuses_an_empty_patch(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("a.txt", A)
    upstream.commit("base")
    queue.add("p1.patch", P1)
    assert patchq("push").code == 0 and patchq("new", "wip.patch", "-m", "WIP").code == 0
    r = patchq("export", "--mbox", str(tmp_path / "m"))
    assert (r.code, r.out) == (4, "")
    assert r.err == (
        "patchq: patches/wip.patch: the patch has no diff, and git am stops at an "
        "empty patch — refresh it, or delete it\n"
    )
    assert not (tmp_path / "m").exists()


def test_a_header_less_diff_has_one_subject_in_apply_and_export(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    """A header-less `x.diff` is `x` as a commit subject and as a mail subject alike (one
    header module decides it; `export --mbox` used to keep `.diff`)."""
    upstream.write("a.txt", A)
    base = upstream.commit("base")
    queue.add(
        "fix-it.diff", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-line 1\n+LINE 1\n line 2\n"
    )
    assert patchq("apply", "--onto", base).code == 0
    assert git(upstream.path, "log", "-1", "--format=%s").strip() == "fix-it"
    mbox = tmp_path / "out.mbox"
    assert patchq("export", "--mbox", str(mbox)).code == 0
    assert b"\nSubject: [PATCH] fix-it\n" in mbox.read_bytes()
