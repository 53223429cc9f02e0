"""`check`, `rebase` and `report` agree per hunk.

One series whose patches drift in every way a rebase meets — offset, a plain 3-way
merge, zealous, word, delete-wins, anchored, a conflict a person resolves (in a file whose other
hunk merges by itself), upstreamed — replayed by `check --json`, by `rebase` (with
`--continue` after the resolution) and read back by `report --format json`: each hunk
has the same status and method in all three, and the lock's `methods` say the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..conftest import Queue, Result, Upstream
from .test_check_rebase import BLOCKS, DELETED, advance, check_json, make_patch, pin, resolve, sub

LINES = "".join(f"line {i}\n" for i in range(1, 41))
CALLS = "setup(\n  add_flags(-O2 -g)\n  run(ctx, old_name)\n)\n" + LINES
# Two edits far apart in one file: the first merges by itself, the second conflicts.
SPLIT = "".join(f"entry {i}\n" for i in range(1, 41))
ANCHOR = "void start(void)\n{\n  init_clock();\n  init_bus();\n  load_config();\n}\n" + "".join(
    f"/* filler {i} */\n" for i in range(20)
)

Kind = tuple[str, str, str, str, str]  # patch, file, base text, patch's text, upstream's


KINDS: list[Kind] = [
    ("offset.patch", "a.txt", LINES, sub(LINES, "line 20\n", "LINE 20\n"), "new\n" * 5 + LINES),
    (
        "merge.patch",
        "b.txt",
        LINES,
        sub(LINES, "line 20\n", "LINE 20\n"),
        sub(LINES, "line 18\n", "LINE 18\n"),
    ),
    (
        "zealous.patch",
        "c.txt",
        BLOCKS,
        sub(BLOCKS, 'message(STATUS "cuda")', 'message(STATUS "CUDA on")'),
        sub(BLOCKS, 'if(CUDA)\n  set(ARCHS "90a")', 'if(CUDA)\n  set(ARCHS "90a;100a")'),
    ),
    (
        "word.patch",
        "d.txt",
        CALLS,
        sub(CALLS, "-O2 -g", "-O3 -g"),
        sub(CALLS, "-O2 -g)", "-O2 -g -fPIC)"),
    ),
    (
        "delete-wins.patch",
        "h.txt",
        DELETED,
        sub(DELETED, "legacy_init(1);\nlegacy_init(2);\n", ""),
        sub(DELETED, "legacy_init(2);", "legacy_init(2, FLAGS);"),
    ),
    (
        "anchored.patch",
        "e.c",
        ANCHOR,
        sub(ANCHOR, "  init_bus();\n", "  init_bus();\n  init_gpu();\n"),
        sub(ANCHOR, "  load_config();\n", "  if (read_settings(path) < 0)\n    return;\n"),
    ),
    (
        "resolved.patch",
        "f.txt",
        SPLIT,
        sub(sub(SPLIT, "entry 5\n", "ENTRY 5\n"), "entry 30\n", "entry 30 = mine\n"),
        sub(sub(SPLIT, "entry 3\n", "ENTRY 3\n"), "entry 30\n", "entry 30 = theirs\n"),
    ),
    (
        "upstreamed.patch",
        "g.txt",
        LINES,
        sub(LINES, "line 7\n", "line 7 fixed\n"),
        sub(sub(LINES, "line 7\n", "line 7 fixed\n"), "line 30\n", "LINE 30\n"),
    ),
]


Hunks = dict[tuple[str, str, int], tuple[str, str, tuple[str, ...]]]


def _per_hunk(patches: list[dict[str, Any]]) -> Hunks:
    """Each hunk's (status, method, drift), by patch, file and index."""
    return {
        (p["name"], h["file"], h["index"]): (h["status"], h["method"], tuple(h["drift"]))
        for p in patches
        for h in p["hunks"]
    }


def test_check_rebase_and_report_agree_per_hunk(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    for _, path, start, _, _ in KINDS:
        upstream.write(path, start)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [
            (name, make_patch(upstream, f"Subject: {name}\n\n", {path: mine}))
            for name, path, _, mine, _ in KINDS
        ],
        base,
    )
    # Two upstream commits, so the drift each hunk names is telling too.
    first = advance(upstream, "first half", {p: t for _, p, _, _, t in KINDS[:4]})
    second = advance(upstream, "second half", {p: t for _, p, _, _, t in KINDS[4:]})

    code, doc = check_json(patchq)
    assert code == 3
    checked = _per_hunk(doc["patches"])
    # What each kind is, as check reports it.
    assert {k: v[:2] for k, v in checked.items()} == {
        ("offset.patch", "a.txt", 0): ("offset", "offset"),
        ("merge.patch", "b.txt", 0): ("merge", "merge"),
        ("zealous.patch", "c.txt", 0): ("merge", "zealous"),
        ("word.patch", "d.txt", 0): ("merge", "word"),
        ("delete-wins.patch", "h.txt", 0): ("merge", "delete-wins"),
        ("anchored.patch", "e.c", 0): ("merge", "anchored"),
        # The file's other hunk is no conflict: it merges by itself.
        ("resolved.patch", "f.txt", 0): ("merge", "merge"),
        ("resolved.patch", "f.txt", 1): ("conflict", ""),
        ("upstreamed.patch", "g.txt", 0): ("upstreamed", "upstreamed"),
    }

    # The finer methods are proposals (DESIGN §4.1): accepted here, so that only the
    # conflict stops.
    r = patchq("rebase", "--onto", "main", "--json", "--accept", "all")
    assert r.code == 3 and "resolved.patch" in r.err
    shown = upstream.read("f.txt").decode()
    assert shown.count("<<<<<<< ") == 1 and "ENTRY 5\n" in shown  # the merged hunk is in
    resolve(upstream.path / "f.txt", "entry 30 = mine, theirs\n")
    r = patchq("rebase", "--continue", "--json")
    assert r.code == 1, r.err  # done, with accepted proposals to review
    assert "accepted proposal" in r.err
    rebased = _per_hunk(json.loads(r.out)["patches"])
    assert rebased == checked
    assert {d for _, _, drift in checked.values() for d in drift} == {first, second}

    review = json.loads(patchq("report", "--format", "json").out)
    assert _per_hunk(review["patches"]) == checked
    lock = json.loads(queue.lock())
    # (the lock writes `methods` only where a hunk was placed other than exactly or by
    # an offset)
    methods = {
        (p["name"], k): m for p in lock["patches"] for k, m in enumerate(p.get("methods", []))
    }
    checked_methods = {(n, k): m for (n, _, k), (_, m, _) in checked.items()}
    assert methods == {k: m for k, m in checked_methods.items() if k[0] != "offset.patch"}
    assert {p["name"]: p.get("accepted", []) for p in lock["patches"]} == {
        "offset.patch": [],
        "merge.patch": [],
        "zealous.patch": ["zealous"],
        "word.patch": ["word"],
        "delete-wins.patch": ["delete-wins"],
        "anchored.patch": ["anchored"],
        "resolved.patch": [],  # a person resolved it
        "upstreamed.patch": [],
    }

    # Only the hunk the person edited is a hand resolution in the review's words.
    text = patchq("report").out
    assert text.count("conflict, resolved by hand") == 1
    assert "f.txt hunk #2: conflict, resolved by hand" in text
    assert "f.txt hunk #1: 3-way merged (by" in text
    assert text.count("new hunk in f.txt (resolved by hand)") == 1
