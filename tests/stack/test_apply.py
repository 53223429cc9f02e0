"""`apply` and `verify` on real repositories: reproducible commits, the lock, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import Queue, Runner, Upstream, git, run_patchq

BASE = "".join(f"line {i}\n" for i in range(1, 31))


def history(up: Upstream) -> tuple[str, str]:
    """A base and three commits exercising edit, new file, rename+edit, delete, mode."""
    up.write("f.txt", BASE).write("doc/old.md", "# old\n" + "text\n" * 5).write("gone.txt", "bye\n")
    base = up.commit("base")
    up.write("f.txt", BASE.replace("line 5\n", "LINE 5\n")).write("src/new.c", "int x;\n")
    up.commit("edit and add")
    up.git("mv", "doc/old.md", "doc/new.md")
    up.write("doc/new.md", "# new\n" + "text\n" * 5)
    up.commit("rename with change")
    up.remove("gone.txt")
    (up.path / "f.txt").chmod(0o755)
    up.write("f.txt", BASE.replace("line 5\n", "LINE 5\n").replace("line 28\n", "LINE 28\n"))
    return base, up.commit("delete, mode, edit")


def test_apply_reproduces_upstream_history_and_writes_the_lock(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    base, top = history(upstream)
    r = patchq("import", "--git", f"{base}..{top}")
    assert r.code == 0, r.err
    assert r.out.split() == [
        "0001-edit-and-add.patch",
        "0002-rename-with-change.patch",
        "0003-delete-mode-edit.patch",
    ]
    r = patchq("apply", "--onto", base)
    assert r.code == 0, r.err
    # Same author, date, message and tree: the very same commits as upstream's.
    assert upstream.git("rev-parse", "patchq/main").strip() == top
    assert upstream.git("symbolic-ref", "HEAD").strip() == "refs/heads/patchq/main"
    assert upstream.git("status", "--porcelain") == ""
    lock = json.loads(queue.lock())
    assert lock["base"] == base
    assert lock["result_tree"] == upstream.git("rev-parse", f"{top}^{{tree}}").strip()
    assert lock["files"]["gone.txt"]["result"] is None
    assert lock["files"]["src/new.c"]["base"] is None
    assert (
        lock["files"]["doc/new.md"]["result"]
        == upstream.git("rev-parse", f"{top}:doc/new.md").strip()
    )
    assert [p["rebase"] for p in lock["patches"]] == ["new"] * 3
    assert queue.lock().endswith(b"}\n")
    assert patchq("verify").code == 0


def test_commits_are_reproducible_without_mail_headers(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("a.txt", "one\ntwo\n")
    base = upstream.commit("base")
    queue.add("plain.diff", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n")
    assert patchq("apply", "--onto", base).code == 0
    first = upstream.git("rev-parse", "patchq/main").strip()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream.path), str(clone))
    r = run_patchq("--dir", str(queue.path), "--target", str(clone), "apply", "--onto", base)
    assert r.code == 0, r.err
    assert git(clone, "rev-parse", "HEAD").strip() == first
    # No author in the header: the user's git identity (the sealed GIT_AUTHOR_*).
    assert git(clone, "log", "-1", "--format=%an <%ae>|%s").strip() == (
        "Up Stream <up@example.org>|plain"
    )


def test_guards_select_patches(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    upstream.write("a.txt", "a\nb\nc\n")
    base = upstream.commit("base")
    queue.add("1.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n", " #+sm120")
    queue.add("2.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+C\n", " #-sm120")
    assert patchq("apply", "--onto", base).code == 0
    assert upstream.read("a.txt") == b"a\nb\nC\n"
    # Another selection of the series is a new pin only when asked: the lock holds what
    # was reviewed until `--pin`.
    r = patchq("apply", "--onto", base, "--guard", "sm120")
    assert r.code == 0 and "series.lock left as reviewed" in r.err
    assert upstream.read("a.txt") == b"A\nb\nc\n"
    assert json.loads(queue.lock())["guards"] == []
    assert patchq("apply", "--onto", base, "--guard", "sm120", "--pin").code == 0
    assert json.loads(queue.lock())["guards"] == ["sm120"]
    assert [p["name"] for p in json.loads(queue.lock())["patches"]] == ["1.patch"]
    assert patchq("verify").code == 0


def test_verify_names_the_changed_patch_and_touches_nothing(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", "a\nb\nc\n")
    base = upstream.commit("base")
    queue.add("1.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n")
    assert patchq("apply", "--onto", base).code == 0
    (queue.path / "patches" / "1.patch").write_text(
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-a\n+Z\n b\n c\n"
    )
    before = upstream.read("a.txt")
    r = patchq("verify")
    assert r.code == 1
    assert "1.patch: changed since series.lock was written" in r.err
    assert "result tree" in r.err
    assert upstream.read("a.txt") == before
    assert upstream.git("status", "--porcelain") == ""


def test_a_conflict_changes_nothing(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    upstream.write("a.txt", "a\nb\nc\n")
    base = upstream.commit("base")
    queue.add("1.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    queue.add("2.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n-x\n+X\n c\n")
    r = patchq("apply", "--onto", base)
    assert r.code == 3
    assert "patches/2.patch" in r.err and "a.txt: hunk #1 (patch line 3" in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert "patchq/main" not in upstream.git("branch")
    assert not (queue.path / "series.lock").exists()


def test_dirty_target_is_refused(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    upstream.write("a.txt", "a\n")
    base = upstream.commit("base")
    queue.add("1.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n")
    upstream.write("a.txt", "my edit\n")
    r = patchq("apply", "--onto", base)
    assert r.code == 5 and "a.txt" in r.err
    assert upstream.read("a.txt") == b"my edit\n"


@pytest.mark.parametrize(
    "name,body,phrase",
    [
        ("abs", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+A\n", "absolute path"),
        ("dotdot", "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+A\n", "'..' component"),
        ("gitdir", "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+evil\n", ".git"),
        ("gitcase", "--- /dev/null\n+++ b/.GIT/config\n@@ -0,0 +1 @@\n+evil\n", ".git"),
        ("through-link", "--- /dev/null\n+++ b/link/x\n@@ -0,0 +1 @@\n+evil\n", "symlink"),
        ("the-link", "--- a/link\n+++ b/link\n@@ -1 +1 @@\n-a\n+A\n", "symlink"),
    ],
)
def test_unsafe_paths_are_refused(
    upstream: Upstream, queue: Queue, patchq: Runner, name: str, body: str, phrase: str
) -> None:
    upstream.write("a.txt", "a\n")
    (upstream.path / "link").symlink_to("/tmp")
    base = upstream.commit("base")
    queue.add(f"{name}.patch", body)
    r = patchq("apply", "--onto", base)
    assert r.code == 4, r.err
    assert phrase in r.err
    assert "patchq/main" not in upstream.git("branch")


def test_creating_a_symlink_then_writing_through_it_is_refused(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", "a\n")
    base = upstream.commit("base")
    queue.add(
        "1.patch",
        "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n"
        "@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n",
    )
    assert "points to absolute path" in patchq("apply", "--onto", base).err
    (queue.path / "series").write_text("")
    queue.add(
        "2.patch",
        "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n"
        "@@ -0,0 +1 @@\n+sub\n\\ No newline at end of file\n"
        "diff --git a/l/x b/l/x\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/l/x\n@@ -0,0 +1 @@\n+evil\n",
    )
    r = patchq("apply", "--onto", base)
    assert r.code == 4 and "goes through a symlink" in r.err


def test_binary_patches_are_refused_clearly(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.bin", b"\0\1\2")
    base = upstream.commit("base")
    upstream.write("a.bin", b"\0\1\3")
    upstream.commit("bin")
    queue.add("bin.patch", upstream.git("format-patch", "--stdout", "--binary", "-1"))
    r = patchq("apply", "--onto", base)
    assert r.code == 4 and "binary patch for 'a.bin'" in r.err


def test_bad_series_and_patches_exit_4(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    upstream.write("a.txt", "a\n")
    base = upstream.commit("base")
    (queue.path / "series").write_text("missing.patch\n")
    r = patchq("apply", "--onto", base)
    assert r.code == 4 and "missing.patch" in r.err and "missing" in r.err
    (queue.path / "series").write_text("x.patch\nx.patch\n")
    r = patchq("apply", "--onto", base)
    assert r.code == 4 and "listed twice" in r.err and "series:2" in r.err
    (queue.path / "series").write_text("")
    # One old and two new lines short: no chopped blank context fills that (GNU patch too).
    queue.add("bad.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n-a\n+A\n")
    r = patchq("apply", "--onto", base)
    assert r.code == 4 and "bad.patch:3:" in r.err and "truncated hunk" in r.err
    (queue.path / "series").write_text("../../etc/passwd\n")
    assert patchq("apply", "--onto", base).code == 4


def test_unknown_ref_and_no_lock(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    upstream.write("a.txt", "a\n")
    upstream.commit("base")
    r = patchq("apply", "--onto", "nope")
    assert r.code == 4 and "unknown revision 'nope'" in r.err
    r = patchq("verify")
    assert r.code == 4 and "no series.lock" in r.err


def test_help_and_version() -> None:
    r = run_patchq("--version")
    assert r.code == 0 and "patchq" in r.out
    for cmd in ("init", "series", "import", "apply", "verify"):
        r = run_patchq(cmd, "--help")
        assert r.code == 0 and "Example" in r.out, cmd
    r = run_patchq("apply", "--fuzz", "9")
    assert r.code == 2


def test_verify_files_mode_in_a_checkout_without_the_base(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("a.txt", "a\nb\nc\n").write("other.txt", "x\n")
    base = upstream.commit("base")
    queue.add("1.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n")
    assert patchq("apply", "--onto", base).code == 0
    r = patchq("verify", "--files", "--json")
    assert r.code == 1 and json.loads(r.out)["mode"] == "files"  # a.txt is patched here
    # A source drop: a new repository holding the files as at the base, not its history.
    drop = tmp_path / "drop"
    drop.mkdir()
    git(drop, "init", "-q")
    (drop / "a.txt").write_text("a\nb\nc\n")
    git(drop, "add", "-A")
    git(drop, "commit", "-q", "-m", "tarball")
    r = run_patchq("--dir", str(queue.path), "--target", str(drop), "verify")
    assert r.code == 0, r.err
    assert "verified: the series reproduces the locked files" in r.err
    (drop / "a.txt").write_text("a\nb\nchanged\n")
    r = run_patchq("--dir", str(queue.path), "--target", str(drop), "verify")
    assert r.code == 1
    assert f"a.txt: not as at the pinned base {base[:12]}" in r.err
