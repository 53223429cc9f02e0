"""What follows a `push --merge` onto another base than the lock's: a reorder of the
stack once a laddered patch was refreshed there, the stop's refusals of a rebase, an
apply and a refresh below it, and a patch upstream fixed differently named with its
upstream commits and the one command that drops it. End to end through the CLI on real
repositories."""

from __future__ import annotations

import json
from pathlib import Path

from ..conftest import Queue, Runner, Upstream, git
from ..rebase.test_check_rebase import make_patch, sub
from .test_push_tiers import clash_setup, snapshot, word_setup


def test_a_sink_after_a_laddered_patch_was_refreshed_on_another_base_is_done(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # push --merge put the stack on the new upstream and `refresh` wrote p.patch there:
    # its file no longer applies on series.lock's (old) base. The sink works on the
    # stack; the lock, pinned on the old base, is left as refresh leaves it, and one line
    # says so and names the command that pins the series on the stack's base — before,
    # the sink failed with "p.patch: patch does not apply … rebase it", exit 3.
    word_setup(upstream, queue, patchq, tmp_path)
    old = upstream.git("rev-parse", "main~1").strip()
    new = upstream.git("rev-parse", "main").strip()
    assert patchq("push", "-a", "--merge", "--accept", "word").code == 1
    assert patchq("refresh", "p.patch").code == 0
    lock = queue.lock()
    r = patchq("sink", "n.patch")
    assert r.code == 0, r.err
    assert "sank n.patch to the bottom of the series" in r.err
    said = (
        f"series.lock not updated: patches/p.patch no longer applies exactly on its base "
        f"{old[:12]} (the stack is on {new[:12]}; `patchq apply --onto {new[:12]} --force` "
        "pins the series there)"
    )
    assert said in r.err, r.err
    assert queue.series() == "n.patch\no.patch\np.patch\n"
    assert queue.lock() == lock
    assert patchq("applied").out == "n.patch\no.patch\np.patch\n"
    assert upstream.git("status", "--porcelain") == ""
    # verify names the same way out (not `patchq apply`, which pins on the old base).
    r = patchq("verify")
    assert r.code == 1
    assert f"`patchq apply --onto {new[:12]} --force` pins them there" in r.err, r.err
    # The way out it names works: the series is pinned on the stack's base.
    r = patchq("apply", "--onto", new[:12], "--force")
    assert r.code == 0, r.err
    assert patchq("verify").code == 0


LINES = "".join(f"line {i}\n" for i in range(1, 21))
OTHER = "Touch g\n\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n"


def _fixed_upstream(upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path) -> str:
    """p.patch (lines 5 and 8) pinned on the old base by a colleague's clone; upstream
    has since made one of its two changes, so every line of its one hunk changed: git's
    merge places it, yet it may be fixed differently upstream. The stack holds o.patch
    on the new upstream. The upstream commit's id."""
    upstream.write("f.c", LINES).write("g.txt", "g\n")
    old = upstream.commit("base")
    mine = sub(sub(LINES, "line 5\n", "LINE 5\n"), "line 8\n", "LINE 8\n")
    queue.add("o.patch", OTHER).add("p.patch", make_patch(upstream, "", {"f.c": mine}))
    upstream.write("f.c", sub(LINES, "line 5\n", "LINE 5\n"))
    fix = upstream.commit("capital five")
    assert patchq("push").code == 0
    colleague = tmp_path / "colleague"
    git(tmp_path, "clone", "-q", str(upstream.path), str(colleague))
    r = patchq("--target", str(colleague), "apply", "--onto", old, "--force")
    assert r.code == 0, r.err
    return fix


def test_a_push_merge_stop_fixed_differently_names_the_commits_and_how_to_drop_it(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # As a rebase's stop does (DESIGN §4.1): the upstream commits that changed its
    # lines, and the one command that drops the patch — in the stop's line, in `status`
    # and in `status --json`; before, "(upstream, or by the patches below it)" alone.
    fix = _fixed_upstream(upstream, queue, patchq, tmp_path)
    r = patchq("push", "-a", "--merge")
    assert r.code == 3, r.err
    assert r.err.count("\n") == 1, r.err
    said = f"(upstream: {fix[:12]} capital five; or by the patches below it)"
    assert said in r.err, r.err
    assert "it may be fixed differently upstream — `patchq delete p.patch` drops it" in r.err
    assert "`--accept rewritten` takes such a patch without a stop" in r.err
    st = patchq("status").out
    # No proposal: its merge is what the working tree holds, not "proposals".
    assert "stopped for review at p.patch (push --merge): its merge applied, no markers" in st
    assert said in st and "`patchq delete p.patch` drops it" in st, st
    stop = json.loads(patchq("status", "--json").out)["push_stop"]
    assert stop["rewritten"] == {
        "commits": [fix],
        "added_present": False,
        "drop": "patchq delete p.patch",
    }


def test_delete_drops_the_patch_a_push_merge_stopped_at_in_one_command(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # The command the stop names: the patch leaves the series and the stack, the push's
    # merge (and an edit made since) is kept in a stash it names, the stop is over.
    _fixed_upstream(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge").code == 3
    upstream.write("g.txt", "G, edited during the stop\n")
    r = patchq("delete", "p.patch")
    assert r.code == 0, r.err
    assert "saved the working tree (the stopped push's merge of p.patch" in r.err
    assert "deleted p.patch from the series (file kept)" in r.err
    assert queue.series() == "o.patch\n"
    assert patchq("applied").out == "o.patch\n"
    assert upstream.git("status", "--porcelain") == ""
    assert upstream.read("f.c").decode() == sub(LINES, "line 5\n", "LINE 5\n")
    kept = upstream.git("stash", "show", "-p")
    assert "+LINE 8" in kept and "+G, edited during the stop" in kept
    doc = json.loads(patchq("status", "--json").out)
    assert (doc["push_stop"], doc["review"]) == (None, None)


def test_a_conflict_stop_of_push_merge_holds_off_rebase_apply_and_refresh_below(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # The refusals of a stop for review (test_push_tiers) hold for one with git's
    # markers too, and say what the tree holds: the push's merge, with markers.
    clash_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge").code == 3
    before = snapshot(upstream, queue)
    said = "a push --merge stopped at p.patch (its merge, with markers, is in the working tree)"
    for args in (("rebase", "--onto", "main~1"), ("apply", "--onto", "main~1")):
        r = patchq(*args)
        assert r.code == 5 and r.err.count("\n") == 1, r.err
        assert said in r.err and "`patchq push --abort`" in r.err, r.err
    r = patchq("refresh", "o.patch")
    assert r.code == 5 and said in r.err, r.err
    assert "`patchq push --continue` (or `patchq refresh` of p.patch)" in r.err
    assert snapshot(upstream, queue) == before


def test_a_stop_whose_merge_went_to_a_stash_is_not_taken_as_an_empty_patch(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # `delete` at the stop, then `undo`: the stop is back, its merge in the stash. The
    # stop's commit holds none of the patch, so `push --continue` (a refresh) would have
    # written the patch file empty: refused (exit 5), nothing changed, naming the stash
    # way back; once the stash is back, it takes the merge as at any stop.
    _fixed_upstream(upstream, queue, patchq, tmp_path)
    before = (queue.path / "patches/p.patch").read_text()
    assert patchq("push", "-a", "--merge").code == 3
    assert patchq("delete", "p.patch").code == 0
    assert patchq("undo").code == 0
    # `status` tells the truth: the stop is back, its merge is not in the tree.
    st = patchq("status").out
    assert "stopped at p.patch (push --merge), but the working tree no longer holds" in st, st
    assert "`git stash pop` puts it back" in st and "its merge applied" not in st, st
    assert json.loads(patchq("status", "--json").out)["push_stop"]["merge_in_tree"] is False
    r = patchq("push", "--continue")
    assert r.code == 5 and r.err.count("\n") == 1, r.err
    assert "no longer holds the merge the push stopped at p.patch" in r.err
    assert "`git stash pop` puts it back" in r.err
    assert (queue.path / "patches/p.patch").read_text() == before
    assert patchq("refresh").code == 5
    upstream.git("stash", "pop", "-q")
    assert "its merge applied, no markers" in patchq("status").out
    assert json.loads(patchq("status", "--json").out)["push_stop"]["merge_in_tree"] is True
    r = patchq("push", "--continue")
    assert r.code == 0, r.err
    text = (queue.path / "patches/p.patch").read_text()
    assert "+LINE 8" in text and "+LINE 5" not in text


def test_a_reorder_never_replays_a_file_over_the_placement_its_commit_holds(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # push --merge --accept word placed p.patch by a word merge: its commit holds the
    # placement, its file does not yet (`status` lists it as unwritten). A sink or float
    # that replays p.patch from its file stopped at a conflict the person had already
    # settled: refused now (exit 5), nothing changed, naming the refresh that writes it;
    # after that refresh the same sink is done.
    word_setup(upstream, queue, patchq, tmp_path)
    assert patchq("push", "-a", "--merge", "--accept", "word").code == 1
    before = snapshot(upstream, queue)
    for args in (("sink", "n.patch"), ("float", "o.patch")):
        r = patchq(*args)
        assert r.code == 5 and r.err.count("\n") == 1, r.err
        said = "p.patch's commit holds the placement push --merge made (word) and its file"
        assert said in r.err and f"{args[0]} would replay the file and lose it" in r.err
        assert f"`patchq refresh p.patch` writes it into the file; then `patchq {args[0]}" in r.err
        assert snapshot(upstream, queue) == before
    assert patchq("refresh", "p.patch").code == 0
    r = patchq("sink", "n.patch")
    assert r.code == 0, r.err
    assert queue.series() == "n.patch\no.patch\np.patch\n"
