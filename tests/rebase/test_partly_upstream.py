""" "Already upstream" means the whole change (DESIGN §4.1).

A hunk is upstream only if every line it removes is gone and every line it adds is there,
in order, where the alignment maps it — and a patch is `upstreamed` only as a whole. The
property: for random patches and upstreams that took a strict subset of the change,
patchq never drops the rest silently — the rebase applies the missing part or stops.
End to end: a patch upstream took one hunk of stops the rebase (exit 3) with that hunk
named and the rest applied in the tree, no markers; `check` does not say "alone".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from difflib import SequenceMatcher
from pathlib import Path

from hypothesis import assume, event, example, given
from hypothesis import strategies as st

from patchq.core import placement
from patchq.core.hunks import diff
from patchq.core.status import CONFLICT, MISSING

from ..conftest import Queue, Result, Upstream, run_patchq
from ..core.test_properties import Lab, budget
from ..strategies import Case, edited, files
from .test_check_rebase import advance, make_patch, pin, sub

# --- the property -------------------------------------------------------------------------


@st.composite
def partial_upstreams(draw: st.DrawFn) -> Case:
    """A unique-line file, a downstream edit of it, and an upstream that made a strict
    part of that edit: some change blocks whole, some not at all, some in part (a strict
    subset of the lines a block adds, or some of the lines it removes kept)."""
    base = draw(files(True, min_size=6))
    ours = draw(edited(base, "ours", True))
    ops = [op for op in SequenceMatcher(None, base, ours, autojunk=False).get_opcodes()]
    theirs: list[bytes] = []
    took_all, took_any = True, False
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            theirs += base[i1:i2]
            continue
        how = draw(st.sampled_from(["none", "all", "part"]))
        if how == "all":
            theirs += ours[j1:j2]
            took_any = True
        elif how == "none":
            theirs += base[i1:i2]
            took_all = False
        else:
            keep_old = draw(st.lists(st.booleans(), min_size=i2 - i1, max_size=i2 - i1))
            keep_new = draw(st.lists(st.booleans(), min_size=j2 - j1, max_size=j2 - j1))
            old = [x for x, k in zip(base[i1:i2], keep_old, strict=True) if k]
            new = [x for x, k in zip(ours[j1:j2], keep_new, strict=True) if k]
            theirs += new + old if draw(st.booleans()) else old + new
            took_all = took_all and not old and len(new) == j2 - j1
            took_any = took_any or bool(new) or len(old) < i2 - i1
    assume(took_any and not took_all and theirs not in (base, ours))
    return Case(base, ours, theirs, True)


_LINES = [b"line %d\n" % i for i in range(10)]


def test_a_partly_upstreamed_change_is_never_dropped_silently(tmp_path: Path) -> None:
    """Upstream made part of the patch's change. With unique lines the right result is
    the patch's own file, so a replay that finishes must give exactly that; anything else
    (the rest dropped as "already upstream", or a line duplicated) must be a stop."""
    lab = Lab(tmp_path)

    @budget(150)
    @given(partial_upstreams(), st.sampled_from([0, 0, 2]))
    # Found by the property: upstream joined its own text to the patch's last line
    # (which had no newline); the word merge's result is a proposal, not done alone.
    @example(
        Case(
            _LINES[:9] + [b"line 9"],
            _LINES + [b"ours 0.0\n"],
            _LINES[:9] + [b"line 9", b"line 9\n"],
            True,
        ),
        0,
    )
    def prop(case: Case, fuzz: int) -> None:
        # A proposal (a word merge, say) stops the rebase for review (DESIGN §4.1): only
        # what patchq does alone must be the patch's own file.
        status, result, _ = lab.replay_noting(case, fuzz, review_stops=True)
        event(f"replay: {status}")
        if status in (CONFLICT, MISSING, "review"):
            return
        assert result == b"".join(case.ours), (status, result)

    prop()


# --- the hunk test itself -----------------------------------------------------------------


def held(base: str, ours: str, up: str) -> bool:
    pre, new, cur = (x.encode().splitlines(keepends=True) for x in (base, ours, up))
    (h,) = diff(b"".join(pre), b"".join(new))
    return placement.held(h, pre, cur, placement.Alignment(pre, cur))


BLOCK = "project(x)\nset(A 1)\nset(B 2)\nset(C 3)\nif(UNIX)\n  set(U 1)\nendif()\nset(D 4)\n"


def test_held_wants_every_added_line_in_order() -> None:
    ours = sub(BLOCK, "set(C 3)\n", "set(C 3)\nif(WIN32)\n  set(E 5)\nendif()\n")
    # The whole block as the patch adds it: held.
    assert held(BLOCK, ours, ours.replace("project(x)", "project(x VERSION 2)"))
    # Upstream took the `if(` and its body but not the `endif()`: the `endif()` of the
    # block below must not stand in for it.
    assert not held(BLOCK, ours, sub(ours, "  set(E 5)\nendif()\n", "  set(E 5)\n"))
    # The same lines out of order: not held.
    assert not held(BLOCK, ours, sub(ours, "if(WIN32)\n  set(E 5)\n", "  set(E 5)\nif(WIN32)\n"))


def test_held_refuses_a_declaration_that_would_be_there_twice() -> None:
    base = "int a;\nint b;\nvoid f(void)\n{\n\tcall();\n}\n"
    ours = sub(base, "\tcall();\n", "\tint extra;\n\tcall();\n")
    # Upstream has the declaration twice near the spot: not the patch's change.
    up = sub(base, "int b;\n", "int b;\n\tint extra;\n").replace("call();", "call2();")
    up = sub(up, "\tcall2();\n", "\tint extra;\n\tcall2();\n")
    assert not held(base, ours, up)
    assert held(base, ours, sub(ours, "int a;\n", "int a0;\n"))


# --- end to end -----------------------------------------------------------------------------

BASE = "".join(f"line {i}\n" for i in range(1, 41))


def two_hunks(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> str:
    """A patch changing line 5 and line 30 (two hunks); upstream then makes only the
    line 5 change. Returns the upstream commit."""
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    ours = sub(sub(BASE, "line 5\n", "LINE 5\n"), "line 30\n", "LINE 30\n")
    p = make_patch(upstream, "Two changes\n\n", {"f.txt": ours})
    pin(upstream, queue, patchq, [("p.patch", p)], base)
    return advance(upstream, "take the first change", {"f.txt": sub(BASE, "line 5\n", "LINE 5\n")})


def test_a_patch_upstream_took_one_hunk_of_stops_with_that_hunk_named(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    two_hunks(upstream, queue, patchq)
    d = str(queue.path)
    r = run_patchq("--dir", d, "check", "--onto", "main", "--json")
    assert r.code == 3, (r.out, r.err)
    (p,) = json.loads(r.out)["patches"]
    assert p["status"] == "conflict"
    assert [h["status"] for h in p["hunks"]] == ["conflict", "clean"]
    text = run_patchq("--dir", d, "check", "--onto", "main")
    assert "alone" not in text.out
    r = run_patchq("--dir", d, "rebase", "--onto", "main")
    assert r.code == 3, (r.out, r.err)
    assert "f.txt:5 (hunk #1) by upstreamed (upstream already holds this hunk" in r.err
    assert "conflict" not in r.err
    # The rest of the patch is applied in the tree, no markers: the proposal to review.
    assert upstream.read("f.txt").decode() == sub(
        sub(BASE, "line 5\n", "LINE 5\n"), "line 30\n", "LINE 30\n"
    )
    r = run_patchq("--dir", d, "rebase", "--continue")
    assert r.code == 0, (r.out, r.err)
    doc = json.loads(queue.lock())
    assert [x["rebase"] for x in doc["patches"]] == ["resolved"]
    # Recorded with its methods (DESIGN §4.1): the hunk upstream holds as `upstreamed`,
    # not as a hunk placed by no method.
    assert [x["methods"] for x in doc["patches"]] == [["upstreamed", "exact"]]
    assert b"+LINE 30" in (queue.path / "patches" / "p.patch").read_bytes()


def test_a_patch_upstream_took_whole_is_still_upstreamed(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    ours = sub(sub(BASE, "line 5\n", "LINE 5\n"), "line 30\n", "LINE 30\n")
    p = make_patch(upstream, "Two changes\n\n", {"f.txt": ours})
    pin(upstream, queue, patchq, [("p.patch", p)], base)
    advance(upstream, "take both", {"f.txt": ours})
    r = run_patchq("--dir", str(queue.path), "rebase", "--onto", "main")
    assert r.code == 0, (r.out, r.err)
    assert [x["rebase"] for x in json.loads(queue.lock())["patches"]] == ["upstreamed"]


def test_a_conflict_beside_a_hunk_upstream_holds_names_that_hunk_once_as_a_proposal(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream made the patch's first change and changed the second one's line its own
    # way: the stop is a conflict in f.txt for the second hunk, and names the first as
    # the `upstreamed` proposal it is — once, not also as a conflict note.
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    ours = sub(sub(BASE, "line 5\n", "LINE 5\n"), "line 30\n", "LINE 30\n")
    pin(
        upstream,
        queue,
        patchq,
        [("p.patch", make_patch(upstream, "Two\n\n", {"f.txt": ours}))],
        base,
    )
    theirs = sub(sub(BASE, "line 5\n", "LINE 5\n"), "line 30\n", "line thirty\n")
    advance(upstream, "take one, change the other", {"f.txt": theirs})
    r = run_patchq("--dir", str(queue.path), "rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "p.patch does not apply to" in r.err and "conflict in f.txt" in r.err
    assert "; proposed: f.txt:5 (hunk #1) by upstreamed (upstream already holds" in r.err
    assert "f.txt hunk #1: already upstream" not in r.err
    assert r.err.count("hunk #1") == 1
