"""A hunk that would put a line upstream just added there twice is not placed alone
(DESIGN §4.1 "Trust": what patchq cannot prove it proposes and stops).

When upstream added, near the spot a patch's hunk lands, a line the hunk adds — a line the
pinned base did not hold as often — upstream made (part of) the change itself: placing
the hunk by exact, offset or git's merge gives a file with that line twice, which is not
the maintainer's refresh (the refresh corpus: a build flag upstream took, the patch
applied again on top). The rebase stops at the patch, the line named, the hunk applied in
the tree without markers; `rebase --skip` drops it. A line the pinned base already held
as often (the patch meant to repeat it) is no such sign. End to end on real repositories.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from patchq.core import placement

from ..conftest import Queue, Result, Upstream, run_patchq
from .test_check_rebase import advance, make_patch, pin, sub

LINES = "".join(f"set(VAR_{i} {i})\n" for i in range(1, 31))
FLAG = "list(APPEND EXTRA_FLAGS -DQUIET_WARNINGS)\n"


def cli(queue: Queue, *args: str) -> Result:
    return run_patchq("--dir", str(queue.path), *args)


def pinned(upstream: Upstream, queue: Queue, patchq: Callable[..., Result], base: str) -> None:
    """The patch adds FLAG after VAR_12 of `base`, pinned on it."""
    upstream.write("CMakeLists.txt", base)
    at = upstream.commit("base")
    mine = sub(base, "set(VAR_12 12)\n", "set(VAR_12 12)\n" + FLAG)
    p = make_patch(upstream, "", {"CMakeLists.txt": mine})
    pin(upstream, queue, patchq, [("p.patch", p)], at)


def test_a_hunk_whose_added_line_upstream_just_added_nearby_stops(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    pinned(upstream, queue, patchq, LINES)
    # Upstream takes the flag a few lines lower, and adds lines above (the hunk moves).
    new = sub(LINES, "set(VAR_15 15)\n", "set(VAR_15 15)\n" + FLAG)
    new = sub(new, "set(VAR_2 2)\n", "set(VAR_2 2)\nset(NEW_A 1)\nset(NEW_B 2)\n")
    advance(upstream, "quiet the warnings", {"CMakeLists.txt": new})
    r = cli(queue, "check", "--onto", "main", "--json")
    assert r.code == 3, (r.out, r.err)
    (p,) = json.loads(r.out)["patches"]
    assert [h["status"] for h in p["hunks"]] == ["conflict"]
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 3, (r.out, r.err)
    assert "upstream added 'list(APPEND EXTRA_FLAGS -DQUIET_WARNINGS)' near here" in r.err
    # The hunk is in the tree, no markers: the person sees the line twice and decides.
    got = upstream.read("CMakeLists.txt").decode()
    assert got.count(FLAG) == 2 and "<<<<<<<" not in got
    r = cli(queue, "rebase", "--skip")
    assert r.code == 0, (r.out, r.err)
    assert upstream.read("CMakeLists.txt").decode() == new
    assert [x["rebase"] for x in json.loads(queue.lock())["patches"]] == ["dropped"]


def test_a_line_the_pinned_base_held_as_often_is_no_sign(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # The base holds FLAG once, lower down; the patch adds it a second time. Upstream only
    # shifts the block: the flag is there as often as on the pinned base.
    base = sub(LINES, "set(VAR_16 16)\n", "set(VAR_16 16)\n" + FLAG)
    pinned(upstream, queue, patchq, base)
    advance(upstream, "more", {"CMakeLists.txt": sub(base, "set(VAR_2 2)\n", "set(VAR_2 2)\nx\n")})
    r = cli(queue, "rebase", "--onto", "main")
    assert r.code == 0, (r.out, r.err)
    assert upstream.read("CMakeLists.txt").decode().count(FLAG) == 2
    assert [x["rebase"] for x in json.loads(queue.lock())["patches"]] == ["refreshed"]


def test_only_worded_lines_count() -> None:
    assert placement.worded_line(FLAG.encode())
    assert placement.worded_line(b"  return 0;\n")
    for line in (b"}\n", b"esac\n", b"fi\n", b"done;\n", b"  ],\n", b"\n"):
        assert not placement.worded_line(line), line
