from __future__ import annotations

import sys
from pathlib import Path

from ..conftest import Queue, Runner, Upstream
from .test_push_tiers import CALLS, NEXT, OTHER, P, THEIRS


def say(*a: object) -> None:
    sys.__stderr__.write(" ".join(map(str, a)) + "\n")


def test_x(upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    upstream.write("f.txt", CALLS).write("g.txt", "g\n").write("h.txt", "h\n")
    old = upstream.commit("base")
    queue.add("o.patch", OTHER).add("p.patch", P).add("n.patch", NEXT)
    assert patchq("apply", "--onto", old).code == 0
    upstream.git("checkout", "-q", "main")
    upstream.write("f.txt", THEIRS)
    upstream.commit("build position-independent")
    for args in (("check", "--onto", "main"), ("rebase", "--onto", "main"), ("status",), ("series", "-v"), ("rebase", "--continue"), ("report",)):
        r = patchq(*args)
        say(">>", args, r.code, r.out, r.err)
    assert 0
