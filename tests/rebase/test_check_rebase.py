"""`check` and `rebase` end to end on real repositories (DESIGN §2–§4).

Each test builds an upstream, a series pinned on it by `apply`, then moves upstream on
`main` (as a fetch would) and checks what `check` says and what `rebase` does.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from patchq.core import tiers

from ..conftest import Queue, Result, Upstream

BASE = "".join(f"line {i}\n" for i in range(1, 41))
DESIGN_HUNK_KEYS = {"file", "status", "offset", "fuzz", "drift"}


# --- builders -------------------------------------------------------------------------


def make_patch(up: Upstream, header: str, edits: dict[str, str | bytes | None]) -> bytes:
    """The `git diff` of `edits` on the upstream's checkout (then undone), after `header`.

    `index` lines are dropped, so the 3-way step can only use the lock's pinned base."""
    for name, data in edits.items():
        if data is None:
            (up.path / name).unlink()
        else:
            up.write(name, data)
    up.git("add", "-A")
    diff = up.diff("--cached", "--no-renames")
    up.git("reset", "-q", "--hard")
    diff = re.sub(rb"(?m)^index [0-9a-f]+\.\.[0-9a-f]+( \d+)?\n", b"", diff)
    return header.encode() + diff


def advance(
    up: Upstream,
    subject: str,
    edits: Mapping[str, str | bytes | None],
    rename: tuple[str, str] | None = None,
) -> str:
    """One upstream commit on `main`, made without disturbing the target's checkout."""
    back = up.git("symbolic-ref", "-q", "--short", "HEAD").strip()
    up.git("checkout", "-q", "main")
    if rename:
        (up.path / rename[1]).parent.mkdir(parents=True, exist_ok=True)
        up.git("mv", *rename)
    for name, data in edits.items():
        if data is None:
            up.remove(name)
        else:
            up.write(name, data)
    oid = up.commit(subject)
    if back and back != "main":
        up.git("checkout", "-q", back)
    return oid


def sub(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def pin(
    up: Upstream,
    queue: Queue,
    patchq: Callable[..., Result],
    patches: list[tuple[str, bytes]],
    base: str,
) -> None:
    for name, data in patches:
        queue.add(name, data)
    r = patchq("apply", "--onto", base)
    assert r.code == 0, r.err


def check_json(
    patchq: Callable[..., Result], *args: str, onto: str = "main"
) -> tuple[int, dict[str, Any]]:
    r = patchq("check", "--onto", onto, "--json", *args)
    assert r.code in (0, 1, 3) and r.err == "", r.err
    doc = json.loads(r.out)
    assert set(doc) == {"base", "onto", "patches", "commands", "target", "accept"}
    for p in doc["patches"]:
        assert set(p) == {
            "name",
            "status",
            "hunks",
            "normalisations",
            "evidence",
            "hints",
            "rewritten",
        }
        for h in p["hunks"]:
            assert DESIGN_HUNK_KEYS <= set(h)
    return r.code, doc


def project(doc: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """The DESIGN §3 keys of a check report, for exact comparison."""
    return [
        (p["name"], p["status"], [{k: h[k] for k in sorted(DESIGN_HUNK_KEYS)} for h in p["hunks"]])
        for p in doc["patches"]
    ]


def hunk(
    file: str, status: str, drift: list[str], offset: int = 0, fuzz: int = 0
) -> dict[str, Any]:
    return {"file": file, "status": status, "offset": offset, "fuzz": fuzz, "drift": drift}


def lock(queue: Queue) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(queue.lock())
    return doc


def outcomes(queue: Queue) -> dict[str, str]:
    return {p["name"]: p["rebase"] for p in lock(queue)["patches"]}


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under the roots (the target's .git included), hashed."""
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.is_symlink():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif p.is_symlink():
                out[str(p)] = "link:" + str(p.readlink())
    return out


@pytest.fixture
def one(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> str:
    """f.txt pinned with one patch changing line 20 (context 17–19 and 21–23); the base."""
    upstream.write("f.txt", BASE).write("g.txt", "other\n")
    base = upstream.commit("base")
    p = make_patch(upstream, "Change line 20\n\n", {"f.txt": sub(BASE, "line 20\n", "LINE 20\n")})
    pin(upstream, queue, patchq, [("p.patch", p)], base)
    return base


# Each upstream history: (edits per commit, expected status, check exit, indices of the
# commits expected in the hunk's drift, offset, fuzz, extra check args, rebase outcome).
STATUS_CASES: dict[
    str,
    tuple[
        list[tuple[str, dict[str, str | None]]], str, int, list[int], int, int, tuple[str, ...], str
    ],
] = {
    "clean": (
        [("touch another file", {"g.txt": "other 2\n"})],
        "clean",
        0,
        [],
        0,
        0,
        (),
        "unchanged",
    ),
    "offset": (
        [
            ("insert three lines at the top", {"f.txt": "a\nb\nc\n" + BASE}),
            ("edit far below", {"f.txt": "a\nb\nc\n" + sub(BASE, "line 38\n", "L38\n")}),
        ],
        "offset",
        1,
        [0],
        3,
        0,
        (),
        "refreshed",
    ),
    "fuzz": (
        [("edit an outer context line", {"f.txt": sub(BASE, "line 17\n", "L17\n")})],
        "fuzz",
        1,
        [0],
        0,
        1,
        # Fuzz during a rebase is a proposal (DESIGN §4.1): accepted here.
        ("--fuzz", "1", "--accept", "fuzz"),
        "refreshed",
    ),
    "merge": (
        [("edit an outer context line", {"f.txt": sub(BASE, "line 17\n", "L17\n")})],
        "merge",
        1,
        [0],
        0,
        0,
        (),
        "merged",
    ),
    "conflict": (
        [
            ("unrelated", {"g.txt": "x\n"}),
            # The same word as the patch, differently: no word-level merge either.
            ("edit the very line", {"f.txt": sub(BASE, "line 20\n", "Line twenty\n")}),
        ],
        "conflict",
        3,
        [1],
        0,
        0,
        (),
        "conflict",
    ),
    "upstreamed": (
        [("take the patch", {"f.txt": sub(BASE, "line 20\n", "LINE 20\n")})],
        "upstreamed",
        1,
        [0],
        0,
        0,
        (),
        "upstreamed",
    ),
    "missing": (
        [("unrelated", {"g.txt": "x\n"}), ("remove f.txt", {"f.txt": None})],
        "missing",
        3,
        [1],
        0,
        0,
        (),
        "conflict",
    ),
}


@pytest.mark.parametrize("case", list(STATUS_CASES))
def test_each_check_status(
    one: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result], case: str
) -> None:
    commits_, status, code, blame, offset, fuzz, args, outcome = STATUS_CASES[case]
    commits = [advance(upstream, subject, edits) for subject, edits in commits_]
    head = commits[-1]
    got, doc = check_json(patchq, *args)
    assert got == code, doc
    assert doc["base"] == one and doc["onto"] == head
    assert project(doc) == [
        ("p.patch", status, [hunk("f.txt", status, [commits[i] for i in blame], offset, fuzz)])
    ]
    # The text report names the drift commits with their subjects, and exits the same.
    r = patchq("check", "--onto", "main", *args)
    assert r.code == code
    for i in blame:
        assert f"{commits[i][:12]} {commits_[i][0]}" in r.out
    # A dry run predicts the rebase outcome, and the rebase does it.
    r = patchq("rebase", "--onto", "main", "--dry-run", *args)
    assert r.out.split() == [outcome, "p.patch"], r.out
    r = patchq("rebase", "--onto", "main", *args)
    assert r.code == (3 if outcome == "conflict" else 1 if "--accept" in args else 0), r.err
    if outcome == "upstreamed":
        assert outcomes(queue) == {"p.patch": "upstreamed"}
        assert queue.series().startswith("# upstreamed in ")
    elif outcome != "conflict":
        assert outcomes(queue) == {"p.patch": outcome}
        assert lock(queue)["patches"][0]["drift"] == [commits[i] for i in blame]
        assert patchq("verify").code == 0


@pytest.fixture
def six(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> tuple[str, dict[str, str]]:
    """Six patches on six files, and an upstream move giving each rebase outcome.

    Returns the old base and the upstream commit behind each file's drift."""
    for f in "abcdeh":
        upstream.write(f"{f}.txt", BASE)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [
            (
                f"{f}.patch",
                make_patch(
                    upstream,
                    f"Patch {f}\n\n",
                    {f"{f}.txt": sub(BASE, "line 20\n", f"{f.upper()} 20\n")},
                ),
            )
            for f in "abcdeh"
        ],
        base,
    )
    who = {
        "b": advance(upstream, "b: insert lines above", {"b.txt": "x\ny\n" + BASE}),
        "c": advance(
            upstream, "c: edit an outer context line", {"c.txt": sub(BASE, "line 17\n", "L17\n")}
        ),
        "d": advance(
            upstream, "d: edit the patched line", {"d.txt": sub(BASE, "line 20\n", "Line twenty\n")}
        ),
        "e": advance(upstream, "e: merge our patch", {"e.txt": sub(BASE, "line 20\n", "E 20\n")}),
        "h": advance(
            upstream, "h: edit the patched line", {"h.txt": sub(BASE, "line 20\n", "Line XX\n")}
        ),
    }
    return base, who


def resolve(path: Path, text: str) -> None:
    """Replace every conflict block in `path` by `text`, as a person would."""
    data = path.read_text()
    assert "<<<<<<< " in data
    path.write_text(re.sub(r"<<<<<<< .*?>>>>>>> [^\n]*\n", text, data, flags=re.S))


def test_rebase_outcomes_lock_and_exact_reapply(
    six: tuple[str, dict[str, str]], upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base, who = six
    onto = upstream.git("rev-parse", "main").strip()
    code, doc = check_json(patchq)
    assert code == 3
    assert [(p["name"], p["status"]) for p in doc["patches"]] == [
        ("a.patch", "clean"),
        ("b.patch", "offset"),
        ("c.patch", "merge"),
        ("d.patch", "conflict"),
        ("e.patch", "upstreamed"),
        ("h.patch", "conflict"),
    ]
    assert {p["name"]: p["hunks"][0]["drift"] for p in doc["patches"]} == {
        "a.patch": [],
        **{f"{f}.patch": [who[f]] for f in "bcdeh"},
    }

    r = patchq("rebase", "--onto", "main")
    assert r.code == 3
    assert "d.patch" in r.err and "d.txt" in r.err and who["d"][:12] in r.err
    assert "d: edit the patched line" in r.err
    assert r.err.splitlines()[:3] == [
        " unchanged a.patch",
        " refreshed b.patch",
        "    merged c.patch",
    ]
    assert r.err.splitlines()[3].startswith("patchq: patches/d.patch: ")
    resolve(upstream.path / "d.txt", "line twenty and D\n")

    r = patchq("rebase", "--continue")
    assert r.code == 3 and "h.patch" in r.err
    r = patchq("rebase", "--skip")
    assert r.code == 0, r.err
    assert [x.split() for x in r.err.splitlines()[:6]] == [
        ["unchanged", "a.patch"],
        ["refreshed", "b.patch"],
        ["merged", "c.patch"],
        ["resolved", "d.patch"],
        ["upstreamed", "e.patch"],
        ["dropped", "h.patch"],
    ]
    report = patchq("report").out
    assert f"h.txt hunk #1: conflict, the patch was skipped (by {who['h'][:12]}" in report
    assert f"e.txt hunk #1: already upstream, dropped (by {who['e'][:12]}" in report

    assert outcomes(queue) == {
        "a.patch": "unchanged",
        "b.patch": "refreshed",
        "c.patch": "merged",
        "d.patch": "resolved",
        "e.patch": "upstreamed",
        "h.patch": "dropped",
    }
    lk = lock(queue)
    assert lk["base"] == onto
    assert lk["last_rebase"] == {"from": base, "onto": onto, "onto_ref": "main"}
    assert {p["name"]: p["drift"] for p in lk["patches"]} == {
        "a.patch": [],
        "b.patch": [who["b"]],
        "c.patch": [who["c"]],
        "d.patch": [who["d"]],
        "e.patch": [who["e"]],
        "h.patch": [who["h"]],
    }
    assert queue.series() == (
        "a.patch\nb.patch\nc.patch\nd.patch\n"
        f"# upstreamed in {who['e'][:12]}: e.patch\n"
        f"# dropped in {onto[:12]}: h.patch\n"
    )
    # The target ends as after `push -a`: the stack branch at the rebased top, clean.
    assert upstream.git("symbolic-ref", "--short", "HEAD").strip() == "patchq/main"
    assert upstream.git("status", "--porcelain") == ""
    assert upstream.git("rev-parse", "HEAD^{tree}").strip() == lk["result_tree"]
    assert upstream.read("d.txt") == sub(BASE, "line 20\n", "line twenty and D\n").encode()
    assert (
        upstream.read("c.txt")
        == sub(sub(BASE, "line 17\n", "L17\n"), "line 20\n", "C 20\n").encode()
    )
    stack = json.loads((upstream.path / ".git/patchq/main.json").read_text())
    assert stack["base"] == onto and stack["applied"] == [
        "a.patch",
        "b.patch",
        "c.patch",
        "d.patch",
    ]
    assert patchq("verify").code == 0
    # The rebased series applies exactly on the new base and gives the same tree.
    r = patchq("apply", "--onto", onto, "--json")
    assert r.code == 0, r.err
    applied = json.loads(r.out)
    assert [p["status"] for p in applied["patches"]] == ["exact"] * 4
    assert applied["tree"] == lk["result_tree"]
    assert patchq("verify").code == 0
    # check against the new base now finds nothing to do.
    code, doc = check_json(patchq)
    assert code == 0 and {p["status"] for p in doc["patches"]} == {"clean"}


def core(a: int, b: int) -> str:
    return "".join(f"line {i}\n" for i in range(a, b + 1))


def test_fuzz_never_takes_a_context_that_matches_twice(
    one: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream edits the hunk's outer context line and pastes a copy of its inner lines
    # (18–22) higher up: with fuzz 1 the shortened hunk matches in two places.
    new = core(18, 22) + sub(BASE, "line 17\n", "L17\n")
    edit = advance(upstream, "edit context, copy the block", {"f.txt": new})
    code, doc = check_json(patchq, "--fuzz", "3")
    assert code == 1
    assert project(doc) == [("p.patch", "merge", [hunk("f.txt", "merge", [edit])])]
    assert doc["patches"][0]["hunks"][0]["fuzz"] == 0
    r = patchq("rebase", "--onto", "main", "--fuzz", "3")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"p.patch": "merged"}
    # The change went to the real block (3-way, from the pinned base), not to the copy.
    assert upstream.read("f.txt").decode() == sub(
        new, "L17\nline 18\nline 19\nline 20\n", "L17\nline 18\nline 19\nLINE 20\n"
    )


@pytest.mark.parametrize(
    "edited,status,exit_code",
    [("line 17\n", "merge", 0), ("line 19\n", "merge", 1), ("line 20\n", "conflict", 3)],
)
def test_offset_never_moves_a_hunk_into_a_copy(
    one: str,
    upstream: Upstream,
    queue: Queue,
    patchq: Callable[..., Result],
    edited: str,
    status: str,
    exit_code: int,
) -> None:
    # Upstream edits a context line in place and pastes an untouched copy of the hunk's
    # lines (17–23) at the top: the only exact match is the copy, the wrong place. The
    # pinned base tells: a clean 3-way merge (edit away from the change, or next to it:
    # zealous) or a conflict (the changed line itself) — never an offset into the copy.
    new = core(17, 23) + sub(BASE, edited, "EDITED\n")
    edit = advance(upstream, "edit context, copy the block", {"f.txt": new})
    # (next to the change, the merge is zealous: a proposal, accepted here — exit 1)
    code, doc = check_json(patchq, "--accept", "all")
    assert code == (1 if status == "merge" else 3)
    assert project(doc) == [("p.patch", status, [hunk("f.txt", status, [edit])])]
    r = patchq("rebase", "--onto", "main", "--accept", "all")
    assert r.code == exit_code, r.err
    text = upstream.read("f.txt").decode()
    assert text.startswith(core(17, 23))  # the copy is left alone
    if status == "merge":
        assert outcomes(queue) == {"p.patch": "merged"}
        assert text == core(17, 23) + sub(sub(BASE, edited, "EDITED\n"), "line 20\n", "LINE 20\n")
    else:
        assert r.code == 3 and "p.patch" in r.err and edit[:12] in r.err
        assert text.count("<<<<<<< ") == 1 and text.index("<<<<<<< ") > len(core(17, 23))


BLOCKS = (
    'project(demo)\n\nif(CUDA)\n  set(ARCHS "90a")\n  message(STATUS "cuda")\nendif()\n\n'
    'if(ROCM)\n  set(ARCHS "90a")\n  message(STATUS "rocm")\nendif()\n'
)


def test_anchored_placement_never_picks_a_look_alike_in_another_block(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # The patch edits the CUDA block's ARCHS line; upstream edits that same line. The ROCm
    # block's identical line is now the only match: placing the change there would be a
    # guess into the wrong block, so it must stop at a conflict.
    upstream.write("CMakeLists.txt", BLOCKS)
    base = upstream.commit("base")
    cuda = 'if(CUDA)\n  set(ARCHS "90a")\n'
    pin(
        upstream,
        queue,
        patchq,
        [
            (
                "sm120.patch",
                make_patch(
                    upstream,
                    "",
                    {"CMakeLists.txt": sub(BLOCKS, cuda, 'if(CUDA)\n  set(ARCHS "90a;120a")\n')},
                ),
            )
        ],
        base,
    )
    edit = advance(
        upstream,
        "add sm100a",
        {"CMakeLists.txt": sub(BLOCKS, cuda, 'if(CUDA)\n  set(ARCHS "90a;100a")\n')},
    )
    code, doc = check_json(patchq)
    assert code == 3
    assert project(doc) == [
        ("sm120.patch", "conflict", [hunk("CMakeLists.txt", "conflict", [edit])])
    ]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3
    text = upstream.read("CMakeLists.txt").decode()
    assert text.endswith('if(ROCM)\n  set(ARCHS "90a")\n  message(STATUS "rocm")\nendif()\n')


def test_an_upstream_edit_right_next_to_the_change_composes_zealously(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream edits the line right above the one the patch changes: git's 3-way merge
    # conflicts (the changes touch), but they do not overlap, so both are kept.
    upstream.write("CMakeLists.txt", BLOCKS)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [
            (
                "msg.patch",
                make_patch(
                    upstream,
                    "",
                    {
                        "CMakeLists.txt": sub(
                            BLOCKS, 'message(STATUS "cuda")', 'message(STATUS "CUDA on")'
                        )
                    },
                ),
            )
        ],
        base,
    )
    moved = sub(BLOCKS, 'if(CUDA)\n  set(ARCHS "90a")', 'if(CUDA)\n  set(ARCHS "90a;100a")')
    edit = advance(upstream, "add sm100a", {"CMakeLists.txt": moved})
    code, doc = check_json(patchq)
    assert code == 3  # a proposal: a person looks first (DESIGN §4.1)
    assert project(doc) == [("msg.patch", "merge", [hunk("CMakeLists.txt", "merge", [edit])])]
    (h,) = doc["patches"][0]["hunks"]
    assert (h["method"], h["tier"], h["line"]) == ("zealous", "proposed", 5)
    # Its method's measured precision (core.tiers.MEASURED, as the table holds it) goes
    # with the proposal.
    assert h["proposal"] == {
        "method": "zealous",
        "precision": tiers.measured("zealous"),
        "evidence": "the 3-way merge conflicted; both sides' common lines were merged",
    }
    code, doc = check_json(patchq, "--accept", "zealous")
    assert code == 1 and doc["patches"][0]["hunks"][0]["tier"] == "accepted"
    # The rebase stops for review with the zealous merge in the tree, no markers.
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "msg.patch stops for review" in r.err
    assert "CMakeLists.txt:5 (hunk #1) by zealous" in r.err
    merged = sub(moved, 'message(STATUS "cuda")', 'message(STATUS "CUDA on")')
    assert upstream.read("CMakeLists.txt").decode() == merged
    text = patchq("status").out
    assert "stopped at: msg.patch (for review: proposals applied, no markers)" in text
    assert "proposed: CMakeLists.txt:5 (hunk #1) by zealous" in text
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"msg.patch": "resolved"}
    assert lock(queue)["patches"][0]["methods"] == ["zealous"]
    assert upstream.read("CMakeLists.txt").decode() == merged
    assert patchq("verify").code == 0


def test_a_file_renamed_upstream_is_followed(
    one: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    ren = advance(upstream, "move f.txt into src/", {}, rename=("f.txt", "src/f.txt"))
    code, doc = check_json(patchq)
    assert code == 1  # the patch must be rewritten for the new name: drift rebase handles
    assert [(p["name"], p["status"], [h["file"] for h in p["hunks"]]) for p in doc["patches"]] == [
        ("p.patch", "clean", ["src/f.txt"])
    ]
    r = patchq("check", "--onto", "main")
    assert r.code == 1 and "f.txt: renamed upstream to src/f.txt" in r.out
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"p.patch": "refreshed"}
    text = (queue.path / "patches/p.patch").read_text()
    assert text.startswith("Change line 20\n\n")
    assert "a/src/f.txt" in text and "b/src/f.txt" in text and " f.txt" not in text
    assert upstream.read("src/f.txt") == sub(BASE, "line 20\n", "LINE 20\n").encode()
    assert not (upstream.path / "f.txt").exists()
    onto = upstream.git("rev-parse", "main").strip()
    r = patchq("apply", "--onto", onto, "--json")
    assert r.code == 0 and [p["status"] for p in json.loads(r.out)["patches"]] == ["exact"]
    assert patchq("verify").code == 0
    assert lock(queue)["last_rebase"]["onto"] == ren


def test_a_renamed_and_edited_file_keeps_offsets_and_drift(
    one: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    advance(upstream, "move f.txt", {}, rename=("f.txt", "g/f.txt"))
    ins = advance(upstream, "insert above", {"g/f.txt": "new\n" + BASE})
    code, doc = check_json(patchq)
    assert code == 1
    assert project(doc) == [("p.patch", "offset", [hunk("g/f.txt", "offset", [ins], 1)])]
    assert patchq("rebase", "--onto", "main").code == 0
    assert outcomes(queue) == {"p.patch": "refreshed"}
    assert patchq("verify").code == 0


def test_a_partly_upstreamed_patch_keeps_only_the_rest(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    both = sub(sub(BASE, "line 5\n", "LINE 5\n"), "line 30\n", "LINE 30\n")
    p = make_patch(upstream, "Two fixes\n\n", {"f.txt": both})
    pin(upstream, queue, patchq, [("two.patch", p)], base)
    took = advance(upstream, "take the first fix", {"f.txt": sub(BASE, "line 5\n", "LINE 5\n")})
    # A patch is upstreamed only as a whole (DESIGN §4.1). Upstream took one hunk,
    # so the patch stops for review, the present hunk named and the rest in the tree.
    code, doc = check_json(patchq)
    assert code == 3
    assert project(doc) == [
        ("two.patch", "conflict", [hunk("f.txt", "conflict", [took]), hunk("f.txt", "clean", [])])
    ]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3, r.err
    # Named as the proposal it is (no markers in the tree): not as a conflict.
    assert "two.patch stops for review: 1 proposed hunk applied" in r.err
    assert (
        "f.txt:5 (hunk #1) by upstreamed (upstream already holds this hunk, but not the rest "
        f"of its patch; upstream: {took[:12]} take the first fix)"
    ) in r.err
    assert "conflict" not in r.err
    assert upstream.read("f.txt") == both.encode()
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"two.patch": "resolved"}
    assert lock(queue)["patches"][0]["drift"] == [took]
    new = (queue.path / "patches/two.patch").read_bytes()
    # The upstreamed hunk is gone, the other kept byte for byte with the header.
    assert new.startswith(b"Two fixes\n\n")
    assert b"LINE 5" not in new and new.count(b"@@ -") == 1
    old_hunk = p[p.index(b"@@ -27") :]
    assert new.endswith(old_hunk)
    assert upstream.read("f.txt") == both.encode()
    assert patchq("verify").code == 0


def test_two_patches_on_the_same_lines(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    first = sub(BASE, "line 20\n", "LINE 20\n")
    second = sub(first, "LINE 20\n", "LINE 20 again\n")
    p1 = make_patch(upstream, "", {"f.txt": first})
    upstream.write("f.txt", first)
    upstream.commit("scratch")
    p2 = make_patch(upstream, "", {"f.txt": second})
    upstream.git("reset", "-q", "--hard", base)
    pin(upstream, queue, patchq, [("1.patch", p1), ("2.patch", p2)], base)
    ins = advance(upstream, "insert above", {"f.txt": "top\n" + BASE})
    code, doc = check_json(patchq)
    # The second patch sees the first's result: both move by one line, neither conflicts.
    assert code == 1
    assert project(doc) == [
        ("1.patch", "offset", [hunk("f.txt", "offset", [ins], 1)]),
        ("2.patch", "offset", [hunk("f.txt", "offset", [ins], 1)]),
    ]
    assert patchq("rebase", "--onto", "main").code == 0
    assert outcomes(queue) == {"1.patch": "refreshed", "2.patch": "refreshed"}
    assert upstream.read("f.txt") == ("top\n" + second).encode()
    assert b"-LINE 20\n+LINE 20 again\n" in (queue.path / "patches/2.patch").read_bytes()
    onto = upstream.git("rev-parse", "main").strip()
    r = patchq("apply", "--onto", onto, "--json")
    assert [p["status"] for p in json.loads(r.out)["patches"]] == ["exact", "exact"]
    assert patchq("verify").code == 0


def test_the_second_patch_conflicts_with_what_upstream_did_to_the_first(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream takes patch 1 in a different spelling: patch 1 conflicts; once resolved to
    # upstream's spelling (no change left), patch 2 is checked against that tree.
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    first = sub(BASE, "line 20\n", "LINE 20\n")
    p1 = make_patch(upstream, "", {"f.txt": first})
    upstream.write("f.txt", first)
    upstream.commit("scratch")
    p2 = make_patch(upstream, "", {"f.txt": sub(first, "line 22\n", "LINE 22\n")})
    upstream.git("reset", "-q", "--hard", base)
    pin(upstream, queue, patchq, [("1.patch", p1), ("2.patch", p2)], base)
    edit = advance(upstream, "line 20, our way", {"f.txt": sub(BASE, "line 20\n", "Line 20\n")})
    code, doc = check_json(patchq)
    # check goes on with the conflicting patch as a person who keeps its change resolves
    # it, so it says of the next what the rebase will do.
    assert code == 3
    assert project(doc) == [
        ("1.patch", "conflict", [hunk("f.txt", "conflict", [edit])]),
        ("2.patch", "clean", [hunk("f.txt", "clean", [])]),
    ]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3 and "1.patch" in r.err
    resolve(upstream.path / "f.txt", "LINE 20\n")
    # The second patch now sees the first one's resolution: it applies as it was.
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"1.patch": "resolved", "2.patch": "unchanged"}
    assert (queue.path / "patches/2.patch").read_bytes() == p2
    assert (
        upstream.read("f.txt")
        == sub(sub(BASE, "line 20\n", "LINE 20\n"), "line 22\n", "LINE 22\n").encode()
    )
    assert patchq("verify").code == 0


CRLF = BASE.replace("\n", "\r\n").encode()


def test_crlf_bytes_survive_a_rebase(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("w.txt", CRLF)
    base = upstream.commit("base")
    ours = CRLF.replace(b"line 20\r\n", b"LINE 20\r\n")
    pin(
        upstream,
        queue,
        patchq,
        [("crlf.patch", make_patch(upstream, "CRLF\n\n", {"w.txt": ours}))],
        base,
    )
    moved = b"new\r\n" + CRLF.replace(b"line 17\r\n", b"L17\r\n").replace(
        b"line 40\r\n", b"line 40"
    )  # no newline at the end, too
    advance(upstream, "upstream edits", {"w.txt": moved})
    code, doc = check_json(patchq)
    assert code == 1 and doc["patches"][0]["status"] == "merge"
    assert patchq("rebase", "--onto", "main").code == 0
    want = moved.replace(b"line 20\r\n", b"LINE 20\r\n")
    assert upstream.read("w.txt") == want
    new = (queue.path / "patches/crlf.patch").read_bytes()
    assert b"-line 20\r\n+LINE 20\r\n" in new and b" L17\r\n" in new
    onto = upstream.git("rev-parse", "main").strip()
    r = patchq("apply", "--onto", onto, "--json")
    assert [p["status"] for p in json.loads(r.out)["patches"]] == ["exact"]
    assert upstream.read("w.txt") == want
    assert patchq("verify").code == 0


def test_crlf_conflict_resolution_keeps_its_bytes(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("w.txt", CRLF)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [
            (
                "crlf.patch",
                make_patch(upstream, "", {"w.txt": CRLF.replace(b"line 20\r\n", b"LINE 20\r\n")}),
            )
        ],
        base,
    )
    advance(upstream, "edit", {"w.txt": CRLF.replace(b"line 20\r\n", b"Line 20\r\n")})
    assert patchq("rebase", "--onto", "main").code == 3
    path = upstream.path / "w.txt"
    data = path.read_bytes()
    start, end = data.index(b"<<<<<<< "), data.index(b">>>>>>> ")
    end = data.index(b"\n", end) + 1
    path.write_bytes(data[:start] + b"LINE 20 too\r\n" + data[end:])
    assert patchq("rebase", "--continue").code == 0
    assert upstream.read("w.txt") == CRLF.replace(b"line 20\r\n", b"LINE 20 too\r\n")
    assert b"-Line 20\r\n+LINE 20 too\r\n" in (queue.path / "patches/crlf.patch").read_bytes()
    assert patchq("verify").code == 0


def test_abort_after_a_partial_rebase_restores_every_byte(
    six: tuple[str, dict[str, str]], upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    def state() -> tuple[dict[str, str], str, str, str]:
        # What the person resolved is remembered (resolutions/): an abort keeps it.
        files = {
            k: v
            for k, v in snapshot(queue.path, upstream.path).items()
            if "/.git/" not in k and "/resolutions/" not in k
        }
        stack = (upstream.path / ".git/patchq/main.json").read_text()
        return (
            files,
            upstream.git("symbolic-ref", "HEAD"),
            upstream.git("rev-parse", "HEAD", "patchq/main", "main"),
            stack,
        )

    before = state()
    index = upstream.git("ls-files", "-s")
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3
    resolve(upstream.path / "d.txt", "resolved\n")
    assert patchq("rebase", "--continue").code == 3  # stopped again, at h.patch
    assert "<<<<<<< " in (upstream.path / "h.txt").read_text()
    r = patchq("rebase", "--abort")
    assert r.code == 0, r.err
    assert state() == before
    assert len(list((queue.path / "resolutions").iterdir())) == 1
    assert upstream.git("ls-files", "-s") == index
    assert upstream.git("status", "--porcelain") == ""
    assert not (upstream.path / ".git/patchq/main.rebase.json").exists()
    assert patchq("verify").code == 0
    # Nothing is left in progress: a new rebase starts.
    assert patchq("rebase", "--onto", "main").code == 3


def test_continue_needs_the_markers_gone_and_no_git_add(
    six: tuple[str, dict[str, str]], upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    assert patchq("rebase", "--onto", "main").code == 3
    r = patchq("rebase", "--continue")
    assert r.code == 3 and "d.txt still has conflict markers" in r.err
    assert "<<<<<<< " in (upstream.path / "d.txt").read_text()
    # A second rebase while this one is in progress is refused, and changes nothing.
    r = patchq("rebase", "--onto", "main")
    assert r.code == 5 and "already in progress" in r.err
    assert "<<<<<<< " in (upstream.path / "d.txt").read_text()
    d = upstream.path / "d.txt"
    half = "".join(x for x in d.read_text().splitlines(True) if not x.startswith("<<<<<<< "))
    d.write_text(half)  # the opening marker gone, the others left behind
    r = patchq("rebase", "--continue")
    assert r.code == 3 and "d.txt still has conflict markers" in r.err
    d.write_text(sub(BASE, "line 20\n", "line 20 both\n"))
    assert upstream.git("diff", "--cached", "--name-only") == ""  # nothing staged by us
    assert patchq("rebase", "--continue").code == 3  # now at h.patch
    r = patchq("rebase", "--skip")
    assert r.code == 0, r.err
    assert outcomes(queue)["d.patch"] == "resolved"
    assert "+line 20 both\n" in (queue.path / "patches/d.patch").read_text()
    assert outcomes(queue)["h.patch"] == "dropped"
    r = patchq("rebase", "--continue")
    assert r.code == 4 and "no rebase in progress" in r.err


def test_unrefreshed_edits_refuse_a_rebase(
    one: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    advance(upstream, "move", {"f.txt": "top\n" + BASE})
    upstream.write("f.txt", "my edit\n")
    before = snapshot(queue.path)
    r = patchq("rebase", "--onto", "main")
    assert r.code == 5 and "f.txt" in r.err
    assert upstream.read("f.txt") == b"my edit\n"
    assert snapshot(queue.path) == before
    assert not (upstream.path / ".git/patchq/main.rebase.json").exists()


def test_dry_run_changes_nothing_and_reports_outcomes(
    six: tuple[str, dict[str, str]], upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    before = snapshot(queue.path, upstream.path)
    r = patchq("rebase", "--onto", "main", "--dry-run", "--json")
    assert r.code == 3
    doc = json.loads(r.out)
    assert [(p["name"], p["outcome"]) for p in doc["patches"]] == [
        ("a.patch", "unchanged"),
        ("b.patch", "refreshed"),
        ("c.patch", "merged"),
        ("d.patch", "conflict"),
        ("e.patch", "upstreamed"),
        ("h.patch", "conflict"),
    ]
    r = patchq("rebase", "--onto", "main", "--dry-run")
    assert r.code == 3 and "refreshed b.patch" in r.out
    code, _ = check_json(patchq)
    assert code == 3
    assert snapshot(queue.path, upstream.path) == before


def test_a_conflict_shows_and_keeps_the_patch_s_other_files(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # One patch: a new file, a clean edit of a.txt and a conflicting edit of f.txt. At the
    # conflict the person sees all three; --continue records all three, --abort removes all.
    upstream.write("f.txt", BASE).write("a.txt", BASE)
    base = upstream.commit("base")
    p = make_patch(
        upstream,
        "Three files\n\n",
        {
            "new.txt": "brand new\n",
            "a.txt": sub(BASE, "line 3\n", "LINE 3\n"),
            "f.txt": sub(BASE, "line 20\n", "LINE 20\n"),
        },
    )
    pin(upstream, queue, patchq, [("three.patch", p)], base)
    advance(upstream, "edit line 20", {"f.txt": sub(BASE, "line 20\n", "Line 20\n")})
    before = snapshot(queue.path, upstream.path)
    for attempt in ("abort", "continue"):
        r = patchq("rebase", "--onto", "main")
        assert r.code == 3, r.err
        assert upstream.read("new.txt") == b"brand new\n"
        assert upstream.read("a.txt") == sub(BASE, "line 3\n", "LINE 3\n").encode()
        assert "<<<<<<< " in upstream.read("f.txt").decode()
        if attempt == "abort":
            assert patchq("rebase", "--abort").code == 0
            assert upstream.git("status", "--porcelain") == ""
            after = snapshot(queue.path, upstream.path)
            assert {k: v for k, v in after.items() if "/.git/" not in k} == {
                k: v for k, v in before.items() if "/.git/" not in k
            }
            continue
        resolve(upstream.path / "f.txt", "LINE 20 and Line 20\n")
        r = patchq("rebase", "--continue")
        assert r.code == 0, r.err
    assert outcomes(queue) == {"three.patch": "resolved"}
    text = (queue.path / "patches/three.patch").read_text()
    assert text.startswith("Three files\n\n")
    assert "+brand new\n" in text and "+LINE 3\n" in text and "+LINE 20 and Line 20\n" in text
    assert upstream.git("status", "--porcelain") == ""
    assert upstream.git("ls-files", "new.txt").strip() == "new.txt"
    assert patchq("verify").code == 0


def test_a_p0_patch_stays_p0(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    body = make_patch(upstream, "", {"f.txt": sub(BASE, "line 20\n", "LINE 20\n")})
    p0 = body.replace(b"a/f.txt", b"f.txt").replace(b"b/f.txt", b"f.txt")
    queue.add("p0.patch", p0, " -p0")
    assert patchq("apply", "--onto", base).code == 0
    advance(upstream, "insert", {"f.txt": "top\n" + BASE})
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"p0.patch": "refreshed"}
    assert queue.series() == "p0.patch -p0\n"
    new = (queue.path / "patches/p0.patch").read_text()
    assert "--- f.txt\n+++ f.txt\n" in new and "a/f.txt" not in new
    assert patchq("verify").code == 0


def test_commits_made_on_the_stack_branch_outside_patchq_refuse_a_rebase(
    one: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    advance(upstream, "move", {"f.txt": "top\n" + BASE})
    upstream.write("g.txt", "committed, not refreshed\n")
    mine = upstream.commit("my fix, committed with git")
    r = patchq("rebase", "--onto", "main")
    assert r.code == 5 and "patchq/main" in r.err
    assert upstream.git("rev-parse", "patchq/main").strip() == mine


def test_rebase_in_a_fresh_clone_then_abort_then_finish(
    one: str, upstream: Upstream, queue: Queue, tmp_path: Path, patchq: Callable[..., Result]
) -> None:
    # A colleague's clone: the lock but no stack record and no stack branch, on main.
    advance(upstream, "edit line 20", {"f.txt": sub(BASE, "line 20\n", "Line 20\n")})
    clone = tmp_path / "clone"
    upstream.git("clone", "-q", "-b", "main", str(upstream.path), str(clone))
    t = ("--target", str(clone))
    r = patchq(*t, "rebase", "--onto", "origin/main")
    assert r.code == 3
    assert git_out(clone, "symbolic-ref", "--short", "HEAD") == "patchq/main"
    assert patchq(*t, "rebase", "--abort").code == 0
    assert git_out(clone, "symbolic-ref", "--short", "HEAD") == "main"
    assert git_out(clone, "branch", "--list", "patchq/main") == ""
    assert git_out(clone, "status", "--porcelain") == ""
    assert not (clone / ".git/patchq/main.json").exists()
    assert patchq(*t, "rebase", "--onto", "origin/main").code == 3
    resolve(clone / "f.txt", "LINE 20\n")
    assert patchq(*t, "rebase", "--continue").code == 0
    assert json.loads((clone / ".git/patchq/main.json").read_text())["applied"] == ["p.patch"]
    assert lock(queue)["last_rebase"]["onto_ref"] == "origin/main"


def git_out(cwd: Path, *args: str) -> str:
    from ..conftest import git

    return git(cwd, *args).strip()


def test_guarded_out_patches_are_left_alone(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    p = make_patch(upstream, "", {"f.txt": sub(BASE, "line 20\n", "LINE 20\n")})
    other = make_patch(upstream, "", {"f.txt": sub(BASE, "line 5\n", "LINE 5\n")})
    queue.add("on.patch", p)
    queue.add("off.patch", other, " #+rocm")
    assert patchq("apply", "--onto", base).code == 0
    advance(upstream, "insert", {"f.txt": "top\n" + BASE})
    code, doc = check_json(patchq)
    assert code == 1 and [x["name"] for x in doc["patches"]] == ["on.patch"]
    assert patchq("rebase", "--onto", "main").code == 0
    assert queue.series() == "on.patch\noff.patch #+rocm\n"
    assert (queue.path / "patches/off.patch").read_bytes() == other
    assert patchq("verify").code == 0


def test_new_and_deleted_files_already_upstream(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE).write("old.txt", "old\n")
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [
            ("add.patch", make_patch(upstream, "", {"new.txt": "new\n"})),
            ("del.patch", make_patch(upstream, "", {"old.txt": None})),
            ("clash.patch", make_patch(upstream, "", {"clash.txt": "ours\n"})),
        ],
        base,
    )
    took = advance(
        upstream, "take them", {"new.txt": "new\n", "old.txt": None, "clash.txt": "theirs\n"}
    )
    code, doc = check_json(patchq)
    assert code == 3
    assert project(doc) == [
        ("add.patch", "upstreamed", [hunk("new.txt", "upstreamed", [took])]),
        ("del.patch", "upstreamed", [hunk("old.txt", "upstreamed", [took])]),
        ("clash.patch", "conflict", [hunk("clash.txt", "conflict", [took])]),
    ]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3 and "clash.patch" in r.err
    assert upstream.read("clash.txt") == b"theirs\n"
    assert patchq("rebase", "--skip").code == 0
    assert outcomes(queue) == {
        "add.patch": "upstreamed",
        "del.patch": "upstreamed",
        "clash.patch": "dropped",
    }
    assert queue.series().splitlines()[2].startswith("# dropped in ")
    assert patchq("verify").code == 0


@pytest.mark.parametrize("how", ["take upstream's line", "file gone"])
def test_an_empty_resolution_is_refused_and_skip_drops_it(
    one: str, upstream: Upstream, queue: Queue, how: str, patchq: Callable[..., Result]
) -> None:
    if how == "file gone":
        advance(upstream, "remove f.txt", {"f.txt": None})
    else:
        advance(upstream, "edit line 20", {"f.txt": sub(BASE, "line 20\n", "Line 20\n")})
    assert patchq("rebase", "--onto", "main").code == 3
    if how != "file gone":
        resolve(upstream.path / "f.txt", "Line 20\n")
    r = patchq("rebase", "--continue")
    assert r.code == 3 and "changes nothing" in r.err and "--skip" in r.err
    assert patchq("rebase", "--skip").code == 0
    assert queue.series().startswith("# dropped in ")
    # The dropped patch's file leaves patches/: a build applying every file
    # there would pick it up.
    assert not (queue.path / "patches/p.patch").exists()
    assert patchq("verify").code == 0


def test_check_defaults_to_the_configured_branch_and_fuzz_is_refreshed_exactly(
    one: str, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    (queue.path / "patchq.toml").write_text(
        'target = "../upstream"\nbranch = "main"\nfuzz = 1\naccept = ["fuzz"]\n'
    )
    edit = advance(
        upstream, "edit an outer context line", {"f.txt": sub(BASE, "line 23\n", "L23\n")}
    )
    r = patchq("check", "--json")
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["onto"] == edit
    assert project(doc) == [("p.patch", "fuzz", [hunk("f.txt", "fuzz", [edit], 0, 1)])]
    assert doc["accept"] == ["fuzz"] and doc["patches"][0]["hunks"][0]["tier"] == "accepted"
    r = patchq("rebase")
    assert r.code == 1, r.err  # done: the accepted proposal is to review
    assert "p.patch (fuzz)" in r.err
    assert "accepted proposal: fuzz" in r.out + r.err
    assert outcomes(queue) == {"p.patch": "refreshed"}
    assert lock(queue)["patches"][0]["accepted"] == ["fuzz"]
    assert lock(queue)["last_rebase"]["onto_ref"] == "main"
    assert " L23\n" in (queue.path / "patches/p.patch").read_text()
    r = patchq("apply", "--onto", edit, "--fuzz", "0", "--json")
    assert [p["status"] for p in json.loads(r.out)["patches"]] == ["exact"]
    assert patchq("verify").code == 0


def test_apply_after_a_rebase_keeps_the_lock_in_series_order(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    first = make_patch(upstream, "First\n\n", {"f.txt": sub(BASE, "line 5\n", "LINE 5\n")})
    second = make_patch(upstream, "Second\n\n", {"f.txt": sub(BASE, "line 30\n", "LINE 30\n")})
    pin(upstream, queue, patchq, [("a.patch", first), ("b.patch", second)], base)
    advance(upstream, "take the first fix", {"f.txt": sub(BASE, "line 5\n", "LINE 5\n")})
    assert patchq("rebase", "--onto", "main").code == 0
    before = queue.lock()
    assert [p["name"] for p in lock(queue)["patches"]] == ["a.patch", "b.patch"]
    assert patchq("apply").code == 0
    # Re-applying the same series on the same base writes the same lock, byte for byte.
    assert queue.lock() == before


def test_a_rename_onto_a_file_upstream_added_is_a_conflict_never_an_overwrite(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("a.txt", BASE)
    base = upstream.commit("base")
    mv = b"diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n"
    pin(upstream, queue, patchq, [("mv.patch", mv)], base)
    theirs = advance(upstream, "upstream adds its own b.txt", {"b.txt": "upstream's b\n"})
    code, doc = check_json(patchq)
    assert code == 3
    assert doc["patches"][0]["status"] == "conflict"
    assert "b.txt already exists upstream" in doc["patches"][0]["hunks"][0]["reason"]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3
    assert upstream.git("show", "main:b.txt") == "upstream's b\n"
    assert patchq("rebase", "--abort").code == 0
    del theirs


CALLS = "setup(\n  add_flags(-O2 -g)\n  run(ctx, old_name)\n)\n" + BASE
DELETED = "keep\nlegacy_init(1);\nlegacy_init(2);\nend\n" + BASE


@pytest.mark.parametrize(
    "start,mine,theirs,method,result",
    [
        (
            CALLS,
            sub(CALLS, "-O2 -g", "-O3 -g"),
            sub(CALLS, "-O2 -g)", "-O2 -g -fPIC)"),
            "word",
            sub(CALLS, "-O2 -g)", "-O3 -g -fPIC)"),
        ),
        (
            DELETED,
            sub(DELETED, "legacy_init(1);\nlegacy_init(2);\n", ""),
            sub(DELETED, "legacy_init(2);", "legacy_init(2, FLAGS);"),
            "delete-wins",
            sub(DELETED, "legacy_init(1);\nlegacy_init(2);\n", ""),
        ),
    ],
    ids=["word", "delete-wins"],
)
def test_finer_merges_are_recorded_and_reviewable(
    upstream: Upstream,
    queue: Queue,
    patchq: Callable[..., Result],
    start: str,
    mine: str,
    theirs: str,
    method: str,
    result: str,
) -> None:
    """A merge git would leave as a conflict, settled by a finer method: `check` says how
    (exit 1: a person should look), rebase applies it and the lock records the method."""
    upstream.write("f.txt", start)
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.txt": mine}))], base)
    advance(upstream, "upstream edit", {"f.txt": theirs})
    assert check_json(patchq)[0] == 3  # a proposal, not accepted
    code, doc = check_json(patchq, "--accept", method)
    assert code == 1, doc
    (h,) = doc["patches"][0]["hunks"]
    assert (h["status"], h["method"], h["tier"]) == ("merge", method, "accepted")
    if method == "delete-wins":
        assert "legacy_init(2, FLAGS);" in h["reason"]  # what it discards is shown
    text = patchq("check", "--onto", "main")
    assert f"merge by {method}" in text.out
    r = patchq("rebase", "--onto", "main", "--accept", method)
    assert r.code == 1, r.err
    assert upstream.read("f.txt").decode() == result
    lock = json.loads((queue.path / "series.lock").read_text())
    assert lock["patches"][0]["methods"] == [method]
    assert patchq("verify").code == 0
    # The review says how, in text and JSON, so a reviewer reads these hunks.
    assert f"3-way merged, by {method} — check it" in patchq("report").out
    review = json.loads(patchq("report", "--format", "json").out)
    assert [h["method"] for h in review["patches"][0]["hunks"]] == [method]


def test_a_block_upstream_rewrote_around_the_patch_change_is_upstreamed_by_content(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    """Upstream took the change in its own rewrite of the block: reverse-applying fails
    (the context changed), but within the block the alignment maps the hunk to, the
    added line is there and the removed one gone. The same line far away proves nothing."""
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    fix = sub(BASE, "line 20\n", "LINE 20 fixed\n")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.txt": fix}))], base)
    rewritten = sub(BASE, "line 19\nline 20\nline 21\n", "line 19!\nLINE 20 fixed\nline 21!\n")
    advance(upstream, "rewrite the block, with the fix", {"f.txt": rewritten})
    code, doc = check_json(patchq)
    (h,) = doc["patches"][0]["hunks"]
    assert (h["status"], h["method"]) == ("upstreamed", "upstreamed"), doc
    assert "already holds its change" in h["reason"]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"p.patch": "upstreamed"}
    assert upstream.read("f.txt").decode() == rewritten


def test_the_patch_line_elsewhere_in_the_file_is_not_upstreamed(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    fix = sub(BASE, "line 20\n", "LINE 20 fixed\n")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.txt": fix}))], base)
    far = sub(BASE, "line 19\nline 20\nline 21\n", "x 19\ny 20\nz 21\n") + "LINE 20 fixed\n"
    advance(upstream, "rewrite the block; the line appears at the end", {"f.txt": far})
    code, doc = check_json(patchq)
    assert code == 3, doc
    assert doc["patches"][0]["hunks"][0]["status"] == "conflict"


def older_series(upstream: Upstream) -> tuple[str, str, bytes, bytes]:
    """A base with f.txt and g.txt, and two patches: the first made for an older release
    (its outer context line is not the base's: it applies only with fuzz), the second
    elsewhere. Returns the base, g.txt's text and the two patches."""
    gbase = "".join(f"g {i}\n" for i in range(1, 41))
    upstream.write("f.txt", BASE).write("g.txt", gbase)
    base = upstream.commit("base")
    older = sub(BASE, "line 7\n", "line seven\n")
    upstream.write("f.txt", older)
    upstream.commit("the older release the first patch was made for")
    first = make_patch(upstream, "First\n\n", {"f.txt": sub(older, "line 10\n", "LINE 10\n")})
    second = make_patch(upstream, "Second\n\n", {"g.txt": sub(gbase, "g 20\n", "G 20\n")})
    upstream.git("reset", "-q", "--hard", base)
    return base, gbase, first, second


def test_a_series_applied_with_fuzz_pins_every_later_patch_for_the_merge(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # An old series made for an older release than its base, as distributions carry
    # them: the first patch's outer context line is not the base's, so it applies only
    # with `--fuzz`. The pinned pre-images must be the series as it applied there, so the
    # later patch still merges when upstream deletes a context line next to its change
    # (before, the pinning stopped at the fuzzed patch and every later merge conflicted).
    base, gbase, first, second = older_series(upstream)
    for name, data in (("a.patch", first), ("b.patch", second)):
        queue.add(name, data)
    assert patchq("apply", "--onto", base).code == 3  # fuzz 0 refuses a.patch
    r = patchq("apply", "--onto", base, "--fuzz", "1", "--json")
    assert r.code == 0, r.err
    assert [p["status"] for p in json.loads(r.out)["patches"]] == ["fuzz", "exact"]
    g_new = sub(sub(gbase, "g 18\n", ""), "g 22\n", "g 22 (edited)\n")
    f_new = sub(BASE, "line 12\n", "line 12 (edited)\n")
    edit = advance(upstream, "edit lines near both changes", {"g.txt": g_new, "f.txt": f_new})
    code, doc = check_json(patchq)
    assert code == 1
    # Each merges against the pinned series: the fuzzed patch too (its pre-image and
    # post-image as `apply --fuzz` made them), with git's plain 3-way merge.
    assert [(h["file"], h["status"], h["method"]) for p in doc["patches"] for h in p["hunks"]] == [
        ("f.txt", "merge", "merge"),
        ("g.txt", "merge", "merge"),
    ]
    assert doc["patches"][1]["hunks"][0]["drift"] == [edit]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert outcomes(queue) == {"a.patch": "merged", "b.patch": "merged"}
    assert upstream.read("g.txt") == sub(g_new, "g 20\n", "G 20\n").encode()
    assert upstream.read("f.txt") == sub(f_new, "line 10\n", "LINE 10\n").encode()


def test_only_a_patch_the_lock_records_is_pinned_with_fuzz(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # A patch added to the series after `apply` never applied on the pinned base: placing
    # it there with fuzz would be a guess, not the pinned series. Its pinning stops at it
    # (as before), so a later patch has no pre-image to merge against: only GNU patch's
    # fuzz places it (only its context changed), a proposal (DESIGN §4.2), not a merge.
    base, gbase, first, second = older_series(upstream)
    queue.add("b.patch", second)
    assert patchq("apply", "--onto", base).code == 0
    (queue.path / "series").write_text("a.patch\nb.patch\n")
    (queue.path / "patches" / "a.patch").write_bytes(first)
    g_new = sub(gbase, "g 18\n", "")
    advance(upstream, "drop a line next to the change", {"g.txt": g_new})
    code, doc = check_json(patchq, "--fuzz", "1")
    assert code == 3
    assert [(p["name"], p["status"]) for p in doc["patches"]] == [
        ("a.patch", "fuzz"),
        ("b.patch", "fuzz"),
    ]
    assert doc["patches"][1]["hunks"][0]["tier"] == "proposed"
    # Pinned again by `apply --fuzz --pin` (the lock is re-pinned only when asked), the
    # same series is pinned and b.patch merges.
    assert patchq("apply", "--onto", base, "--fuzz", "1", "--pin").code == 0
    code, doc = check_json(patchq, "--fuzz", "1")
    assert [(p["name"], p["status"]) for p in doc["patches"]] == [
        ("a.patch", "fuzz"),
        ("b.patch", "merge"),
    ]


def test_a_conflict_in_one_hunk_does_not_cast_doubt_on_another(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream rewrote line 5 (the first hunk's own line: a real conflict) and, far from
    # it, edited a line just outside the second hunk's context, which moved by an offset.
    # The second hunk's doubt is weighed by the merge of that hunk alone (clean, and where
    # the offset put it), not by the whole file's merge, which the first hunk's conflict
    # fails: it stays placed, and only the first hunk is a person's to resolve.
    upstream.write("f.txt", BASE)
    base = upstream.commit("base")
    p = make_patch(
        upstream,
        "Two changes\n\n",
        {"f.txt": sub(sub(BASE, "line 5\n", "line 500\n"), "line 30\n", "LINE 30\n")},
    )
    pin(upstream, queue, patchq, [("p.patch", p)], base)
    new = sub(sub(BASE, "line 5\n", "line 6\n"), "line 26\n", "line 26 (edited)\n")
    edit = advance(upstream, "rewrite line 5, add a header", {"f.txt": "header\n" + new})
    code, doc = check_json(patchq)
    assert code == 3
    assert project(doc) == [
        (
            "p.patch",
            "conflict",
            [hunk("f.txt", "conflict", [edit]), hunk("f.txt", "offset", [edit], 1)],
        )
    ]
