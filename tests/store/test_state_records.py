"""The state patchq keeps in `.git/patchq/` is typed, versioned, and refused when damaged.

Three records: the rebase in progress (`<queue>.rebase.json`), the last rebase's record
(`<queue>.last-rebase.json`) and the applied stack (`<queue>.json`). Each is a frozen
value with one serialiser and one deserialiser: a property says the two are inverses,
files written before records had a version still read, and a file that is not JSON, is
from a newer patchq, or lacks or mistypes a key stops the command with exit 5 naming it,
before anything is changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchq.core.records import (
    DonePatch,
    HunkOutcome,
    LastRebase,
    PatchOutcome,
    RebaseState,
    Stack,
    StoppedPatch,
)
from patchq.store import jsonrecord as jr
from patchq.store import rebasestate as rs
from patchq.store import stack as stack_record

from ..conftest import Queue, Result, Upstream
from ..rebase.test_check_rebase import BASE, advance, make_patch, pin, snapshot, sub

# --- the values and their round trips -----------------------------------------------------

texts = st.text(max_size=8)
oids = st.text("0123456789abcdef", min_size=1, max_size=40)
names = st.tuples(texts)


def _pairs(values: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[tuple[str, Any], ...]]:
    # Mappings are kept as pairs with distinct keys, in order.
    return st.dictionaries(texts, values, max_size=4).map(lambda d: tuple(d.items()))


hunks = st.builds(
    HunkOutcome,
    texts,
    st.integers(0, 99),
    texts,
    st.integers(-99, 99),
    st.integers(0, 3),
    st.booleans(),
    texts,
    st.lists(oids, max_size=3).map(tuple),
)
outcomes = st.builds(
    PatchOutcome,
    texts,
    texts,
    texts,
    st.lists(oids, max_size=3).map(tuple),
    st.lists(hunks, max_size=3).map(tuple),
    st.none() | oids,
    st.none() | st.booleans(),
)
stacks = st.lists(st.tuples(texts, oids), max_size=4).flatmap(
    lambda pc: st.builds(
        Stack, oids, texts, st.just(tuple(p for p, _ in pc)), st.just(tuple(c for _, c in pc))
    )
)
stopped = st.builds(
    StoppedPatch,
    texts,
    texts,
    st.lists(oids, max_size=3).map(tuple),
    st.lists(hunks, max_size=3).map(tuple),
    oids,
    oids,
    st.none() | oids,
    st.lists(texts, max_size=3).map(tuple),
    st.booleans(),
)
states = st.builds(
    RebaseState,
    oids,
    oids,
    texts,
    st.lists(texts, max_size=3).map(tuple),
    st.integers(0, 3),
    st.none() | texts,
    st.none() | oids,
    st.none() | stacks,
    texts,
    st.none() | oids,
    st.lists(texts, max_size=4).map(tuple),
    st.lists(st.builds(DonePatch, outcomes, oids, oids), max_size=3).map(tuple),
    oids,
    st.none() | stopped,
    _pairs(texts),
)
lasts = st.builds(
    LastRebase,
    oids,
    oids,
    texts,
    st.lists(outcomes, max_size=3).map(tuple),
    _pairs(texts),
    _pairs(st.binary(max_size=40)),
    _pairs(st.binary(max_size=40)),
)


@given(states)
def test_the_rebase_state_round_trips(state: RebaseState) -> None:
    assert rs.from_doc(jr.loads(jr.dumps(rs.to_doc(state)))) == state


@given(lasts)
def test_the_last_rebase_record_round_trips(record: LastRebase) -> None:
    # Patches are bytes, not always UTF-8: they must come back byte for byte.
    assert rs.last_from_doc(jr.loads(jr.dumps(rs.last_to_doc(record)))) == record


@given(stacks)
def test_the_stack_record_round_trips(stack: Stack) -> None:
    doc = jr.loads(jr.dumps({"version": jr.VERSION, **stack_record.to_doc(stack)}))
    assert stack_record.from_doc(doc) == stack


def test_files_written_before_versions_read_as_version_1() -> None:
    """The shapes patchq wrote before records had a version (keys sorted, no `version`)."""
    hunk = {
        "anchored": False,
        "drift": ["c1"],
        "file": "f.txt",
        "fuzz": 0,
        "index": 0,
        "offset": 3,
        "reason": "",
        "status": "offset",
    }
    state = {
        "branch": "patchq/main",
        "branch_before": "b0",
        "current": {
            "conflict_tree": None,
            "drift": [],
            "files": ["g.txt"],
            "hunks": [],
            "name": "q.patch",
            "shown": True,
            "status": "conflict",
            "tree_after": "t1",
            "tree_before": "t1",
        },
        "done": [
            {
                "commit": "k1",
                "drift": ["c1"],
                "hunks": [hunk],
                "name": "p.patch",
                "outcome": "refreshed",
                "status": "offset",
                "tree_after": "t1",
                "tree_before": "t0",
            }
        ],
        "entries": ["p.patch", "q.patch"],
        "fuzz": 0,
        "guards": [],
        "head": "k1",
        "old_base": "o",
        "onto": "n",
        "onto_ref": "main",
        "orig_branch": "patchq/main",
        "orig_head": "b0",
        "phase": "running",
        "stack_before": {
            "applied": ["p.patch"],
            "base": "o",
            "branch": "patchq/main",
            "commits": ["b0"],
        },
        "subjects": {"c1": "Move things"},
    }
    h = HunkOutcome("f.txt", 0, "offset", 3, 0, False, "", ("c1",))
    assert rs.from_doc(jr.loads(json.dumps(state, sort_keys=True))) == RebaseState(
        "o",
        "n",
        "main",
        (),
        0,
        "patchq/main",
        "b0",
        Stack("o", "patchq/main", ("p.patch",), ("b0",)),
        "patchq/main",
        "b0",
        ("p.patch", "q.patch"),
        (
            DonePatch(
                PatchOutcome("p.patch", "offset", "refreshed", ("c1",), (h,), "k1"), "t0", "t1"
            ),
        ),
        "k1",
        StoppedPatch("q.patch", "conflict", (), (), "t1", "t1", None, ("g.txt",), True),
        (("c1", "Move things"),),
    )
    last = {
        "from": "o",
        "new": {"p.patch": "new\udcff"},
        "old": {"p.patch": "old"},
        "onto": "n",
        "onto_ref": "main",
        "subjects": {},
        "patches": [
            {
                "drift": [],
                "hunks": [],
                "name": "u.patch",
                "outcome": "dropped",
                "shown": True,
                "status": "conflict",
            }
        ],
    }
    assert rs.last_from_doc(jr.loads(json.dumps(last, sort_keys=True))) == LastRebase(
        "o",
        "n",
        "main",
        (PatchOutcome("u.patch", "conflict", "dropped", shown=True),),
        (),
        (("p.patch", b"old"),),
        (("p.patch", b"new\xff"),),
    )
    stack = {"applied": ["p.patch"], "base": "o", "branch": "patchq/main", "commits": ["b0"]}
    assert stack_record.from_doc(jr.loads(json.dumps(stack))) == Stack(
        "o", "patchq/main", ("p.patch",), ("b0",)
    )


# --- damaged files stop the command, named, with nothing changed ----------------------------


def _truncated(data: str, key: str) -> str:
    del key
    return data[: len(data) // 2]


def _newer(data: str, key: str) -> str:
    del key
    return json.dumps(json.loads(data) | {"version": jr.VERSION + 1})


def _missing(data: str, key: str) -> str:
    doc = json.loads(data)
    del doc[key]
    return json.dumps(doc)


def _mistyped(data: str, key: str) -> str:
    return json.dumps(json.loads(data) | {key: 7})


DAMAGE = {
    "not JSON": _truncated,
    "newer version": _newer,
    "missing key": _missing,
    "wrong type": _mistyped,
}


def _one_line_naming(r: Result, path: Path, *words: str) -> None:
    assert r.code == 5, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert str(path) in lines[0] and all(w in lines[0] for w in words), lines[0]


def _damage(path: Path, how: str, key: str) -> None:
    path.write_text(DAMAGE[how](path.read_text(), key))


@pytest.fixture
def stopped_rebase(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> Path:
    """A rebase stopped at a conflict; the path of its state."""
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [("p.patch", make_patch(upstream, "P\n\n", {"f.txt": sub(BASE, "line 20\n", "P 20\n")}))],
        base,
    )
    advance(upstream, "Edit the very line", {"f.txt": sub(BASE, "line 20\n", "U 20\n")})
    assert patchq("rebase", "--onto", "main").code == 3
    return upstream.path / ".git/patchq/main.rebase.json"


@pytest.fixture
def finished_rebase(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> Path:
    """A finished rebase that moved one patch; the path of its record."""
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [("p.patch", make_patch(upstream, "P\n\n", {"f.txt": sub(BASE, "line 20\n", "P 20\n")}))],
        base,
    )
    advance(upstream, "Insert at the top", {"f.txt": "top\n" + BASE})
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    return upstream.path / ".git/patchq/main.last-rebase.json"


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_rebase_state_stops_continue_skip_and_abort(
    how: str, stopped_rebase: Path, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    _damage(stopped_rebase, how, "head")
    before = snapshot(queue.path, upstream.path)
    for verb in ("--continue", "--skip", "--abort"):
        r = patchq("rebase", verb)
        _one_line_naming(r, stopped_rebase, "rebase state", "move it aside, and `git reflog`")
        assert snapshot(queue.path, upstream.path) == before


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_last_rebase_record_stops_report(
    how: str, finished_rebase: Path, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    assert patchq("report").code == 0
    _damage(finished_rebase, how, "onto")
    before = snapshot(queue.path, upstream.path)
    r = patchq("report")
    _one_line_naming(
        r,
        finished_rebase,
        "last rebase",
        "`patchq report` cannot read it",
        "`patchq rebase` rewrites it",
    )
    assert r.out == ""
    assert snapshot(queue.path, upstream.path) == before


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_stack_record_stops_commands_that_read_it(
    how: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [("p.patch", make_patch(upstream, "P\n\n", {"f.txt": sub(BASE, "line 20\n", "P 20\n")}))],
        base,
    )
    path = upstream.path / ".git/patchq/main.json"
    _damage(path, how, "commits")
    before = snapshot(queue.path, upstream.path)
    for args in (("applied",), ("pop",)):
        r = patchq(*args)
        _one_line_naming(r, path, "stack record")
        assert snapshot(queue.path, upstream.path) == before
