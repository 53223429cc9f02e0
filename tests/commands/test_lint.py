"""`lint` on a patch repo straight after a rebase.

A rebase that finds a patch upstream, or where a person drops one, keeps that patch's
record in `series.lock` for the review; lint must accept it, so that
`patchq lint && git commit` works on the files the rebase wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..conftest import Queue, Result, Upstream

BASE = "".join(f"line {i}\n" for i in range(1, 31))


def _patch(old: str, new: str, line: int) -> str:
    body = BASE.splitlines()
    ctx = body[line - 4 : line - 1], body[line : line + 3]
    return (
        f"From: Dev <dev@example.org>\nSubject: change line {line}\n\n---\n"
        f"--- a/f.txt\n+++ b/f.txt\n@@ -{line - 3},7 +{line - 3},7 @@\n"
        + "".join(f" {x}\n" for x in ctx[0])
        + f"-{old}\n+{new}\n"
        + "".join(f" {x}\n" for x in ctx[1])
    )


def test_lint_is_clean_after_a_rebase_that_upstreamed_and_dropped(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    queue.add("0001-five.patch", _patch("line 5", "five", 5))
    queue.add("0002-fifteen.patch", _patch("line 15", "fifteen", 15))
    queue.add("0003-twentyfive.patch", _patch("line 25", "twenty-five", 25))
    assert patchq("apply", "--onto", base).code == 0
    assert patchq("lint").code == 0
    # Upstream takes 0001's change and edits 0002's line another way.
    upstream.git("checkout", "-q", "main")
    text = BASE.replace("line 5\n", "five\n").replace("line 15\n", "line 15 upstream\n")
    upstream.write("f.txt", text)
    onto = upstream.commit("take five; reword fifteen")
    r = patchq("rebase", "--onto", onto)
    assert r.code == 3, r.err
    assert patchq("rebase", "--skip").code == 0
    lock = json.loads(queue.lock())
    outcomes = {p["name"]: p["rebase"] for p in lock["patches"]}
    assert outcomes["0001-five.patch"] == "upstreamed"
    assert outcomes["0002-fifteen.patch"] == "dropped"
    r = patchq("lint")
    assert (r.code, r.out) == (0, ""), r.out
    assert "no findings" in r.err
    r = patchq("lint", "--json")
    assert json.loads(r.out) == {"findings": []}


def test_lint_still_warns_of_a_stale_record_of_a_live_patch(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    """A record the series no longer names at all, and that no rebase took out, is a
    leftover (a hand-edited series): still a warning."""
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    queue.add("0001-five.patch", _patch("line 5", "five", 5))
    queue.add("0002-fifteen.patch", _patch("line 15", "fifteen", 15))
    assert patchq("apply", "--onto", base).code == 0
    (queue.path / "series").write_text("0001-five.patch\n")
    (queue.path / "patches" / "0002-fifteen.patch").unlink()
    r = patchq("lint")
    assert r.code == 1
    assert "0002-fifteen.patch is locked but not in the series" in r.out
