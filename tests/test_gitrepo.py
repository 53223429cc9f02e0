"""The git layer and the in-memory tree against real repositories."""

from __future__ import annotations

import pytest

from patchq.errors import BadInputError, UnsafePathError
from patchq.gitrepo import GitRepo, Ident, object_id
from patchq.tree import MemTree

from .conftest import Upstream


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
    commit = GitRepo.commit_object(w, new_tree, [head], "msg\n\nbody\n", when, when)
    assert w.flush() == 4  # blob, a/, root, commit (b/ vanished)
    listing = upstream.git("ls-tree", "-r", "--name-only", commit).split()
    assert listing == ["a-c", "a.b", "a/new.txt", "a/z"]
    upstream.git("fsck", "--strict", "--no-dangling")
    assert upstream.git("log", "-1", "--format=%an|%ae|%ad|%s", "--date=raw", commit).strip() \
        == "Pat Q|pq@example.org|1700000000 +0100|msg"
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


@pytest.mark.parametrize("path,phrase", [
    ("/etc/passwd", "absolute"), ("a/../b", "'..'"), ("./a", "'.'"), ("a//b", "empty"),
    (".git/config", ".git"), ("sub/.GIT/x", ".git"), (".git./x", ".git"), ("x\0y", "NUL"),
])
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
