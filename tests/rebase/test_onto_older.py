"""A rebase onto a ref behind the base (an older tag) says so and goes on, and `undo`
right after it puts back the stack branch, `series`, the patches and `series.lock` byte
for byte. An untracked file stops a rebase only where its checkout would write over it.
"""

from __future__ import annotations

from pathlib import Path

from ..conftest import Queue, Runner, Upstream

PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -10,3 +10,3 @@\n line 10\n-line 11\n+LINE 11\n line 12\n"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".patchq" not in p.parts
    }


def _older_tag(upstream: Upstream, queue: Queue, patchq: Runner) -> str:
    """v1, then v2 (another file), the series applied on v2; returns v2's commit."""
    upstream.write("f.txt", "".join(f"line {i}\n" for i in range(1, 31)))
    upstream.commit("v1")
    upstream.git("tag", "v1")
    v2 = upstream.write("g.txt", "g\n").commit("v2")
    queue.add("a.patch", PATCH)
    r = patchq("apply", "--onto", v2)
    assert r.code == 0, r.err
    return v2


def test_onto_an_older_tag_says_so_and_undo_puts_everything_back(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    _older_tag(upstream, queue, patchq)
    before = _files(queue.path)
    branch = upstream.git("rev-parse", "refs/heads/patchq/main").strip()
    r = patchq("rebase", "--onto", "v1")
    assert r.code == 0, r.err
    assert "patchq: v1 is 1 commit behind the base" in r.err
    assert _files(queue.path) != before
    u = patchq("undo")
    assert u.code == 0, u.err
    assert "undid `patchq rebase`" in u.err
    assert _files(queue.path) == before
    assert upstream.git("rev-parse", "refs/heads/patchq/main").strip() == branch
    assert patchq("verify").code == 0


def test_a_rebase_that_stopped_is_not_undone(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    """Its finishing write starts from the stop, not from what the person had: `undo`
    would put back a half-rebased state, so it refuses as before."""
    v2 = _older_tag(upstream, queue, patchq)
    upstream.git("checkout", "-q", "-b", "moved", v2)
    upstream.write("f.txt", upstream.read("f.txt").decode().replace("line 11\n", "line XI\n"))
    upstream.commit("rewrite line 11")
    r = patchq("rebase", "--onto", "moved")
    assert r.code == 3, r.err
    assert patchq("rebase", "--skip").code == 0
    u = patchq("undo")
    assert u.code == 4 and "cannot be undone" in u.err


def test_an_untracked_file_stops_a_rebase_only_where_it_is_in_the_way(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    v2 = _older_tag(upstream, queue, patchq)
    (upstream.path / "notes.txt").write_text("mine\n")
    r = patchq("rebase", "--onto", "v1", "--dry-run")
    assert r.code == 0, r.err
    r = patchq("rebase", "--onto", "v1")
    assert r.code == 0, r.err
    assert (upstream.path / "notes.txt").read_text() == "mine\n"
    # Onto v2 again, g.txt comes back as a tracked file: an untracked g.txt is in the way.
    (upstream.path / "g.txt").write_text("my own g\n")
    r = patchq("rebase", "--onto", v2)
    assert r.code == 5, r.err
    assert "g.txt" in r.err and "git does not track" in r.err and "move it aside" in r.err
    assert (upstream.path / "g.txt").read_text() == "my own g\n"


def test_a_folder_upstream_turned_into_a_link_is_carried_across(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    """Upstream moved `lib/` to `real/` and left `lib` a symlink to it: the rebase goes
    through (the folder's files are tracked, and leave with it); an untracked file in it
    still stops the rebase, naming the folder, and is kept."""
    upstream.write("f.txt", "".join(f"line {i}\n" for i in range(1, 31)))
    upstream.write("lib/a.txt", "a\n")
    base = upstream.commit("base")
    upstream.git("checkout", "-q", "-b", "linked", base)
    upstream.git("mv", "lib", "real")
    (upstream.path / "lib").symlink_to("real")
    upstream.commit("lib is a link to real")
    upstream.git("checkout", "-q", "main")
    queue.add("a.patch", PATCH)
    assert patchq("apply", "--onto", base).code == 0
    (upstream.path / "lib" / "mine.txt").write_text("mine\n")
    r = patchq("rebase", "--onto", "linked")
    assert r.code == 5 and "lib" in r.err and "git does not track" in r.err, r.err
    assert (upstream.path / "lib" / "mine.txt").read_text() == "mine\n"
    (upstream.path / "lib" / "mine.txt").unlink()
    r = patchq("rebase", "--onto", "linked")
    assert r.code == 0, r.err
    assert (upstream.path / "lib").is_symlink()
    assert (upstream.path / "lib" / "a.txt").read_text() == "a\n"
    assert patchq("verify").code == 0
