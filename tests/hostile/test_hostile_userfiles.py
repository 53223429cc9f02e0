"""The user's files are never lost.

git overwrites ignored files silently when a checkout brings a tracked file to their
path, and `reset --hard` deletes a file that is only staged. patchq names each such file
and stops (exit 5) with nothing changed, or — where the verb has `--force` — saves them
in a stash first and says which. An existing branch patchq did not make is never reset
without `--force`, and a branch checked out in another worktree is never moved.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..conftest import Queue, Result, Upstream, git

Run = Callable[..., Result]

NEW_GEN = "gen\n\n---\n--- /dev/null\n+++ b/build/gen.c\n@@ -0,0 +1 @@\n+int generated;\n"
DROP_OLD = "drop\n\n---\n--- a/old.cfg\n+++ /dev/null\n@@ -1 +0,0 @@\n-setting = 1\n"


def state(up: Upstream, queue: Queue) -> dict[str, object]:
    """Refs, HEAD, index, every file of the target (ignored ones too) and the patch repo,
    and patchq's state: what a command that refuses must leave as it was."""
    out: dict[str, object] = {}
    for root in (queue.path, up.path):
        for dirpath, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ("objects", "logs")]
            for n in names:
                p = Path(dirpath) / n
                if n in ("index", "ORIG_HEAD"):
                    continue
                out[str(p)] = p.read_bytes()
    out["refs"] = up.git("for-each-ref")
    out["HEAD"] = up.git("rev-parse", "HEAD")
    out["index"] = up.git("ls-files", "-s")
    return out


def ignored_build(up: Upstream) -> str:
    up.write(".gitignore", "build/\n*.o\n")
    up.write("old.cfg", "setting = 1\n")
    up.write("main.c", "int main;\n")
    return up.commit("base")


def test_push_refuses_to_write_over_an_ignored_file(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    base = ignored_build(upstream)
    queue.add("gen.patch", NEW_GEN)
    (queue.path / "patchq.toml").write_text(f'target = "../upstream"\npin = "{base}"\n')
    upstream.write("build/gen.c", "my own build output\n")  # ignored by build/
    before = state(upstream, queue)
    r = patchq("push")
    assert r.code == 5, r.err
    assert "build/gen.c" in r.err and "does not track" in r.err and "--force" in r.err
    assert state(upstream, queue) == before
    # --force saves it in a stash first, and says which.
    r = patchq("push", "--force")
    assert r.code == 0, r.err
    assert "in the way in stash" in r.err
    assert upstream.read("build/gen.c") == b"int generated;\n"
    stash = upstream.git("rev-parse", "refs/stash").strip()
    kept = upstream.git("show", f"{stash}^3:build/gen.c")
    assert kept == "my own build output\n"


def test_apply_refuses_to_write_over_an_ignored_file_and_force_stashes_it(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    base = ignored_build(upstream)
    queue.add("gen.patch", NEW_GEN)
    upstream.write("build/gen.c", "mine\n")
    before = state(upstream, queue)
    r = patchq("apply", "--onto", base)
    assert r.code == 5 and "build/gen.c" in r.err and "apply --force" in r.err, r.err
    assert state(upstream, queue) == before
    r = patchq("apply", "--onto", base, "--force")
    assert r.code == 0, r.err
    assert upstream.read("build/gen.c") == b"int generated;\n"
    assert "mine" in upstream.git("show", "refs/stash^3:build/gen.c")


def test_a_file_in_the_way_under_an_ignored_folder_file(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    """An ignored *file* named like the folder a patch creates: git would replace it."""
    base = ignored_build(upstream)
    queue.add("gen.patch", NEW_GEN)
    upstream.write("build", "a file named build, ignored\n")
    before = state(upstream, queue)
    r = patchq("apply", "--onto", base)
    assert r.code == 5 and "build" in r.err, r.err
    assert state(upstream, queue) == before


def test_pop_never_writes_over_a_file_the_person_made_after_push(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    """The patch deletes old.cfg; after the push a build writes an ignored old.cfg.o… and
    the person a new old.cfg (ignored here): popping brings old.cfg back over it."""
    upstream.write(".gitignore", "*.cfg\n")
    upstream.write("main.c", "int main;\n")
    upstream.git("add", "-A")
    upstream.git("add", "-f", "--", ".gitignore", "main.c")
    upstream.write("old.cfg", "setting = 1\n")
    upstream.git("add", "-f", "old.cfg")
    upstream.git("commit", "-q", "-m", "base")
    base = upstream.head()
    queue.add("drop.patch", DROP_OLD)
    assert patchq("apply", "--onto", base).code == 0
    assert not (upstream.path / "old.cfg").exists()
    upstream.write("old.cfg", "the person's own settings\n")
    before = state(upstream, queue)
    r = patchq("pop")
    assert r.code == 5 and "old.cfg" in r.err, r.err
    assert state(upstream, queue) == before
    r = patchq("pop", "--force")
    assert r.code == 0, r.err
    assert upstream.read("old.cfg") == b"setting = 1\n"
    assert "own settings" in upstream.git("show", "refs/stash^3:old.cfg")


def test_pop_keeps_ignored_build_output_in_a_folder_the_stack_made(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    base = ignored_build(upstream)
    queue.add("src.patch", "src\n\n---\n--- /dev/null\n+++ b/lib/x.c\n@@ -0,0 +1 @@\n+int x;\n")
    assert patchq("apply", "--onto", base).code == 0
    upstream.write("lib/x.o", b"\x7fELF object\n")
    assert patchq("pop").code == 0
    assert upstream.read("lib/x.o") == b"\x7fELF object\n"
    assert not (upstream.path / "lib" / "x.c").exists()


def test_apply_never_resets_a_branch_it_did_not_make(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    base = ignored_build(upstream)
    queue.add("gen.patch", NEW_GEN)
    upstream.write("feature.c", "work\n")
    mine = upstream.commit("my feature")
    upstream.git("branch", "feature")
    upstream.git("checkout", "-q", "--detach", base)
    before = state(upstream, queue)
    r = patchq("apply", "--onto", base, "--branch", "feature")
    assert r.code == 5 and "feature" in r.err and "--force" in r.err, r.err
    assert state(upstream, queue) == before
    # Its own branch, at the top it recorded: applied again without a word.
    assert patchq("apply", "--onto", base).code == 0
    assert patchq("apply", "--onto", base).code == 0
    # A commit made on the stack branch with git is not the stack's: refused too.
    upstream.write("extra.c", "mine\n")
    upstream.commit("a commit of mine on the stack branch")
    r = patchq("apply", "--onto", base)
    assert r.code == 5 and "outside patchq" in r.err, r.err
    r = patchq("apply", "--onto", base, "--branch", "feature", "--force")
    assert r.code == 0, r.err
    assert upstream.git("rev-parse", "feature").strip() != mine
    assert mine in upstream.git("reflog", "show", "--format=%H", "feature")


def test_push_never_resets_a_branch_of_the_same_name(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    base = ignored_build(upstream)
    queue.add("gen.patch", NEW_GEN)
    (queue.path / "patchq.toml").write_text(f'target = "../upstream"\npin = "{base}"\n')
    upstream.write("feature.c", "work\n")
    upstream.commit("someone's branch")
    upstream.git("branch", "patchq/main")
    upstream.git("checkout", "-q", "--detach", base)
    before = state(upstream, queue)
    r = patchq("push", "-a")
    assert r.code == 5 and "patchq/main" in r.err and "did not make" in r.err, r.err
    assert state(upstream, queue) == before


def test_a_branch_checked_out_in_another_worktree_is_never_moved(
    upstream: Upstream, queue: Queue, patchq: Run, tmp_path: Path
) -> None:
    base = ignored_build(upstream)
    queue.add("gen.patch", NEW_GEN)
    queue.add("two.patch", "two\n\n---\n--- /dev/null\n+++ b/two.c\n@@ -0,0 +1 @@\n+two\n")
    assert patchq("apply", "--onto", base).code == 0
    assert patchq("pop").code == 0
    # The stack branch is then checked out in a second worktree as well.
    upstream.git("checkout", "-q", "--detach")
    other = tmp_path / "other"
    upstream.git("worktree", "add", "-q", str(other), "patchq/main")
    upstream.git("checkout", "-q", "--ignore-other-worktrees", "patchq/main")
    before = state(upstream, queue)
    for args in (("push",), ("pop",), ("apply", "--onto", base, "--force")):
        r = patchq(*args)
        assert r.code == 5, (args, r.err)
        assert "another worktree" in r.err and str(other) in r.err, r.err
        assert state(upstream, queue) == before, args
    git(other, "switch", "-q", "--detach")
    assert patchq("push").code == 0


def _stopped_rebase(upstream: Upstream, queue: Queue, patchq: Run) -> None:
    """A series of two (p1 edits line 3, p2 creates later.log) stopped at p1 by upstream."""
    upstream.write(".gitignore", "*.log\n")
    upstream.write("f.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    base = upstream.commit("base")
    queue.add(
        "p1.patch",
        "one\n\n---\n--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n line 2\n"
        "-line 3\n+LINE 3\n line 4\n",
    )
    queue.add("p2.patch", "two\n\n---\n--- /dev/null\n+++ b/later.log\n@@ -0,0 +1 @@\n+kept\n")
    assert patchq("apply", "--onto", base).code == 0
    upstream.git("checkout", "-q", "main")
    upstream.write("f.txt", upstream.read("f.txt").decode().replace("line 3", "Line three"))
    upstream.commit("upstream edits line 3")
    upstream.git("checkout", "-q", "patchq/main")
    assert patchq("rebase", "--onto", "main").code == 3


def _resolve(upstream: Upstream) -> None:
    text = upstream.read("f.txt").decode()
    start, end = text.index("<<<<<<<"), text.index(">>>>>>>")
    upstream.write("f.txt", text[:start] + "LINE THREE\n" + text[text.index("\n", end) + 1 :])


def test_rebase_continue_never_writes_over_a_file_made_during_the_stop(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    _stopped_rebase(upstream, queue, patchq)
    _resolve(upstream)
    upstream.write("later.log", "the person's log, ignored\n")
    r = patchq("rebase", "--continue")
    assert r.code == 5 and "later.log" in r.err, r.err
    assert upstream.read("later.log") == b"the person's log, ignored\n"
    (upstream.path / "later.log").rename(upstream.path / "moved.log")
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert upstream.read("later.log") == b"kept\n"
    assert upstream.read("moved.log") == b"the person's log, ignored\n"


def test_rebase_skip_keeps_files_the_person_made_during_the_stop(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    _stopped_rebase(upstream, queue, patchq)
    upstream.write("notes.txt", "my notes, staged\n")
    upstream.git("add", "notes.txt")
    upstream.write("scratch.txt", "untracked scratch\n")
    upstream.write("debug.log", "ignored output\n")
    r = patchq("rebase", "--skip")
    assert r.code == 0, r.err
    assert upstream.read("notes.txt") == b"my notes, staged\n"
    assert upstream.read("scratch.txt") == b"untracked scratch\n"
    assert upstream.read("debug.log") == b"ignored output\n"
    assert b"<<<<<<<" not in upstream.read("f.txt")
