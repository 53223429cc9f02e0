"""Context-only drift (DESIGN §4.1, §4.2): a hunk whose context changed
upstream but whose removed lines did not is placed where GNU patch's fuzz places it, at
its one match, as a `fuzz` proposal whatever the fuzz setting: the rebase stops for review
with it applied (no markers) instead of stopping bare; `--accept fuzz` takes it (exit 1).
End to end through the CLI on real repositories."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..conftest import Queue, Result, Upstream, run_patchq
from .test_check_rebase import BASE, advance, make_patch, pin, snapshot, sub

# Line 30's text twice (lines 10 and 30): its removed line alone does not place the hunk.
TWICE = sub(BASE, "line 10\n", "line 30\n")


def cli(queue: Queue, *args: str) -> Result:
    return run_patchq("--dir", str(queue.path), *args)


def drift_case(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], base_text: str = ""
) -> None:
    """p.patch pinned on the base; q.patch added to the series after, made for a tree
    whose lines 27 and 28 differ (never applied on the pinned base, so no pre-image to merge
    against); upstream then edits far away."""
    text = base_text or TWICE
    upstream.write("f.txt", text)
    base = upstream.commit("base")
    p = make_patch(upstream, "Change line 5\n\n", {"f.txt": sub(text, "line 5\n", "LINE 5\n")})
    pin(upstream, queue, patchq, [("p.patch", p)], base)
    other = text.replace("line 27\nline 28\n", "X27\nX28\n")
    upstream.write("f.txt", other)
    upstream.git("add", "-A")
    upstream.git("commit", "-qm", "scratch")
    q = make_patch(
        upstream,
        "Change line 30\n\n",
        {"f.txt": sub(other, "X28\nline 29\nline 30\n", "X28\nline 29\nLINE 30\n")},
    )
    upstream.git("reset", "-q", "--hard", "HEAD~1")
    queue.add("q.patch", q)
    advance(upstream, "edit far below", {"f.txt": sub(text, "line 38\n", "L38\n")})


def state(upstream: Upstream, queue: Queue) -> tuple[dict[str, str], str]:
    files = {k: v for k, v in snapshot(queue.path, upstream.path).items() if "/.git/" not in k}
    return files, upstream.git("rev-parse", "HEAD", "patchq/main", "main")


def test_context_only_drift_stops_for_review_with_the_fuzz_placement(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    drift_case(upstream, queue, patchq)
    before = state(upstream, queue)
    r = cli(queue, "check", "--onto", "main", "--json")
    assert r.code == 3, r.err
    (h,) = json.loads(r.out)["patches"][1]["hunks"]
    assert (h["status"], h["method"], h["fuzz"], h["tier"], h["line"]) == (
        "fuzz",
        "fuzz",
        2,
        "proposed",
        30,
    )
    # Whatever the fuzz setting: a rebase at fuzz 0 (the default) offers it all the same.
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "q.patch stops for review: 1 proposed hunk applied in the working tree" in r.err
    assert "f.txt:30 (hunk #1) by fuzz (only its context changed upstream" in r.err
    assert "fuzz 2 places it at this one spot" in r.err
    lines = upstream.read("f.txt").decode().splitlines()
    assert lines[29] == "LINE 30" and lines[9] == "line 30"
    assert not any(x.startswith(("<<<<<<<", ">>>>>>>")) for x in lines)
    doc = json.loads(cli(queue, "status", "--json").out)
    (prop,) = doc["rebase"]["stopped"]["proposals"]
    assert (prop["file"], prop["line"], prop["method"]) == ("f.txt", 30, "fuzz")
    assert cli(queue, "rebase", "--abort").code == 0
    assert state(upstream, queue) == before
    # Reviewed and taken: recorded `resolved`, by fuzz.
    assert cli(queue, "rebase", "--onto", "main").code == 3
    r = cli(queue, "rebase", "--continue")
    assert r.code == 0, r.err
    recs = {p["name"]: p for p in json.loads(queue.lock())["patches"]}
    assert (recs["q.patch"]["rebase"], recs["q.patch"]["methods"]) == ("resolved", ["fuzz"])


def test_context_only_drift_accepted(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    drift_case(upstream, queue, patchq)
    r = cli(queue, "rebase", "--onto", "main", "--accept", "fuzz")
    assert r.code == 1, r.err
    assert "q.patch (fuzz)" in r.err
    recs = {p["name"]: p for p in json.loads(queue.lock())["patches"]}
    assert recs["q.patch"]["accepted"] == ["fuzz"]
    assert upstream.read("f.txt").decode().splitlines()[29] == "LINE 30"
    assert b"+LINE 30" in (queue.path / "patches/q.patch").read_bytes()
    assert cli(queue, "verify").code == 0


def test_a_fuzz_placement_found_twice_is_no_proposal(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Lines 29-31 also at lines 9-11: with its two outer context lines dropped, the hunk
    # matches at two places, so nothing places it and the rebase stops at a conflict.
    text = BASE.replace("line 9\nline 10\nline 11\n", "line 29\nline 30\nline 31\n")
    drift_case(upstream, queue, patchq, text)
    r = cli(queue, "check", "--onto", "main", "--json")
    assert r.code == 3, r.err
    (h,) = json.loads(r.out)["patches"][1]["hunks"]
    assert (h["status"], h["method"]) == ("conflict", "")
    assert h["reason"] == "its context and removed lines are not in the file"
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3 and "conflict in f.txt" in r.err, r.err
