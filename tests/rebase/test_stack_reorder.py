"""`sink`, `float` and `undo`, in StGit's words.

sink/float re-apply the patches a move crosses in memory with the rebase's ladder, refresh
those whose placement changed, and stop at a conflict as a rebase does (exit 3; `rebase
--continue`, `--skip`, `--abort` go on); undo rolls the last stack operation back
through the journal, exactly, and refuses (exit 5) when anything changed since.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from patchq.core.hunks import diff

from ..conftest import Queue, Result, Runner, Upstream

A = "".join(f"line {i}\n" for i in range(1, 41))
# p1 adds three lines at the top: every later hunk sits three lines lower on top of it.
P1 = (
    "Subject: header lines\n\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,6 @@\n"
    "+top 1\n+top 2\n+top 3\n line 1\n line 2\n line 3\n"
)
# p2 was made on top of p1 (its hunk header says line 23).
P2 = (
    "Subject: twenty\n\n--- a/f.txt\n+++ b/f.txt\n@@ -22,3 +22,3 @@\n"
    " line 19\n-line 20\n+LINE 20\n line 21\n"
)
P3 = "Subject: thirty-five\n\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n"


def three(up: Upstream, q: Queue, patchq) -> str:  # type: ignore[no-untyped-def]
    up.write("f.txt", A).write("g.txt", "g\n")
    base = up.commit("base")
    q.add("p1.patch", P1).add("p2.patch", P2).add("p3.patch", P3)
    assert patchq("apply", "--onto", base).code == 0
    return base


def snapshot(up: Upstream, q: Queue) -> dict[str, str]:
    """What a person could see: refs, HEAD, status, the queue's files, the stack record."""
    out = {
        "HEAD": up.git("rev-parse", "HEAD"),
        "refs": up.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"),
        "status": up.git("status", "--porcelain", "--untracked-files=all"),
        "worktree": up.read("f.txt").decode() + up.read("g.txt").decode(),
    }
    for p in sorted(q.path.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(q.path))] = hashlib.sha256(p.read_bytes()).hexdigest()
    stack = up.path / ".git" / "patchq" / "main.json"
    out["stack"] = stack.read_text() if stack.exists() else ""
    return out


def test_sink_refreshes_what_moved_and_gives_the_commits_push_would(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue, patchq)
    r = patchq("sink", "p2.patch")
    assert r.code == 0, r.err
    assert r.err == (
        "sank p2.patch to the bottom of the series\n refreshed p2.patch\nnow at p3.patch\n"
    )
    assert queue.series() == "p2.patch\np1.patch\np3.patch\n"
    # p2 now applies to the base itself: its hunk only shifted, so it keeps its bytes
    # but for its numbers (no churn), and its header.
    p2 = (queue.path / "patches" / "p2.patch").read_text()
    assert p2 == P2.replace("@@ -22,3 +22,3 @@", "@@ -19,3 +19,3 @@")
    assert (queue.path / "patches" / "p1.patch").read_text() == P1
    assert patchq("series", "-v").out == "+ p2.patch\n+ p1.patch\n= p3.patch\n"
    assert upstream.git("status", "--porcelain") == ""
    assert patchq("verify").code == 0
    assert patchq("lint").code in (0, 1)
    head = upstream.head()
    assert upstream.git("log", "--format=%s", "-3").splitlines() == [
        "thirty-five",
        "header lines",
        "twenty",
    ]
    # The stack is what pushing the reordered series gives, commit for commit.
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0
    assert upstream.head() == head
    r = patchq("sink", "p2.patch")
    assert (r.code, r.err) == (0, "p2.patch is already at the bottom of the series\n")


def test_float_and_what_stays_applied(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    three(upstream, queue, patchq)
    r = patchq("float", "p1.patch")
    assert r.code == 0, r.err
    assert queue.series() == "p2.patch\np3.patch\np1.patch\n"
    assert r.err.endswith("now at p1.patch\n") and " refreshed p2.patch\n" in r.err
    assert patchq("verify").code == 0
    # With a patch unapplied before the end, a floated applied patch cannot stay applied.
    assert patchq("pop").code == 0
    r = patchq("float", "p2.patch")
    assert r.code == 0, r.err
    assert queue.series() == "p3.patch\np1.patch\np2.patch\n"
    assert "p2.patch is unapplied now" in r.err
    assert patchq("applied").out == "p3.patch\n"
    # Sinking an unapplied patch under applied ones applies it at the bottom.
    r = patchq("sink", "p2.patch")
    assert r.code == 0, r.err
    assert patchq("applied").out == "p2.patch\np3.patch\n"
    assert patchq("verify").code == 0


UP = "--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5 up\n line 6\n"
# Made on top of up.patch: it edits the line up.patch wrote.
AGAIN = (
    "--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n line 4\n-LINE 5 up\n+rewritten entirely\n line 6\n"
)


def crossing(up: Upstream, q: Queue, patchq) -> str:  # type: ignore[no-untyped-def]
    """p1 (g.txt), then up.patch and again.patch, which edits the line up.patch wrote."""
    up.write("f.txt", A).write("g.txt", "g\n")
    base = up.commit("base")
    q.add("p1.patch", P3).add("up.patch", UP).add("again.patch", AGAIN)
    assert patchq("apply", "--onto", base).code == 0
    return base


def resolve(up: Upstream, line5: str) -> None:
    """Write f.txt as a person resolving the conflict would: markers gone, line 5 chosen."""
    text = up.read("f.txt").decode()
    assert "<<<<<<< " in text and ">>>>>>> " in text
    up.write("f.txt", A.replace("line 5\n", line5 + "\n"))


def test_a_move_that_conflicts_stops_like_a_rebase_and_abort_puts_everything_back(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    crossing(upstream, queue, patchq)
    before = snapshot(upstream, queue)
    r = patchq("sink", "again.patch")
    assert r.code == 3, r.err
    assert r.err == (
        "patchq: patches/again.patch: sink again.patch stopped: again.patch does not apply "
        "in the new order (conflict in f.txt) — edit the files to resolve, then "
        "`patchq rebase --continue` (--skip drops again.patch, --abort undoes the sink)\n"
    )
    # The conflict is in the working tree; nothing of the patch repo was written.
    assert "<<<<<<< " in upstream.read("f.txt").decode()
    assert (queue.path / "series").read_text() == "p1.patch\nup.patch\nagain.patch\n"
    status = json.loads(patchq("status", "--json").out)
    assert status["rebase"]["reorder"] == {"verb": "sink", "name": "again.patch"}
    assert status["rebase"]["stopped"] == {
        "name": "again.patch",
        "files": ["f.txt"],
        "proposals": [],
        # up.patch, below it before, changed its line: no upstream commit to name.
        "rewritten": {"commits": [], "added_present": False, "drop": "patchq rebase --skip"},
    }
    assert status["rebase"]["todo"] == ["p1.patch", "up.patch"]
    text = patchq("status").out
    assert "sink again.patch on " in text and "stopped at again.patch" in text
    # Said as a reorder's: the new order, not upstream.
    assert "every line it changes reads differently in the new order" in text
    assert "fixed differently upstream" not in text
    # Other stack operations wait for it, as during a rebase.
    assert patchq("float", "p1.patch").code == 5
    r = patchq("rebase", "--abort")
    assert r.code == 0, r.err
    assert snapshot(upstream, queue) == before
    # float stops the same way (again.patch, without up.patch below it), and aborts.
    r = patchq("float", "up.patch")
    assert r.code == 3 and "float up.patch stopped: again.patch does not apply" in r.err
    assert patchq("rebase", "--abort").code == 0
    assert snapshot(upstream, queue) == before
    assert patchq("sink", "nope.patch").code == 4
    upstream.write("g.txt", "edited\n")
    r = patchq("float", "p1.patch")
    assert r.code == 5 and "unrefreshed changes in g.txt" in r.err


def test_a_stopped_move_goes_on_with_the_resolution_and_writes_the_new_order(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    crossing(upstream, queue, patchq)
    assert patchq("sink", "again.patch").code == 3
    resolve(upstream, "rewritten entirely")
    # up.patch now sits on again.patch's line, pinned to its own pre-image: it stops too.
    r = patchq("rebase", "--continue")
    assert r.code == 3, r.err
    assert "sink again.patch stopped: up.patch does not apply in the new order" in r.err
    assert (queue.path / "series").read_text() == "p1.patch\nup.patch\nagain.patch\n"
    resolve(upstream, "LINE 5 up, over rewritten")
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert r.err.splitlines()[-2:] == [
        "sank again.patch to the bottom of the series",
        "now at up.patch",
    ]
    assert (queue.path / "series").read_text() == "again.patch\np1.patch\nup.patch\n"
    assert patchq("applied").out == "again.patch\np1.patch\nup.patch\n"
    again = (queue.path / "patches" / "again.patch").read_text()
    assert "-line 5\n+rewritten entirely\n" in again
    assert (
        "-rewritten entirely\n+LINE 5 up, over rewritten\n"
        in (queue.path / "patches" / "up.patch").read_text()
    )
    assert upstream.read("f.txt").decode() == A.replace("line 5\n", "LINE 5 up, over rewritten\n")
    assert upstream.git("status", "--porcelain") == ""
    assert patchq("verify").code == 0
    # The lock records what the reorder did to the patches it stopped at: resolved.
    recs = {p["name"]: p for p in json.loads(queue.lock())["patches"]}
    assert [recs[n]["rebase"] for n in ("again.patch", "up.patch")] == ["resolved", "resolved"]
    assert recs["again.patch"]["methods"] == [""]  # a hunk a person resolved, as a rebase says
    assert not (upstream.path / ".git" / "patchq" / "main.rebase.json").exists()
    # A reorder that went through a stop is a rebase's work: `undo` names it and refuses.
    r = patchq("undo")
    assert r.code == 4 and "`patchq rebase` (sink again.patch), cannot be undone" in r.err


def test_a_stopped_move_can_skip_the_patch_that_conflicts(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    base = crossing(upstream, queue, patchq)
    assert patchq("float", "up.patch").code == 3
    r = patchq("rebase", "--skip", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["finished"] and doc["reorder"] == {"verb": "float", "name": "up.patch"}
    assert [(p["name"], p["outcome"]) for p in doc["patches"]] == [
        ("p1.patch", "unchanged"),
        ("again.patch", "dropped"),
        ("up.patch", "unchanged"),
    ]
    assert (queue.path / "series").read_text() == (
        f"p1.patch\n# dropped in {base[:12]}: again.patch\nup.patch\n"
    )
    assert patchq("applied").out == "p1.patch\nup.patch\n"
    assert patchq("verify").code == 0


def test_undo_rolls_back_each_stack_operation_exactly(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue, patchq)

    def edit_and_refresh() -> None:
        upstream.write("g.txt", "G edited\n")
        assert patchq("refresh").code == 0

    ops: list[Callable[[], Result]] = [
        lambda: patchq("pop"),
        lambda: patchq("pop", "-a"),
        lambda: patchq("goto", "p1.patch"),
        lambda: patchq("new", "p4.patch", "-m", "four"),
        lambda: patchq("rename", "p3.patch", "renamed.patch"),
        lambda: patchq("sink", "p3.patch"),
        lambda: patchq("float", "p1.patch"),
        lambda: patchq("delete", "p3.patch"),
    ]
    for op in ops:
        before = snapshot(upstream, queue)
        r = op()
        assert r.code == 0, r.err
        assert snapshot(upstream, queue) != before
        r = patchq("undo")
        assert r.code == 0, r.err
        assert snapshot(upstream, queue) == before, r.err
        assert patchq("undo").code == 4  # one level: the record is used up
        # push everything back for the next operation
        if patchq("applied").out != "p1.patch\np2.patch\np3.patch\n":
            assert patchq("push", "-a").code == 0
    before = snapshot(upstream, queue)
    edit_and_refresh()
    r = patchq("undo")
    assert r.err == "undid `patchq refresh` (p3.patch)\nnow at p3.patch\n"
    # The refresh's edit is back as an unrefreshed change; the patch file as before.
    assert upstream.git("status", "--porcelain") == " M g.txt\n"
    upstream.write("g.txt", "G\n")
    assert snapshot(upstream, queue) == before


def test_undo_refuses_when_anything_changed_since(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue, patchq)
    r = patchq("undo")
    assert r.code == 0  # the apply itself
    assert patchq("push", "-a").code == 0
    assert patchq("pop").code == 0
    for change, undo_change, what in (
        (
            lambda: upstream.write("f.txt", "edited\n"),
            lambda: upstream.git("checkout", "--", "f.txt"),
            "uncommitted changes in f.txt since `patchq pop`",
        ),
        (
            lambda: (queue.path / "patches" / "p3.patch").write_text(P3 + "\n"),
            lambda: (queue.path / "patches" / "p3.patch").write_text(P3),
            "the patch repo changed since `patchq pop`",
        ),
        (
            lambda: upstream.write("h.txt", "x\n").commit("a commit made with git"),
            lambda: upstream.git("reset", "-q", "--hard", "HEAD~1"),
            "patchq/main moved since `patchq pop`",
        ),
    ):
        change()
        before = snapshot(upstream, queue)
        r = patchq("undo")
        assert r.code == 5, r.err
        assert what in r.err, r.err
        assert snapshot(upstream, queue) == before
        undo_change()
    # A rebase that ran in one go is undone as a stack operation is: refused too when
    # anything changed since (tests/rebase/test_onto_older.py undoes one).
    upstream.git("checkout", "-q", "main")
    upstream.write("h.txt", "upstream\n").commit("upstream moves")
    assert patchq("rebase", "--onto", "main").code == 0
    (queue.path / "series").write_text(queue.series() + "# a note\n")
    r = patchq("undo")
    assert r.code == 5 and "since `patchq rebase`" in r.err, r.err


def test_status_json_and_the_lock_follow_a_float(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    three(upstream, queue, patchq)
    assert patchq("float", "p1.patch").code == 0
    lock = json.loads(queue.lock())
    assert [p["name"] for p in lock["patches"]] == ["p2.patch", "p3.patch", "p1.patch"]
    st = json.loads(patchq("status", "--json").out)
    assert st["applied"] == ["p2.patch", "p3.patch", "p1.patch"]
    assert Path(queue.path / "series").read_text() == "p2.patch\np3.patch\np1.patch\n"


# Four patches: p2 edits the line p1 wrote, p4 the line p2 wrote; p3 is elsewhere.
LINES = "".join(f"line {i}\n" for i in range(1, 21))


def chain(up: Upstream, q: Queue, patchq) -> str:  # type: ignore[no-untyped-def]
    up.write("a.txt", LINES).write("b.txt", "b 1\nb 2\nb 3\n")
    base = up.commit("base")

    def edit(old: str, new: str) -> str:
        return f"--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n line 2\n-{old}\n+{new}\n line 4\n"

    q.add("p1.patch", edit("line 3", "line 3 P1"))
    q.add("p2.patch", edit("line 3 P1", "line 3 P1 P2"))
    q.add("p3.patch", "--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n b 1\n-b 2\n+b 2 P3\n b 3\n")
    q.add("p4.patch", edit("line 3 P1 P2", "line 3 P1 P2 P4"))
    assert patchq("apply", "--onto", base).code == 0
    return base


def accept_word(q: Queue) -> None:
    """Take word merges without a stop (`accept` in patchq.toml): sunk below the patch
    it was made on, a patch's edit of one line merges word by word — a proposal."""
    config = q.path / "patchq.toml"
    config.write_text((config.read_text() if config.exists() else "") + 'accept = ["word"]\n')


def test_a_reorder_never_rewrites_a_crossed_patchs_lines_without_a_stop(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    chain(upstream, queue, patchq)
    before = (queue.path / "series").read_text()
    # p4 edits the line p1 and p2 made; sunk below them it would merge word by word.
    r = patchq("sink", "p4.patch")
    assert r.code == 3, r.err
    assert "p4.patch does not apply in the new order (for review" in r.err
    assert "a.txt hunk #1 by word" in r.err
    assert not marked(upstream)  # the proposal is applied, no markers
    status = json.loads(patchq("status", "--json").out)
    (prop,) = status["rebase"]["stopped"]["proposals"]
    assert (prop["file"], prop["method"]) == ("a.txt", "word")
    assert patchq("rebase", "--abort").code == 0
    assert (queue.path / "series").read_text() == before
    assert patchq("applied").out == "p1.patch\np2.patch\np3.patch\np4.patch\n"


def marked(up: Upstream) -> bool:
    return "<<<<<<< " in up.read("a.txt").decode()


def settle(up: Upstream, line3: str) -> None:
    assert marked(up)
    up.write("a.txt", LINES.replace("line 3\n", line3 + "\n"))


def test_a_resolution_that_later_unapplied_patches_depend_on_stops_them_too(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    chain(upstream, queue, patchq)
    accept_word(queue)
    assert patchq("pop").code == 0 and patchq("pop").code == 0  # p3, p4 unapplied
    r = patchq("sink", "p2.patch")
    assert r.code == 3, r.err
    stops = [r.err.split(" stopped: ")[1].split(" ")[0]]
    settle(upstream, "line 3 P1 P2 X")
    # Every patch after the stretch is replayed after a stop: p4 meets the resolution.
    while (r := patchq("rebase", "--continue")).code == 3:
        stops.append(r.err.split(" stopped: ")[1].split(" ")[0])
        settle(upstream, "line 3 P1 P2 X P4")
    assert r.code == 1, r.err  # done, with p2's accepted word merge to review
    assert "p2.patch (accepted proposal: word)" in r.err
    assert "p4.patch" in stops
    assert (queue.path / "series").read_text() == "p2.patch\np1.patch\np3.patch\np4.patch\n"
    assert patchq("applied").out == "p2.patch\np1.patch\n"
    assert "+line 3 P1 P2 X P4\n" in (queue.path / "patches" / "p4.patch").read_text()
    assert patchq("verify").code == 0 and patchq("push", "-a").code == 0
    assert upstream.read("a.txt").decode() == LINES.replace("line 3\n", "line 3 P1 P2 X P4\n")


def test_a_stopped_move_refuses_a_changed_series_or_a_moved_target(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    chain(upstream, queue, patchq)
    assert patchq("sink", "p4.patch").code == 3
    series = queue.path / "series"
    text = series.read_text()
    series.write_text("p1.patch\np2.patch\np4.patch\np3.patch\n")
    r = patchq("rebase", "--continue")
    assert r.code == 5 and "the series changed during the rebase" in r.err
    series.write_text(text)
    # Another branch checked out, or a commit made during the stop: refused, not folded
    # into the stopped patch.
    upstream.git("checkout", "-q", "-f", "main")
    for verb in ("--continue", "--skip"):
        r = patchq("rebase", verb)
        assert r.code == 5 and "not on patchq/main where the rebase stopped" in r.err, r.err
    upstream.git("checkout", "-q", "-f", "patchq/main")
    upstream.write("b.txt", "committed meanwhile\n").commit("meanwhile")
    r = patchq("rebase", "--continue")
    assert r.code == 5 and "patchq/main moved during the stop" in r.err, r.err
    assert patchq("rebase", "--abort").code == 0
    assert patchq("applied").out == "p1.patch\np2.patch\np3.patch\np4.patch\n"
    assert series.read_text() == text


def test_a_file_created_to_resolve_needs_no_git_add_and_a_skipped_patch_is_kept(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", LINES)
    base = upstream.commit("base")
    queue.add("new.patch", "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1,3 @@\n+1\n+2\n+3\n")
    queue.add("edit.patch", "--- a/c.txt\n+++ b/c.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n")
    assert patchq("apply", "--onto", base).code == 0
    r = patchq("sink", "edit.patch")
    assert r.code == 3 and "edit.patch does not apply in the new order" in r.err, r.err
    assert not (upstream.path / "c.txt").exists()
    upstream.write("c.txt", "1\ntwo\n3\n")  # created by hand, untracked: no `git add`
    r = patchq("rebase", "--continue")
    # The created file was taken: new.patch, next, now finds c.txt already there.
    assert r.code == 3 and "new.patch does not apply in the new order" in r.err, r.err
    assert patchq("rebase", "--skip").code == 0
    # Skipped in a reorder, a patch went nowhere: its file is kept aside, not deleted.
    kept = queue.path / "patches" / ".dropped" / "new.patch"
    assert kept.read_text().startswith("--- /dev/null\n")
    assert not (queue.path / "patches" / "new.patch").exists()
    assert (queue.path / "series").read_text().endswith(": new.patch\n")
    assert upstream.read("c.txt") == b"1\ntwo\n3\n"
    assert patchq("verify").code == 0


def test_a_sink_reuses_a_remembered_resolution_and_a_refused_stop_leaves_no_ref(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    chain(upstream, queue, patchq)
    accept_word(queue)
    r = patchq("sink", "p4.patch")
    first = r.err.split(" stopped: ")[1].split(" ")[0]
    settle(upstream, "line 3 P1 P4")
    r = patchq("rebase", "--continue")
    assert r.code == 3, r.err
    assert " stopped: " in r.err, r.err
    second = r.err.split(" stopped: ")[1].split(" ")[0]
    assert second != first
    assert patchq("rebase", "--abort").code == 0
    assert list((queue.path / "resolutions").iterdir())
    # The same sink again: the first conflict is the one resolved before.
    r = patchq("sink", "p4.patch")
    assert r.code == 3 and f" stopped: {second} " in r.err, r.err
    assert patchq("rebase", "--abort").code == 0
    assert upstream.git("for-each-ref", "refs/patchq") == ""
    # Refused at the stop (a dirty tree): nothing kept, no ref either.
    upstream.write("b.txt", "dirty\n")
    r = patchq("sink", "p4.patch")
    assert r.code == 5, r.err
    assert upstream.git("for-each-ref", "refs/patchq") == ""


def test_a_stop_refused_for_a_file_in_the_way_names_the_reorder(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("a.txt", LINES).write(".gitignore", "new.txt\n")
    base = upstream.commit("base")
    edit = "--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n line 2\n-{}\n+{}\n line 4\n"
    queue.add("p1.patch", edit.format("line 3", "line 3 P1"))
    queue.add(
        "p2.patch",
        edit.format("line 3 P1", "line 3 P1 P2")
        + "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+made by p2\n",
    )
    assert patchq("apply", "--onto", base).code == 0 and patchq("pop").code == 0
    upstream.write("new.txt", "the person's own\n")  # ignored, where p2 creates its file

    def seen() -> tuple[str, ...]:
        return (
            upstream.git("rev-parse", "HEAD"),
            upstream.git("status", "--porcelain", "--untracked-files=all"),
            upstream.read("a.txt").decode() + upstream.read("new.txt").decode(),
            (queue.path / "series").read_text(),
        )

    before = seen()
    r = patchq("sink", "p2.patch")
    assert r.code == 5, r.err
    assert "sink would write over new.txt" in r.err, r.err
    assert seen() == before
    assert upstream.git("for-each-ref", "refs/patchq") == ""


def test_a_stopped_move_of_a_series_applied_with_fuzz_finishes(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    # An old series: fz.patch's outer context line is not the base's, so the series was
    # applied with --fuzz. A float above it that stops must still finish once resolved,
    # not stop for ever; the lock keeps fz.patch's fuzzed placement and is re-written.
    h = "".join(f"h {i}\n" for i in range(1, 31))
    upstream.write("f.txt", A).write("h.txt", h)
    base = upstream.commit("base")
    queue.add(
        "fz.patch",
        "--- a/h.txt\n+++ b/h.txt\n@@ -9,7 +9,7 @@\n older 9\n h 10\n h 11\n-h 12\n+H 12\n"
        " h 13\n h 14\n h 15\n",
    )
    queue.add("up.patch", UP).add("again.patch", AGAIN)
    assert patchq("apply", "--onto", base).code == 3
    assert patchq("apply", "--onto", base, "--fuzz", "2").code == 0
    lock = (queue.path / "series.lock").read_bytes()
    r = patchq("float", "up.patch")
    assert r.code == 3 and "again.patch does not apply in the new order" in r.err, r.err
    resolve(upstream, "rewritten entirely")
    assert patchq("rebase", "--continue").code == 3  # up.patch, on again.patch's line
    resolve(upstream, "LINE 5 up")
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert "series.lock not updated" not in r.err
    assert (queue.path / "series").read_text() == "fz.patch\nagain.patch\nup.patch\n"
    new_lock = json.loads(queue.lock())
    assert (queue.path / "series.lock").read_bytes() != lock
    assert [p["name"] for p in new_lock["patches"]] == ["fz.patch", "again.patch", "up.patch"]
    assert new_lock["patches"][0]["placed"][0]["fuzz"] == 1
    assert patchq("verify").code == 0
    assert patchq("applied").out == "fz.patch\nagain.patch\nup.patch\n"
    assert not (upstream.path / ".git" / "patchq" / "main.rebase.json").exists()


def two_on_one_file(
    up: Upstream, q: Queue, patchq: Runner, first: tuple[str, str], second: tuple[str, str]
) -> None:
    """pa.patch edits a.txt as `first` says, pb.patch (made on top of it) as `second`:
    each (old line, new line); both applied."""
    up.write("a.txt", CALL)
    base = up.commit("base")
    mid = CALL.replace(*first)
    q.add("pa.patch", _udiff(CALL, mid))
    q.add("pb.patch", _udiff(mid, mid.replace(*second)))
    assert patchq("apply", "--onto", base).code == 0


CALL = "".join(f"line {i}\n" for i in range(1, 10)) + "x = foo(a, b)\n"
CALL += "".join(f"line {i}\n" for i in range(11, 21))


def _udiff(old: str, new: str) -> str:
    hunks = diff(old.encode(), new.encode())
    return "--- a/a.txt\n+++ b/a.txt\n" + "".join(h.render().decode() for h in hunks)


def test_every_reorder_records_its_methods_in_the_lock(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    # pb changes line 12, two lines below pa's line 10: sunk under pa it no longer matches
    # exactly (its context held pa's line) and git's merge places it; pa, replayed on top,
    # merges as well. The lock says so: both `merged`, by `merge`.
    two_on_one_file(
        upstream, queue, patchq, ("x = foo(a, b)", "x = foo(a, b) # pa"), ("line 12", "LINE 12")
    )
    r = patchq("sink", "pb.patch")
    assert r.code == 0, r.err
    recs = {p["name"]: p for p in json.loads(queue.lock())["patches"]}
    assert [(recs[n]["rebase"], recs[n]["methods"]) for n in ("pa.patch", "pb.patch")] == [
        ("merged", ["merge"]),
        ("merged", ["merge"]),
    ]
    assert patchq("verify").code == 0


def test_a_reorder_that_took_accepted_proposals_exits_1_and_records_them(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    # pa and pb edit different words of one line: in the new order each merges word by
    # word, a proposal `accept` in patchq.toml takes; done, to review: exit 1.
    two_on_one_file(
        upstream,
        queue,
        patchq,
        ("x = foo(a, b)", "x = foo(a, b, c)"),
        ("x = foo(a, b, c)", "x = bar(a, b, c)"),
    )
    accept_word(queue)
    r = patchq("sink", "pb.patch")
    assert r.code == 1, r.err
    assert "accepted proposal" in r.err and "pb.patch (word)" in r.err
    assert "x = bar(a, b, c)\n" in upstream.read("a.txt").decode()
    recs = {p["name"]: p for p in json.loads(queue.lock())["patches"]}
    assert (recs["pb.patch"]["methods"], recs["pb.patch"]["accepted"]) == (["word"], ["word"])
    assert patchq("verify").code == 0


def test_a_reorder_stop_names_what_moved_under_the_patch_not_a_false_claim(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    # p4 edits the line p2 wrote (over p1's). Sunk, it sits on none of them: its line
    # reads differently because p2, which wrote it, is no longer below it — not because
    # the patches it now sits on changed it (it sits on none).
    chain(upstream, queue, patchq)
    r = patchq("sink", "p4.patch")
    assert r.code == 3, r.err
    assert (
        "every line it changes reads differently in the new order (a.txt): "
        "p2.patch no longer below it)"
    ) in r.err
    assert "now sits on changed" not in r.err and "p3.patch" not in r.err
    assert patchq("rebase", "--abort").code == 0
    # Floated, p1 leaves p2 and p4 without the line they were made on (each a stop,
    # the one after the other through `rebase --continue`).
    r = patchq("float", "p1.patch")
    assert r.code == 3, r.err
    assert "p2.patch does not apply in the new order" in r.err
    assert "(a.txt): p1.patch no longer below it" in r.err
    r = patchq("rebase", "--continue")
    assert r.code == 3, r.err
    assert "p4.patch does not apply in the new order" in r.err
    assert "(a.txt): p1.patch no longer below it" in r.err, r.err
    assert patchq("rebase", "--abort").code == 0


def test_a_reorder_stop_names_the_patch_now_below_the_crossed_one(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    # pb (made on pa) is sunk below pa: pb stops first, pa "no longer below it". Taken
    # as it is, pa is replayed on pb, which changed the one line pa changes: its stop
    # names the patch that is now below it, by the file they share (pb removes no line
    # pa removes) — the branch of `shifted_under` for a patch the reorder put under it.
    two_on_one_file(
        upstream,
        queue,
        patchq,
        ("x = foo(a, b)", "x = foo(a, b, c)"),
        ("x = foo(a, b, c)", "x = bar(a, b, c)"),
    )
    r = patchq("sink", "pb.patch")
    assert r.code == 3, r.err
    assert "(a.txt): pa.patch no longer below it)" in r.err, r.err
    r = patchq("rebase", "--continue")
    assert r.code == 3, r.err
    assert "pa.patch does not apply in the new order (for review" in r.err
    assert "reads differently in the new order (a.txt): pb.patch now below it)" in r.err, r.err
    assert "no longer below it" not in r.err
    # `status` says what moved under it as the stop did (it said only "reads
    # differently in the new order" before).
    st = patchq("status").out
    assert "every line it changes reads differently in the new order (a.txt): " in st
    assert "pb.patch now below it" in st, st
    assert patchq("rebase", "--abort").code == 0
    assert queue.series() == "pa.patch\npb.patch\n"
