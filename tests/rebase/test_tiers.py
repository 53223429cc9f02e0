"""Tiers (DESIGN §4.1): a proposed method never finishes a
patch alone. End to end on real repositories, through the CLI in a subprocess: the stop
for review (the proposal in the tree, no markers), `--skip` and `--abort` as at a
conflict, `--accept` and `accept = [...]` (recorded, exit 1), the usage errors, and a
conflict in the same patch naming the proposals too.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from patchq.core import tiers
from patchq.core.records import HunkOutcome

from ..conftest import Queue, Result, Upstream, run_patchq
from .test_check_rebase import advance, make_patch, pin, snapshot, sub

# A word merge: the patch and upstream edit the same line at different words.
CALLS = "setup(\n  add_flags(-O2 -g)\n  run(ctx, old_name)\n)\n" + "".join(
    f"line {i}\n" for i in range(1, 31)
)
MINE = sub(CALLS, "-O2 -g", "-O3 -g")
THEIRS = sub(CALLS, "-O2 -g)", "-O2 -g -fPIC)")
MERGED = sub(CALLS, "-O2 -g)", "-O3 -g -fPIC)")
VALID = "fuzz, zealous, word, anchored, moved, delete-wins, upstreamed, rewritten, all"


def word_case(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> str:
    """p.patch pinned, and an upstream whose edit makes its one hunk a word merge."""
    upstream.write("f.txt", CALLS)
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.txt": MINE}))], base)
    return advance(upstream, "build position-independent", {"f.txt": THEIRS})


def cli(queue: Queue, *args: str) -> Result:
    return run_patchq("--dir", str(queue.path), *args)


def state(upstream: Upstream, queue: Queue) -> tuple[dict[str, str], str, str]:
    """Every file of the patch repo and the target's work tree, and the refs."""
    files = {k: v for k, v in snapshot(queue.path, upstream.path).items() if "/.git/" not in k}
    return (
        files,
        upstream.git("symbolic-ref", "HEAD"),
        upstream.git("rev-parse", "HEAD", "patchq/main", "main"),
    )


def test_a_proposal_stops_for_review_and_abort_puts_every_byte_back(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    word_case(upstream, queue, patchq)
    before = state(upstream, queue)
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert r.err.count("\n") == 1  # one line
    assert "p.patch stops for review: 1 proposed hunk applied in the working tree" in r.err
    assert "f.txt:2 (hunk #1) by word" in r.err
    # The proposal is in the target's tree, without markers.
    assert upstream.read("f.txt").decode() == MERGED
    doc = json.loads(cli(queue, "status", "--json").out)
    (prop,) = doc["rebase"]["stopped"]["proposals"]
    assert (prop["file"], prop["line"], prop["hunk"], prop["method"]) == ("f.txt", 2, 1, "word")
    assert prop["evidence"]
    # `status` names the upstream commits behind the proposal as the stop did, text and JSON.
    assert "upstream: " in prop["evidence"] and f"by word ({prop['evidence']})" in r.err
    text = cli(queue, "status").out
    assert f"proposed: f.txt:2 (hunk #1) by word ({prop['evidence']})" in text, text
    assert doc["rebase"]["stopped"]["files"] == []
    r = cli(queue, "rebase", "--abort")
    assert r.code == 0, r.err
    assert state(upstream, queue) == before


def test_a_proposal_skipped_is_dropped(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    word_case(upstream, queue, patchq)
    assert cli(queue, "rebase", "--onto", "main").code == 3
    r = cli(queue, "rebase", "--skip")
    assert r.code == 0, r.err
    assert queue.series().startswith("# dropped in ")
    assert upstream.read("f.txt").decode() == THEIRS


def test_a_reviewed_proposal_continues_as_the_person_left_it(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    word_case(upstream, queue, patchq)
    assert cli(queue, "rebase", "--onto", "main").code == 3
    # The person corrects the proposal before going on: what the tree holds is taken.
    fixed = sub(CALLS, "-O2 -g)", "-O3 -g -fPIC -DNDEBUG)")
    upstream.write("f.txt", fixed)
    r = cli(queue, "rebase", "--continue")
    assert r.code == 0, r.err
    lock = json.loads(queue.lock())
    (rec,) = lock["patches"]
    assert (rec["rebase"], rec["methods"]) == ("resolved", ["word"])
    assert "accepted" not in rec
    assert b"+  add_flags(-O3 -g -fPIC -DNDEBUG)" in (queue.path / "patches/p.patch").read_bytes()


def test_accepted_proposals_are_taken_recorded_and_exit_1(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    word_case(upstream, queue, patchq)
    r = cli(queue, "check", "--onto", "main", "--json", "--accept", "zealous,word")
    assert r.code == 1, r.err
    (h,) = json.loads(r.out)["patches"][0]["hunks"]
    assert (h["method"], h["tier"], h["line"]) == ("word", "accepted", 2)
    # its measured precision as core.tiers.MEASURED holds it (None: not measured)
    # and its evidence, the words the stop gives it (what the CI job's pull request shows)
    assert h["proposal"] == {
        "method": "word",
        "precision": tiers.measured("word"),
        "evidence": "the 3-way merge conflicted; the change was merged word by word",
    }
    assert cli(queue, "check", "--onto", "main").code == 3
    r = cli(queue, "rebase", "--onto", "main", "--accept", "word", "--json")
    assert r.code == 1, r.err
    assert "1 accepted proposal to review: p.patch (word)" in r.err
    (p,) = json.loads(r.out)["patches"]
    assert (p["outcome"], p["accepted"]) == ("merged", ["word"])
    assert upstream.read("f.txt").decode() == MERGED
    (rec,) = json.loads(queue.lock())["patches"]
    assert (rec["rebase"], rec["methods"], rec["accepted"]) == ("merged", ["word"], ["word"])
    assert cli(queue, "verify").code == 0
    # The report (one model, every format) names the accepted proposal for review.
    doc = json.loads(cli(queue, "report", "--format", "json").out)
    assert doc["needs_review"] == ["p.patch"] and doc["patches"][0]["accepted"] == ["word"]
    fact = "accepted proposal (word): taken without a stop — review it"
    assert fact in doc["patches"][0]["facts"]
    for fmt in ("text", "md", "html"):
        assert fact in cli(queue, "report", "--format", fmt).out, fmt


def test_accept_in_the_config_and_its_errors(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    word_case(upstream, queue, patchq)
    config = queue.path / "patchq.toml"
    kept = config.read_text()
    before = state(upstream, queue)
    # Unknown names: a usage error on the command line (2), bad input in the config (4);
    # one line each, listing the valid names, and nothing changed.
    for args in (("rebase", "--onto", "main"), ("check", "--onto", "main")):
        r = cli(queue, *args, "--accept", "word,wrod")
        assert r.code == 2, r.err
        assert "'wrod'" in r.err and VALID in r.err
    assert cli(queue, "rebase", "--continue", "--accept", "word").code == 2
    config.write_text(kept + 'accept = ["wrod"]\n')
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 4 and r.err.count("\n") == 1, r.err
    assert "`accept`" in r.err and VALID in r.err
    config.write_text(kept + 'accept = "word"\n')
    assert cli(queue, "check", "--onto", "main").code == 4
    config.write_text(kept)
    assert state(upstream, queue) == before
    # `accept = ["all"]` takes every proposal, as --accept all does.
    config.write_text(kept + 'accept = ["all"]\n')
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 1, r.err
    assert json.loads(queue.lock())["patches"][0]["accepted"] == ["word"]


def test_a_conflict_beside_a_proposal_stops_as_a_conflict_naming_it(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", CALLS)
    base = upstream.commit("base")
    mine = sub(MINE, "line 25\n", "line 25 = mine\n")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.txt": mine}))], base)
    advance(upstream, "two edits", {"f.txt": sub(THEIRS, "line 25\n", "line 25 = theirs\n")})
    r = cli(queue, "rebase", "--onto", "main", "--dry-run")
    assert r.code == 3 and r.out.split() == ["conflict", "p.patch"]
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "conflict in f.txt" in r.err
    assert "proposed: f.txt:2 (hunk #1) by word" in r.err
    shown = upstream.read("f.txt").decode()
    assert shown.count("<<<<<<< ") == 1 and "-O3 -g -fPIC" in shown


def test_a_partly_upstream_patch_accepted_as_upstreamed(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base_text = "".join(f"line {i}\n" for i in range(1, 41))
    upstream.write("f.txt", base_text)
    base = upstream.commit("base")
    ours = sub(sub(base_text, "line 5\n", "LINE 5\n"), "line 30\n", "LINE 30\n")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.txt": ours}))], base)
    advance(upstream, "take the first", {"f.txt": sub(base_text, "line 5\n", "LINE 5\n")})
    r = cli(queue, "check", "--onto", "main", "--json", "--accept", "upstreamed")
    assert r.code == 1, r.err
    hunks = json.loads(r.out)["patches"][0]["hunks"]
    assert [(h["status"], h["tier"]) for h in hunks] == [
        ("upstreamed", "accepted"),
        ("clean", "automatic"),
    ]
    r = cli(queue, "rebase", "--onto", "main", "--accept", "upstreamed")
    assert r.code == 1, r.err
    assert upstream.read("f.txt").decode() == ours
    (rec,) = json.loads(queue.lock())["patches"]
    assert (rec["rebase"], rec["accepted"]) == ("refreshed", ["upstreamed"])
    patch = (queue.path / "patches/p.patch").read_bytes()
    assert b"+LINE 30" in patch and b"LINE 5" not in patch


def _h(status: str, **kw: object) -> HunkOutcome:
    return HunkOutcome("f", 0, status, **kw)  # type: ignore[arg-type]


def test_the_tier_table() -> None:
    assert tiers.parse_accept(["word, moved", "fuzz"]) == ("fuzz", "word", "moved")
    assert tiers.parse_accept(["all"]) == tiers.ACCEPTABLE
    with pytest.raises(ValueError, match="'exact'"):
        tiers.parse_accept(["exact"])  # automatic methods are not proposals to accept
    merge, word = _h("merge"), _h("merge", via="word")
    assert tiers.tier(merge, [merge], ()) == "automatic"
    assert tiers.tier(word, [word], ()) == "proposed"
    assert tiers.tier(word, [word], ("word",)) == "accepted"
    assert tiers.tier(_h("merge", anchored=True), [], ()) == "proposed"
    assert tiers.tier(_h("fuzz", fuzz=1), [], ()) == "proposed"
    assert tiers.tier(_h("merge", via="reused"), [], ()) == "automatic"
    assert tiers.tier(_h("conflict"), [], ()) is None
    up, clean = _h("upstreamed"), _h("clean")
    assert tiers.tier(up, [up, up], ()) == "automatic"  # the whole patch
    assert tiers.tier(up, [up, clean], ()) == "proposed"  # part of it
    assert tiers.proposals([up, clean], ("upstreamed",)) == []
    assert tiers.accepted([word, up, clean], ("word", "upstreamed")) == ("word", "upstreamed")
