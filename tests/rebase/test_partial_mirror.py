"""A partial mirror (DESIGN §4.1, §4.6): where the upstream's
object store lacks a blob of the range (a partial or shallow clone, a loose object
lost), `check` and `rebase` go on without the evidence that range would have given —
the upstream commits behind each hunk, the patch-ids and subjects provenance compares —
and say once on stderr what they went without. Missing evidence never lets a patch
finish alone that the evidence could have stopped: a patch not placed exactly stops.
End to end through the CLI on real repositories, a loose object deleted."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from ..conftest import Queue, Result, Upstream
from .test_check_rebase import advance, make_patch, pin, sub

LINES = "".join(f"line {i}\n" for i in range(1, 41))
WARNING = "patchq: warning: git could not read object "


def _lose_a_blob(upstream: Upstream, line: str) -> str:
    """Two upstream commits after the pinned base, the first changing `line`; the
    blob of f.c that commit made (in the range, nowhere else) deleted from the store."""
    mid = sub(LINES, f"{line}\n", f"{line} (mid)\n")
    advance(upstream, "mid", {"f.c": mid})
    blob = upstream.git("rev-parse", "main:f.c").strip()
    advance(upstream, "top", {"f.c": sub(mid, "line 39\n", "line thirty-nine\n")})
    os.remove(upstream.path / ".git" / "objects" / blob[:2] / blob[2:])
    assert upstream.git("cat-file", "-e", "main:f.c") == ""
    return blob


def _pinned(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> None:
    upstream.write("f.c", LINES)
    base = upstream.commit("base")
    mine = sub(LINES, "line 20\n", "LINE 20\n")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.c": mine}))], base)


def _context_changed(upstream: Upstream) -> str:
    """Two upstream commits after the pinned base, the first changing a context line of
    the patch's hunk (git's 3-way merge places it); returns that first commit."""
    mid = sub(LINES, "line 17\n", "line 17 (mid)\n")
    first = advance(upstream, "mid", {"f.c": mid})
    advance(upstream, "top", {"f.c": sub(mid, "line 39\n", "line thirty-nine\n")})
    return first


def test_a_clean_rebase_goes_on_without_the_range_history_and_says_so_once(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    _pinned(upstream, queue, patchq)
    blob = _lose_a_blob(upstream, "line 3")
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err  # exit 6 before: `git log … -p` failed on the blob
    assert r.err.count(WARNING) == 1, r.err
    assert f"{WARNING}{blob[:12]} of the upstream range" in r.err
    assert "the upstream commits that changed each hunk's lines" in r.err
    assert "unchanged p.patch" in r.err
    assert upstream.read("f.c").decode().count("LINE 20\n") == 1


def test_a_patch_git_merges_stops_when_the_range_cannot_be_read(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream changed a context line of the hunk: git's 3-way merge places it, an
    # automatic result — but only once provenance found no upstream commit that took
    # the patch. Without the range's patch-ids and subjects it stops instead (never the
    # other way round), saying why; `check` says so too, exit 3.
    _pinned(upstream, queue, patchq)
    _lose_a_blob(upstream, "line 17")
    r = patchq("check", "--onto", "main", "--json")
    assert r.code == 3, r.err
    (p,) = json.loads(r.out)["patches"]
    (h,) = p["hunks"]
    assert h["status"] == "conflict" and "history could not be read whole" in h["reason"]
    assert r.err.count(WARNING) == 1, r.err
    assert "the range's patch-ids and subjects" in r.err
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "p.patch does not apply" in r.err and "history could not be read whole" in r.err
    assert r.err.count(WARNING) == 1, r.err
    assert patchq("rebase", "--abort").code == 0


def test_the_same_merge_with_the_whole_range_is_automatic(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # The control: with every object there, git's merge places it alone, no warning.
    _pinned(upstream, queue, patchq)
    _context_changed(upstream)
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert "merged p.patch" in r.err and "warning" not in r.err


def test_a_shallow_clones_cut_is_never_blamed_for_a_hunks_drift(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # `git clone --depth N` cuts the history: git's `shallow` file lists the commits
    # whose parents were left out, and `git log` shows each as a root adding every file.
    # The commit that changed the patch's line lies before the cut; blaming the cut (or
    # any later commit) would name the wrong one. The run goes without naming any, says
    # so once, and the patch still stops.
    _pinned(upstream, queue, patchq)
    text = sub(LINES, "line 20\n", "line 20 (up)\n")
    took = advance(upstream, "took", {"f.c": text})
    text = sub(text, "line 3\n", "line 3 (mid)\n")
    cut = advance(upstream, "cut", {"f.c": text})
    advance(upstream, "top", {"f.c": sub(text, "line 39\n", "line thirty-nine\n")})
    r = patchq("check", "--onto", "main", "--json")
    assert r.code == 3 and WARNING not in r.err, r.err
    assert json.loads(r.out)["patches"][0]["hunks"][0]["drift"] == [took]
    (upstream.path / ".git" / "shallow").write_text(cut + "\n")
    r = patchq("check", "--onto", "main", "--json")
    assert r.code == 3, r.err
    (h,) = json.loads(r.out)["patches"][0]["hunks"]
    assert h["status"] == "conflict" and h["drift"] == [], h
    assert r.err.count(WARNING) == 1 and f"{WARNING}{cut[:12]}" in r.err, r.err
    assert "git fetch --unshallow" in r.err
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert cut[:12] not in r.err.replace(f"{WARNING}{cut[:12]}", ""), r.err
    # Fixed differently upstream? Its note names the --skip that drops it; the way out
    # after it does not name it a second time.
    assert r.err.count("--skip") == 1 and "`patchq rebase --continue` (or --abort)" in r.err
    assert patchq("rebase", "--abort").code == 0


def test_a_rename_git_cannot_compare_leaves_the_run_without_renames(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream renamed and edited another file, whose new blob is missing: git's rename
    # detection cannot read it and `diff-tree -M` fails (check and rebase exited 6). The
    # run goes without upstream's renames, says so once, and the patch, on a file upstream
    # kept, is carried across.
    other = "".join(f"other {i}\n" for i in range(1, 31))
    upstream.write("x.c", other)
    _pinned(upstream, queue, patchq)
    upstream.git("checkout", "-q", "main")
    upstream.git("mv", "x.c", "y.c")
    upstream.write("y.c", sub(other, "other 30\n", "other thirty\n"))
    upstream.commit("x.c is y.c now")
    blob = upstream.git("rev-parse", "main:y.c").strip()
    upstream.git("checkout", "-q", "patchq/main")
    os.remove(upstream.path / ".git" / "objects" / blob[:2] / blob[2:])
    r = patchq("check", "--onto", "main", "--json")
    assert r.code == 0, r.err
    assert r.err.count(WARNING) == 1 and "the renames upstream made" in r.err, r.err
    (p,) = json.loads(r.out)["patches"]
    assert p["status"] == "clean"


def test_a_patch_git_merges_stops_when_the_range_crosses_a_shallow_cut(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # The same merge as the control above, in a clone cut inside the range: the merge
    # would be automatic with the whole history; without it the patch stops, and the
    # reason says why in a shallow clone's terms too, not only a missing object's.
    _pinned(upstream, queue, patchq)
    cut = _context_changed(upstream)
    (upstream.path / ".git" / "shallow").write_text(cut + "\n")
    r = patchq("check", "--onto", "main", "--json")
    assert r.code == 3, r.err
    (h,) = json.loads(r.out)["patches"][0]["hunks"]
    assert h["status"] == "conflict" and "crosses a shallow clone's cut" in h["reason"], h
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3 and "crosses a shallow clone's cut" in r.err, r.err
    assert patchq("rebase", "--abort").code == 0
