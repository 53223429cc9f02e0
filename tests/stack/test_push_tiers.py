"""`push --merge` climbs the rebase's ladder with its tiers (DESIGN §4.1): a patch git's
merge does not place is placed by a finer method; a proposed one stops the push for
review (exit 3) with the proposal in the working tree, no markers, named in the message
and in `status`; `refresh` records it, `undo` puts every byte back; `--accept` (or
`accept` in patchq.toml) takes it and the push exits 1. End to end through the CLI on
real repositories."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..conftest import Queue, Runner, Upstream, git

# The patch and upstream edit different words of one line: git's merge conflicts, the
# word merge places it (a proposal).
CALLS = "setup(\n  add_flags(-O2 -g)\n  run(ctx, old_name)\n)\n" + "".join(
    f"line {i}\n" for i in range(1, 31)
)
MINE = CALLS.replace("-O2 -g", "-O3 -g")
THEIRS = CALLS.replace("-O2 -g)", "-O2 -g -fPIC)")
MERGED = CALLS.replace("-O2 -g)", "-O3 -g -fPIC)")
P = (
    "Optimise more\n\n--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,5 @@\n setup(\n"
    "-  add_flags(-O2 -g)\n+  add_flags(-O3 -g)\n   run(ctx, old_name)\n )\n line 1\n"
)
OTHER = "Touch g\n\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n"
NEXT = "Touch h\n\n--- a/h.txt\n+++ b/h.txt\n@@ -1 +1 @@\n-h\n+H\n"


def word_setup(up: Upstream, q: Queue, patchq: Runner, tmp_path: Path) -> None:
    """o.patch, p.patch and n.patch pinned on the old base by a colleague's clone; here
    upstream has since edited p's line at another word, and the stack holds o.patch on
    the new upstream."""
    up.write("f.txt", CALLS).write("g.txt", "g\n").write("h.txt", "h\n")
    old = up.commit("base")
    up.write("f.txt", THEIRS)
    up.commit("build position-independent")
    q.add("o.patch", OTHER).add("p.patch", P).add("n.patch", NEXT)
    assert patchq("push").code == 0  # o.patch, on the new upstream
    colleague = tmp_path / "colleague"
    git(tmp_path, "clone", "-q", str(up.path), str(colleague))
    r = patchq("--target", str(colleague), "apply", "--onto", old, "--force")
    assert r.code == 0, r.err


def snapshot(up: Upstream, q: Queue) -> tuple[dict[str, str], str, str, str]:
    """Every file of the target's work tree and of the patch repo, hashed; HEAD, the
    refs and patchq's own state files (the stack record, the push-review record)."""
    out = {}
    for root in (up.path, q.path):
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.is_symlink() and "/.git/" not in str(p):
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    state = up.path / ".git" / "patchq"
    # (Not the pinned copies: a cache of bytes series.lock pins, by their hash, kept
    # until the lock pins others; a patch file written back by hand leaves it there.)
    own = {
        p.name: p.read_text()
        for p in sorted(state.glob("main*.json"))
        if not p.name.endswith(".pinned.json")
    }
    return (
        out,
        up.git("symbolic-ref", "HEAD"),
        up.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"),
        json.dumps(own, sort_keys=True),
    )


def test_a_proposal_stops_push_merge_for_review_and_undo_puts_every_byte_back(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    word_setup(upstream, queue, patchq, tmp_path)
    r = patchq("push", "-a")
    assert r.code == 3 and "p.patch: patch does not apply" in r.err
    before = snapshot(upstream, queue)
    r = patchq("push", "-a", "--merge")
    assert r.code == 3, r.err
    assert r.err.count("\n") == 1, r.err
    assert "p.patch stops for review: 1 proposed hunk applied in the working tree" in r.err
    assert "f.txt:2 (hunk #1) by word (" in r.err
    # The proposal is in the working tree, no markers; n.patch was not pushed.
    assert upstream.read("f.txt").decode() == MERGED
    assert patchq("applied").out == "o.patch\np.patch\n"
    st = patchq("status")
    assert "stopped for review at p.patch (push --merge)" in st.out
    assert "proposed: f.txt:2 (hunk #1) by word" in st.out
    doc = json.loads(patchq("status", "--json").out)
    (prop,) = doc["review"]["proposals"]
    assert (doc["review"]["patch"], prop["file"], prop["line"], prop["hunk"], prop["method"]) == (
        "p.patch",
        "f.txt",
        2,
        1,
        "word",
    )
    # `undo` is the way back: every byte as before the push.
    r = patchq("undo")
    assert r.code == 0, r.err
    assert snapshot(upstream, queue) == before


def test_a_proposal_reviewed_is_recorded_by_refresh(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "--merge").code == 3
    r = patchq("refresh")
    assert r.code == 0, r.err
    assert "+  add_flags(-O3 -g -fPIC)" in (queue.path / "patches/p.patch").read_text()
    # The stop is over: status no longer names it, and the rest pushes.
    assert json.loads(patchq("status", "--json").out)["review"] is None
    assert patchq("push").code == 0
    assert upstream.read("h.txt") == b"H\n"


def test_accepted_proposals_push_on_and_exit_1(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    word_setup(upstream, queue, patchq, tmp_path)
    r = patchq("push", "-a", "--accept", "word")
    assert r.code == 2 and "--accept goes with --merge" in r.err
    r = patchq("push", "-a", "--merge", "--accept", "zealous,word", "--json")
    assert r.code == 1, r.err
    assert "pushed with 1 accepted proposal to review: p.patch (word)" in r.err
    doc = json.loads(r.out)
    assert doc["applied"] == ["o.patch", "p.patch", "n.patch"]
    (lad,) = doc["laddered"]
    assert (lad["name"], lad["methods"], lad["accepted"], lad["proposals"]) == (
        "p.patch",
        ["word"],
        ["word"],
        [],
    )
    assert upstream.read("f.txt").decode() == MERGED
    assert upstream.read("h.txt") == b"H\n"
    assert json.loads(patchq("status", "--json").out)["review"] is None
    # The commit holds the accepted merge; `refresh` writes it into the patch file.
    assert upstream.git("show", "HEAD~1:f.txt") == MERGED
    # The commit is the ladder's placement of the file as it is: a plain `refresh`,
    # below the top, writes it into the file, and the patch above stays as it was.
    assert json.loads(patchq("status", "--json").out)["changed"] == []
    r = patchq("refresh", "p.patch")
    assert r.code == 0, r.err
    assert "+  add_flags(-O3 -g -fPIC)" in (queue.path / "patches/p.patch").read_text()
    assert upstream.read("f.txt").decode() == MERGED and upstream.read("h.txt") == b"H\n"
    assert upstream.git("status", "--porcelain") == ""


def test_a_file_edited_after_an_accepted_push_is_still_not_written_over(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # The ladder's placement is the file's as it was pushed: an edit to the file since
    # is the person's, and refresh refuses (exit 5) as for any file changed since.
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge", "--accept", "word").code == 1
    path = queue.path / "patches/p.patch"
    path.write_text(P.replace("Optimise more", "Optimise more, by hand"))
    r = patchq("refresh", "p.patch")
    assert r.code == 5 and "the file changed since the patch was applied" in r.err, r.err
    assert "by hand" in path.read_text()


def test_accept_in_the_config_takes_proposals_in_push_merge(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    word_setup(upstream, queue, patchq, tmp_path)
    config = queue.path / "patchq.toml"
    config.write_text(config.read_text() + 'accept = ["word"]\n')
    r = patchq("push", "-a", "--merge")
    assert r.code == 1, r.err
    assert patchq("applied").out == "o.patch\np.patch\nn.patch\n"
    # Without --merge nothing is laddered: the same patch stops bare.
    assert patchq("pop", "2").code == 0
    r = patchq("push", "-a")
    assert r.code == 3 and "does not apply" in r.err


def test_undo_after_a_stop_refuses_once_the_tree_was_edited(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # What the push left is its own; an edit made since is the person's and undo would
    # lose it: refused (exit 5), nothing changed.
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "--merge").code == 3
    upstream.write("f.txt", MERGED.replace("-fPIC", "-fPIC -DNDEBUG"))
    r = patchq("undo")
    assert r.code == 5 and "uncommitted changes in f.txt" in r.err, r.err
    assert "-DNDEBUG" in upstream.read("f.txt").decode()
    assert patchq("applied").out == "o.patch\np.patch\n"


def test_push_abort_after_a_stop_for_review_puts_every_byte_back(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # As `rebase --abort` after a stop: the target, the stack and the patch repo as
    # before the push, every byte; `status` names the stop and both ways out first.
    word_setup(upstream, queue, patchq, tmp_path)
    before = snapshot(upstream, queue)
    assert patchq("push", "-a", "--merge").code == 3
    st = patchq("status").out
    assert "`patchq push --continue` (takes the tree into the patch and pushes on to n.patch)" in st
    assert "`patchq push --abort`" in st
    stop = json.loads(patchq("status", "--json").out)["push_stop"]
    fix = upstream.git("rev-parse", "main").strip()  # "build position-independent"
    assert stop == {
        "patch": "p.patch",
        "kind": "review",
        "files": [],
        "target": "n.patch",
        "merge_in_tree": True,
        # Upstream changed p's line: its word merge is a proposal, and the patch may be
        # fixed differently upstream (the commit, and the command that drops it).
        "rewritten": {"commits": [fix], "added_present": False, "drop": "patchq delete p.patch"},
    }
    r = patchq("push", "--abort")
    assert r.code == 0, r.err
    assert "push aborted at p.patch" in r.err
    assert snapshot(upstream, queue) == before
    # Nothing left to abort: bad input, nothing changed.
    r = patchq("push", "--abort")
    assert r.code == 4 and "nothing to recover" in r.err, r.err
    assert snapshot(upstream, queue) == before


def test_push_abort_saves_edits_made_during_the_stop_in_a_stash(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    word_setup(upstream, queue, patchq, tmp_path)
    before = snapshot(upstream, queue)
    assert patchq("push", "--merge").code == 3
    upstream.write("f.txt", MERGED.replace("-fPIC", "-fPIC -DNDEBUG"))
    r = patchq("push", "--abort")
    assert r.code == 0, r.err
    assert "saved your edits in stash" in r.err
    assert snapshot(upstream, queue) == before
    assert "-DNDEBUG" in upstream.git("stash", "show", "-p")


def test_push_continue_takes_the_proposal_and_pushes_on_where_the_push_was_going(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge").code == 3
    upstream.write("f.txt", MERGED.replace("-fPIC", "-fPIC -DNDEBUG"))  # the reviewer's edit
    # Another move meanwhile is refused (exit 5), naming the stop's ways out.
    r = patchq("pop")
    assert r.code == 5 and "a push stopped at p.patch: `patchq push --continue`" in r.err
    r = patchq("push", "--continue")
    assert r.code == 0, r.err
    assert "refreshed p.patch" in r.err and "now at n.patch" in r.err
    assert "+  add_flags(-O3 -g -fPIC -DNDEBUG)" in (queue.path / "patches/p.patch").read_text()
    assert patchq("applied").out == "o.patch\np.patch\nn.patch\n"
    assert upstream.git("status", "--porcelain") == ""
    doc = json.loads(patchq("status", "--json").out)
    assert (doc["review"], doc["push_stop"]) == (None, None)


# Upstream and the patch change the same word: git's merge and the ladder both conflict.
CLASH = CALLS.replace("-O2 -g)", "-Os -g)")


def clash_setup(upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    """o, p and n pinned on the old base (a colleague's apply), o pushed on upstream's
    newer commit, which changed the line p changes: `push -a --merge` stops at p with
    git's markers."""
    upstream.write("f.txt", CALLS).write("g.txt", "g\n").write("h.txt", "h\n")
    old = upstream.commit("base")
    upstream.write("f.txt", CLASH)
    upstream.commit("optimise for size")
    queue.add("o.patch", OTHER).add("p.patch", P).add("n.patch", NEXT)
    assert patchq("push").code == 0
    colleague = tmp_path / "colleague"
    git(tmp_path, "clone", "-q", str(upstream.path), str(colleague))
    assert patchq("--target", str(colleague), "apply", "--onto", old, "--force").code == 0


def test_a_conflict_stop_is_named_and_push_continue_goes_on_once_resolved(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    clash_setup(upstream, queue, patchq, tmp_path)
    before = snapshot(upstream, queue)
    r = patchq("push", "-a", "--merge")
    assert r.code == 3 and "`patchq push --continue`" in r.err, r.err
    assert b"<<<<<<< upstream" in upstream.read("f.txt")
    st = patchq("status").out
    assert "stopped at p.patch (push --merge): conflict markers in f.txt" in st
    stop = json.loads(patchq("status", "--json").out)["push_stop"]
    assert (stop["kind"], stop["files"]) == ("conflict", ["f.txt"])
    # Markers still there: refused, nothing changed.
    r = patchq("push", "--continue")
    assert r.code == 3 and "still has the conflict markers" in r.err, r.err
    assert patchq("applied").out == "o.patch\np.patch\n"
    # Resolved: taken into the patch, and the push goes on.
    upstream.write("f.txt", CALLS.replace("-O2 -g)", "-O3 -g)"))
    r = patchq("push", "--continue")
    assert r.code == 0, r.err
    assert patchq("applied").out == "o.patch\np.patch\nn.patch\n"
    assert (
        "-  add_flags(-Os -g)\n+  add_flags(-O3 -g)" in (queue.path / "patches/p.patch").read_text()
    )
    # And the same stop, aborted: every byte back.
    assert patchq("pop", "-a").code == 0
    (queue.path / "patches/p.patch").write_text(P)
    assert patchq("push").code == 0
    assert snapshot(upstream, queue) == before
    assert patchq("push", "-a", "--merge").code == 3
    assert patchq("push", "--abort").code == 0
    assert snapshot(upstream, queue) == before


# Two hunks far apart; upstream has since made the first one's change itself.
LONG = "".join(f"line {i}\n" for i in range(1, 41))
TWO = (
    "Two changes\n\n--- a/f.txt\n+++ b/f.txt\n@@ -3,5 +3,5 @@\n line 3\n line 4\n"
    "-line 5\n+LINE 5\n line 6\n line 7\n@@ -28,5 +28,5 @@\n line 28\n line 29\n"
    "-line 30\n+LINE 30\n line 31\n line 32\n"
)


def test_a_patch_upstream_holds_part_of_stops_push_merge_as_it_stops_rebase(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # git's 3-way merge takes a change both sides made as merged: alone, it would push
    # the patch with its first hunk gone and exit 0. The rebase's tiers say a hunk
    # upstream holds inside a patch it does not hold whole is a proposal: push --merge
    # stops for review, the rest applied, that hunk named.
    upstream.write("f.txt", LONG).write("g.txt", "g\n")
    old = upstream.commit("base")
    upstream.write("f.txt", LONG.replace("line 5\n", "LINE 5\n"))
    upstream.commit("take the first change")
    queue.add("o.patch", OTHER).add("p.patch", TWO)
    assert patchq("push").code == 0
    colleague = tmp_path / "colleague"
    git(tmp_path, "clone", "-q", str(upstream.path), str(colleague))
    assert patchq("--target", str(colleague), "apply", "--onto", old, "--force").code == 0
    before = snapshot(upstream, queue)
    r = patchq("push", "--merge")
    assert r.code == 3, r.err
    assert "f.txt:5 (hunk #1) by upstreamed" in r.err, r.err
    # The rest (the second hunk) is in the working tree; the first is upstream's.
    assert upstream.read("f.txt").decode() == LONG.replace("line 5\n", "LINE 5\n").replace(
        "line 30\n", "LINE 30\n"
    )
    assert json.loads(patchq("status", "--json").out)["review"]["patch"] == "p.patch"
    assert patchq("push", "--abort").code == 0
    assert snapshot(upstream, queue) == before
    # Accepted: pushed, exit 1, the proposal named.
    r = patchq("push", "--merge", "--accept", "upstreamed")
    assert r.code == 1, r.err
    assert "pushed with 1 accepted proposal to review: p.patch (upstreamed)" in r.err
    assert upstream.git("show", "HEAD:f.txt") == LONG.replace("line 5\n", "LINE 5\n").replace(
        "line 30\n", "LINE 30\n"
    )
    # Its file, refreshed, holds the rest alone.
    assert patchq("refresh").code == 0
    text = (queue.path / "patches/p.patch").read_text()
    assert "+LINE 30" in text and "+LINE 5" not in text


def test_a_rebase_or_apply_waits_for_a_push_stop_and_names_its_ways_out(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # The working tree holds the stopped push's proposal: a rebase is refused as at an
    # operation in progress (exit 5), saying which push stopped and what settles it,
    # not "the target has changes patchq did not make"; nothing changed.
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge").code == 3
    before = snapshot(upstream, queue)
    for args in (("rebase", "--onto", "HEAD~1"), ("apply", "--onto", "HEAD~1")):
        r = patchq(*args)
        assert r.code == 5, r.err
        assert r.err.count("\n") == 1, r.err
        assert "a push --merge stopped at p.patch (its proposals are in the working tree)" in r.err
        assert "`patchq push --continue`" in r.err and "`patchq push --abort`" in r.err
        assert "did not make" not in r.err
        assert snapshot(upstream, queue) == before
    # Settled, the rebase runs (and stops at p.patch as a rebase does).
    assert patchq("push", "--abort").code == 0
    r = patchq("rebase", "--onto", "HEAD~1")
    assert r.code == 3 and "p.patch stops for review" in r.err, r.err


def test_refresh_below_a_push_stop_is_refused_with_the_way_on(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # Refreshing o.patch would carry the stopped patch's proposal down into it: refused
    # in one line naming what to run (exit 5), nothing changed; the stop's own refresh
    # still works, and then o.patch refreshes.
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge").code == 3
    before = snapshot(upstream, queue)
    r = patchq("refresh", "o.patch")
    assert r.code == 5, r.err
    assert r.err.count("\n") == 1, r.err
    assert "a push --merge stopped at p.patch" in r.err
    assert "`patchq push --continue` (or `patchq refresh` of p.patch)" in r.err
    assert snapshot(upstream, queue) == before
    assert patchq("refresh", "p.patch").code == 0
    r = patchq("refresh", "o.patch")
    assert r.code == 0, r.err
    assert (queue.path / "patches/o.patch").read_text() == OTHER


def test_status_names_an_accepted_placement_its_file_does_not_hold_yet(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # After `push --merge --accept word` the commit holds the word merge and the file
    # still the old hunk: status says so, and what writes it, until `refresh` does.
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge", "--accept", "word").code == 1
    said = (
        "p.patch: its commit holds an accepted proposal (word) that push --merge made and "
        "its file does not yet: `patchq refresh p.patch` writes it"
    )
    assert said in patchq("status").out
    doc = json.loads(patchq("status", "--json").out)
    assert doc["unwritten"] == [{"patch": "p.patch", "methods": ["word"], "accepted": ["word"]}]
    assert patchq("refresh", "p.patch").code == 0
    assert "its commit holds" not in patchq("status").out
    assert json.loads(patchq("status", "--json").out)["unwritten"] == []
