"""What follows a `push --merge` onto another base than the lock's (issue 24 points 4
and 5): a reorder of the stack once a laddered patch was refreshed there, the stop's
refusals of a rebase, an apply and a refresh below it, and a patch upstream fixed
differently named with its upstream commits and the one command that drops it. End to
end through the CLI on real repositories."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Queue, Runner, Upstream
from .test_push_tiers import word_setup


def test_a_sink_after_a_laddered_patch_was_refreshed_on_another_base_is_done(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # push --merge put the stack on the new upstream and `refresh` wrote p.patch there:
    # its file no longer applies on series.lock's (old) base. The sink works on the
    # stack; the lock, pinned on the old base, is left as refresh leaves it, and one line
    # says so and names the command that pins the series on the stack's base — before,
    # the sink failed with "p.patch: patch does not apply … rebase it", exit 3.
    word_setup(upstream, queue, patchq, tmp_path)
    old = upstream.git("rev-parse", "main~1").strip()
    new = upstream.git("rev-parse", "main").strip()
    assert patchq("push", "-a", "--merge", "--accept", "word").code == 1
    assert patchq("refresh", "p.patch").code == 0
    lock = queue.lock()
    r = patchq("sink", "n.patch")
    assert r.code == 0, r.err
    assert "sank n.patch to the bottom of the series" in r.err
    said = (
        f"series.lock not updated: patches/p.patch no longer applies exactly on its base "
        f"{old[:12]} (the stack is on {new[:12]}; `patchq apply --onto {new[:12]} --force` "
        "pins the series there)"
    )
    assert said in r.err, r.err
    assert queue.series() == "n.patch\no.patch\np.patch\n"
    assert queue.lock() == lock
    assert patchq("applied").out == "n.patch\no.patch\np.patch\n"
    assert upstream.git("status", "--porcelain") == ""
    # The way out it names works: the series is pinned on the stack's base.
    r = patchq("apply", "--onto", new[:12], "--force")
    assert r.code == 0, r.err
    assert patchq("verify").code == 0
