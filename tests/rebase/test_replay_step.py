"""Replaying a patch is a step of what it is given: the tree before it, the patch and the
run. Nothing of one patch stays on the replay for the next, so the same patches stepped
again from the same tree — on the same replay, its caches warm, or on a new one — give
the same outcomes."""

from __future__ import annotations

from collections.abc import Callable

from patchq.rebase.replay import Replay, replayed, step_patch
from patchq.stack.apply import preimages
from patchq.stack.context import Context

from ..conftest import Queue, Result, Upstream
from .test_check_rebase import advance, make_patch, pin, sub

TEXT = "setup(\n  add_flags(-O2 -g)\n  run(ctx, old_name)\n)\n" + "".join(
    f"line {i}\n" for i in range(1, 41)
)


def test_a_patch_stepped_twice_from_the_same_tree_gives_the_same_outcome(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", TEXT).write("g.txt", TEXT)
    base = upstream.commit("base")
    patches = [
        # A word merge: upstream edits the same line at another word.
        ("word.patch", make_patch(upstream, "", {"f.txt": sub(TEXT, "-O2 -g", "-O3 -g")})),
        # An offset: upstream adds lines above it.
        ("offset.patch", make_patch(upstream, "", {"g.txt": sub(TEXT, "line 30\n", "x\n")})),
        # A conflict: upstream changes the very line the patch changes.
        ("clash.patch", make_patch(upstream, "", {"g.txt": sub(TEXT, "line 20\n", "y\n")})),
    ]
    pin(upstream, queue, patchq, patches, base)
    theirs = sub(sub(TEXT, "-O2 -g)", "-O2 -g -fPIC)"), "line 20\n", "z\n")
    onto = advance(
        upstream,
        "upstream",
        {"f.txt": theirs, "g.txt": "top\n" * 5 + sub(TEXT, "line 20\n", "z\n")},
    )
    ctx = Context(dir=queue.path, target=upstream.path)
    g, repo = ctx.git(), ctx.repo()
    entries = repo.series.patches
    g.writer(dry_run=True)

    def start() -> Replay:
        pre = preimages(g, repo, base, entries)
        return Replay.start(g, repo, base, onto, fuzz=0, preimage=pre, conflict_trees=False)

    rp = start()
    tree = rp.tree()
    first = [res for _, res in replayed(rp, entries)]
    assert [p.status for p in first] == ["merge", "offset", "conflict"]
    assert first[0].hunks[0].method == "word"
    # Each patch stepped twice from the tree the one before it left, on the same run.
    for entry, want in zip(entries, first, strict=True):
        once, after = step_patch(rp, tree, entry)
        twice, again = step_patch(rp, tree, entry)
        assert once == twice == want and after == again == want.tree
        tree = after
    # A new run, from the same tree.
    assert [res for _, res in replayed(start(), entries)] == first
