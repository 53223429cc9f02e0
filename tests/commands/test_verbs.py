"""The verbs a quilt, `gbp pq` and StGit user reaches for, through the
real CLI (`python -m patchq`) on small repos: `move NAME --before|--after OTHER` (the
reorder sink and float use), `guard NAME +g|-g|--none`, a plain `push` with nothing left,
a reorder's conflict markers, and a stopped sink with nothing applied ending where the
person was.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from ..conftest import Queue, Result, Upstream, run_patchq

A = "".join(f"line {i}\n" for i in range(1, 41))
# p1 adds three lines at the top: every later hunk sits three lines lower on top of it.
P1 = (
    "Subject: top\n\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,6 @@\n"
    "+t1\n+t2\n+t3\n line 1\n line 2\n line 3\n"
)
P2 = (
    "Subject: twenty\n\n--- a/f.txt\n+++ b/f.txt\n@@ -22,3 +22,3 @@\n"
    " line 19\n-line 20\n+LINE 20\n line 21\n"
)
P3 = "Subject: g\n\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-g\n+G\n"


def pq(queue: Queue, *args: str) -> Result:
    return run_patchq("--dir", str(queue.path), *args)


def three(up: Upstream, q: Queue) -> str:
    up.write("f.txt", A).write("g.txt", "g\n")
    base = up.commit("base")
    q.add("p1.patch", P1).add("p2.patch", P2).add("p3.patch", P3)
    assert pq(q, "apply", "--onto", base).code == 0
    return base


def snapshot(up: Upstream, q: Queue) -> dict[str, str]:
    """What a person could see: refs, HEAD, status, the queue's files, the stack record."""
    out = {
        "HEAD": up.git("symbolic-ref", "-q", "HEAD") + up.git("rev-parse", "HEAD"),
        "refs": up.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"),
        "status": up.git("status", "--porcelain", "--untracked-files=all"),
    }
    for p in sorted(q.path.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(q.path))] = hashlib.sha256(p.read_bytes()).hexdigest()
    stack = up.path / ".git" / "patchq" / "main.json"
    out["stack"] = stack.read_text() if stack.exists() else ""
    return out


def test_move_before_and_after_reorders_as_sink_and_float_do(
    upstream: Upstream, queue: Queue
) -> None:
    three(upstream, queue)
    r = pq(queue, "move", "p2.patch", "--before", "p1.patch")
    assert r.code == 0, r.err
    assert r.err == "moved p2.patch before p1.patch\n refreshed p2.patch\nnow at p3.patch\n"
    assert queue.series() == "p2.patch\np1.patch\np3.patch\n"
    # Re-applied with the rebase's ladder: p2 now sits on the base, three lines higher.
    p2 = (queue.path / "patches" / "p2.patch").read_text()
    assert p2 == P2.replace("@@ -22,3 +22,3 @@", "@@ -19,3 +19,3 @@")
    assert upstream.git("log", "--format=%s", "-3").split() == ["g", "top", "twenty"]
    assert pq(queue, "verify").code == 0
    # The stack is what pushing the reordered series gives.
    head = upstream.head()
    assert pq(queue, "pop", "-a").code == 0 and pq(queue, "push", "-a").code == 0
    assert upstream.head() == head
    # Any position: p3 to the middle, then back after the last.
    r = pq(queue, "move", "p3.patch", "--after", "p2.patch")
    assert (r.code, r.err) == (0, "moved p3.patch after p2.patch\nnow at p1.patch\n")
    assert queue.series() == "p2.patch\np3.patch\np1.patch\n"
    r = pq(queue, "move", "p3.patch", "--after", "p2.patch")
    assert (r.code, r.err) == (0, "p3.patch is already after p2.patch\n")
    assert pq(queue, "undo").code == 0
    assert queue.series() == "p2.patch\np1.patch\np3.patch\n"
    assert upstream.head() == head


def test_move_of_an_applied_patch_above_the_stack_unapplies_it(
    upstream: Upstream, queue: Queue
) -> None:
    three(upstream, queue)
    assert pq(queue, "pop").code == 0  # p1, p2 applied; p3 not
    r = pq(queue, "move", "p1.patch", "--after", "p3.patch")
    assert r.code == 0, r.err
    assert queue.series() == "p2.patch\np3.patch\np1.patch\n"
    assert pq(queue, "applied").out == "p2.patch\n"
    assert "p1.patch is unapplied now" in r.err
    r = pq(queue, "move", "p3.patch", "--before", "p2.patch")  # unapplied under applied
    assert r.code == 0, r.err
    assert pq(queue, "applied").out == "p3.patch\np2.patch\n"


def test_move_refuses_what_it_cannot_do_and_changes_nothing(
    upstream: Upstream, queue: Queue
) -> None:
    three(upstream, queue)
    before = snapshot(upstream, queue)
    r = pq(queue, "move", "p2.patch", "--before", "nope.patch")
    assert (r.code, r.err) == (
        4,
        "patchq: series: no patch named 'nope.patch' in the series — `patchq series` lists them\n",
    )
    r = pq(queue, "move", "p2.patch", "--after", "p2.patch")
    assert r.code == 4 and "cannot move p2.patch next to itself" in r.err
    r = pq(queue, "move", "p2.patch")
    assert r.code == 2 and "give exactly one of --before OTHER, --after OTHER" in r.err
    r = pq(queue, "move", "p2.patch", "--before", "p1.patch", "--after", "p3.patch")
    assert r.code == 2
    assert snapshot(upstream, queue) == before


def _conflicting(up: Upstream, q: Queue) -> None:
    """p2 changes the line p1 changed: in the other order neither applies."""
    up.write("f.txt", "one\ntwo\nthree\nfour\nfive\n")
    up.commit("base")
    q.add("p1.patch", "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n")
    q.add("p2.patch", "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n two\n-THREE\n+3\n four\n")


def test_a_moves_conflict_says_series_so_far_and_stops_as_a_rebase(
    upstream: Upstream, queue: Queue
) -> None:
    _conflicting(upstream, queue)
    assert pq(queue, "push", "-a").code == 0
    before = snapshot(upstream, queue)
    r = pq(queue, "move", "p2.patch", "--before", "p1.patch")
    assert r.code == 3
    assert "move p2.patch stopped: p2.patch does not apply in the new order" in r.err
    text = upstream.read("f.txt").decode()
    assert "<<<<<<< series so far\n" in text and "upstream" not in text
    assert pq(queue, "rebase", "--abort").code == 0
    assert snapshot(upstream, queue) == before
    # Resolved and continued, the move is written where it was asked.
    assert pq(queue, "move", "p2.patch", "--before", "p1.patch").code == 3
    upstream.write("f.txt", "one\ntwo\n3\nfour\nfive\n")
    assert pq(queue, "rebase", "--continue").code == 3  # p1 now meets p2's line
    assert "<<<<<<< series so far\n" in upstream.read("f.txt").decode()
    upstream.write("f.txt", "one\ntwo\nTHREE\nfour\nfive\n")
    r = pq(queue, "rebase", "--continue")
    assert r.code == 0, r.err
    assert queue.series() == "p2.patch\np1.patch\n"
    assert pq(queue, "applied").out == "p2.patch\np1.patch\n"


def test_a_stopped_sink_with_nothing_applied_ends_on_the_persons_branch(
    upstream: Upstream, queue: Queue
) -> None:
    _conflicting(upstream, queue)
    upstream.git("checkout", "-q", "-b", "work")
    before = snapshot(upstream, queue)
    assert pq(queue, "sink", "p2.patch").code == 3
    assert pq(queue, "rebase", "--abort").code == 0
    assert snapshot(upstream, queue) == before
    assert pq(queue, "sink", "p2.patch").code == 3
    upstream.write("f.txt", "one\ntwo\n3\nfour\nfive\n")
    assert pq(queue, "rebase", "--continue").code == 3
    upstream.write("f.txt", "one\ntwo\nTHREE\nfour\nfive\n")
    r = pq(queue, "rebase", "--continue")
    assert r.code == 0, r.err
    assert "unapplied now" not in r.err and r.err.endswith("no patches applied\n")
    assert upstream.git("symbolic-ref", "HEAD").strip() == "refs/heads/work"
    assert upstream.git("status", "--porcelain") == ""
    assert upstream.read("f.txt") == b"one\ntwo\nthree\nfour\nfive\n"
    assert queue.series() == "p2.patch\np1.patch\n"
    assert pq(queue, "applied").out == ""
    assert pq(queue, "push", "-a").code == 0


def test_guard_shows_sets_and_clears_a_patchs_guards(upstream: Upstream, queue: Queue) -> None:
    three(upstream, queue)
    (queue.path / "series").write_text("p1.patch\np2.patch\np3.patch -p1 # g.txt only\n")
    assert pq(queue, "pop").code == 0
    r = pq(queue, "guard", "p3.patch")
    assert (r.code, r.out) == (0, "p3.patch (no guards)\n")
    r = pq(queue, "guard", "p3.patch", "+cuda", "-rocm")
    assert r.code == 0, r.err
    assert r.out == "p3.patch #+cuda #-rocm\n"
    assert "it is guarded out now" in r.err
    # MQ's spelling, which quilt reads as a comment; strip level and comment kept.
    assert queue.series() == "p1.patch\np2.patch\np3.patch -p1 #+cuda #-rocm # g.txt only\n"
    assert pq(queue, "series", "-v").out.splitlines()[-1] == "# p3.patch #+cuda #-rocm"
    assert pq(queue, "push").code == 0  # nothing left in the active series
    assert pq(queue, "undo").code == 0
    assert queue.series() == "p1.patch\np2.patch\np3.patch -p1 # g.txt only\n"
    assert pq(queue, "guard", "p3.patch", "-rocm").code == 0
    r = pq(queue, "guard", "p3.patch", "--none")
    assert (r.code, r.out) == (0, "p3.patch (no guards)\n")
    assert queue.series() == "p1.patch\np2.patch\np3.patch -p1 # g.txt only\n"


def test_guard_refuses_to_break_the_stack_and_bad_guards(upstream: Upstream, queue: Queue) -> None:
    three(upstream, queue)
    before = snapshot(upstream, queue)
    r = pq(queue, "guard", "p2.patch", "+cuda")
    assert r.code == 4
    assert r.err == (
        "patchq: patches/p2.patch: p2.patch is applied, and these guards leave it out"
        " — `patchq pop` below it first, then guard it\n"
    )
    r = pq(queue, "guard", "p2.patch", "cuda")
    assert r.code == 4 and "malformed guard 'cuda'" in r.err
    r = pq(queue, "guard", "p2.patch", "+a", "--none")
    assert r.code == 2
    assert snapshot(upstream, queue) == before
    # Bringing a guarded-out patch in below the top is refused too.
    assert pq(queue, "pop", "-a").code == 0
    assert pq(queue, "guard", "p2.patch", "+cuda").code == 0
    assert pq(queue, "push", "-a").code == 0
    assert pq(queue, "applied").out == "p1.patch\np3.patch\n"
    r = pq(queue, "guard", "p2.patch", "--none")
    assert r.code == 4 and "would come in below the top of the stack (p3.patch)" in r.err


def test_a_plain_push_with_nothing_left_exits_0(upstream: Upstream, queue: Queue) -> None:
    three(upstream, queue)
    before = snapshot(upstream, queue)
    r = pq(queue, "push")
    assert (r.code, r.out, r.err) == (0, "", "now at p3.patch\n")
    assert snapshot(upstream, queue) == before


def _complete(cwd: Path, line: str) -> list[str]:
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    env = dict(os.environ, COMP_WORDS=line, COMP_CWORD=str(cword), _PATCHQ_COMPLETE="bash_complete")
    proc = subprocess.run(
        [sys.executable, "-m", "patchq"], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return [ln.split(",", 1)[1] for ln in proc.stdout.splitlines() if ln.startswith("plain,")]


def test_the_new_verbs_complete(upstream: Upstream, queue: Queue) -> None:
    three(upstream, queue)
    (queue.path / "series").write_text("p1.patch\np2.patch #+cuda\np3.patch\n")
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nguards = ["sm120"]\n')
    names = ["p1.patch", "p2.patch", "p3.patch"]
    assert _complete(queue.path, "patchq move ") == names
    assert _complete(queue.path, "patchq move p1.patch --before p") == names
    assert _complete(queue.path, "patchq move p1.patch --after p3") == ["p3.patch"]
    assert _complete(queue.path, "patchq guard p") == names
    assert _complete(queue.path, "patchq guard p1.patch ") == ["+cuda", "-cuda", "+sm120", "-sm120"]
    assert _complete(queue.path, "patchq guard p1.patch +c") == ["+cuda"]
