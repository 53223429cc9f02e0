"""The git layer and the in-memory tree against real repositories."""

from __future__ import annotations

from typing import IO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.core.errors import BadInputError, GitError, MissingObjectError, UnsafePathError
from patchq.git import readahead
from patchq.git.catfile import CatFile
from patchq.git.memtree import MemTree
from patchq.git.objects import Ident, object_id
from patchq.git.repo import GitRepo

from ..conftest import Queue, Runner, Upstream


def test_objects_written_in_a_batch_are_what_git_would_write(upstream: Upstream) -> None:
    upstream.write("a.b", "x\n").write("a/z", "y\n").write("a-c", "z\n").write("b/c/d", "w\n")
    head = upstream.commit("base")
    g = GitRepo(upstream.path)
    base_tree = g.resolve("HEAD", "tree")
    assert g.resolve(head[:10]) == head
    tree = MemTree(g.read_tree, base_tree)
    w = g.writer()
    # Rewriting nothing yields the same tree id (git's sort order: "a-c" < "a.b" < "a/").
    assert tree.write(w) == base_tree
    blob = w.add("blob", b"new\n")
    tree.set("a/new.txt", "100644", blob)
    tree.remove("b/c/d")
    new_tree = tree.write(w)
    when = Ident("Pat Q", "pq@example.org", 1700000000, "+0100")
    commit = g.commit_object(new_tree, [head], "msg\n\nbody\n", when, when)
    assert w.flush() == 4  # blob, a/, root, commit (b/ vanished)
    listing = upstream.git("ls-tree", "-r", "--name-only", commit).split()
    assert listing == ["a-c", "a.b", "a/new.txt", "a/z"]
    upstream.git("fsck", "--strict", "--no-dangling")
    assert (
        upstream.git("log", "-1", "--format=%an|%ae|%ad|%s", "--date=raw", commit).strip()
        == "Pat Q|pq@example.org|1700000000 +0100|msg"
    )
    assert g.read_blob(blob) == b"new\n"
    assert object_id("blob", b"new\n") == blob


def test_unknown_revisions_and_non_repos(upstream: Upstream, tmp_path) -> None:  # type: ignore[no-untyped-def]
    upstream.write("a", "a\n").commit()
    g = GitRepo(upstream.path)
    with pytest.raises(BadInputError, match="unknown revision"):
        g.resolve("no-such-branch")
    with pytest.raises(BadInputError, match="invalid revision"):
        g.resolve("HEAD main")
    with pytest.raises(BadInputError, match="not a git checkout"):
        GitRepo(tmp_path)


@pytest.mark.parametrize(
    "path,phrase",
    [
        ("/etc/passwd", "absolute"),
        ("a/../b", "'..'"),
        ("./a", "'.'"),
        ("a//b", "empty"),
        (".git/config", ".git"),
        ("sub/.GIT/x", ".git"),
        (".git./x", ".git"),
        ("x\0y", "NUL"),
    ],
)
def test_tree_refuses_escaping_paths(upstream: Upstream, path: str, phrase: str) -> None:
    upstream.write("a", "a\n").commit()
    g = GitRepo(upstream.path)
    tree = MemTree(g.read_tree, g.resolve("HEAD", "tree"))
    with pytest.raises(UnsafePathError, match=phrase):
        tree.set(path, "100644", object_id("blob", b""))


def test_dirty_paths_ignore_the_patch_repo(upstream: Upstream) -> None:
    upstream.write("a", "a\n").write("debian/patches/series", "").commit()
    g = GitRepo(upstream.path)
    assert g.dirty_paths() == []
    upstream.write("debian/patches/series", "x.patch\n").write("new-file", "n\n")
    assert g.dirty_paths(["debian/patches"]) == ["new-file"]


def test_section_state_undo_gives_back_the_tree(upstream: Upstream) -> None:
    """A replay takes back a conflicting patch by undoing its changes in place: whatever
    the patch did — edits, new files in new folders, removals that empty a folder, a file
    and a folder trading places — the tree is the one before, id for id."""
    import random

    from patchq.stack.apply import SectionState

    upstream.write("a/x", "1\n").write("a/y", "2\n").write("b", "3\n").write("c/d/e", "4\n")
    upstream.commit("base")
    g = GitRepo(upstream.path)
    w = g.writer(dry_run=True)
    st = SectionState(g, g.resolve("HEAD", "tree"))
    rng = random.Random(4)
    names = ["a/x", "a/y", "a", "b", "b/n", "c/d/e", "c/d", "c", "n/m/o", "n"]
    for round_ in range(300):
        before = st.tree.write(w)
        st.changed = {}
        for _ in range(rng.randint(1, 5)):
            path = rng.choice(names)
            try:
                if rng.random() < 0.4:
                    st.remove(path, "test")
                else:
                    st.put(path, "100644", b"%d\n" % rng.randint(0, 3), "test")
            except UnsafePathError:
                pass  # through a file, or onto a folder: the patch would stop here
        if rng.random() < 0.5:
            st.undo(before)
            assert st.tree.write(w) == before, round_
            # The undone tree is fully usable: a fresh read agrees on every path.
            fresh = MemTree(g.read_tree, before)
            for path in names:
                try:
                    want = fresh.get(path)
                except UnsafePathError:
                    want = None
                try:
                    got = st.tree.get(path)
                except UnsafePathError:
                    got = None
                assert got == want, (round_, path)
        st.changed = None


def test_section_state_undo_falls_back_to_reading_the_tree(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File and folder trading places, undone; and when putting a path back fails, the
    tree is read afresh rather than left half restored."""
    from patchq.stack.apply import SectionState

    upstream.write("a/x", "1\n").write("a/y", "2\n").write("b", "3\n").commit("base")
    g = GitRepo(upstream.path)
    w = g.writer(dry_run=True)
    st = SectionState(g, g.resolve("HEAD", "tree"))
    before = st.tree.write(w)
    st.changed = {}
    st.remove("a/x", "t")
    st.remove("a/y", "t")
    st.put("a", "100644", b"now a file\n", "t")
    st.remove("b", "t")
    st.put("b/inside", "100644", b"now a folder\n", "t")
    assert st.tree.write(w) != before
    st.undo(before)
    assert st.tree.write(w) == before and st.changed is None
    assert st.tree.get("a/x") is not None and st.tree.get("b") is not None

    st.changed = {}
    st.put("b", "100644", b"changed\n", "t")
    real_set = MemTree.set

    def refuse(self: MemTree, path: str, mode: str, oid: str, where: str = "") -> None:
        raise UnsafePathError("refused", where)

    monkeypatch.setattr(MemTree, "set", refuse)
    st.undo(before)
    monkeypatch.setattr(MemTree, "set", real_set)
    assert st.tree.write(w) == before
    assert st.content(st.tree.get("b")[1]) == b"3\n"


def test_git_failing_in_the_target_is_exit_6_naming_the_command(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    """A git the target refuses (here a stale index.lock) is neither bad input (4) nor a
    bug (70): exit 6, one line naming the git command, and the branch is not moved."""
    upstream.write("a.txt", "a\nb\nc\n")
    base = upstream.commit("base")
    queue.add("x.patch", "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    (upstream.path / ".git" / "index.lock").write_text("")
    r = patchq("apply", "--onto", base)
    assert r.code == 6, (r.code, r.err)
    assert r.err.count("\n") == 1 and "`git checkout" in r.err, r.err
    assert upstream.git("branch", "--list", "patchq/*") == ""


def test_a_commit_whose_blob_is_missing_says_so_and_the_next_one_is_read(
    upstream: Upstream,
) -> None:
    """A commit's own diff that needs a blob the store lacks (a partial or shallow
    clone) is a MissingObjectError naming it, from a git of its own; the long-lived
    diff-tree it killed is started again for the next commit."""
    upstream.write("f.txt", "one\n").write("g.txt", "g\n")
    upstream.commit("base")
    upstream.write("f.txt", "two\n")
    lost = upstream.commit("two")
    blob = upstream.git("rev-parse", f"{lost}:f.txt").strip()
    upstream.write("f.txt", "three\n")  # the lost blob is not the checkout's (git reads that)
    upstream.commit("three")
    upstream.write("g.txt", "G\n")
    later = upstream.commit("g")
    (upstream.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    g = GitRepo(upstream.path)
    try:
        with pytest.raises(MissingObjectError) as got:
            g.commit_diff(lost)
        assert got.value.oid == blob and got.value.exit_code == 6
        assert b"-g\n+G\n" in g.commit_diff(later)
    finally:
        g.close()


def test_intend_to_add_takes_names_not_patterns(upstream: Upstream) -> None:
    """A new file a patch names `*.txt` is that file: the person's other.txt stays out of
    the index (journal and rebase both mark a conflict's new files this way)."""
    upstream.write("a.txt", "a\n")
    upstream.commit("base")
    upstream.write("*.txt", "literal\n").write("other.txt", "mine\n")
    g = GitRepo(upstream.path)
    g.intend_to_add(["*.txt"])
    assert upstream.git("ls-files").split("\n") == ["*.txt", "a.txt", ""]


def _single_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The objects read one request each (not in a batch) from now on, as a list."""
    calls: list[str] = []
    real = CatFile.read

    def counted(self: CatFile, ref: str) -> object:
        calls.append(ref)
        return real(self, ref)

    monkeypatch.setattr(CatFile, "read", counted)
    return calls


def test_prefetch_reads_ahead_in_batches_and_skips_what_is_missing(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(150):  # more than a batch of requests, in nested folders
        upstream.write(f"d{i % 3}/sub/f{i}.txt", f"file {i}\n" * (i + 1))
    # A name that reads like a tree entry: the read-ahead's quick search is misled into
    # taking this file for a folder `zz`, and must only read less for it.
    upstream.write("a 40000 zz", "a file\n")
    upstream.commit("base")
    g = GitRepo(upstream.path)
    tree = g.resolve("HEAD", "tree")
    paths = [f"d{i % 3}/sub/f{i}.txt" for i in range(150)] + ["d0/none", "nowhere/x", "d1"]
    g.prefetch_paths((tree, p) for p in [*paths, "zz/f", "zz/sub/f"])
    assert g.entry_at(tree, "zz/f") is None
    missing = "0" * 39 + "1"
    g.prefetch([missing])  # a missing object is left for `read` to report
    calls = _single_reads(monkeypatch)
    for i in range(150):
        entry = g.entry_at(tree, f"d{i % 3}/sub/f{i}.txt")
        assert entry is not None
        assert g.read_blob(entry[1]) == f"file {i}\n".encode() * (i + 1)
    assert calls == []  # every tree and file on the way came with the batches
    with pytest.raises(GitError, match="missing"):
        g.read(missing)


def test_apply_reads_the_files_a_series_touches_in_batches(
    upstream: Upstream, queue: Queue, patchq: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 80
    for i in range(n):
        upstream.write(f"src{i % 4}/f{i}.c", f"int f{i};\n")
    upstream.commit("base")
    for i in range(n):
        queue.add(
            f"{i:03d}.patch",
            f"--- a/src{i % 4}/f{i}.c\n+++ b/src{i % 4}/f{i}.c\n@@ -1 +1 @@\n"
            f"-int f{i};\n+long f{i};\n",
        )
    calls = _single_reads(monkeypatch)
    assert patchq("apply").code == 0
    assert upstream.read("src3/f79.c") == b"long f79;\n"
    # One read a file would be 80 and more: the base's commit and a few trees remain.
    assert len(calls) < 10, calls


_PATHS = ["a", "a/b", "a/b/c", "a/c", "b", "b/a", "c"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["set", "remove", "peek"]), st.sampled_from(_PATHS)),
        max_size=25,
    )
)
def test_peek_answers_kept_are_what_a_fresh_walk_finds(ops: list[tuple[str, str]]) -> None:
    # `peek` keeps its answers for files; every set and remove (of a file or a whole
    # folder) must leave none that a walk of the tree would not give now.
    blob = object_id("blob", b"x\n")
    tree = MemTree(lambda oid: [], None)
    for op, path in ops:
        try:
            if op == "set":
                tree.set(path, "100644", blob)
            elif op == "remove":
                tree.remove(path)
        except UnsafePathError:
            pass
        for p in _PATHS:
            got = tree.peek(p)
            tree._peeked.pop(p, None)
            assert got == tree.peek(p), (op, path, p)


def test_a_read_ahead_cut_off_leaves_no_answer_behind(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C after the requests went and before their answers were read: the next read
    # must not take a leftover answer for its own.
    upstream.write("a", "A\n").write("b", "B\n").commit()
    g = GitRepo(upstream.path)
    tree = g.resolve("HEAD", "tree")
    a, b = (g.entry_at(tree, n) for n in ("a", "b"))
    assert a is not None and b is not None

    def cut_off(stdin: IO[bytes], stdout: IO[bytes], requests: list[str], where: str) -> None:
        stdin.write("".join(f"{r}\n" for r in requests).encode())
        stdin.flush()
        stdout.readline()
        raise KeyboardInterrupt

    monkeypatch.setattr(readahead, "ask", cut_off)
    with pytest.raises(KeyboardInterrupt):
        g.prefetch([a[1], b[1]])
    monkeypatch.undo()
    assert (g.read_blob(b[1]), g.read_blob(a[1])) == (b"B\n", b"A\n")


def test_close_ends_the_children_of_every_part_of_the_repository(upstream: Upstream) -> None:
    """GitRepo is put together from one class a concept, each keeping its own git
    children (the object store's cat-file readers, history's commit differ, merging's
    diff server); `close` ends them all, and one `__init__` chain set them all up."""
    upstream.write("a", "one\n").commit()
    head = upstream.write("a", "one\ntwo\n").commit()
    g = GitRepo(upstream.path)
    assert [c.__name__ for c in type(g).__mro__][1:-1] == [
        "WorkTree",
        "Refs",
        "History",
        "Merging",
        "ObjectStore",
        "GitProcesses",
    ]
    entry = g.entry_at(g.resolve(head, "tree"), "a")
    assert entry is not None and g.read_blob(entry[1]) == b"one\ntwo\n"
    assert b"+two" in g.commit_diff(head)
    assert g._diff(b"x\n" * 3, b"x\ny\n")() is not None
    assert g._commit_differ is not None and g._differ is not None
    children = [*g.cat._procs.values(), g._commit_differ._proc, g._differ._proc]
    assert len(children) >= 3
    g.close()
    assert g._commit_differ is None and g._differ is None and not g.cat._procs
    for child in children:
        assert child.wait(timeout=30) is not None
