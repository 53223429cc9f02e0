""" "Fixed differently upstream" (DESIGN §4.1): when upstream changed
the lines a patch changes in every hunk, the patch is never merged alone — a stop whose
message names the upstream commits, so that `rebase --skip` drops it — and where the
patch's added lines (or near-identical ones) are already upstream near the spot, the
stop says so. End to end through the CLI on real repositories.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..conftest import Queue, Result, Upstream, run_patchq
from .test_check_rebase import advance, make_patch, pin, sub

LINES = "".join(f"line {i}\n" for i in range(1, 21))
CODE = "int f(int n) {\n  if (n > 0)\n    legacy(n);\n  return n;\n}\n" + LINES


def cli(queue: Queue, *args: str) -> Result:
    return run_patchq("--dir", str(queue.path), *args)


def pinned(upstream: Upstream, queue: Queue, patchq: Callable[..., Result], mine: str) -> None:
    upstream.write("f.c", CODE)
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.c": mine}))], base)


def test_a_patch_whose_lines_upstream_rewrote_stops_naming_the_commits(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    pinned(upstream, queue, patchq, sub(CODE, "  if (n > 0)\n", "  if (n >= 0)\n"))
    fix = advance(
        upstream, "f: accept zero", {"f.c": sub(CODE, "  if (n > 0)\n", "  if (n > -1)\n")}
    )
    r = cli(queue, "check", "--onto", "main", "--json")
    assert r.code == 3, r.err
    (p,) = json.loads(r.out)["patches"]
    assert p["rewritten"] == {"commits": [fix], "added_present": False}
    text = cli(queue, "check", "--onto", "main").out
    assert "fixed differently upstream?" in text
    # Never merged alone: the word merge is a proposal, and the stop names the commit.
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err
    said = f"upstream changed the lines it changes in every hunk ({fix[:12]} f: accept zero)"
    assert said in r.err and "by word" in r.err
    assert "`patchq rebase --skip` drops it" in r.err
    assert r.err.count("--skip") == 1, r.err  # each way out named once
    assert "`patchq rebase --continue`; or --abort" in r.err
    # `status` says it too, for whoever looks at the stop later (text and JSON).
    st = cli(queue, "status")
    said = f"fixed differently upstream? upstream changed every line it changes ({fix[:12]})"
    assert said in st.out, st.out
    stopped = json.loads(cli(queue, "status", "--json").out)["rebase"]["stopped"]
    # …and the one command that drops the patch.
    assert stopped["rewritten"] == {
        "commits": [fix],
        "added_present": False,
        "drop": "patchq rebase --skip",
    }
    r = cli(queue, "rebase", "--skip")
    assert r.code == 0, r.err
    assert queue.series().startswith("# dropped in ")
    assert upstream.read("f.c").decode() == sub(CODE, "  if (n > 0)\n", "  if (n > -1)\n")


def test_added_lines_already_upstream_near_the_spot_are_evidence(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    pinned(upstream, queue, patchq, sub(CODE, "    legacy(n);\n", "    modern(n);\n"))
    advance(upstream, "use modern()", {"f.c": sub(CODE, "    legacy(n);\n", "    modern( n );\n")})
    r = cli(queue, "check", "--onto", "main", "--json")
    assert r.code == 3, r.err
    (p,) = json.loads(r.out)["patches"]
    assert p["rewritten"]["added_present"] is True
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "its added lines (or near-identical ones) are already there near the spot" in r.err
    stopped = json.loads(cli(queue, "status", "--json").out)["rebase"]["stopped"]
    assert stopped["rewritten"]["added_present"] is True
    assert "its added lines are already there near the spot" in cli(queue, "status").out


def test_a_patch_with_a_hunk_upstream_left_alone_is_not_rewritten(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    mine = sub(sub(CODE, "  if (n > 0)\n", "  if (n >= 0)\n"), "line 15\n", "LINE 15\n")
    pinned(upstream, queue, patchq, mine)
    advance(upstream, "f: accept zero", {"f.c": sub(CODE, "  if (n > 0)\n", "  if (n > -1)\n")})
    r = cli(queue, "check", "--onto", "main", "--json")
    (p,) = json.loads(r.out)["patches"]
    assert p["rewritten"] is None
    assert "fixed differently" not in cli(queue, "rebase", "--onto", "main").err
    stopped = json.loads(cli(queue, "status", "--json").out)["rebase"]["stopped"]
    assert stopped is not None and stopped["rewritten"] is None


def _fuzz_pinned(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> str:
    """A 60-line file and a patch of line 41 whose first context line and stated line
    (3) are stale: applied with `--fuzz 2`, as GNU patch places it. The file's text."""
    text = "".join(f"line {i}\n" for i in range(1, 61))
    upstream.write("f.txt", text)
    base = upstream.commit("base")
    stale = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,7 @@\n"
        " stale context\n line 39\n line 40\n-line 41\n+LINE 41\n line 42\n line 43\n line 44\n"
    )
    queue.add("p.patch", stale)
    r = patchq("apply", "--onto", base, "--fuzz", "2")
    assert r.code == 0, r.err
    return text


def test_a_patch_pinned_with_fuzz_is_judged_where_its_fuzz_placed_it(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    """A patch whose context was already stale on its pinned base (`apply --fuzz`) is
    looked for there where that fuzz placed it, not at its stated line: upstream left
    the lines it changes alone, so git's merge carries it without a "fixed differently
    upstream" stop (Termux's rhash configure.patch, stated 30 lines off its place)."""
    text = _fuzz_pinned(upstream, queue, patchq)
    advance(upstream, "ten", {"f.txt": sub(text, "line 10\n", "line ten\n")})
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert "fixed differently" not in r.err
    want = sub(sub(text, "line 10\n", "line ten\n"), "line 41\n", "LINE 41\n")
    assert upstream.read("f.txt").decode() == want


def test_a_fuzz_pinned_patch_names_the_commit_that_changed_its_lines(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    """The upstream commits a stop names for a patch pinned with fuzz are those that
    changed the lines where that fuzz placed it, not those at its stale stated line."""
    text = _fuzz_pinned(upstream, queue, patchq)
    near_stated = advance(
        upstream, "near the stated line", {"f.txt": sub(text, "line 4\n", "four\n")}
    )
    text = sub(text, "line 4\n", "four\n")
    mine = advance(upstream, "edit 41", {"f.txt": sub(text, "line 41\n", "Line 41\n")})
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert f"(upstream: {mine[:12]} edit 41)" in r.err
    assert near_stated[:12] not in r.err


def test_accept_takes_a_plain_merge_fixed_differently_upstream_and_records_it(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    """A patch whose one hunk git's merge places cleanly, though upstream made one of its
    two changes and so changed its lines: "fixed differently upstream", a proposal of
    the whole patch (DESIGN §4.1). Without --accept it stops for review naming the way
    to take it; `--accept all` (or `rewritten`) takes it, exits 1, and the lock records
    it as accepted, as for any proposal."""
    upstream.write("f.c", LINES)
    base = upstream.commit("base")
    mine = sub(sub(LINES, "line 5\n", "LINE 5\n"), "line 8\n", "LINE 8\n")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.c": mine}))], base)
    fix = advance(upstream, "capital five", {"f.c": sub(LINES, "line 5\n", "LINE 5\n")})
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "p.patch stops for review: its merge is applied in the working tree" in r.err
    assert f"({fix[:12]} capital five)" in r.err
    assert "`--accept rewritten` takes such a patch without a stop" in r.err
    st = cli(queue, "status").out
    assert "stopped at: p.patch (for review: its merge applied, no markers)" in st, st
    assert "conflict" not in st
    assert cli(queue, "rebase", "--abort").code == 0
    # check's summary says which merge stops the rebase (its status alone reads
    # "1 merge", as if the rebase made it alone); accepted, it no longer does.
    r = cli(queue, "check", "--onto", "main")
    assert r.code == 3
    assert "summary: 1 merge; for review (rebase stops there): p.patch\n" in r.out, r.out
    r = cli(queue, "check", "--onto", "main", "--accept", "all")
    assert r.code == 1
    assert "summary: 1 merge\n" in r.out, r.out
    r = cli(queue, "rebase", "--onto", "main", "--accept", "all")
    assert r.code == 1, r.err
    assert "1 accepted proposal to review: p.patch (rewritten)" in r.err
    (rec,) = json.loads(queue.lock())["patches"]
    assert (rec["rebase"], rec["methods"], rec["accepted"]) == ("merged", ["merge"], ["rewritten"])
    assert upstream.read("f.c").decode() == mine
