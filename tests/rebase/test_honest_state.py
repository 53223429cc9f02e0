"""State that tells the truth after a rebase: a rebase with
nothing to do keeps the last real one's review; a fix made with `refresh` after a rebase
is in series.lock and in the review, so `verify` and `report` agree with the files."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from ..conftest import Queue, Result, Upstream
from .test_check_rebase import BASE, advance, make_patch, sub


def lock(queue: Queue) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(queue.lock())
    return doc


def rebased(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> tuple[str, str]:
    """p.patch (line 20) merged and q.patch (line 35) unchanged by a real rebase onto an
    upstream that edited line 17; returns (base, onto)."""
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    p = make_patch(upstream, "Change line 20\n\n", {"f.txt": sub(BASE, "line 20\n", "LINE 20\n")})
    q = make_patch(upstream, "Change line 35\n\n", {"f.txt": sub(BASE, "line 35\n", "LINE 35\n")})
    queue.add("p.patch", p).add("q.patch", q)
    assert patchq("apply", "--onto", base).code == 0
    onto = advance(upstream, "edit line 17", {"f.txt": sub(BASE, "line 17\n", "L17\n")})
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert {x["name"]: x["rebase"] for x in lock(queue)["patches"]} == {
        "p.patch": "merged",
        "q.patch": "unchanged",
    }
    return base, onto


def test_a_rebase_with_nothing_to_do_keeps_the_last_review(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base, onto = rebased(upstream, queue, patchq)
    report = patchq("report", "--format", "json").out
    locked = queue.lock()
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert "nothing changed" in r.err and "`patchq report` still shows the last rebase" in r.err
    # The review and the lock's record of the real rebase are as they were.
    assert patchq("report", "--format", "json").out == report
    assert json.loads(report)["base"] == base
    assert f"rebase {base[:12]} -> {onto[:12]}" in patchq("report").out
    assert queue.lock() == locked
    assert lock(queue)["last_rebase"]["from"] == base
    assert patchq("verify").code == 0
    # The target ends as after any rebase: the stack applied, clean.
    assert upstream.git("symbolic-ref", "--short", "HEAD").strip() == "patchq/main"
    assert upstream.git("status", "--porcelain") == ""


def test_a_fix_made_with_refresh_after_a_rebase_is_in_the_lock_and_the_review(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base, onto = rebased(upstream, queue, patchq)
    merged = sub(sub(sub(BASE, "line 17\n", "L17\n"), "line 20\n", "LINE 20\n"), "line 35\n", "")
    # The person fixes what the rebase gave them: q.patch (unchanged by the rebase)
    # needs another line. The stack is applied (as after `push -a`).
    fixed = sub(merged.replace("line 34\n", "line 34\nLINE 35\n"), "line 36\n", "line 36 fixed\n")
    upstream.write("f.txt", fixed)
    r = patchq("refresh")
    assert r.code == 0, r.err
    assert "series.lock (and the last rebase's review) brought up to date" in r.err
    data = (queue.path / "patches" / "q.patch").read_bytes()
    assert b"+line 36 fixed" in data
    lk = lock(queue)
    rec = {x["name"]: x for x in lk["patches"]}
    assert rec["q.patch"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert rec["q.patch"]["rebase"] == "resolved" and rec["p.patch"]["rebase"] == "merged"
    assert lk["result_tree"] == upstream.git("rev-parse", "HEAD^{tree}").strip()
    assert lk["last_rebase"] == {"from": base, "onto": onto, "onto_ref": "main"}
    r = patchq("verify")
    assert r.code == 0, r.err
    # The review shows the fix: q.patch resolved, its interdiff from before the rebase.
    doc = json.loads(patchq("report", "--format", "json").out)
    q = {x["name"]: x for x in doc["patches"]}["q.patch"]
    assert q["outcome"] == "resolved" and q["change"] == "substantive"
    assert "+line 36 fixed" in "\n".join(q["interdiff"])
    text = patchq("report").out
    assert "  resolved  q.patch  [substantive]" in text and "+line 36 fixed" in text
    # Refreshing again with nothing new changes nothing.
    locked = queue.lock()
    assert patchq("refresh").code == 0 and queue.lock() == locked


def test_verify_names_the_command_that_brings_the_lock_up_to_date(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base, onto = rebased(upstream, queue, patchq)
    # An edit made to the patch file by hand, not through refresh.
    path = queue.path / "patches" / "q.patch"
    path.write_bytes(path.read_bytes().replace(b"+LINE 35", b"+LINE thirty-five"))
    r = patchq("verify")
    assert r.code == 1
    assert "patches/q.patch: changed since series.lock was written" in r.err
    assert f"`patchq apply --pin` pins them on {onto[:12]} again" in r.err
    assert patchq("apply", "--pin").code == 0
    assert patchq("verify").code == 0


def test_refresh_leaves_the_lock_alone_when_the_series_would_no_longer_apply(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    rebased(upstream, queue, patchq)
    assert patchq("pop").code == 0  # q.patch unapplied; p.patch is the top
    locked = queue.lock()
    text = upstream.read("f.txt").decode()
    # An edit to p.patch that changes q.patch's context: q would not apply after it.
    upstream.write("f.txt", sub(text, "line 33\n", "line 33 moved\n"))
    r = patchq("refresh")
    assert r.code == 0, r.err
    assert "series.lock not updated: patches/q.patch no longer applies exactly" in r.err
    assert queue.lock() == locked
    r = patchq("verify")
    assert r.code == 1 and "`patchq apply --pin` pins them on" in r.err
