"""`check` against several upstream refs at once, and `check --watch`: what is new, fixed
or still broken since the last watch, recorded in the patch repo's watch.json."""

from __future__ import annotations

import json

from ..conftest import Queue, Runner, Upstream
from ..rebase.test_check_rebase import BASE, make_patch, pin, sub


def _two_refs(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    """A patch on line 20 of f.txt, and two upstream branches: `stable` inserts a header
    (the patch is an offset there), `nightly` rewrites line 20 (a conflict)."""
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    patch = make_patch(upstream, "Change line 20\n\n", {"f.txt": sub(BASE, "line 20\n", "X\n")})
    pin(upstream, queue, patchq, [("p.patch", patch)], base)
    for branch, text in (
        ("stable", "# header\n" + BASE),
        ("nightly", sub(BASE, "line 20\n", "line twenty\n")),
    ):
        upstream.git("checkout", "-q", "-b", branch, base)
        upstream.write("f.txt", text)
        upstream.commit(f"{branch} moves")
    upstream.git("checkout", "-q", "patchq/main")


def test_check_several_refs_reports_each_and_the_worst_exit(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    _two_refs(upstream, queue, patchq)
    one = patchq("check", "--onto", "stable", "--json")
    assert one.code == 1 and "refs" not in json.loads(one.out)  # one ref: as ever
    r = patchq("check", "--onto", "stable", "--onto", "nightly", "--json")
    assert r.code == 3
    doc = json.loads(r.out)
    assert [x["onto_ref"] for x in doc["refs"]] == ["stable", "nightly"]
    assert [x["patches"][0]["status"] for x in doc["refs"]] == ["offset", "conflict"]
    assert doc["refs"][0] | {"onto_ref": None} == json.loads(one.out) | {"onto_ref": None}
    text = patchq("check", "--onto", "stable", "--onto", "nightly").out
    assert "(stable)" in text and "(nightly)" in text


def test_watch_reports_only_what_changed(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    _two_refs(upstream, queue, patchq)
    first = patchq("check", "--watch", "--onto", "stable", "--onto", "nightly", "--json")
    assert first.code == 3, first.err
    doc = json.loads(first.out)
    assert {(c["ref"], c["patch"], c["now"]) for c in doc["new"]} == {
        ("stable", "p.patch", "offset"),
        ("nightly", "p.patch", "conflict"),
    }
    state = json.loads((queue.path / "watch.json").read_text())
    assert state["seen"] == {"nightly": {"p.patch": "conflict"}, "stable": {"p.patch": "offset"}}

    # The same again: nothing new, both counted as still broken, exit 0.
    again = patchq("check", "--watch", "--onto", "stable", "--onto", "nightly")
    assert again.code == 0, again.err
    assert (
        again.out == "nothing new on stable, nightly; 2 findings still as the last watch recorded\n"
    )

    # nightly is fixed upstream (the line comes back), stable moves its header: only the
    # fix is news; a ref not checked this time keeps what was recorded for it.
    upstream.git("checkout", "-q", "nightly")
    upstream.write("f.txt", BASE)
    upstream.commit("nightly reverts line 20")
    upstream.git("checkout", "-q", "patchq/main")
    r = patchq("check", "--watch", "--onto", "nightly", "--json")
    assert r.code == 0
    doc = json.loads(r.out)
    assert doc["new"] == [] and doc["still"] == 0
    assert doc["fixed"] == [
        {"ref": "nightly", "patch": "p.patch", "now": None, "before": "conflict"}
    ]
    state = json.loads((queue.path / "watch.json").read_text())
    assert state["seen"] == {"nightly": {}, "stable": {"p.patch": "offset"}}


def test_a_damaged_watch_state_is_bad_input(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    _two_refs(upstream, queue, patchq)
    (queue.path / "watch.json").write_text('{"seen": 3}\n')
    r = patchq("check", "--watch", "--onto", "stable")
    assert r.code == 4 and "watch.json" in r.err and r.err.count("\n") == 1
    assert (queue.path / "watch.json").read_text() == '{"seen": 3}\n'
