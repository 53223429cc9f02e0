"""`rename` and `delete` keep series.lock true: `verify` passes right after.

A rename is the same bytes under a new name, so the lock's record follows the name with
its hash unchanged, and the series line keeps its strip level, guards and comment as
written. A delete removes the patch's record and recomputes the locked result by
replaying the rest of the series on the lock's base in memory; where the rest no longer
applies without it, the lock is left as it was and the command says so.
"""

from __future__ import annotations

import json

from ..conftest import Queue, Runner, Upstream


def _lock(queue: Queue) -> dict[str, object]:
    doc = json.loads(queue.lock())
    assert isinstance(doc, dict)
    return doc


def _three(upstream: Upstream, queue: Queue, patchq: Runner, *, chained: bool = False) -> str:
    """Three patches on one file, applied and locked; `chained`: the second edits the
    line the first wrote, so it needs the first."""
    text = "".join(f"line {i}\n" for i in range(40))
    upstream.write("f.txt", text)
    base = upstream.commit("base")
    edits = [("line 5\n", "LINE 5\n"), ("line 20\n", "LINE 20\n"), ("line 35\n", "LINE 35\n")]
    if chained:
        edits[1] = ("LINE 5\n", "LINE FIVE\n")
    for i, (old, new) in enumerate(edits):
        text = text.replace(old, new)
        upstream.write("f.txt", text)
        upstream.commit(f"patch {i}")
        queue.add(f"p{i}.patch", upstream.git("format-patch", "--stdout", "-1"))
    (queue.path / "series").write_text(
        "# my series\np0.patch\np1.patch   -p1   # needs p0, see the bug\np2.patch\n"
    )
    upstream.git("checkout", "-q", base)
    r = patchq("apply", "--onto", base)
    assert r.code == 0, r.err
    assert patchq("pop", "-a").code == 0
    return base


def test_rename_keeps_the_line_and_renames_the_record(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    _three(upstream, queue, patchq)
    before = _lock(queue)
    r = patchq("rename", "p1.patch", "middle.patch")
    assert r.code == 0, r.err
    assert (
        queue.series()
        == "# my series\np0.patch\nmiddle.patch   -p1   # needs p0, see the bug\np2.patch\n"
    )
    after = _lock(queue)
    old = {p["name"]: p for p in before["patches"]}  # type: ignore[attr-defined]
    new = {p["name"]: p for p in after["patches"]}  # type: ignore[attr-defined]
    assert list(new) == ["p0.patch", "middle.patch", "p2.patch"]
    assert new["middle.patch"]["sha256"] == old["p1.patch"]["sha256"]
    assert after["result_tree"] == before["result_tree"]
    v = patchq("verify")
    assert v.code == 0, v.err + v.out


def test_delete_drops_the_record_and_recomputes_the_result(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    _three(upstream, queue, patchq)
    before = _lock(queue)
    r = patchq("delete", "p1.patch")
    assert r.code == 0, r.err
    assert "series.lock not updated" not in r.err
    after = _lock(queue)
    assert [p["name"] for p in after["patches"]] == ["p0.patch", "p2.patch"]  # type: ignore[attr-defined]
    assert after["result_tree"] != before["result_tree"]
    v = patchq("verify")
    assert v.code == 0, v.err + v.out
    # The result is the series without p1: applied afresh, it gives the same lock.
    assert patchq("apply").code == 0
    assert _lock(queue)["result_tree"] == after["result_tree"]


def test_delete_leaves_the_lock_when_the_rest_needs_the_patch(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    _three(upstream, queue, patchq, chained=True)
    before = queue.lock()
    r = patchq("delete", "p0.patch")
    assert r.code == 0, r.err
    assert "series.lock not updated: patches/p1.patch no longer applies exactly" in r.err
    assert queue.lock() == before
    assert patchq("verify").code == 1  # the series changed; the lock says what was reviewed


def test_apply_honours_the_fuzz_placements_the_lock_pins(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    """A series pinned with `apply --fuzz 1` applies again on the lock's base with a
    plain `apply`, as `verify` re-places it; on another base the configured fuzz rules."""
    upstream.write("f.txt", "".join(f"{i}\n" for i in range(1, 31)))
    base = upstream.commit("base")
    body = " Y\n 9\n 10\n-11\n+ELEVEN\n 12\n 13\n 14\n"
    queue.add("a.patch", "--- a/f.txt\n+++ b/f.txt\n@@ -8,7 +8,7 @@\n" + body)
    r = patchq("apply", "--onto", base)
    assert r.code == 3 and "applies with fuzz 1" in r.err
    assert patchq("apply", "--onto", base, "--fuzz", "1").code == 0
    pinned = queue.lock()
    assert b'"fuzz": 1' in pinned
    r = patchq("apply")
    assert r.code == 0, r.err
    assert queue.lock() == pinned and patchq("verify").code == 0
    upstream.git("checkout", "-q", "main")
    moved = upstream.write("other.txt", "x\n").commit("elsewhere")
    r = patchq("apply", "--onto", moved)
    assert r.code == 3 and "applies with fuzz 1" in r.err


def test_apply_never_rewrites_what_was_reviewed(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    """An edited patch still applies, is named (one line a patch) and the lock is left as
    reviewed, so `verify` fails and names `apply --pin`; `--pin` re-pins, and so does
    `--onto` another base."""
    base = _three(upstream, queue, patchq)
    pinned = queue.lock()
    path = queue.path / "patches" / "p1.patch"
    path.write_text(path.read_text().replace("+LINE 20", "+LINE TWENTY"))
    r = patchq("apply")
    assert r.code == 0, r.err
    assert "patchq: patches/p1.patch: differs from its hash in series.lock" in r.err
    assert r.err.count("differs from its hash") == 1
    assert queue.lock() == pinned
    v = patchq("verify")
    assert v.code == 1 and "`patchq apply --pin`" in v.err + v.out
    r = patchq("apply", "--pin")
    assert r.code == 0 and "differs" not in r.err
    assert queue.lock() != pinned and patchq("verify").code == 0
    # Onto another base the lock is written anew, as a new pin.
    upstream.git("checkout", "-q", "-b", "other", base)
    moved = upstream.write("other.txt", "x\n").commit("elsewhere")
    assert patchq("apply", "--onto", moved).code == 0
    assert json.loads(queue.lock())["base"] == moved
    assert base != moved
