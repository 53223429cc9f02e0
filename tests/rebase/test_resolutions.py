"""Remembered resolutions (DESIGN §4.7, method `reused`).

A conflict a person resolves in `rebase --continue` is kept in the patch repo's
`resolutions/`; the same conflict met again — the rebase aborted and redone, the old
series carried onto a second branch, `check` — is resolved the same way, recorded as
`reused` and counted as drift to review (check exit 1), never as clean.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.core.errors import BadInputError
from patchq.core.resolutions import Book, Remembered, key, parse, render, resolved_regions
from patchq.core.resolve import Region

from ..conftest import Queue, Result, Upstream
from .test_check_rebase import advance, check_json, make_patch, pin, resolve, sub

# A config file of a daemon, two places a distribution patch changes.
CONF = "".join(f"option_{i} = {i}\n" for i in range(1, 41))
FLAGS = ("option_10 = 10\n", "option_10 = 64\n")  # the patch's edit
UP_FLAGS = ("option_10 = 10\n", "option_10 = 32\n")  # upstream's edit of the same word
OTHER = ("option_30 = 30\n", "option_30 = 300\n")
UP_OTHER = ("option_30 = 30\n", "option_30 = 31\n")
MINE = "option_10 = 64 # upstream: 32\n"  # what the person writes
HEADER = "Description: tune the daemon for our build farm\nAuthor: A Packager <ap@example.org>\n\n"
MINE_30 = "option_30 = 300 # upstream: 31\n"


def _series(up: Upstream, queue: Queue, patchq: Callable[..., Result], both: bool) -> str:
    """One patch (`tune.patch`) editing option 10 (and 30, with `both`), pinned."""
    up.write("daemon.conf", CONF)
    base = up.commit("base")
    mine = sub(CONF, *FLAGS)
    if both:
        mine = sub(mine, *OTHER)
    pin(up, queue, patchq, [("tune.patch", make_patch(up, HEADER, {"daemon.conf": mine}))], base)
    return base


def _files(queue: Queue) -> list[Path]:
    return sorted((queue.path / "resolutions").glob("*"))


def test_a_resolution_is_remembered_readable_and_reused_on_a_second_branch(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = _series(upstream, queue, patchq, both=False)
    old = {n: (queue.path / n).read_bytes() for n in ("series", "series.lock")}
    old_patch = (queue.path / "patches/tune.patch").read_bytes()
    # A maintenance branch gets the same upstream change (a cherry-pick), main gets it
    # too plus an unrelated one further down.
    upstream.git("checkout", "-q", "-b", "stable", base)
    upstream.write("daemon.conf", sub(CONF, *UP_FLAGS))
    upstream.commit("raise option 10")
    upstream.git("checkout", "-q", "main")
    advance(upstream, "raise option 10", {"daemon.conf": sub(CONF, *UP_FLAGS)})
    assert patchq("rebase", "--onto", "main").code == 3
    resolve(upstream.path / "daemon.conf", MINE)
    assert patchq("rebase", "--continue").code == 0
    (f,) = _files(queue)
    text = f.read_text()
    # Readable in a review: the three sides and the answer, each line as it was.
    assert text.startswith("# patchq resolution:")
    assert "# first resolved in patches/tune.patch, daemon.conf\n" in text
    assert (
        "base 1\n option_10 = 10\nupstream 1\n option_10 = 32\n"
        "patch 1\n option_10 = 64\nresolution 1\n option_10 = 64 # upstream: 32\n"
    ) in text
    assert f.name == key([b"option_10 = 10\n"], [b"option_10 = 32\n"], [FLAGS[1].encode()])[:20] + (
        ".resolution"
    )
    assert patchq("lint").code == 0

    # The old series (as the patch repo's history has it) carried onto the stable branch.
    for n, data in old.items():
        (queue.path / n).write_bytes(data)
    (queue.path / "patches/tune.patch").write_bytes(old_patch)
    code, doc = check_json(patchq, onto="stable")
    (h,) = doc["patches"][0]["hunks"]
    assert code == 1  # reviewable drift, not a conflict
    assert (doc["patches"][0]["status"], h["status"], h["method"]) == ("merge", "merge", "reused")
    assert f"resolutions/{f.name}" in h["reason"]
    text_check = patchq("check", "--onto", "stable").out
    assert "merge by reused" in text_check
    r = patchq("rebase", "--onto", "stable")
    assert r.code == 0, r.err
    assert upstream.read("daemon.conf").decode() == sub(CONF, "option_10 = 10\n", MINE)
    lock = json.loads(queue.lock())
    assert lock["patches"][0]["methods"] == ["reused"]
    assert lock["patches"][0]["rebase"] == "merged"
    assert patchq("verify").code == 0
    review = patchq("report").out
    assert "by reused — check it" in review and f"resolutions/{f.name}" in review
    doc = json.loads(patchq("report", "--format", "json").out)
    assert [h["method"] for h in doc["patches"][0]["hunks"]] == ["reused"]
    assert [v["method"] for v in doc["patches"][0]["new_hunks"]] == ["reused"]
    assert "(resolved as a person did before):" in review
    md = patchq("report", "--format", "md").out
    assert "Needs a reviewer's eye: `tune.patch`" in md


def test_aborted_and_redone_the_first_conflict_is_reused(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("daemon.conf", CONF)
    base = upstream.commit("base")
    one = make_patch(upstream, "", {"daemon.conf": sub(CONF, *FLAGS)})
    two = make_patch(upstream, "", {"daemon.conf": sub(CONF, *OTHER)})
    pin(upstream, queue, patchq, [("one.patch", one), ("two.patch", two)], base)
    advance(upstream, "raise 10 and 30", {"daemon.conf": sub(sub(CONF, *UP_FLAGS), *UP_OTHER)})
    assert patchq("rebase", "--onto", "main").code == 3
    resolve(upstream.path / "daemon.conf", MINE)
    r = patchq("rebase", "--continue")
    assert r.code == 3 and "two.patch" in r.err
    assert len(_files(queue)) == 1  # remembered at once, in --continue's transaction
    assert patchq("rebase", "--abort").code == 0
    assert len(_files(queue)) == 1  # the abort keeps what the person taught
    code, doc = check_json(patchq)
    assert code == 3
    assert [(p["status"], p["hunks"][0]["method"]) for p in doc["patches"]] == [
        ("merge", "reused"),
        ("conflict", ""),
    ]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3 and "two.patch" in r.err  # one.patch went through by itself
    resolve(upstream.path / "daemon.conf", MINE_30)
    assert patchq("rebase", "--continue").code == 0
    lock = json.loads(queue.lock())
    assert [(p["rebase"], p["methods"]) for p in lock["patches"]] == [
        ("merged", ["reused"]),
        ("resolved", [""]),
    ]
    assert len(_files(queue)) == 2


def test_a_partly_remembered_conflict_stops_with_the_known_region_filled_in(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = _series(upstream, queue, patchq, both=True)
    old = {
        n: (queue.path / n).read_bytes() for n in ("series", "series.lock", "patches/tune.patch")
    }
    upstream.git("checkout", "-q", "-b", "stable", base)
    upstream.write("daemon.conf", sub(sub(CONF, *UP_FLAGS), *UP_OTHER))
    upstream.commit("raise 10 and 30")
    upstream.git("checkout", "-q", "main")
    advance(upstream, "raise option 10", {"daemon.conf": sub(CONF, *UP_FLAGS)})
    assert patchq("rebase", "--onto", "main").code == 3
    resolve(upstream.path / "daemon.conf", MINE)
    assert patchq("rebase", "--continue").code == 0
    for n, data in old.items():
        (queue.path / n).write_bytes(data)
    code, doc = check_json(patchq, onto="stable")
    assert code == 3
    assert [(h["status"], h["method"]) for h in doc["patches"][0]["hunks"]] == [
        ("merge", "reused"),
        ("conflict", ""),
    ]
    assert patchq("rebase", "--onto", "stable").code == 3
    shown = upstream.read("daemon.conf").decode()
    assert MINE in shown and shown.count("<<<<<<< ") == 1  # only option 30 is left
    resolve(upstream.path / "daemon.conf", MINE_30)
    assert patchq("rebase", "--continue").code == 0
    lock = json.loads(queue.lock())
    assert lock["patches"][0]["methods"] == ["reused", ""]
    assert len(_files(queue)) == 2
    hunks = json.loads(patchq("report", "--format", "json").out)["patches"][0]["hunks"]
    assert [(h["status"], h["method"]) for h in hunks] == [("merge", "reused"), ("conflict", "")]


def test_rerere_false_neither_remembers_nor_reuses(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nrerere = false\n')
    _series(upstream, queue, patchq, both=False)
    advance(upstream, "raise option 10", {"daemon.conf": sub(CONF, *UP_FLAGS)})
    # A resolution already there (from a colleague) is not used either.
    r = Remembered(
        (b"option_10 = 10\n",), (b"option_10 = 32\n",), (FLAGS[1].encode(),), (MINE.encode(),)
    )
    (queue.path / "resolutions").mkdir()
    (queue.path / "resolutions" / r.filename).write_bytes(render(r))
    assert check_json(patchq)[0] == 3
    assert patchq("rebase", "--onto", "main").code == 3
    resolve(upstream.path / "daemon.conf", MINE)
    assert patchq("rebase", "--continue").code == 0
    assert [f.name for f in _files(queue)] == [r.filename]
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nrerere = "no"\n')
    bad = patchq("check", "--onto", "main")
    assert bad.code == 4 and "`rerere` must be true or false" in bad.err


def test_a_broken_resolution_file_is_bad_input_for_lint_check_and_rebase(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    _series(upstream, queue, patchq, both=False)
    advance(upstream, "raise option 10", {"daemon.conf": sub(CONF, *UP_FLAGS)})
    (queue.path / "resolutions").mkdir()
    (queue.path / "resolutions" / "0123.resolution").write_text("base 2\n only one\n")
    lint = patchq("lint")
    assert lint.code == 4
    assert "resolutions/0123.resolution:3: error:" in lint.out
    for args in (("check", "--onto", "main"), ("rebase", "--onto", "main")):
        r = patchq(*args)
        assert r.code == 4 and "resolutions/0123.resolution:3" in r.err, r.err
        assert len(r.err.strip().splitlines()) == 1
    assert patchq("status").code == 0
    assert not (upstream.path / ".git/patchq/main.rebase.json").exists()


def test_a_resolution_file_round_trips_every_byte() -> None:
    r = Remembered(
        (b"a\r\n", b"no newline"),
        (b"\xff bytes\n",),
        (),
        (b"  spaced \n", b"end"),
        "patches/x.patch, f",
    )
    data = render(r)
    assert parse(data, "r") == r
    assert b"\\ No newline at end of file\n" in data
    # The key reads the sides' text only: line endings do not count.
    assert key([b"a\n", b"no newline\n"], [b"\xff bytes\n"], []) == r.key
    with pytest.raises(BadInputError, match="still has conflict markers"):
        parse(render(Remembered((), (), (), (b"<<<<<<< upstream\n",))), "r")


def test_a_reused_resolution_takes_the_conflict_s_line_endings() -> None:
    r = Remembered((b"a\n",), (b"b\n",), (b"c\n",), (b"b\n", b"c\n"))
    book = Book([(r.filename, r)])
    fixed = book.lookup([b"a\r\n"], [b"b\r\n"], [b"c\r\n"])
    assert fixed is not None and fixed.lines == (b"b\r\n", b"c\r\n")
    assert fixed.source == f"resolutions/{r.filename}"
    assert book.lookup([b"a\n"], [b"b\n"], [b"d\n"]) is None


def test_only_an_answer_inside_the_markers_is_remembered() -> None:
    marked = b"x\n<<<<<<< upstream\nb\n||||||| base\na\n=======\nc\n>>>>>>> p\ny\n"
    region = Region((b"a\n",), (b"b\n",), (b"c\n",), 1, 1, 7)
    assert resolved_regions(marked, b"x\nbc\ny\n", [region]) == [(region, (b"bc\n",))]
    # The person also rewrote the line above the markers: no region-sized answer.
    assert resolved_regions(marked, b"X\nbc\ny\n", [region]) == []


def test_a_resolutions_folder_linking_out_is_refused(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    _series(upstream, queue, patchq, both=False)
    advance(upstream, "raise option 10", {"daemon.conf": sub(CONF, *UP_FLAGS)})
    out = tmp_path / "elsewhere"
    out.mkdir()
    (queue.path / "resolutions").symlink_to(out)
    r = patchq("rebase", "--onto", "main")
    assert r.code in (4, 5) and "resolutions" in r.err
    assert list(out.iterdir()) == []
    shutil.rmtree(out)
