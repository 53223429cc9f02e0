"""The stack workflow end to end from the command line: init, listing, push/pop/goto,
new/refresh, the queue edits, the safety refusals, quilt interop and a maintainer's day.

Every test works on real git repositories in temporary folders; assertions are exact
(exit codes, stderr lines, bytes).
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import Queue, Result, Runner, Upstream, git, held_lock, run_inprocess

A = "".join(f"line {i}\n" for i in range(1, 31))
B = "".join(f"b {i}\n" for i in range(1, 11))

needs_quilt = pytest.mark.skipif(shutil.which("quilt") is None, reason="quilt is not installed")


def udiff(path: str, old: str, new: str, header: str = "") -> str:
    """A git-style unified diff of one file (3 lines of context), after `header`."""
    body = "".join(
        difflib.unified_diff(
            old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}", n=3
        )
    )
    return f"{header}diff --git a/{path} b/{path}\n{body}"


P1 = udiff("a.txt", A, A.replace("line 3\n", "LINE 3\n"), "upper-case line 3\n\n")
P2 = udiff("b.txt", B, B.replace("b 5\n", "B 5\n"), "upper-case b 5\n\n")
P3 = udiff("a.txt", A, A.replace("line 25\n", "LINE 25\n"), "upper-case line 25\n\n")
NAMES = ["p1.patch", "p2.patch", "p3.patch"]


def three(up: Upstream, q: Queue) -> str:
    """Base a.txt and b.txt; the queue p1 (a.txt line 3), p2 (b.txt), p3 (a.txt line 25)."""
    up.write("a.txt", A).write("b.txt", B)
    base = up.commit("base")
    q.add("p1.patch", P1).add("p2.patch", P2).add("p3.patch", P3)
    return base


def root(up: Upstream) -> str:
    """The target as patchq names it in messages."""
    return str(up.path.resolve())


def head(up: Upstream) -> str:
    return up.git("rev-parse", "HEAD").strip()


def blob(up: Upstream, spec: str) -> str:
    """A blob's 12-digit id, as refresh writes it on `index` lines."""
    return up.git("rev-parse", "--short=12", spec).strip()


def wt_blob(up: Upstream, path: str) -> str:
    return up.git("hash-object", path).strip()[:12]


def clean(up: Upstream) -> bool:
    return up.git("status", "--porcelain", "--untracked-files=all") == ""


def snapshot(*folders: Path) -> dict[str, bytes]:
    """Every file under the folders (git's own files too), to prove nothing changed."""
    out = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file() and p.name != "index":
                out[str(p)] = p.read_bytes()
    return out


# --- init ------------------------------------------------------------------------------


def test_init_creates_the_queue_and_refuses_an_existing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q = tmp_path / "q"
    r = run_inprocess(
        capsys,
        "--dir",
        str(q),
        "init",
        "--upstream",
        "https://example.org/up",
        "--branch",
        "main",
        "--target",
        "../upstream",
    )
    assert (r.code, r.out) == (0, "")
    assert r.err == f"initialised an empty patch queue in {q}\n"
    assert sorted(p.name for p in q.iterdir()) == ["patches", "patchq.toml", "series"]
    assert (q / "patches").is_dir() and not any((q / "patches").iterdir())
    assert (q / "series").read_bytes() == b""
    assert (q / "patchq.toml").read_text() == (
        "# patchq configuration: see README.md for every key\n\n"
        'upstream = "https://example.org/up"\nbranch = "main"\ntarget = "../upstream"\n'
        "strip = 1\nfuzz = 0\nguards = []\n"
    )
    # The new queue is usable as it is, even before its target exists.
    r = run_inprocess(capsys, "--dir", str(q), "series")
    assert (r.code, r.out, r.err) == (0, "", "")
    (q / "patches" / "fix.patch").write_text(P1)
    (q / "series").write_text("fix.patch\n")
    r = run_inprocess(capsys, "--dir", str(q), "series", "-v")
    assert (r.code, r.out, r.err) == (0, "  fix.patch\n", "")
    before = snapshot(q)
    r = run_inprocess(capsys, "--dir", str(q), "init", "--upstream", "https://other")
    assert r.code == 4
    assert r.err == (
        f"patchq: {q}/patchq.toml: a patch queue already exists here "
        "(patchq.toml) — edit it instead, or choose another folder\n"
    )
    assert snapshot(q) == before
    # A quilt series folder becomes a queue around its series: init
    # writes patchq.toml and patches/, and never overwrites the series.
    quilt_dir = tmp_path / "quilt"
    quilt_dir.mkdir()
    (quilt_dir / "series").write_text("fix.patch -p0\n")
    r = run_inprocess(capsys, "--dir", str(quilt_dir), "init")
    assert r.code == 0 and "around its series (1 patch, kept as it is)" in r.err
    assert sorted(p.name for p in quilt_dir.iterdir()) == ["patches", "patchq.toml", "series"]
    assert (quilt_dir / "series").read_text() == "fix.patch -p0\n"


# --- listing ---------------------------------------------------------------------------


def test_listing_commands_print_names_one_a_line(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue)
    queue.add("guarded.patch", P3, " #+sm120")
    r = patchq("status")
    assert (r.code, r.out) == (0, "no patches applied in this target\nguards: (none)\n")
    r = patchq("top")
    assert r.code == 4
    assert r.err == "patchq: series: no patch is applied — name a patch\n"
    assert patchq("applied").out == ""
    assert patchq("unapplied").out == "p1.patch\np2.patch\np3.patch\n"
    assert patchq("series").out == "p1.patch\np2.patch\np3.patch\nguarded.patch\n"
    r = patchq("push", "2")
    assert r.code == 0, r.err
    assert (
        patchq("series", "-v").out
        == "+ p1.patch\n= p2.patch\n  p3.patch\n# guarded.patch #+sm120\n"
    )
    assert (
        patchq("series", "-v", "--guard", "sm120").out
        == "+ p1.patch\n= p2.patch\n  p3.patch\n  guarded.patch #+sm120\n"
    )
    assert patchq("applied").out == "p1.patch\np2.patch\n"
    assert patchq("unapplied").out == "p3.patch\n"
    assert patchq("top").out == "p2.patch\n"
    base = upstream.git("rev-parse", "HEAD~2").strip()
    r = patchq("status")
    assert (r.code, r.err) == (0, "")
    assert r.out == (
        f"stack patchq/main on {base[:12]}: 2 applied, 1 unapplied\ntop: p2.patch\nguards: (none)\n"
    )
    upstream.write("b.txt", B.replace("b 5\n", "B 5\n") + "more\n").write("new.txt", "x\n")
    r = patchq("status")
    assert r.out == (
        f"stack patchq/main on {base[:12]}: 2 applied, 1 unapplied\n"
        "top: p2.patch\nguards: (none)\n"
        "unrefreshed changes: b.txt, new.txt\n"
    )
    assert r.code == 0


# --- push ------------------------------------------------------------------------------


def test_push_next_n_name_and_all_reporting_each_patch(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    base = three(upstream, queue)
    # p4 was made against a file with two more lines at the top: it applies with an offset.
    queue.add(
        "p4.patch",
        udiff(
            "a.txt",
            "x\ny\n" + A.replace("line 25\n", "LINE 25\n"),
            "x\ny\n" + A.replace("line 25\n", "LINE 25\n").replace("line 28\n", "LINE 28\n"),
        ),
    )
    r = patchq("push")
    assert (r.code, r.out, r.err) == (0, "", " exact p1.patch\nnow at p1.patch\n")
    assert upstream.git("symbolic-ref", "--short", "HEAD").strip() == "patchq/main"
    r = patchq("push", "p3.patch")
    assert (r.code, r.err) == (0, " exact p2.patch\n exact p3.patch\nnow at p3.patch\n")
    r = patchq("push", "1")
    assert (r.code, r.err) == (0, "offset p4.patch (a.txt hunk #1 offset -2)\nnow at p4.patch\n")
    assert (
        upstream.read("a.txt")
        == A.replace("line 3\n", "LINE 3\n")
        .replace("line 25\n", "LINE 25\n")
        .replace("line 28\n", "LINE 28\n")
        .encode()
    )
    assert upstream.git("log", "--format=%s", f"{base}..").split("\n") == [
        "p4",
        "upper-case line 25",
        "upper-case b 5",
        "upper-case line 3",
        "",
    ]
    assert clean(upstream)
    top = head(upstream)
    r = patchq("push")  # nothing left: the state asked for holds
    assert (r.code, r.err) == (0, "now at p4.patch\n")
    assert head(upstream) == top
    r = patchq("push", "1")  # one more patch was asked for, and there is none
    assert (r.code, r.err) == (4, "patchq: series: nothing to push — see `patchq series -v`\n")
    assert patchq("pop", "-a").code == 0
    r = patchq("push", "2")
    assert (r.code, r.err) == (0, " exact p1.patch\n exact p2.patch\nnow at p2.patch\n")
    r = patchq("push", "nope.patch")
    assert (r.code, r.err) == (
        4,
        "patchq: series: no active patch named 'nope.patch' — see `patchq series -v`\n",
    )
    r = patchq("push", "-a")
    assert (r.code, r.err) == (
        0,
        " exact p3.patch\noffset p4.patch (a.txt hunk #1 offset -2)\nnow at p4.patch\n",
    )
    # One commit per patch, the same ones one at a time or all at once.
    assert patchq("applied").out.split() == NAMES + ["p4.patch"]
    assert head(upstream) == top and clean(upstream)


def test_push_fuzz_only_when_asked_and_reported(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", A)
    upstream.commit("base")
    # Made against a file whose line 13 differed: the last context line no longer matches.
    queue.add(
        "fz.patch",
        udiff(
            "a.txt",
            A.replace("line 13\n", "line thirteen\n"),
            A.replace("line 10\n", "LINE 10\n").replace("line 13\n", "line thirteen\n"),
        ),
    )
    r = patchq("push")
    assert (r.code, r.err) == (
        3,
        "patchq: patches/fz.patch: patch does not apply: a.txt: hunk #1 "
        "(patch line 4, file line 7) failed: its context and removed "
        "lines are not in the file; applies with fuzz 1, as GNU patch would: "
        "rerun with `--fuzz 1` (or set `fuzz = 1` in patchq.toml) — or rebase it "
        "(`patchq rebase`)\n",
    )
    assert patchq("applied").out == "" and clean(upstream)
    r = patchq("push", "--fuzz", "1")
    assert (r.code, r.err) == (0, "  fuzz fz.patch (a.txt hunk #1 fuzz 1)\nnow at fz.patch\n")
    assert upstream.read("a.txt") == A.replace("line 10\n", "LINE 10\n").encode()


def test_push_stops_at_a_patch_that_does_not_apply(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue)
    (queue.path / "series").write_text("p1.patch\nbad.patch\np3.patch\n")
    (queue.path / "patches" / "bad.patch").write_text(
        udiff("b.txt", B.replace("b 5\n", "b five\n"), B.replace("b 5\n", "B 5\n"))
    )
    r = patchq("push", "-a")
    assert r.code == 3
    assert r.out == ""
    assert r.err == (
        " exact p1.patch\n"
        "patchq: patches/bad.patch: patch does not apply: b.txt: hunk #1 (patch "
        "line 4, file line 2) failed: its context and removed lines are not in "
        "the file — rebase it (`patchq rebase`) or fix the patch\n"
    )
    # The stack is at the last good patch and the working tree is clean.
    assert patchq("applied").out == "p1.patch\n"
    assert upstream.git("log", "-1", "--format=%s").strip() == "upper-case line 3"
    assert clean(upstream)
    assert upstream.read("b.txt") == B.encode()
    assert upstream.read("a.txt") == A.replace("line 3\n", "LINE 3\n").encode()
    # And it stays there on another try.
    r = patchq("push")
    assert (r.code, r.err.splitlines()[0]) == (
        3,
        "patchq: patches/bad.patch: patch does not "
        "apply: b.txt: hunk #1 (patch line 4, file "
        "line 2) failed: its context and removed lines "
        "are not in the file — rebase it (`patchq "
        "rebase`) or fix the patch",
    )
    assert patchq("applied").out == "p1.patch\n" and clean(upstream)


def merge_setup(up: Upstream, q: Queue, patchq: Runner, tmp_path: Path) -> str:
    """A stack on a moved upstream, and a series.lock pinned to the old base.

    The patch repo's lock was written by a colleague on the old base (their own clone);
    here the upstream has since changed line 20, which p2 edits too.
    """
    up.write("a.txt", A).write("b.txt", B)
    old = up.commit("base")
    q.add("p1.patch", P1)
    q.add(
        "p2.patch",
        udiff("a.txt", A, A.replace("line 20\n", "line 20 patched\n"))
        + udiff("b.txt", B, B.replace("b 9\n", "B 9\n"))
        + "diff --git a/c.txt b/c.txt\nnew file mode 100644\n--- /dev/null\n+++ b/c.txt\n"
        "@@ -0,0 +1 @@\n+new\n",
    )
    up.write("a.txt", A.replace("line 20\n", "line 20 upstream\n"))
    up.commit("upstream moves")
    assert patchq("push").code == 0
    colleague = tmp_path / "colleague"
    git(tmp_path, "clone", "-q", str(up.path), str(colleague))
    # The clone's patchq/main is a branch of the clone, not of a stack made there: resetting
    # it takes --force, so no one's branch is reset by mistake.
    r = patchq("--target", str(colleague), "apply", "--onto", old, "--force")
    assert r.code == 0, r.err
    return old


def test_push_merge_leaves_conflict_markers_and_refresh_records_the_resolution(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    merge_setup(upstream, queue, patchq, tmp_path)
    before = snapshot(upstream.path)
    r = patchq("push")
    assert (r.code, r.err) == (
        3,
        "patchq: patches/p2.patch: patch does not apply: a.txt: hunk #1 "
        "(patch line 4, file line 17) failed: its context and removed "
        "lines are not in the file — rebase it (`patchq rebase`) or "
        "fix the patch\n",
    )
    assert snapshot(upstream.path) == before  # without --merge nothing changes
    r = patchq("push", "--merge")
    assert r.code == 3
    assert r.err == (
        "patchq: patches/p2.patch: 1 conflict in a.txt left in the working tree "
        "— resolve them, then `patchq push --continue` takes them and pushes on; or "
        "`patchq push --abort` puts everything back\n"
    )
    assert patchq("applied").out == "p1.patch\np2.patch\n"
    merged = A.replace("line 3\n", "LINE 3\n").replace(
        "line 20\n",
        "<<<<<<< upstream\nline 20 upstream\n||||||| base\nline 20\n=======\n"
        "line 20 patched\n>>>>>>> patches/p2.patch\n",
    )
    assert upstream.read("a.txt") == merged.encode()
    # The rest of the patch is in the working tree too, new file included.
    assert upstream.read("b.txt") == B.replace("b 9\n", "B 9\n").encode()
    assert upstream.read("c.txt") == b"new\n"
    # Unresolved markers are not recorded.
    r = patchq("refresh")
    assert r.code == 3
    assert r.err == (
        f"patchq: {root(upstream)}: a.txt still has the conflict markers of "
        "p2.patch — resolve them first\n"
    )
    upstream.write(
        "a.txt",
        A.replace("line 3\n", "LINE 3\n").replace("line 20\n", "line 20 upstream patched\n"),
    )
    r = patchq("refresh")
    assert (r.code, r.err) == (0, "refreshed p2.patch\n")
    assert (queue.path / "patches" / "p2.patch").read_text() == (
        "diff --git a/a.txt b/a.txt\n"
        f"index {blob(upstream, 'HEAD~1:a.txt')}..{blob(upstream, 'HEAD:a.txt')} 100644\n"
        "--- a/a.txt\n+++ b/a.txt\n"
        "@@ -17,7 +17,7 @@ line 16\n line 17\n line 18\n line 19\n-line 20 upstream\n"
        "+line 20 upstream patched\n line 21\n line 22\n line 23\n"
        + udiff("b.txt", B, B.replace("b 9\n", "B 9\n"))
        + "diff --git a/c.txt b/c.txt\nnew file mode 100644\n--- /dev/null\n+++ b/c.txt\n"
        "@@ -0,0 +1 @@\n+new\n"
    )
    assert clean(upstream)
    assert upstream.git("show", "--format=%s", "--stat=200", "HEAD").split("\n")[:5] == [
        "p2",
        "",
        " a.txt | 2 +-",
        " b.txt | 2 +-",
        " c.txt | 1 +",
    ]


def test_push_merge_without_a_lock_uses_the_patch_index_lines(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", A)
    base = upstream.commit("base")
    upstream.write("a.txt", A.replace("line 20\n", "line 20 patched\n"))
    upstream.commit("patch line 20")
    # format-patch writes full blob ids on its `index` lines: the pre-image is in the target.
    assert patchq("import", "--git", f"{base}..HEAD").code == 0
    upstream.git("reset", "-q", "--hard", base)
    upstream.write("a.txt", A.replace("line 20\n", "line 20 upstream\n"))
    upstream.commit("upstream moves")
    r = patchq("push", "--merge")
    assert (r.code, r.err) == (
        3,
        "patchq: patches/0001-patch-line-20.patch: 1 conflict in a.txt "
        "left in the working tree — resolve them, then `patchq push --continue` takes "
        "them and pushes on; or `patchq push --abort` puts everything back\n",
    )
    assert (
        upstream.read("a.txt")
        == A.replace(
            "line 20\n",
            "<<<<<<< upstream\nline 20 upstream\n||||||| base\nline 20\n=======\n"
            "line 20 patched\n>>>>>>> patches/0001-patch-line-20.patch\n",
        ).encode()
    )
    assert patchq("status").out.endswith("unrefreshed changes: a.txt\n")


# --- pop and goto ----------------------------------------------------------------------


def test_pop_top_n_name_and_all_and_goto_both_ways(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    base = three(upstream, queue)
    assert patchq("push", "-a").code == 0
    commits = upstream.git("rev-list", f"{base}..HEAD").split()[::-1]
    r = patchq("pop")
    assert (r.code, r.out, r.err) == (0, "", "popped p3.patch\nnow at p2.patch\n")
    assert head(upstream) == commits[1] and clean(upstream)
    assert upstream.read("a.txt") == A.replace("line 3\n", "LINE 3\n").encode()
    r = patchq("pop", "p2.patch")
    assert (r.code, r.err) == (4, "patchq: series: p2.patch is already the top patch\n")
    r = patchq("pop", "p3.patch")
    assert (r.code, r.err) == (
        4,
        "patchq: series: 'p3.patch' is not applied — see `patchq applied`\n",
    )
    r = patchq("pop", "1")
    assert (r.code, r.err) == (0, "popped p2.patch\nnow at p1.patch\n")
    r = patchq("goto", "p3.patch")
    assert (r.code, r.err) == (0, " exact p2.patch\n exact p3.patch\nnow at p3.patch\n")
    assert head(upstream) == commits[2]  # the very same commits again
    r = patchq("pop", "p1.patch")
    assert (r.code, r.err) == (0, "popped p3.patch\npopped p2.patch\nnow at p1.patch\n")
    assert head(upstream) == commits[0] and clean(upstream)
    assert patchq("goto", "p2.patch").err == " exact p2.patch\nnow at p2.patch\n"
    r = patchq("goto", "p1.patch")
    assert (r.code, r.err) == (0, "popped p2.patch\nnow at p1.patch\n")
    r = patchq("pop", "-a")
    assert (r.code, r.err) == (0, "popped p1.patch\nno patches applied\n")
    assert head(upstream) == base and clean(upstream)
    assert upstream.read("a.txt") == A.encode() and upstream.read("b.txt") == B.encode()
    assert patchq("applied").out == ""
    r = patchq("pop")
    assert (r.code, r.err) == (4, f"patchq: {root(upstream)}: no patch is applied\n")
    r = patchq("goto", "nope.patch")
    assert r.code == 4 and "no active patch named 'nope.patch'" in r.err


# --- new and refresh -------------------------------------------------------------------


def test_new_inserts_after_the_top_and_refresh_writes_it(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue)
    assert patchq("push").code == 0
    r = patchq("new", "mid.patch", "-m", "Add a notes file\n\nWhy: the build needs it.")
    assert (r.code, r.out) == (0, "")
    assert r.err == "now at mid.patch (empty); edit files and run `patchq refresh`\n"
    assert queue.series() == "p1.patch\nmid.patch\np2.patch\np3.patch\n"
    mid = queue.path / "patches" / "mid.patch"
    assert mid.read_bytes() == b"Add a notes file\n\nWhy: the build needs it.\n"
    assert patchq("applied").out == "p1.patch\nmid.patch\n"
    assert (
        upstream.git("log", "-1", "--format=%an <%ae>|%B").strip()
        == "Up Stream <up@example.org>|Add a notes file\n\nWhy: the build needs it."
    )
    upstream.write("notes.txt", "note\n").write("b.txt", B + "b 11\n")
    r = patchq("refresh")
    assert (r.code, r.err) == (
        0,
        "refreshed mid.patch\nnot included: 1 untracked file, "
        "notes.txt (`git add` it to include)\n",
    )
    upstream.git("add", "notes.txt")
    assert patchq("refresh").code == 0
    b_before, b_after = blob(upstream, "HEAD~1:b.txt"), blob(upstream, "HEAD:b.txt")
    expected = (
        b"Add a notes file\n\nWhy: the build needs it.\n"
        b"diff --git a/b.txt b/b.txt\n"
        + f"index {b_before}..{b_after} 100644\n".encode()
        + b"--- a/b.txt\n+++ b/b.txt\n@@ -8,3 +8,4 @@ b 7\n b 8\n b 9\n b 10\n+b 11\n"
        b"diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n"
        + f"index 000000000000..{blob(upstream, 'HEAD:notes.txt')}\n".encode()
        + b"--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+note\n"
    )
    assert mid.read_bytes() == expected
    assert clean(upstream)
    stamp = mid.stat().st_mtime_ns
    commit = head(upstream)
    r = patchq("refresh")
    assert (r.code, r.err) == (0, "mid.patch is unchanged\n")
    assert mid.read_bytes() == expected and mid.stat().st_mtime_ns == stamp
    assert head(upstream) == commit
    # The rest of the series goes on top of it.
    r = patchq("push", "-a")
    assert (r.code, r.err) == (0, " exact p2.patch\n exact p3.patch\nnow at p3.patch\n")
    r = patchq("new", "p1.patch")
    assert r.code == 4 and "patch 'p1.patch' already exists" in r.err
    # With nothing applied, a new patch comes first, after the series' opening comments.
    (queue.path / "series").write_text("# carried patches\n" + queue.series())
    assert patchq("pop", "-a").code == 0
    assert patchq("new", "first.patch").code == 0
    assert (
        queue.series()
        == "# carried patches\nfirst.patch\np1.patch\nmid.patch\np2.patch\np3.patch\n"
    )
    assert patchq("applied").out == "first.patch\n"


def test_refresh_keeps_a_format_patch_header_and_unchanged_hunks_byte_for_byte(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", A).write("b.txt", B)
    base = upstream.commit("base")
    upstream.write("a.txt", A.replace("line 3\n", "LINE 3\n").replace("line 25\n", "LINE 25\n"))
    upstream.write("b.txt", B.replace("b 5\n", "B 5\n"))
    upstream.commit("Two files\n\nA longer description.")
    original = upstream.git("format-patch", "--stdout", "-1").encode()
    upstream.git("reset", "-q", "--hard", base)
    queue.add("0001-two-files.patch", original)
    assert patchq("push").code == 0
    upstream.write("a.txt", A.replace("line 3\n", "LINE 3\n").replace("line 25\n", "LINE 25!\n"))
    r = patchq("refresh")
    assert (r.code, r.err) == (0, "refreshed 0001-two-files.patch\n")
    old_index = next(line for line in original.decode().splitlines() if line.startswith("index "))
    # format-patch's 7-digit ids stay 7 digits long (no churn in the patch file).
    ids = (blob(upstream, "HEAD~1:a.txt")[:7], blob(upstream, "HEAD:a.txt")[:7])
    new_index = f"index {ids[0]}..{ids[1]} 100644"
    assert len(old_index.split()[1]) == 7 + 2 + 7
    # Only the edited hunk and the index line of its file change: the mail header, the
    # diffstat, the first hunk of a.txt, the whole b.txt section (7-digit index) and the
    # signature keep their bytes.
    expected = original.replace(old_index.encode(), new_index.encode(), 1).replace(
        b"+LINE 25\n", b"+LINE 25!\n"
    )
    patch_file = queue.path / "patches" / "0001-two-files.patch"
    assert patch_file.read_bytes() == expected
    assert expected.count(b"\n-- \n") == 1 and b"index " + b"0b44029.." in expected
    assert patchq("refresh").err == "0001-two-files.patch is unchanged\n"
    assert patch_file.read_bytes() == expected


def test_refresh_below_the_top_rebuilds_the_commits_above(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue)
    assert patchq("push", "-a").code == 0
    p2, p3 = (
        (queue.path / "patches" / "p2.patch").read_bytes(),
        (queue.path / "patches" / "p3.patch").read_bytes(),
    )
    upstream.write(
        "a.txt", A.replace("line 3\n", "LINE 3 (fixed)\n").replace("line 25\n", "LINE 25\n")
    )
    r = patchq("refresh", "p1.patch")
    assert (r.code, r.err) == (0, "refreshed p1.patch\n")
    assert (queue.path / "patches" / "p1.patch").read_text() == (
        "upper-case line 3\n\ndiff --git a/a.txt b/a.txt\n"
        f"index {blob(upstream, 'HEAD~3:a.txt')}..{blob(upstream, 'HEAD~2:a.txt')} 100644\n"
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,6 +1,6 @@\n line 1\n line 2\n-line 3\n"
        "+LINE 3 (fixed)\n line 4\n line 5\n line 6\n"
    )
    assert (queue.path / "patches" / "p2.patch").read_bytes() == p2
    assert (queue.path / "patches" / "p3.patch").read_bytes() == p3
    assert upstream.git("log", "--format=%s", "-3").split("\n")[:3] == [
        "upper-case line 25",
        "upper-case b 5",
        "upper-case line 3",
    ]
    assert upstream.git("show", "HEAD~2:a.txt").startswith("line 1\nline 2\nLINE 3 (fixed)\n")
    assert clean(upstream) and patchq("applied").out.split() == NAMES
    # The rebuilt stack is what pushing the refreshed series gives.
    top = head(upstream)
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0
    assert head(upstream) == top
    # Edits that cannot go below the patches above it are refused, and nothing changes.
    before = snapshot(queue.path)
    fixed = A.replace("line 3\n", "LINE 3 (fixed)\n")
    upstream.write("a.txt", fixed.replace("line 25\n", "LINE 25 again\n"))
    r = patchq("refresh", "p1.patch")
    assert (r.code, r.err) == (
        3,
        f"patchq: {root(upstream)}: your edit to a.txt does not "
        "apply to p1.patch — nothing was changed; pop to it and "
        "refresh\n",
    )
    assert snapshot(queue.path) == before and head(upstream) == top
    assert upstream.git("status", "--porcelain") == " M a.txt\n"
    assert upstream.read("a.txt") == fixed.replace("line 25\n", "LINE 25 again\n").encode()
    r = patchq("refresh", "p9.patch")
    assert (r.code, r.err) == (4, "patchq: series: 'p9.patch' is not applied — push it first\n")


# --- editing the queue -----------------------------------------------------------------


def test_delete_rename_and_fold(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    base = three(upstream, queue)
    queue.add("p4.patch", udiff("b.txt", B, B.replace("b 9\n", "B 9\n"), "upper-case b 9\n\n"))
    (queue.path / "series").write_text("# my series\np1.patch\np2.patch\np3.patch #+x\np4.patch\n")
    assert patchq("push", "2").code == 0
    r = patchq("delete", "p1.patch")
    assert r.code == 5
    assert r.err == (
        "patchq: series: p1.patch is applied below the top — `patchq goto "
        "p1.patch` then pop it, or pop down past it\n"
    )
    r = patchq("delete", "p2.patch")  # the top: popped first
    assert (r.code, r.err) == (0, "popped p2.patch\ndeleted p2.patch from the series (file kept)\n")
    assert queue.series() == "# my series\np1.patch\np3.patch #+x\np4.patch\n"
    assert (queue.path / "patches" / "p2.patch").read_text() == P2
    assert patchq("applied").out == "p1.patch\n" and clean(upstream)
    r = patchq("delete", "-r", "p3.patch")
    assert (r.code, r.err) == (0, "deleted p3.patch from the series\n")
    assert not (queue.path / "patches" / "p3.patch").exists()
    r = patchq("delete", "nope.patch")
    assert (r.code, r.err) == (4, "patchq: series: no patch named 'nope.patch' in the series\n")
    # rename: the file, the series line (guards, strip and comment kept) and the stack.
    (queue.path / "series").write_text("# my series\np1.patch\np4.patch -p1 #+x # why\n")
    r = patchq("rename", "p1.patch", "sub/first.patch")
    assert (r.code, r.err) == (0, "renamed p1.patch to sub/first.patch\n")
    r = patchq("rename", "p4.patch", "last.patch")
    assert r.code == 0
    assert queue.series() == "# my series\nsub/first.patch\nlast.patch -p1 #+x # why\n"
    assert (queue.path / "patches" / "sub" / "first.patch").read_text() == P1
    assert not (queue.path / "patches" / "p1.patch").exists()
    assert patchq("applied").out == "sub/first.patch\n"
    assert patchq("top").out == "sub/first.patch\n"
    r = patchq("rename", "last.patch", "sub/first.patch")
    assert r.code == 4 and "patch 'sub/first.patch' already exists" in r.err
    r = patchq("rename", "last.patch", "../escape.patch")
    assert r.code == 4 and "unsafe patch name '../escape.patch'" in r.err
    # fold: an unapplied patch goes into the top one and leaves the series.
    (queue.path / "series").write_text("# my series\nsub/first.patch\nlast.patch\n")
    r = patchq("fold", "last.patch")
    assert (r.code, r.err) == (0, "folded last.patch into sub/first.patch\n")
    assert queue.series() == "# my series\nsub/first.patch\n"
    assert not (queue.path / "patches" / "last.patch").exists()
    # The folded patch's description joins the top's (`stg squash` keeps both).
    folded = P1.replace("upper-case line 3\n\n", "upper-case line 3\n\nupper-case b 9\n\n", 1)
    assert (queue.path / "patches" / "sub" / "first.patch").read_text() == (
        folded + "diff --git a/b.txt b/b.txt\n"
        f"index {blob(upstream, f'{base}:b.txt')}..{blob(upstream, 'HEAD:b.txt')} 100644\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -6,5 +6,5 @@ b 5\n b 6\n b 7\n b 8\n-b 9\n+B 9\n b 10\n"
    )
    assert upstream.read("b.txt") == B.replace("b 9\n", "B 9\n").encode() and clean(upstream)
    assert upstream.git("rev-list", "--count", f"{base}..HEAD").strip() == "1"
    r = patchq("fold", "sub/first.patch")
    assert (r.code, r.err) == (
        4,
        "patchq: series: sub/first.patch is applied; only an unapplied patch can be folded\n",
    )


def test_renaming_an_applied_header_less_patch_renames_its_commit(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", A)
    upstream.commit("base")
    queue.add("fix-it.patch", P1.split("\n\n", 1)[1]).add("p3.patch", P3)
    assert patchq("push", "-a").code == 0
    assert upstream.git("log", "--format=%s", "-2").split("\n")[:2] == [
        "upper-case line 25",
        "fix-it",
    ]
    assert patchq("rename", "fix-it.patch", "0001-fix-the-thing.patch").code == 0
    assert upstream.git("log", "--format=%s", "-2").split("\n")[:2] == [
        "upper-case line 25",
        "0001-fix-the-thing",
    ]
    assert clean(upstream)
    top = head(upstream)
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0
    assert head(upstream) == top


def test_header_prints_and_edits_only_the_header(
    upstream: Upstream,
    queue: Queue,
    patchq: Runner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    three(upstream, queue)
    assert patchq("push").code == 0
    r = patchq("header", "p2.patch")
    assert (r.code, r.out, r.err) == (0, "upper-case b 5\n\n", "")
    assert patchq("header").out == "upper-case line 3\n\n"
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'Upper-case line 3\\n\\nBecause we must.\\n' > \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    r = patchq("header", "-e")
    assert (r.code, r.out, r.err) == (0, "", "")
    assert (
        queue.path / "patches" / "p1.patch"
    ).read_text() == "Upper-case line 3\n\nBecause we must.\n" + P1.split("\n\n", 1)[1]
    # The applied commit follows the header, as pushing the patch again would give it.
    assert (
        upstream.git("log", "-1", "--format=%B").strip() == "Upper-case line 3\n\nBecause we must."
    )
    top = head(upstream)
    assert patchq("pop").code == 0 and patchq("push").code == 0
    assert head(upstream) == top and clean(upstream)
    r = patchq("header", "p3.patch", "-e")
    assert r.code == 0
    assert (
        queue.path / "patches" / "p3.patch"
    ).read_text() == "Upper-case line 3\n\nBecause we must.\n" + P3.split("\n\n", 1)[1]
    r = patchq("header", "nope.patch")
    assert (r.code, r.err) == (4, "patchq: series: no patch named 'nope.patch' in the series\n")
    # Off the stack branch the applied patch's commit cannot follow: refused before the
    # editor opens, so nothing typed is lost.
    upstream.git("checkout", "-q", "main")
    ran = tmp_path / "ran"
    editor.write_text(f"#!/bin/sh\ntouch {ran}\n")
    r = patchq("header", "-e", "p1.patch")
    assert (r.code, r.err) == (
        5,
        f"patchq: {root(upstream)}: the target is on main, not on the "
        "stack branch patchq/main — `git checkout patchq/main` first\n",
    )
    assert not ran.exists()


def test_diff_files_and_patches(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    base = three(upstream, queue)
    r = patchq("diff")
    assert (r.code, r.err) == (4, "patchq: series: no patch is applied — name a patch\n")
    # An unapplied patch: its diff as filed.
    assert patchq("diff", "p2.patch").out == P2.split("\n\n", 1)[1]
    assert patchq("push", "2").code == 0
    # The top as refresh would write it now, with unrefreshed edits.
    upstream.write("b.txt", B.replace("b 5\n", "B 5\n").replace("b 9\n", "B 9\n"))
    r = patchq("diff")
    assert (r.code, r.err) == (0, "")
    assert r.out == (
        "diff --git a/b.txt b/b.txt\n"
        f"index {blob(upstream, f'{base}:b.txt')}..{wt_blob(upstream, 'b.txt')} 100644\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -2,9 +2,9 @@ b 1\n b 2\n b 3\n b 4\n-b 5\n+B 5\n b 6\n"
        " b 7\n b 8\n-b 9\n+B 9\n b 10\n"
    )
    # A named applied patch: its commit.
    r = patchq("diff", "p1.patch")
    assert r.out == P1.split("\n\n", 1)[1].replace(
        "diff --git a/a.txt b/a.txt\n",
        "diff --git a/a.txt b/a.txt\n"
        f"index {blob(upstream, f'{base}:a.txt')}..{blob(upstream, 'HEAD~1:a.txt')} 100644\n",
    )
    assert patchq("files").out == "b.txt\n"
    assert patchq("files", "p3.patch").out == "a.txt\n"
    assert patchq("patches", "a.txt").out == "p1.patch\np3.patch\n"
    assert patchq("patches", "b.txt").out == "p2.patch\n"
    assert patchq("patches", "c.txt").out == ""
    r = patchq("files", "nope.patch")
    assert (r.code, r.err) == (4, "patchq: series: no patch named 'nope.patch' in the series\n")


# --- safety ----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("push",), ("pop",), ("goto", "p1.patch"), ("goto", "p3.patch")])
def test_moves_refuse_changes_patchq_did_not_make(
    upstream: Upstream, queue: Queue, patchq: Runner, args: tuple[str, ...]
) -> None:
    three(upstream, queue)
    assert patchq("push", "2").code == 0
    upstream.write("b.txt", "my work\n").write("scratch.txt", "notes\n")
    before = snapshot(upstream.path, queue.path)
    top = head(upstream)
    r = patchq(*args)
    assert (r.code, r.out) == (5, "")
    assert r.err == (
        f"patchq: {root(upstream)}: unrefreshed changes in b.txt and 1 more — "
        f"`patchq refresh` them, or `patchq {args[0]} --force` to save them in a "
        "stash first\n"
    )
    assert snapshot(upstream.path, queue.path) == before
    assert head(upstream) == top and patchq("applied").out == "p1.patch\np2.patch\n"


@pytest.mark.parametrize(
    "args,applied",
    [
        (("push", "--force"), NAMES),
        (("pop", "--force"), NAMES[:1]),
        (("goto", "--force", "p1.patch"), NAMES[:1]),
        (("goto", "--force", "p3.patch"), NAMES),
    ],
)
def test_force_saves_the_changes_in_a_stash_and_says_where(
    upstream: Upstream, queue: Queue, patchq: Runner, args: tuple[str, ...], applied: list[str]
) -> None:
    three(upstream, queue)
    assert patchq("push", "2").code == 0
    upstream.write("b.txt", "my work\n").write("scratch.txt", "notes\n")
    r = patchq(*args)
    assert r.code == 0, r.err
    stash = upstream.git("rev-parse", "refs/stash").strip()
    first = r.err.splitlines()[0]
    assert first == (
        f"saved your uncommitted changes in stash {stash[:12]} (`git stash show -p {stash[:12]}`)"
    )
    assert (
        upstream.git("stash", "list")
        == f"stash@{{0}}: On patchq/main: patchq: saved before {args[0]}\n"
    )
    # The stash holds the edit and the untracked file.
    assert upstream.git("show", f"{stash}:b.txt") == "my work\n"
    assert upstream.git("show", f"{stash}^3:scratch.txt") == "notes\n"
    assert patchq("applied").out.split() == applied
    assert clean(upstream)


def test_new_keeps_edits_for_the_new_patch_and_fold_refuses_them(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue)
    assert patchq("push").code == 0
    upstream.write("b.txt", B + "b 11\n")
    # Like `stg new`: the edit stays in the working tree and goes into the new patch.
    r = patchq("new", "more.patch")
    assert r.code == 0, r.err
    assert upstream.read("b.txt") == (B + "b 11\n").encode()
    r = patchq("fold", "p2.patch")
    assert (r.code, r.err) == (
        5,
        f"patchq: {root(upstream)}: unrefreshed changes in b.txt — "
        "`patchq refresh` or `git stash` them first\n",
    )
    assert patchq("refresh").code == 0
    assert patchq("files").out == "b.txt\n"
    assert clean(upstream)


def test_a_second_patchq_on_the_target_waits_its_turn(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue)
    assert patchq("push").code == 0
    lock = upstream.path / ".git" / "patchq" / "lock"
    with held_lock(lock) as other:
        before = snapshot(upstream.path, queue.path)
        for args in (("push",), ("pop",), ("refresh",), ("new", "x.patch"), ("goto", "p3.patch")):
            r = patchq(*args)
            assert (r.code, r.out) == (5, ""), args
            assert r.err == (
                f"patchq: busy: patchq (pid {other}) holds {lock.resolve()} — wait for it "
                "to finish, or run with --wait[=SECONDS]\n"
            )
        assert snapshot(upstream.path, queue.path) == before
    # Its process is gone, and its lock with it: the next command goes ahead.
    assert lock.read_text() == f"{other}\n"
    r = patchq("push")
    assert (r.code, r.err) == (0, " exact p2.patch\nnow at p2.patch\n")
    assert not lock.exists()


def test_the_stack_branch_moved_outside_patchq_is_refused(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue)
    assert patchq("push").code == 0
    upstream.write("a.txt", "rewritten\n")
    sha = upstream.commit("not a patch")
    r = patchq("push")
    assert r.code == 5
    assert r.err.startswith(
        f"patchq: {root(upstream)}: patchq/main moved outside patchq (now {sha[:12]}, expected "
    )
    upstream.git("checkout", "-q", "main")
    r = patchq("pop")
    assert (r.code, r.err) == (
        5,
        f"patchq: {root(upstream)}: the target is on main, not on the "
        "stack branch patchq/main — `git checkout patchq/main` first\n",
    )


def test_a_rebase_in_progress_shows_in_status_and_holds_the_stack(
    upstream: Upstream, queue: Queue, patchq: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", "false")  # `header -e` must be refused before any editor
    upstream.write("a.txt", A)
    base = upstream.commit("base")
    queue.add("p20.patch", udiff("a.txt", A, A.replace("line 20\n", "line 20 patched\n")))
    queue.add("p1.patch", P1)
    assert patchq("apply", "--onto", base).code == 0
    upstream.git("checkout", "-q", "main")
    upstream.write("a.txt", A.replace("line 20\n", "line 20 upstream\n"))
    upstream.commit("upstream moves")
    assert patchq("rebase", "--onto", "main").code == 3
    r = patchq("status")
    assert r.code == 0
    assert r.out.endswith("in progress: rebase (`patchq rebase --continue` or `--abort`)\n")
    before = snapshot(queue.path)
    for args in (
        ("push",),
        ("pop",),
        ("goto", "p1.patch"),
        ("refresh",),
        ("new", "x.patch"),
        ("fold", "p1.patch"),
        ("delete", "p1.patch"),
        ("rename", "p1.patch", "q.patch"),
        ("header", "-e", "p1.patch"),
    ):
        r = patchq(*args)
        assert (r.code, r.out) == (5, ""), args
        assert r.err == (
            f"patchq: {root(upstream)}: a rebase is in progress — finish it with "
            "`patchq rebase --continue`, `--skip` or `--abort` first\n"
        ), args
    assert snapshot(queue.path) == before
    assert patchq("rebase", "--abort").code == 0
    assert "in progress" not in patchq("status").out


def test_a_queue_inside_the_target_never_patches_itself(
    upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """quilt-style: series and patches/ tracked in the target's own tree."""
    upstream.write("a.txt", A).write("b.txt", B)
    upstream.write("patches/p1.patch", P1).write("patches/p2.patch", P2)
    upstream.write("series", "p1.patch\np2.patch\n")
    upstream.commit("base with its patches")

    def patchq(*args: str) -> Result:
        return run_inprocess(capsys, "--dir", str(upstream.path), *args)

    assert patchq("push", "-a").code == 0
    upstream.write("b.txt", B.replace("b 5\n", "B 5\n") + "b 11\n")
    assert patchq("refresh").code == 0
    # The refreshed patches/p2.patch is a change in the target now, but never a patch's.
    assert upstream.git("status", "--porcelain") == " M patches/p2.patch\n"
    assert patchq("goto", "p1.patch").code == 0
    upstream.write("a.txt", A.replace("line 3\n", "LINE 3\n").replace("line 9\n", "LINE 9\n"))
    assert patchq("files").out == "a.txt\n"
    assert "patches/" not in patchq("diff").out
    r = patchq("new", "p3.patch")
    assert r.code == 0, r.err
    r = patchq("refresh")
    assert (r.code, r.err) == (0, "refreshed p3.patch\n")  # patches/p3.patch is not "untracked"
    assert patchq("files").out == "a.txt\n"
    for name in ("p1.patch", "p2.patch", "p3.patch"):
        assert b"patches/" not in upstream.read(f"patches/{name}"), name
    assert upstream.read("series") == b"p1.patch\np3.patch\np2.patch\n"
    assert patchq("push", "-a").code == 0
    assert upstream.git("diff", "--stat", "HEAD~3", "HEAD") == (
        " a.txt | 4 ++--\n b.txt | 3 ++-\n 2 files changed, 4 insertions(+), 3 deletions(-)\n"
    )


# --- quilt interop ---------------------------------------------------------------------


def quilt(
    cwd: Path, q: Path, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run quilt without any rc file, on the patch repo's patches/ and series."""
    env = dict(os.environ, QUILT_PATCHES=str(q / "patches"), QUILT_SERIES=str(q / "series"))
    return subprocess.run(
        ["quilt", "--quiltrc", "-", *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
    )


def tree_files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.parts and ".pc" not in p.parts
    }


def base_copy(up: Upstream, base: str, dest: Path) -> Path:
    """A plain folder holding the base tree, as quilt users have it."""
    dest.mkdir()
    archive = subprocess.run(
        ["git", "archive", base], cwd=up.path, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


@needs_quilt
def test_a_series_written_by_patchq_pushes_cleanly_with_quilt(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    base = three(upstream, queue)
    assert patchq("push", "-a").code == 0
    assert patchq("new", "sub/notes.patch", "-m", "Add notes").code == 0
    upstream.write("docs/notes.txt", "note\n").write("a.txt", upstream.read("a.txt") + b"end\n")
    upstream.git("add", "docs/notes.txt")
    assert patchq("refresh").code == 0
    assert patchq("goto", "p2.patch").code == 0
    upstream.write("b.txt", B.replace("b 5\n", "B 5\n").replace("b 1\n", "B 1\n"))
    assert patchq("refresh").code == 0
    assert patchq("push", "-a").code == 0
    copy = base_copy(upstream, base, tmp_path / "plain")
    r = quilt(copy, queue.path, "push", "-a")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == (
        "Applying patch p1.patch\npatching file a.txt\n\n"
        "Applying patch p2.patch\npatching file b.txt\n\n"
        "Applying patch p3.patch\npatching file a.txt\n\n"
        "Applying patch sub/notes.patch\npatching file a.txt\n"
        "patching file docs/notes.txt\n\nNow at patch sub/notes.patch\n"
    )
    assert tree_files(copy) == tree_files(upstream.path)


@needs_quilt
def test_a_quilt_made_series_is_used_unchanged(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("a.txt", A).write("b.txt", B)
    base = upstream.commit("base")
    # quilt makes the series in a plain copy: one -p1 patch with a header, one -p0 patch.
    work = base_copy(upstream, base, tmp_path / "work")
    for step in (
        ("new", "first.patch"),
        ("add", "a.txt"),
        ("edit-a",),
        ("refresh",),
        ("new", "-p0", "second.patch"),
        ("add", "b.txt"),
        ("edit-b",),
        ("refresh",),
    ):
        if step == ("edit-a",):
            (work / "a.txt").write_text(A.replace("line 3\n", "LINE 3\n"))
        elif step == ("edit-b",):
            (work / "b.txt").write_text(B.replace("b 5\n", "B 5\n"))
        else:
            q = quilt(work, queue.path, *step)
            assert q.returncode == 0, q.stderr
    q = quilt(work, queue.path, "header", "-r", "first.patch", input="Upper-case line 3.\n")
    assert q.returncode == 0, q.stderr
    series = (
        b"# carried for the 2.0 release\nfirst.patch\n\n# build fix, -p0 from the old days\n"
        b"second.patch -p0\n"
    )
    (queue.path / "series").write_bytes(series)
    first = (queue.path / "patches" / "first.patch").read_bytes()
    assert first.startswith(b"Upper-case line 3.\nIndex: work/a.txt\n====")
    assert b"\n--- work.orig/a.txt\t" in first  # quilt's own -p1 names, with timestamps
    second = (queue.path / "patches" / "second.patch").read_bytes()
    assert second.startswith(b"Index: b.txt\n====") and b"\n--- b.txt.orig\t" in second
    r = patchq("push", "-a")
    assert (r.code, r.err) == (0, " exact first.patch\n exact second.patch\nnow at second.patch\n")
    assert tree_files(upstream.path) == tree_files(work)
    assert patchq("series", "-v").out == "+ first.patch\n= second.patch\n"
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0
    assert (queue.path / "series").read_bytes() == series
    # Refreshing the -p0 patch keeps it a -p0 quilt patch (its Index: line, `b.txt.orig`
    # name, timestamps, no function context); the -p1 one is untouched.
    upstream.write("b.txt", B.replace("b 5\n", "B 5\n").replace("b 9\n", "B 9\n"))
    r = patchq("refresh")
    assert (r.code, r.err) == (0, "refreshed second.patch\n")
    quilt_header = second[: second.index(b"@@ ")]
    assert (queue.path / "patches" / "second.patch").read_bytes() == quilt_header + (
        b"@@ -2,9 +2,9 @@\n b 2\n b 3\n b 4\n-b 5\n+B 5\n b 6\n b 7\n b 8\n-b 9\n+B 9\n b 10\n"
    )
    assert (queue.path / "patches" / "first.patch").read_bytes() == first
    assert (queue.path / "series").read_bytes() == series
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0
    assert (queue.path / "series").read_bytes() == series
    # quilt still takes the refreshed series.
    again = base_copy(upstream, base, tmp_path / "again")
    q = quilt(again, queue.path, "push", "-a")
    assert (q.returncode, q.stderr) == (0, "")
    assert q.stdout == (
        "Applying patch first.patch\npatching file a.txt\n\n"
        "Applying patch second.patch\npatching file b.txt\n\n"
        "Now at patch second.patch\n"
    )
    assert tree_files(again) == tree_files(upstream.path)


# --- a maintainer's day ----------------------------------------------------------------


def test_a_maintainers_day(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("a.txt", A).write("b.txt", B)
    base = upstream.commit("base")
    gists = {
        "cmake-policy.patch": "Description: set the CMake policy\nAuthor: Ann <ann@example.org>\n"
        "\n" + udiff("a.txt", A, A.replace("line 3\n", "LINE 3\n")),
        "cccl-include.patch": "From: Bob <bob@example.org>\nSubject: [PATCH] fix the include\n"
        "\n" + udiff("b.txt", B, B.replace("b 5\n", "B 5\n")),
        "sm120.patch": "Build for sm_120\n\n"
        + udiff("a.txt", A, A.replace("line 25\n", "LINE 25\n")),
    }
    for name, text in gists.items():
        (tmp_path / name).write_text(text)
    r = patchq("import", *(str(tmp_path / n) for n in gists))
    assert r.code == 0, r.err
    assert r.out == "cmake-policy.patch\ncccl-include.patch\nsm120.patch\n"
    r = patchq("push", "-a")
    assert (r.code, r.err) == (
        0,
        " exact cmake-policy.patch\n exact cccl-include.patch\n"
        " exact sm120.patch\nnow at sm120.patch\n",
    )
    r = patchq("pop", "cccl-include.patch")
    assert (r.code, r.err) == (0, "popped sm120.patch\nnow at cccl-include.patch\n")
    upstream.write("b.txt", B.replace("b 5\n", "B 5\n").replace("b 7\n", "b 7 // sm120\n"))
    r = patchq("refresh")
    assert (r.code, r.err) == (0, "refreshed cccl-include.patch\n")
    r = patchq("push", "-a")
    assert (r.code, r.err) == (0, " exact sm120.patch\nnow at sm120.patch\n")
    patches = queue.path / "patches"
    assert (patches / "cmake-policy.patch").read_text() == gists["cmake-policy.patch"]
    assert (patches / "sm120.patch").read_text() == gists["sm120.patch"]
    assert (patches / "cccl-include.patch").read_text() == (
        "From: Bob <bob@example.org>\nSubject: [PATCH] fix the include\n\n"
        "diff --git a/b.txt b/b.txt\n"
        f"index {blob(upstream, f'{base}:b.txt')}..{blob(upstream, 'HEAD~1:b.txt')} 100644\n"
        "--- a/b.txt\n+++ b/b.txt\n"
        "@@ -2,9 +2,9 @@ b 1\n b 2\n b 3\n b 4\n-b 5\n+B 5\n b 6\n-b 7\n+b 7 // sm120\n b 8\n"
        " b 9\n b 10\n"
    )
    assert queue.series() == "cmake-policy.patch\ncccl-include.patch\nsm120.patch\n"
    assert clean(upstream)
    assert upstream.git("log", "--format=%an|%s", f"{base}..").split("\n") == [
        "Up Stream|Build for sm_120",  # no author: the user's git identity
        "Bob|fix the include",
        "Ann|set the CMake policy",
        "",
    ]
    # The day's result is reproducible: apply gives the same commits.
    top = head(upstream)
    assert patchq("apply", "--onto", base).code == 0
    assert head(upstream) == top
    assert patchq("verify").code == 0


def test_a_header_edit_that_would_break_the_patch_changes_nothing(
    upstream: Upstream,
    queue: Queue,
    patchq: Runner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    three(upstream, queue)
    assert patchq("push").code == 0
    before = (queue.path / "patches" / "p1.patch").read_bytes()
    top = head(upstream)
    editor = tmp_path / "editor.sh"
    # A header that starts a file section of its own with a hunk it does not finish.
    editor.write_text(
        "#!/bin/sh\nprintf 'Oops\\n--- a/x\\n+++ b/x\\n@@ -1,9 +1,9 @@\\n' > \"$1\"\n"
    )
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    r = patchq("header", "-e")
    assert r.code == 4
    assert "the edited header would break the patch" in r.err
    kept = r.err.split("your text is saved in ")[1].strip()
    assert Path(kept).read_text() == "Oops\n--- a/x\n+++ b/x\n@@ -1,9 +1,9 @@\n"
    assert (queue.path / "patches" / "p1.patch").read_bytes() == before
    assert head(upstream) == top
