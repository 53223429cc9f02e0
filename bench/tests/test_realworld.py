"""The pure helpers of patchq-bench realworld: error parsing, failure grouping, the report.

No mirrors, no network, no git: the driver itself is exercised by running the bench; these
pin the pieces whose mistakes would silently mislabel a measurement.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from patchq_bench.harvest.mirrors import substitute
from patchq_bench.paths import env_default
from patchq_bench.realworld import scoring as rc
from patchq_bench.realworld.cases import (
    DROP_DRIVER,
    DROP_LINK,
    DROP_MARK,
    DROP_NEW,
    DROP_OLD,
    Job,
    first_by_hash,
    flat_commit,
    mark_dropped,
    materialize_case,
    quiet_rebase,
    run_job,
    series_fails,
    series_unapplied,
    verify_failed,
    without_dir,
)
from patchq_bench.realworld.cli import (
    CORPUS_ENV,
    runs_anywhere,
    split_disagreements,
    supports_accept,
)
from patchq_bench.realworld.cli import main as realworld_main
from patchq_bench.realworld.driver import (
    candidate_series,
    cause_of,
    error_line,
    fuzz_outcome,
    hunk_trouble,
    patch_at_fault,
)
from patchq_bench.realworld.report import (
    Part,
    build_report,
    cost_table,
    downstream_of,
    part_tallies,
    precision_md,
    row,
    skipped_lines,
)


def shared_corpus() -> Path:
    """The shared corpus (materialize.py, peers.py) the environment names; else the test
    is skipped."""
    found = env_default(CORPUS_ENV)
    if found is None or not (found / "materialize.py").is_file():
        pytest.skip(f"no shared corpus ({CORPUS_ENV} names none)")
    return found


def test_patch_at_fault_reads_the_name_with_or_without_a_line() -> None:
    parse = "patchq: patches/cmds-live.c.patch:2: hunk outside any file section — the …"
    apply = "patchq: patches/0001-mingw-cmake.patch: patch does not apply: CMakeLists.txt: …"
    assert patch_at_fault(parse) == "cmds-live.c.patch"
    assert patch_at_fault(apply) == "0001-mingw-cmake.patch"
    assert patch_at_fault("patchq: the lock is held by another run") is None


def test_error_line_prefers_patchq_line_and_marks_a_traceback() -> None:
    assert error_line("note\npatchq: patches/a.patch: bad\n") == "patchq: patches/a.patch: bad"
    tb = "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'hunks'\n"
    assert error_line(tb) == "crash: KeyError: 'hunks'"
    assert error_line("") == ""


def test_cause_of_drops_names_paths_numbers_and_upstream_subjects() -> None:
    a = (
        "patchq: patches/a.patch: a.patch does not apply to 2f32e2169bb8: conflict in "
        "src/x.c, src/y.c (upstream: c68c4c804d67 Fix (really) the build; 0b65f608cca6 "
        "Condition on MSC_VER) — edit the files to resolve, then `patchq rebase --continue`"
    )
    b = (
        "patchq: patches/b.patch: b.patch does not apply to 53ec12d40701: conflict in "
        "lib/z.c (upstream: 5adaa553a9d6 Rename) — edit the files"
    )
    assert cause_of(a) == cause_of(b) == "conflict in FILE (upstream: …)"
    ts = (
        "patchq: patches/p.patch: patch does not apply: src/poptint.h   2010-05-13 "
        "04:57:46.878 +0100: hunk #1 (patch line 3, file line 47) failed: 'x' does not exist"
    )
    assert cause_of(ts).startswith("patch does not apply: FILE: hunk #N (patch line N")
    hdr = "patchq: patches/n.patch:41: hunk header says 11 old and 12 new lines, found 0 and 0"
    assert cause_of(hdr) == "hunk header says N old and N new lines, found N and N"
    assert cause_of("crash: KeyError: 'hunks'").startswith("crash (traceback)")


def test_hunk_trouble_names_each_failing_status_once_without_file_names() -> None:
    hunks = [
        {"status": "offset", "reason": ""},
        {"status": "conflict", "reason": "its context and removed lines are not in the file"},
        {"status": "conflict", "reason": "its context and removed lines are not in the file"},
        {"status": "missing", "reason": "lib/gcc.specs is gone upstream"},
        {"status": "merge", "method": "merge", "reason": ""},
    ]
    assert hunk_trouble(hunks) == (
        "conflict: its context and removed lines are not in the file; "
        "missing: FILE is gone upstream"
    )
    assert hunk_trouble([{"status": "exact"}]) == ""


def test_fuzz_outcome_and_candidate_series() -> None:
    assert fuzz_outcome(["exact", "offset"]) == "offset"
    assert fuzz_outcome(["offset", "fuzz"]) == "fuzz"
    assert fuzz_outcome([]) == "exact"
    final = {
        "patches": [
            {"name": "a.patch", "outcome": "unchanged"},
            {"name": "b.patch", "outcome": "upstreamed"},
            {"name": "c.patch", "outcome": "dropped"},
            {"name": "d.patch", "outcome": "merged"},
        ]
    }
    assert candidate_series(final) == ["a.patch", "d.patch"]


def _tool(status: dict[str, str], same: dict[str, bool], kept: set[str]) -> dict[str, Any]:
    applied = [n for n, s in status.items() if s not in ("failed", "already")]
    return {
        "status": status,
        "same_as_human": same,
        "same": sum(same.values()),
        "same_kept": sum(1 for n in same if same[n] and n in kept),
        "same_dropped": sum(1 for n in same if same[n] and n not in kept),
        "applied": len(applied),
        "applied_different": sum(1 for n in applied if not same[n]),
        "matched": sum(same.values()),
    }


def test_build_report_counts_what_the_inputs_say() -> None:
    kept = {"1.patch", "2.patch"}
    case = {
        "name": "deb-x-1-to-2",
        "downstream_repo": "someone/x-debian",
        "patches": 3,
        "successor": {"1.patch": "1.patch", "2.patch": "2.patch", "3.patch": None},
        "human_change": {"1.patch": "identical", "2.patch": "modified", "3.patch": "dropped"},
        "facts": {
            n: {"applies_alone_on_Y": False, "reverse_applies_on_Y": n == "3.patch"}
            for n in ("1.patch", "2.patch", "3.patch")
        },
        "tools": {
            "patch": _tool(
                {"1.patch": "clean", "2.patch": "fuzz", "3.patch": "failed"},
                {"1.patch": True, "2.patch": False, "3.patch": True},
                kept,
            ),
            "patchq": _tool(
                {"1.patch": "clean", "2.patch": "already", "3.patch": "already"},
                {"1.patch": True, "2.patch": False, "3.patch": True},
                kept,
            ),
        },
    }
    log = {
        "name": "deb-x-1-to-2",
        "gnu_on_old": {
            "fuzz0": {"1.patch": "clean", "2.patch": "failed", "3.patch": "clean"},
            "fuzz2": {"1.patch": "clean", "2.patch": "fuzz", "3.patch": "clean"},
        },
        "patchq_on_old": {
            "fuzz0": {"applied": {"1.patch": "exact", "3.patch": "exact"}, "refused": {}},
            "fuzz2": {
                "applied": {"1.patch": "exact", "2.patch": "fuzz", "3.patch": "exact"},
                "refused": {},
            },
            "same_tree_as_gnu_fuzz2": True,
        },
        "per_patch": {
            "1.patch": {"on_old": "exact", "on_new": "unchanged", "methods": ["exact"]},
            "2.patch": {
                "on_old": "fuzz",
                "on_new": "stopped, skipped",
                "methods": ["conflict"],
                "hunks": [{"status": "conflict", "reason": "its context is not in the file"}],
                "error": "patchq: patches/2.patch: 2.patch does not apply to 0123abcd: "
                "conflict in f.c (upstream: 0123abcd Fix) — edit the files",
            },
            "3.patch": {"on_old": "exact", "on_new": "upstreamed", "methods": ["upstreamed"]},
        },
    }
    peers = {"tools": ["patch", "patchq"], "cases": [case]}
    md = build_report(peers, {"deb-x-1-to-2": log}, "patchq-bench realworld --only x", "D", [])
    assert "patchq-bench realworld --only x" in md
    assert "| same as the maintainer (of 3) | **2** | **2** |" in md
    assert "| applied but not the maintainer's result | 1 | 0 |" in md
    assert "| deb-x-1-to-2 | Debian | 3 | 2 | 1 | 1+1 = 2 (1) | 1+1 = 2 (0) |" in md
    assert "| modified | 1 | 1 / 0 | 0 / 0 |" in md
    assert "| dropped: already in Y | 1 | 0 / 1 | 0 / 1 |" in md
    assert "| deb-x-1-to-2 | 3 | 2 | 3 | 2 | 3 | yes |" in md
    assert (
        "| Y (rebase) | conflict in FILE (upstream: …) — hunks: conflict: its context is not "
        "in the file | 1 | `deb-x-1-to-2/2.patch` |" in md
    )
    assert "| 2.patch | modified | fuzz | stopped, skipped conflict | failed / fuzz |" in md


# ------------------------------------------------------------------------- issue 24: scoring
def test_split_is_the_sha256_rule_of_the_case_name() -> None:
    import hashlib

    names = [f"deb-pkg{i}-{i}.0-to-{i}.1" for i in range(3000)]
    for n in names[:50] + ["br-efivar-37-to-38", "ünïcode-case"]:
        first = hashlib.sha256(n.encode("utf-8")).digest()[0]
        assert rc.split_of(n) == ("tuning" if first < 179 else "validation")
    share = sum(rc.split_of(n) == "validation" for n in names) / len(names)
    assert 0.27 < share < 0.33
    # pinned names: the rule may never change silently (the same as patchq-bench harvest's)
    assert rc.split_of("tx-libnl-3.7.0-to-3.8.0") == "validation"
    assert rc.split_of("ms-libplist-2.2.0-to-2.3.0") == "validation"
    assert rc.split_of("tx-uftrace-0.12-to-0.13") == "tuning"
    assert rc.split_of("deb-openssh-8.4p1-to-8.7p1") == "tuning"
    part = rc.select(names, "validation")
    assert part == [n for n in names if rc.split_of(n) == "validation"]
    assert rc.select(names, "all") == names
    assert sorted(part + rc.select(names, "tuning")) == sorted(names)


def test_verdicts_for_peers_and_patchq() -> None:
    v = rc.verdict
    assert v("clean", True, True) == "same"
    assert v("fuzz", False, True) == "wrong"
    assert v("clean", False, False) == "wrong"  # applied a patch the maintainer dropped
    assert v("failed", False, True) == "failed"
    assert v("already", False, True) == "dropped-wrong"  # git am's silent "no changes"
    assert v("already", True, False) == "same"
    # patchq: what its log says decides between a stop, a failure and a silent drop
    assert v("already", False, True, "stopped, skipped") == "stop"
    assert v("already", True, False, "stopped, skipped") == "same"
    assert v("already", False, True, "upstreamed") == "dropped-wrong"
    assert v("already", False, True, "refused on X") == "failed"
    assert v("merged", False, True, "merged") == "wrong"


def test_cost_is_misses_plus_three_wrong_with_half_misses() -> None:
    t = rc.tally(
        ["same", "wrong", "dropped-wrong", "stop", "stop", "failed", "same"],
        [False, False, False, True, False, False, False],
    )
    assert (t.patches, t.same, t.wrong, t.dropped_wrong, t.stops, t.failed, t.half) == (
        7, 2, 1, 1, 2, 1, 1,
    )  # fmt: skip
    assert t.wrong_total == 2
    assert t.misses == 2.5  # two stops (one right with --accept all: half) and a failure
    assert t.cost == 2.5 + 3 * 2
    assert rc.fmt_num(t.cost) == "8.5" and rc.fmt_num(4.0) == "4"
    with pytest.raises(ValueError):
        rc.tally(["maybe"])


def _peer_case(
    name: str, tools: dict[str, tuple[dict[str, str], dict[str, bool]]]
) -> dict[str, Any]:
    succ = {"1.patch": "1.patch", "2.patch": "2.patch", "3.patch": None}
    out = {
        "name": name,
        "downstream_repo": "someone/x",
        "patches": 3,
        "successor": succ,
        "human_change": {"1.patch": "identical", "2.patch": "modified", "3.patch": "dropped"},
        "facts": {n: {"applies_alone_on_Y": False, "reverse_applies_on_Y": False} for n in succ},
        "tools": {t: _tool(st, same, {"1.patch", "2.patch"}) for t, (st, same) in tools.items()},
    }
    return out


def _pq_log(name: str, on_new: dict[str, str], uses: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": name,
        "gnu_on_old": {
            "fuzz0": dict.fromkeys(on_new, "clean"),
            "fuzz2": dict.fromkeys(on_new, "clean"),
        },
        "patchq_on_old": {
            "fuzz0": {"applied": {}, "refused": {}},
            "fuzz2": {"applied": {}, "refused": {}},
        },
        "per_patch": {
            n: {"on_old": "exact", "on_new": o, "methods": []} for n, o in on_new.items()
        },
        "uses": uses,
    }


def test_tallies_credit_a_stop_the_accept_run_got_right_as_half_a_miss() -> None:
    case = _peer_case(
        "c1",
        {
            "patch": ({"1.patch": "clean", "2.patch": "fuzz", "3.patch": "failed"},
                      {"1.patch": True, "2.patch": False, "3.patch": True}),
            "patchq": ({"1.patch": "clean", "2.patch": "already", "3.patch": "already"},
                       {"1.patch": True, "2.patch": False, "3.patch": True}),
            "patchq-accept": ({"1.patch": "clean", "2.patch": "merged", "3.patch": "already"},
                              {"1.patch": True, "2.patch": True, "3.patch": True}),
        },
    )  # fmt: skip
    on_new = {"1.patch": "unchanged", "2.patch": "stopped, skipped", "3.patch": "upstreamed"}
    acc = {"1.patch": "unchanged", "2.patch": "merged", "3.patch": "upstreamed"}
    part = Part(
        {"tools": ["patch", "patchq", "patchq-accept"], "cases": [case]},
        {"c1": _pq_log("c1", on_new, [])},
        {"c1": _pq_log("c1", acc, [])},
    )
    t = part_tallies(part)
    assert (t["patch"].same, t["patch"].wrong, t["patch"].cost) == (2, 1, 3)
    assert (t["patchq"].same, t["patchq"].stops, t["patchq"].half, t["patchq"].cost) == (
        2, 1, 1, 0.5,
    )  # fmt: skip
    assert (t["patchq-accept"].same, t["patchq-accept"].cost) == (3, 0)
    table = "\n".join(cost_table([("tuning", part)]))
    assert "| tuning | patchq | 3 | 2 | 0 | 0 | 1 | 0 | 1 | 0.5 | **0.5** |" in table
    assert "| tuning | patch | 3 | 2 | 1 | 0 | 0 | 0 | 0 | 0 | **3** |" in table


def test_validation_part_is_reported_as_totals_only() -> None:
    tools = {
        "patch": ({"1.patch": "clean", "2.patch": "fuzz", "3.patch": "failed"},
                  {"1.patch": True, "2.patch": False, "3.patch": True}),
        "patchq": ({"1.patch": "clean", "2.patch": "merged", "3.patch": "already"},
                   {"1.patch": True, "2.patch": False, "3.patch": True}),
    }  # fmt: skip
    on_new = {"1.patch": "unchanged", "2.patch": "merged", "3.patch": "upstreamed"}
    tname = "tx-uftrace-0.12-to-0.13"
    vname = "tx-libnl-3.7.0-to-3.8.0"
    assert rc.split_of(tname) == "tuning" and rc.split_of(vname) == "validation"
    vuses = [{"patch": "secret-2.patch", "method": "word", "verdict": "wrong"}]
    tuses = [{"patch": "2.patch", "method": "word", "verdict": "right"}]
    val = Part(
        {"tools": ["patch", "patchq"], "cases": [_peer_case(vname, tools)]},
        {vname: _pq_log(vname, on_new, vuses)},
    )
    tun_peers = {"tools": ["patch", "patchq"], "cases": [_peer_case(tname, tools)]}
    md = build_report(
        tun_peers, {tname: _pq_log(tname, on_new, tuses)}, "cmd", "D", [], validation=val
    )
    assert tname in md and vname not in md and "secret-2.patch" not in md
    assert "| validation | patchq | 3 | 2 | 1 | 0 | 0 | 0 | 0 | 0 | **3** |" in md
    # the validation precision table carries the tiers; its one word use is wrong
    assert "| word | 1 | 0 | 1 | 0 | 0.0% | proposed (1 < 30 uses) |" in md
    assert "| word | 1 | 1 | 0 | 0 | 100.0% |" in md  # tuning: no tier column
    pmd = precision_md(
        [("validation", val)],
        "cmd --split validation",
        ["`x.toml`"],
        "pq",
        "D",
        accept_status="unsupported",
    )
    assert "cmd --split validation" in pmd and "`x.toml`" in pmd
    assert "≥ 97% precision over ≥ 30 validation uses" in pmd and vname not in pmd


def test_tiers_follow_design_4_1() -> None:
    row = rc.MethodRow
    assert rc.tier("merge", None) == "automatic (always)"
    assert rc.tier("word", None) == "proposed (no use)"
    assert rc.tier("word", row(uses=30, right=30)) == "automatic (earned)"
    # 29 of 30 scored is 96.7%: short of 97% however it is rounded; unscored uses don't count
    assert rc.tier("word", row(uses=40, right=29, wrong=1, unscored=10)) == "proposed (96.7% < 97%)"
    assert rc.tier("word", row(uses=40, right=29, unscored=11)) == "proposed (29 < 30 uses)"
    assert rc.tier("word", row(uses=100, right=97, wrong=3)) == "automatic (earned)"
    assert rc.tier("word", row(uses=100, right=96, wrong=4)) == "proposed (96.0% < 97%)"
    rows = rc.precision_rows(
        [{"method": "word", "verdict": v} for v in ("right", "wrong", "unscored", "right")]
    )
    r = rows["word"]
    assert (r.uses, r.right, r.wrong, r.unscored, r.precision) == (4, 2, 1, 1, 2 / 3)


def test_region_rule_on_synthetic_files() -> None:
    a = [b"l%d" % i for i in range(12)]
    b = list(a)
    b[5] = b"changed"  # inside [3, 8)
    blocks = rc.blocks_of(a, b)
    assert not rc.region_right(blocks, 3, 8)
    assert rc.region_right(blocks, 6, 10) and rc.region_right(blocks, 0, 5)
    ins = a[:4] + [b"new"] + a[4:]  # inserted before line 4
    bi = rc.blocks_of(a, ins)
    assert not rc.region_right(bi, 3, 8)  # strictly inside
    assert rc.region_right(bi, 4, 8) and rc.region_right(bi, 0, 4)  # at an edge: outside
    assert not rc.region_right(bi, 4, 4)  # an empty region at the insertion point
    assert rc.region_right(bi, 6, 6)
    dele = a[:2] + a[3:]
    assert not rc.region_right(rc.blocks_of(a, dele), 2, 3)
    assert not rc.region_right(rc.blocks_of(a, dele), 2, 2)  # the point of a deletion
    # git's -U0 hunks read into the same blocks difflib gives (insert, change, delete)
    u0 = b"@@ -4,0 +5 @@\n+new\n@@ -6 +7 @@\n-l5\n+x\n@@ -9,2 +9,0 @@\n-l8\n-l9\n"
    assert rc.blocks_from_u0(u0) == [(4, 0, 4, 1), (5, 1, 6, 1), (8, 2, 9, 0)]
    c = a[:4] + [b"new"] + a[4:5] + [b"x"] + a[6:8] + a[10:]
    assert rc.blocks_of(a, c) == rc.blocks_from_u0(u0)


def test_hunk_parsing_pairing_and_location() -> None:
    text = (
        b"Subject: x\n---\n--- ../build/pkg-1.0/src/x.c\t2014-01-01\n+++ ./src/x.c\n"
        b"@@ -2,3 +2,4 @@\n a\n-b\n+B\n+C\n c\n@@ -10,0 +11 @@\n+tail\n"
        b"diff --git a/y.c b/y.c\n--- a/y.c\n+++ b/y.c\n@@ -1 +1 @@\n-u\n"
        b"\\ No newline at end of file\n+v\n"
    )
    files = rc.parse_unified(text, 1)
    assert [(f.old, f.new) for f in files] == [("src/x.c", "src/x.c"), ("y.c", "y.c")]
    h0, h1 = files[0].hunks
    assert h0.post_image() == [b"a", b"B", b"C", b"c"] and rc.region_of(h0) == (1, 5)
    assert h1.new_len == 1 and rc.region_of(h1) == (10, 11)
    assert rc.region_of(rc.Hunk(5, 1, 4, 0, [("-", b"gone")])) == (4, 4)
    assert files[1].hunks[0].changed() == [("-", b"u"), ("+", b"v")]
    assert rc.strip_path(b"/dev/null", 1) == "" and rc.strip_path(b"a/b/./c", 1) == "b/c"
    # pairing: by order when the counts match, else by likeness of the changed lines
    olds = [
        rc.Hunk(1, 1, 1, 1, [("-", b"x"), ("+", b"X")]),
        rc.Hunk(9, 1, 9, 1, [("-", b"y"), ("+", b"Y")]),
    ]
    assert rc.pair_hunks(olds, olds[::-1]) == {0: 0, 1: 1}
    assert rc.pair_hunks(olds, [olds[1]]) == {1: 0}  # x→X is like nothing: unpaired
    # location of an upstreamed hunk: exact, else between its contexts
    hay = [b"p", b"a", b"B", b"C", b"c", b"q"]
    assert rc.locate(h0.post_image(), hay, 0) == (1, 5)
    edited = [b"p", b"a", b"B2", b"C", b"D", b"c", b"q"]
    assert rc.locate(h0.post_image(), edited, 0) is None
    assert rc.locate_between(h0, edited, 0) == (1, 6)
    twice = hay + hay
    assert rc.locate(h0.post_image(), twice, 8) == (7, 11)


def _g(cwd: Path, *args: str) -> str:
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@invalid", GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@invalid",
    )  # fmt: skip
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return r.stdout


def _udiff(before: list[str], after: list[str], path: str = "f.c") -> str:
    import difflib

    lines = difflib.unified_diff(
        [x + "\n" for x in before], [x + "\n" for x in after], f"a/{path}", f"b/{path}"
    )
    return "".join(lines)


def test_score_uses_judges_each_hunk_by_its_region_in_real_git_trees(tmp_path: Path) -> None:
    """A synthetic case (upstream X and Y in git, an old series, patchq's refreshed series
    and the maintainer's): a hunk refreshed as the maintainer did is right, one whose lines
    differ from the maintainer's is wrong, an upstreamed hunk of a patch the maintainer
    dropped is right."""
    x = [f"a{i}" for i in range(30)]
    y = ["new0", "new1", *x[:10], "up", *x[10:]]  # upstream shifted everything, took P2
    y[3] = "A1"  # and edited a line far from P1's hunks
    work = tmp_path / "work"
    work.mkdir()
    _g(work, "init", "-q", "-b", "case-old")
    (work / "f.c").write_text("\n".join(x) + "\n")
    _g(work, "add", "f.c")
    _g(work, "commit", "-qm", "X")
    _g(work, "checkout", "-qb", "case-new")
    (work / "f.c").write_text("\n".join(y) + "\n")
    _g(work, "commit", "-qam", "Y")
    case = tmp_path / "case"
    _g(tmp_path, "clone", "-q", "--bare", str(work), str(case / "upstream.git"))

    def put(folder: str, name: str, text: str) -> None:
        (case / folder).mkdir(parents=True, exist_ok=True)
        (case / folder / name).write_text(text)

    p1_old = list(x)
    p1_old[5], p1_old[20] = "p5", "p20"
    put("old-series", "p1.patch", _udiff(x, p1_old))
    put("old-series", "p2.patch", _udiff(x, [*x[:10], "up", *x[10:]]))
    mine, theirs = list(y), list(y)
    i5, i20 = y.index("a5"), y.index("a20")
    mine[i5], theirs[i5] = "p5", "p5"
    mine[i20], theirs[i20] = "q20", "p20"  # patchq's second hunk is not the maintainer's
    put("new-series", "p1.patch", _udiff(y, theirs))
    cand = tmp_path / "cand"
    cand.mkdir()
    (cand / "p1.patch").write_text(_udiff(y, mine))
    (cand / "series").write_text("p1.patch\n")
    (case / "case.json").write_text(
        json.dumps(
            {
                "strip": 1,
                "old_series": ["p1.patch", "p2.patch"],
                "new_series": ["p1.patch"],
                "successor": {"p1.patch": "p1.patch", "p2.patch": ""},
                "added": [],
            }
        )
    )
    hunks = {
        "p1.patch": [
            {"file": "f.c", "index": 0, "method": "offset"},
            {"file": "f.c", "index": 1, "method": "word"},
        ],
        "p2.patch": [{"file": "f.c", "index": 0, "method": "upstreamed"}],
    }
    outcomes = {"p1.patch": "refreshed", "p2.patch": "upstreamed"}
    (tmp_path / "scratch").mkdir()
    uses = rc.score_uses(case, cand, hunks, outcomes, tmp_path / "scratch")
    got = [(u["patch"], u["index"], u["method"], u["verdict"]) for u in uses]
    assert got == [
        ("p1.patch", 0, "offset", "right"),
        ("p1.patch", 1, "word", "wrong"),
        ("p2.patch", 0, "upstreamed", "right"),
    ]
    # the maintainer takes p1 as patchq did: every use is right
    put("new-series", "p1.patch", _udiff(y, mine))
    uses = rc.score_uses(case, cand, hunks, outcomes, tmp_path / "scratch")
    assert [u["verdict"] for u in uses] == ["right", "right", "right"]
    # a skipped patch's hunks are not uses
    skipped = {"p1.patch": "dropped", "p2.patch": "upstreamed"}
    assert rc.score_uses(case, cand, hunks, skipped, tmp_path / "scratch") == [
        u for u in uses if u["patch"] == "p2.patch"
    ]


def test_accept_support_is_read_from_rebase_help() -> None:
    with_opt = "print('Options:\\n  --onto REF  x\\n  --accept METHODS  take proposals')"
    without = "print('Options:\\n  --onto REF  x\\n  --skip  drop it (see --accept-less docs)')"
    assert supports_accept([sys.executable, "-c", with_opt])
    assert not supports_accept([sys.executable, "-c", without])
    assert not supports_accept([sys.executable, "-c", "import sys; sys.exit(2)"])


def test_a_case_file_split_that_disagrees_with_the_rule_is_named(tmp_path: Path) -> None:
    v, t = "tx-libnl-3.7.0-to-3.8.0", "tx-uftrace-0.12-to-0.13"
    f = tmp_path / "cases.toml"
    f.write_text(
        f'[[case]]\nname = "{v}"\nsplit = "validation"\n\n[[case]]\nname = "{t}"\n'
        'split = "tuning"\n\n[[case]]\nname = "no-split-field"\n'
    )
    assert split_disagreements(f) == []
    f.write_text(f'[[case]]\nname = "{t}"\nsplit = "validation"\n')
    (msg,) = split_disagreements(f)
    assert "1 cases" in msg and t in msg


def test_a_region_another_patch_changed_is_judged_on_patchqs_own_tree(tmp_path: Path) -> None:
    """The maintainer kept p0, which adds a line inside p1's region; patchq stopped at p0
    (skipped). p1's hunk placed as the maintainer's p1 places it on patchq's tree is right,
    though the maintainer's own tree differs there."""
    x = [f"a{i}" for i in range(30)]
    y = ["new0", *x]
    work = tmp_path / "work"
    work.mkdir()
    _g(work, "init", "-q", "-b", "case-old")
    (work / "f.c").write_text("\n".join(x) + "\n")
    _g(work, "add", "f.c")
    _g(work, "commit", "-qm", "X")
    _g(work, "checkout", "-qb", "case-new")
    (work / "f.c").write_text("\n".join(y) + "\n")
    _g(work, "commit", "-qam", "Y")
    case = tmp_path / "case"
    _g(tmp_path, "clone", "-q", "--bare", str(work), str(case / "upstream.git"))
    for d in ("old-series", "new-series"):
        (case / d).mkdir()
    with_p0 = [*y[: y.index("a2") + 1], "p0line", *y[y.index("a2") + 1 :]]
    (case / "old-series" / "p0.patch").write_text(_udiff(x, [*x[:3], "p0line", *x[3:]]))
    p1_x = [("p5" if v == "a5" else v) for v in x]
    (case / "old-series" / "p1.patch").write_text(_udiff(x, p1_x))
    (case / "new-series" / "p0.patch").write_text(_udiff(y, with_p0))
    (case / "new-series" / "p1.patch").write_text(
        _udiff(with_p0, [("p5" if v == "a5" else v) for v in with_p0])
    )
    cand = tmp_path / "cand"
    cand.mkdir()
    (cand / "p1.patch").write_text(_udiff(y, [("p5" if v == "a5" else v) for v in y]))
    (cand / "series").write_text("p1.patch\n")
    (case / "case.json").write_text(
        json.dumps(
            {
                "strip": 1,
                "old_series": ["p0.patch", "p1.patch"],
                "new_series": ["p0.patch", "p1.patch"],
                "successor": {"p0.patch": "p0.patch", "p1.patch": "p1.patch"},
                "added": [],
            }
        )
    )
    hunks = {"p1.patch": [{"file": "f.c", "index": 0, "method": "anchored"}]}
    (tmp_path / "scratch").mkdir()
    outcomes = {"p0.patch": "dropped", "p1.patch": "refreshed"}
    (use,) = rc.score_uses(case, cand, hunks, outcomes, tmp_path / "scratch")
    assert (use["verdict"], use["why"]) == ("right", "on patchq's tree")
    # patchq put p5 one line off: wrong against both
    off = list(y)
    off[off.index("a6")] = "p5"
    (cand / "p1.patch").write_text(_udiff(y, off))
    (use,) = rc.score_uses(case, cand, hunks, outcomes, tmp_path / "scratch")
    assert use["verdict"] == "wrong"


def test_a_case_that_fails_verification_is_left_out() -> None:
    lines = [
        "    VERIFY FAIL br-x-1-to-2: 0001-a.patch does not apply on case-old",
        "  OK   br-x-1-to-2                   3 old /  2 new patches (1 dropped); VERIFY FAILED",
        "  OK   br-y-1-to-2                   2 old /  2 new patches (1 identical, 1 modified)",
    ]
    assert verify_failed(lines) == {"br-x-1-to-2"}


def test_a_prefix_is_the_first_k_names_by_sha256() -> None:
    import hashlib

    names = [f"tx-p{i}-1-to-2" for i in range(20)]
    want = sorted(names, key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    assert first_by_hash(names, 5) == want[:5]
    assert first_by_hash(list(reversed(names)), None) == want


def test_dropped_bumps_are_counted_by_reason_and_validation_ones_not_named() -> None:
    tname, vname = "tx-uftrace-0.12-to-0.13", "tx-libnl-3.7.0-to-3.8.0"
    assert rc.split_of(tname) == "tuning" and rc.split_of(vname) == "validation"
    lines = skipped_lines([f"{tname}: {DROP_OLD}", f"{vname}: {DROP_OLD}", f"{vname}: {DROP_NEW}"])
    text = "\n".join(lines)
    assert vname not in text and f"- `{tname}: {DROP_OLD}`" in text
    assert row(DROP_OLD, 1, 1) in lines
    assert row(DROP_NEW, 0, 1) in lines


def test_the_accept_run_is_the_default_runs_only_when_it_met_no_stop() -> None:
    def rec(applied: dict[str, str], finished: bool, stops: dict[str, str]) -> dict[str, Any]:
        return {
            "patchq_on_old": {"fuzz2": {"applied": applied}},
            "rebase": {"finished": finished, "stops": stops, "error": None},
        }

    assert quiet_rebase(rec({"a.patch": "exact"}, True, {}))
    assert quiet_rebase(rec({}, False, {}))  # nothing applied on X: nothing to rebase
    assert not quiet_rebase(rec({"a.patch": "exact"}, True, {"a.patch": "stops for review"}))
    assert not quiet_rebase(rec({"a.patch": "exact"}, False, {}))


def test_termux_placeholders_are_filled_as_its_build_does() -> None:
    text = b'+#define P "@TERMUX_PREFIX@/etc"\n+ @TERMUX_HOME@ @OTHER@\n'
    got = substitute(text, "termux")
    assert got == b'+#define P "/data/data/com.termux/files/usr/etc"\n' + (
        b"+ /data/data/com.termux/files/home @OTHER@\n"
    )
    assert substitute(text, None) == text


def test_gnu_patch_decides_which_series_apply_on_their_release(tmp_path: Path) -> None:
    import shutil

    if shutil.which("patch") is None:
        pytest.skip("GNU patch is not installed")
    x = [f"a{i}" for i in range(12)]
    y = ["z", *x[:4], "Y4", *x[5:]]
    work = tmp_path / "work"
    work.mkdir()
    _g(work, "init", "-q", "-b", "case-old")
    (work / "src").mkdir()
    (work / "src" / "f.c").write_text("\n".join(x) + "\n")
    (work / "other.c").write_text("untouched\n")
    _g(work, "add", ".")
    _g(work, "commit", "-qm", "X")
    _g(work, "checkout", "-qb", "case-new")
    (work / "src" / "f.c").write_text("\n".join(y) + "\n")
    _g(work, "commit", "-qam", "Y")
    case = tmp_path / "case"
    _g(tmp_path, "clone", "-q", "--bare", str(work), str(case / "upstream.git"))
    for folder in ("old-series", "new-series"):
        (case / folder).mkdir()
    old = list(x)
    old[4] = "mine"
    (case / "old-series" / "1.patch").write_text(_udiff(x, old, "src/f.c"))
    new = list(y)
    new[8] = "mine8"
    (case / "new-series" / "1.patch").write_text(_udiff(y, new, "src/f.c"))
    info: dict[str, Any] = {
        "strip": 1,
        "old_series": ["1.patch"],
        "new_series": ["1.patch"],
        "touched": {"old": {"1.patch": ["src/f.c"]}, "new": {"1.patch": ["src/f.c"]}},
    }
    assert series_fails(case, info, "old") is None
    assert series_fails(case, info, "new") is None
    # the old patch's removed line is gone on Y: a new series made of it fails there
    shutil.copyfile(case / "old-series" / "1.patch", case / "new-series" / "1.patch")
    assert series_fails(case, info, "new") == "1.patch"
    assert not (case / "verify-new").exists() and not (case / "verify-old").exists()


def test_a_packaging_repos_upstream_is_its_tree_without_debian(tmp_path: Path) -> None:
    """upstream_strip_dir: case-old/case-new are the commits' trees without debian/ (a
    commit on top of each), everything else byte for byte; a tree without it is kept."""
    work = tmp_path / "work"
    (work / "debian" / "patches").mkdir(parents=True)
    (work / "src").mkdir()
    _g(work, "init", "-q", "-b", "main")
    (work / "src" / "a.c").write_text("a\n")
    (work / "debian-notes").write_text("not the folder\n")
    (work / "debian" / "patches" / "series").write_text("x.patch\n")
    _g(work, "add", ".")
    _g(work, "commit", "-qm", "1.0-1")
    gitdir = work / ".git"
    head = _g(work, "rev-parse", "HEAD").strip()
    c = without_dir(gitdir, head, "debian")
    assert c != head and _g(work, "rev-parse", f"{c}^").strip() == head
    names = _g(work, "ls-tree", "-r", "--name-only", c).split()
    assert names == ["debian-notes", "src/a.c"]
    assert _g(work, "rev-parse", f"{c}:src") == _g(work, "rev-parse", f"{head}:src")
    assert without_dir(gitdir, c, "debian") == c


def test_a_patches_applied_tree_gets_its_series_reversed(tmp_path: Path) -> None:
    """dgit's "patches applied" layout: the tree holds the series applied, so GNU patch does
    not apply it forward; reversed (last patch first) it gives the upstream source, a file
    the series created removed. A tree the series applies to forward is left as it is."""
    import shutil

    if shutil.which("patch") is None:
        pytest.skip("GNU patch is not installed")
    up = [f"u{i}" for i in range(10)]
    mine = list(up)
    mine[4] = "mine"
    work = tmp_path / "work"
    (work / "debian" / "patches").mkdir(parents=True)
    _g(work, "init", "-q", "-b", "main")
    (work / "f.c").write_text("\n".join(mine) + "\n")
    (work / "new.c").write_text("created\n")
    (work / "other.c").write_text("untouched\n")
    p1 = _udiff(up, mine, "f.c")
    p2 = "--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+created\n"
    (work / "debian" / "patches" / "1.patch").write_text(p1)
    (work / "debian" / "patches" / "2.patch").write_text(p2)
    _g(work, "add", ".")
    _g(work, "commit", "-qm", "applied")
    gitdir = work / ".git"
    head = _g(work, "rev-parse", "HEAD").strip()
    names = ["debian/patches/1.patch", "debian/patches/2.patch"]
    c = without_dir(gitdir, head, "debian")
    u = series_unapplied(gitdir, head, c, names, 1)
    assert u is not None and _g(work, "rev-parse", f"{u}^").strip() == c
    assert _g(work, "ls-tree", "-r", "--name-only", u).split() == ["f.c", "other.c"]
    assert _g(work, "show", f"{u}:f.c") == "\n".join(up) + "\n"
    # the upstream source itself: the series applies forward, nothing is reversed
    assert series_unapplied(gitdir, head, u, names, 1) is None
    # its history flattened: one root commit with the same tree, then one on top of it
    root = flat_commit(gitdir, u, None)
    assert _g(work, "rev-list", "--count", root).strip() == "1"
    assert _g(work, "rev-parse", f"{root}^{{tree}}") == _g(work, "rev-parse", f"{u}^{{tree}}")
    top = flat_commit(gitdir, head, root)
    assert _g(work, "rev-list", top).split() == [top, root]


def test_each_harvested_prefix_names_its_distribution() -> None:
    def ds(name: str) -> str:
        return str(downstream_of({"name": name, "downstream_repo": "owner/repo"}))

    assert ds("db-openssh-debian-8.2p1-to-8.3p1") == ds("deb-x") == "Debian"
    assert ds("sp-numactl-2.0.14-to-2.0.16") == "Spack"
    assert ds("mw-mingw-w64-x-1-to-2") == ds("ms-x-1-to-2") == "MSYS2"
    assert ds("le-x-1-to-2") == "LibreELEC"
    assert ds("zz-x-1-to-2") == "owner"


def _tiny_bump(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """Mirrors (MIRRORS/OWNER+NAME/repo) of an upstream with releases X and Y and of a
    downstream carrying one patch for each, and the bump's case entry."""
    x = [f"a{i}" for i in range(12)]
    y = ["z", *x]
    mirrors = tmp_path / "mirrors"
    up = mirrors / "up+proj" / "repo"
    up.mkdir(parents=True)
    _g(up, "init", "-q", "-b", "main")
    (up / "f.c").write_text("\n".join(x) + "\n")
    _g(up, "add", ".")
    _g(up, "commit", "-qm", "X")
    old_commit = _g(up, "rev-parse", "HEAD").strip()
    _g(up, "tag", "v1")
    (up / "f.c").write_text("\n".join(y) + "\n")
    _g(up, "commit", "-qam", "Y")
    new_commit = _g(up, "rev-parse", "HEAD").strip()
    _g(up, "tag", "v2")
    down = mirrors / "down+dist" / "repo"
    (down / "pkg").mkdir(parents=True)
    _g(down, "init", "-q", "-b", "main")
    mine = list(x)
    mine[6] = "mine"
    (down / "pkg" / "1.patch").write_text(_udiff(x, mine))
    _g(down, "add", ".")
    _g(down, "commit", "-qm", "proj 1")
    ds_old = _g(down, "rev-parse", "HEAD").strip()
    (down / "pkg" / "1.patch").write_text(_udiff(y, ["z", *mine]))
    _g(down, "commit", "-qam", "proj 2")
    ds_new = _g(down, "rev-parse", "HEAD").strip()
    case: dict[str, Any] = {
        "name": "br-proj-1-to-2",
        "upstream_repo": "up/proj",
        "old_ref": "v1",
        "old_commit": old_commit,
        "new_ref": "v2",
        "new_commit": new_commit,
        "downstream_repo": "down/dist",
        "downstream_old_commit": ds_old,
        "downstream_new_commit": ds_new,
        "patch_dir": "pkg",
        "strip": 1,
        "old_series": ["1.patch"],
        "new_series": ["1.patch"],
        "added": [],
        "successor": {"1.patch": "1.patch"},
    }
    return mirrors, case


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture
def linked_case(tmp_path: Path) -> tuple[Path, dict[str, Any], Path, Path]:
    """A bump materialized by another run (OTHER/cases/NAME) and linked into this run's
    cases folder: (mirrors, case, this run's OUT, the other run's case folder)."""
    import shutil

    if shutil.which("patch") is None:
        pytest.skip("GNU patch is not installed")
    mirrors, case = _tiny_bump(tmp_path)
    other = tmp_path / "other-run" / "cases"
    assert materialize_case(shared_corpus(), mirrors, case, other) == ""
    snap = _snapshot(other / case["name"])
    assert "upstream.git/HEAD" in snap and "case.json" in snap
    out = tmp_path / "this-run"
    (out / "cases").mkdir(parents=True)
    (out / "cases" / case["name"]).symlink_to(other / case["name"], target_is_directory=True)
    return mirrors, case, out, other / case["name"]


def test_materializing_replaces_a_symlinked_case_folder_never_writes_through(
    linked_case: tuple[Path, dict[str, Any], Path, Path],
) -> None:
    """materialize.py could not remove a linked case folder, and the drop that followed
    wrote its mark into the other run's case and deleted its upstream.git: the link is
    replaced by this run's own folder, the linked one stays byte for byte."""
    mirrors, case, out, theirs = linked_case
    before = _snapshot(theirs)
    link = out / "cases" / case["name"]
    assert materialize_case(shared_corpus(), mirrors, case, out / "cases") == ""
    assert not link.is_symlink() and (link / "upstream.git" / "HEAD").is_file()
    assert not (link / DROP_MARK).exists()
    assert _snapshot(theirs) == before


def test_no_materialize_refuses_a_symlinked_case_folder(
    linked_case: tuple[Path, dict[str, Any], Path, Path],
) -> None:
    """--no-materialize would write its drop mark through the link (a driver failure marks
    the other run's case dropped): the case is refused, nothing is written."""
    mirrors, case, out, theirs = linked_case
    before = _snapshot(theirs)
    job = Job(case["name"], shared_corpus(), mirrors, case, out, [], ["default"], "none",
                 [], False, False)  # fmt: skip
    assert run_job(job)["dropped"] == DROP_LINK
    assert (out / "cases" / case["name"]).is_symlink()
    assert _snapshot(theirs) == before


def test_a_linked_cases_folder_is_never_materialized_into(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """OUT/cases linked to another run's (to reuse its cases) is read only: a run that
    would materialize into it is refused before anything is written there."""
    other = tmp_path / "other-run" / "cases"
    other.mkdir(parents=True)
    (other / "kept").write_text("theirs\n")
    out = tmp_path / "this-run"
    out.mkdir()
    (out / "cases").symlink_to(other, target_is_directory=True)
    assert realworld_main(["--out", str(out), "--mirrors", str(tmp_path / "none")]) == 2
    assert "--no-materialize" in capsys.readouterr().err
    assert [p.name for p in other.iterdir()] == ["kept"]


def test_drop_marks_never_go_through_a_linked_cases_folder(tmp_path: Path) -> None:
    theirs = tmp_path / "other-run" / "cases" / "bump-1"
    theirs.mkdir(parents=True)
    out = tmp_path / "this-run"
    out.mkdir()
    (out / "cases").symlink_to(theirs.parent, target_is_directory=True)
    mark_dropped(out / "cases" / "bump-1", DROP_DRIVER)
    assert not (theirs / DROP_MARK).exists()
    own = tmp_path / "own-run" / "cases" / "bump-2"
    own.mkdir(parents=True)
    mark_dropped(own, DROP_DRIVER)
    assert (own / DROP_MARK).read_text() == DROP_DRIVER + "\n"


def test_a_patchq_command_that_runs_only_here_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The drivers run --patchq in each case's folder: a relative interpreter path is not
    found there, every case failed as a "driver failure" (its reason sealed for the
    validation part) and was marked dropped. The command is tried from another folder
    first, and a run it would fail is refused before anything is written."""
    here = tmp_path / "checkout"
    (here / "venv" / "bin").mkdir(parents=True)
    shim = here / "venv" / "bin" / "python"  # this interpreter, as a venv's would be
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    out = tmp_path / "run"
    argv = ["--out", str(out), "--mirrors", str(tmp_path / "none")]
    cwd = Path.cwd()
    try:
        os.chdir(here)
        code = realworld_main([*argv, "--patchq", "venv/bin/python -m patchq"])
    finally:
        os.chdir(cwd)
    assert code == 2
    err = capsys.readouterr().err
    assert "does not" in err and "absolute paths" in err, err
    assert not out.exists()
    # The same interpreter named by its absolute path runs anywhere.
    assert runs_anywhere([str(shim), "-m", "patchq"]) is None
    assert "does not start" in (runs_anywhere(["/nonexistent/python"]) or "")
