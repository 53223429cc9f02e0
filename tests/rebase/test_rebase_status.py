"""`status` and `series -v` tell a stopped rebase as it is: the new base,
the patches replayed onto it with their outcomes, the one it stopped at and those still to
come — not the old stack the rebase is replacing.
"""

from __future__ import annotations

import json

from ..conftest import Queue, Runner, Upstream

A = "".join(f"line {i}\n" for i in range(1, 41))


def one_line(n: int, new: str) -> str:
    return (
        f"--- a/f.txt\n+++ b/f.txt\n@@ -{n - 1},3 +{n - 1},3 @@\n"
        f" line {n - 1}\n-line {n}\n+{new}\n line {n + 1}\n"
    )


def stopped_rebase(up: Upstream, q: Queue, patchq) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Four patches applied; upstream takes p0's change and edits p2's line: the rebase
    replays p0 (upstreamed) and p1, stops at p2, and has p3 to come."""
    up.write("f.txt", A)
    base = up.commit("base")
    q.add("p0.patch", one_line(3, "LINE 3"))
    q.add("p1.patch", one_line(10, "LINE 10"))
    q.add("p2.patch", one_line(20, "LINE 20"))
    q.add("p3.patch", one_line(35, "LINE 35"))
    q.add("guarded.patch", one_line(38, "LINE 38"), " #+never")
    assert patchq("apply", "--onto", base).code == 0
    up.git("checkout", "-q", "main")
    up.write("f.txt", A.replace("line 3\n", "LINE 3\n").replace("line 20\n", "Line twenty\n"))
    onto = up.commit("upstream takes p0 and edits line 20")
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3, r.err
    return base, onto


def test_status_tells_the_stopped_rebase_not_the_old_stack(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    base, onto = stopped_rebase(upstream, queue, patchq)
    r = patchq("status")
    assert r.code == 0
    assert r.out == (
        f"rebase of patchq/main onto {onto[:12]} (main) from {base[:12]}: 2 replayed, "
        "stopped at p2.patch, 1 to come\n"
        "replayed: 1 unchanged, 1 upstreamed; last p1.patch\n"
        "stopped at: p2.patch (conflict in f.txt)\n"
        # upstream rewrote the one line p2 changes
        f"fixed differently upstream? upstream changed every line it changes ({onto[:12]}): "
        "`patchq rebase --skip` drops it\n"
        "to come: p3.patch\n"
        "guards: (none)\n"
        "changes in the working tree: f.txt\n"
        "in progress: rebase (`patchq rebase --continue` or `--abort`)\n"
    )
    # applied, unapplied and top say the same as status.
    assert patchq("applied").out == "p1.patch\n"
    assert patchq("unapplied").out == "p2.patch\np3.patch\n"
    assert patchq("top").out == "p1.patch\n"
    doc = json.loads(patchq("status", "--json").out)
    # base, applied and unapplied are the rebase's: the new base and the rebased stack so far.
    assert (doc["base"], doc["applied"], doc["unapplied"]) == (
        onto,
        ["p1.patch"],
        ["p2.patch", "p3.patch"],
    )
    assert doc["operation"] == "rebase"
    assert doc["rebase"] == {
        "branch": "patchq/main",
        "from": base,
        "onto": onto,
        "onto_ref": "main",
        "replayed": [
            {"name": "p0.patch", "outcome": "upstreamed"},
            {"name": "p1.patch", "outcome": "unchanged"},
        ],
        "stopped": {
            "name": "p2.patch",
            "files": ["f.txt"],
            "proposals": [],
            "rewritten": {
                "commits": [onto],
                "added_present": False,
                "drop": "patchq rebase --skip",
            },
        },
        "todo": ["p3.patch"],
        "reorder": None,
    }


def test_series_v_marks_the_rebase_and_json_names_each_state(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    _, onto = stopped_rebase(upstream, queue, patchq)
    r = patchq("series", "-v")
    assert r.out == "- p0.patch\n+ p1.patch\n! p2.patch\n  p3.patch\n# guarded.patch #+never\n"
    assert r.err == (
        f"rebase in progress onto {onto[:12]} (main): + replayed, - upstreamed or dropped, "
        "! stopped at, blank still to come\n"
    )
    doc = json.loads(patchq("series", "--json").out)
    assert [(p["name"], p["state"], p.get("outcome")) for p in doc["patches"]] == [
        ("p0.patch", "left", "upstreamed"),
        ("p1.patch", "replayed", "unchanged"),
        ("p2.patch", "stopped", None),
        ("p3.patch", "to-come", None),
        ("guarded.patch", "guarded", None),
    ]
    assert doc["rebase"]["stopped"]["name"] == "p2.patch"
    # Once the rebase is over, the marks are the stack's again (the patches that left the
    # series are comments in it now).
    assert patchq("rebase", "--skip").code == 0
    assert json.loads(patchq("status", "--json").out)["rebase"] is None
    assert patchq("series", "-v").out == "+ p1.patch\n= p3.patch\n# guarded.patch #+never\n"


def test_series_json_without_a_rebase(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    upstream.write("f.txt", A)
    base = upstream.commit("base")
    queue.add("p1.patch", one_line(10, "LINE 10")).add("p2.patch", one_line(20, "LINE 20"))
    assert patchq("apply", "--onto", base).code == 0
    assert patchq("pop").code == 0
    doc = json.loads(patchq("series", "--json").out)
    assert doc == {
        "patches": [
            {"name": "p1.patch", "state": "top", "guards": []},
            {"name": "p2.patch", "state": "unapplied", "guards": []},
        ],
        "rebase": None,
    }
    assert patchq("series", "-v").err == ""
