"""cli/render on hand-built results: the exact lines (and their stream) and JSON documents
each result kind gives, and the decisions results carry themselves (exit codes, the
problem a stopped run reports). No repository, no process: values in, values out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from patchq.cli import output, render
from patchq.cli.render import Doc, Line, Raw
from patchq.commands.apply import ApplyOutcome
from patchq.commands.importing import ImportOutcome
from patchq.commands.lint import Finding, LintOutcome
from patchq.commands.queries import Status
from patchq.commands.recover import RecoverOutcome
from patchq.commands.report import ReportOutcome
from patchq.core import tiers
from patchq.core.errors import BadInputError, ConflictError
from patchq.core.hunks import HunkResult
from patchq.core.lock import Lock
from patchq.core.records import DonePatch, HunkOutcome, PatchOutcome, Stack
from patchq.formats.importers import Incoming, Skipped
from patchq.rebase.check import CheckOutcome, DryRunOutcome
from patchq.rebase.outcome import RebaseOutcome
from patchq.rebase.replay import PatchCheck
from patchq.stack.apply import PatchResult, SectionResult, SeriesResult
from patchq.stack.moves import MoveOutcome

BASE, HEAD, TREE = "b" * 40, "c" * 40, "d" * 40
ONTO = "e" * 40


def texts(items: render.Rendered) -> list[tuple[str, str]]:
    """Each line as (stream, text); a document or raw text as ("json"/"raw", repr)."""
    out = []
    for i in items:
        if isinstance(i, Line):
            out.append(("err" if i.err else "out", i.text))
        elif isinstance(i, Doc):
            out.append(("json", repr(sorted(i.value))))
        else:
            out.append(("raw", repr(i.data)))
    return out


def patch(name: str, *hunks: HunkResult, path: str = "CMakeLists.txt") -> PatchResult:
    return PatchResult(name, (SectionResult(path, path, "modify", hunks),), TREE, HEAD)


EXACT = HunkResult(0, "exact", line=10)
OFFSET = HunkResult(1, "offset", offset=-2, line=40)
FUZZED = HunkResult(0, "fuzz", offset=3, fuzz=1, line=7)


def applied_outcome() -> ApplyOutcome:
    patches = (
        patch("0001-policy.patch", EXACT),
        patch("0002-cuda-arch.patch", EXACT, OFFSET),
        patch("0003-fp4.patch", FUZZED, path="csrc/fp4.cu"),
    )
    result = SeriesResult(BASE, TREE, patches, TREE, HEAD)
    return ApplyOutcome(result, "patchq/main", Lock(BASE, TREE))


def test_apply_names_what_did_not_apply_exactly_and_sums_up() -> None:
    out = render.applied(applied_outcome())
    assert texts(out) == [
        ("err", "offset 0002-cuda-arch.patch (CMakeLists.txt hunk #2 offset -2)"),
        ("err", "  fuzz 0003-fp4.patch (csrc/fp4.cu hunk #1 fuzz 1 offset +3)"),
        (
            "err",
            f"applied 3 patches onto {BASE[:12]} (1 exact, 1 fuzz, 1 offset); "
            f"patchq/main is at {HEAD[:12]}",
        ),
    ]
    # The status word is coloured (on a terminal): exactly its padded width.
    first = out[0]
    assert isinstance(first, Line) and first.colour == "yellow" and first.span == 6
    verbose = texts(render.applied(applied_outcome(), verbose=True))
    assert verbose[0] == ("err", " exact 0001-policy.patch")
    assert len(verbose) == 4


def test_apply_json_is_one_document_with_each_hunk() -> None:
    (doc,) = render.applied(applied_outcome(), as_json=True)
    assert isinstance(doc, Doc)
    assert sorted(doc.value) == ["base", "branch", "head", "patches", "tree"]
    second = doc.value["patches"][1]
    assert second["status"] == "offset" and second["commit"] == HEAD
    assert second["files"] == [
        {
            "file": "CMakeLists.txt",
            "action": "modify",
            "status": "offset",
            "hunks": [
                {"status": "exact", "offset": 0, "fuzz": 0, "line": 10, "passed_over": []},
                {"status": "offset", "offset": -2, "fuzz": 0, "line": 40, "passed_over": []},
            ],
        }
    ]


def test_an_empty_apply_says_none() -> None:
    result = SeriesResult(BASE, TREE, (), TREE, BASE)
    (line,) = texts(render.applied(ApplyOutcome(result, "patchq/main", Lock(BASE, TREE))))
    assert line[1].startswith("applied 0 patches onto bbbbbbbbbbbb (none); ")


def test_a_move_ends_with_where_the_stack_is() -> None:
    stack = Stack(BASE, "patchq/main", ("0001-policy.patch",), (HEAD,))
    pushed = MoveOutcome(stack, pushed=(patch("0001-policy.patch", EXACT),), saved="f" * 40)
    assert texts(render.moved_stack(pushed)) == [
        (
            "err",
            f"saved your uncommitted changes in stash {'f' * 12} (`git stash show -p {'f' * 12}`)",
        ),
        ("err", " exact 0001-policy.patch"),
        ("err", "now at 0001-policy.patch"),
    ]
    popped = MoveOutcome(Stack(BASE, "patchq/main"), popped=("0002.patch", "0001.patch"))
    assert texts(render.moved_stack(popped)) == [
        ("err", "popped 0002.patch"),
        ("err", "popped 0001.patch"),
        ("err", "no patches applied"),
    ]
    assert pushed.exit_code == 0 and pushed.problem is None


def test_push_json_keeps_the_stash_line_on_stderr_first() -> None:
    stack = Stack(BASE, "patchq/main", ("0001-policy.patch",), (HEAD,))
    out = MoveOutcome(stack, pushed=(patch("0001-policy.patch", EXACT),), saved="f" * 40)
    items = render.moved_stack(out, as_json=True)
    assert [type(i) for i in items] == [Line, Doc]
    doc = items[1]
    assert isinstance(doc, Doc)
    assert doc.value["applied"] == ["0001-policy.patch"] and doc.value["failure"] is None


def hunk(status: str, **kw: object) -> HunkOutcome:
    return HunkOutcome("csrc/fp4.cu", 0, status, **kw)  # type: ignore[arg-type]


def check_outcome() -> CheckOutcome:
    many = tuple(str(i) * 40 for i in range(1, 8))
    patches = (
        PatchCheck("0001-policy.patch", (), TREE, TREE),
        PatchCheck(
            "0002-cuda-arch.patch",
            (hunk("offset", offset=4), hunk("fuzz", fuzz=2, drift=(many[0],))),
            TREE,
            TREE,
        ),
        PatchCheck(
            "0003-fp4.patch",
            (hunk("conflict", reason="changed lines differ", drift=many),),
            TREE,
            TREE,
            renames=(("csrc/fp4.cu", "csrc/quant/fp4.cu"),),
        ),
        PatchCheck("0004-anchor.patch", (hunk("merge", anchored=True),), TREE, TREE),
    )
    return CheckOutcome(BASE, ONTO, "origin/main", patches, {many[0]: "Move the FP4 kernels"})


def test_check_text_is_a_line_a_patch_with_why_each_hunk_moved() -> None:
    out = render.checked(check_outcome())
    lines = texts(out)
    assert all(stream == "out" for stream, _ in lines)
    assert [t for _, t in lines] == [
        f"checking 4 patches: {BASE[:12]} -> {ONTO[:12]} (origin/main)",
        "     clean 0001-policy.patch",
        "      fuzz 0002-cuda-arch.patch",
        "    csrc/fp4.cu hunk #1: offset (+4 lines)",
        "    csrc/fp4.cu hunk #1: fuzz (fuzz 2); proposed: fuzz",
        "        " + "1" * 12 + " Move the FP4 kernels",
        "  conflict 0003-fp4.patch",
        "    csrc/fp4.cu: renamed upstream to csrc/quant/fp4.cu",
        "    csrc/fp4.cu hunk #1: conflict (changed lines differ)",
        *(
            f"        {str(i) * 12} " + ("Move the FP4 kernels" if i == 1 else "")
            for i in range(1, 6)
        ),
        "        … and 2 more commits",
        "     merge 0004-anchor.patch",
        "    csrc/fp4.cu hunk #1: merge (placed by its anchor line; review it); proposed: anchored",
        # The fuzz and the anchored merge are proposals: the rebase stops at them.
        "summary: 1 clean, 1 conflict, 1 fuzz, 1 merge; "
        "for review (rebase stops there): 0002-cuda-arch.patch, 0004-anchor.patch",
    ]
    word = out[6]
    assert isinstance(word, Line) and word.colour == "red" and word.span == 10
    assert check_outcome().exit_code == 3


def test_check_json_has_every_hunk_key() -> None:
    (doc,) = render.checked(check_outcome(), as_json=True)
    assert isinstance(doc, Doc)
    h = doc.value["patches"][1]["hunks"][1]
    assert h == {
        "file": "csrc/fp4.cu",
        "index": 0,
        "status": "fuzz",
        "offset": 0,
        "fuzz": 2,
        "drift": ["1" * 40],
        "touched_by": [],
        "shifted": 0,
        "anchored": False,
        "method": "fuzz",
        "reason": "",
        "moved_to": None,
        "line": 0,
        "tier": "proposed",
        "proposal": {
            "method": "fuzz",
            "precision": tiers.measured("fuzz"),  # as core.tiers.MEASURED holds it
            "evidence": "its context matched only with fuzz",
        },
    }
    assert doc.value["patches"][1]["hunks"][0]["tier"] == "automatic"
    assert doc.value["accept"] == []
    accepted = replace(check_outcome(), accept=("fuzz",))
    (doc,) = render.checked(accepted, as_json=True)
    assert isinstance(doc, Doc)
    assert doc.value["patches"][1]["hunks"][1]["tier"] == "accepted"
    assert doc.value["patches"][2]["hunks"][0]["tier"] is None  # a conflict did not land
    assert doc.value["accept"] == ["fuzz"]
    assert doc.value["patches"][1]["evidence"] is None
    assert doc.value["patches"][1]["hints"] == []


def test_dry_run_reads_the_replay_as_outcomes_and_decides_its_exit_code() -> None:
    dry = DryRunOutcome(check_outcome())
    # A proposal (fuzz, anchored) stops the rebase for review as a conflict does.
    assert texts(render.dry_run(dry)) == [
        ("out", " unchanged 0001-policy.patch"),
        ("out", "  conflict 0002-cuda-arch.patch"),
        ("out", "  conflict 0003-fp4.patch"),
        ("out", "  conflict 0004-anchor.patch"),
    ]
    assert dry.exit_code == 3
    accepted = replace(check_outcome(), accept=("fuzz", "anchored"))
    assert [o for _, o in DryRunOutcome(accepted).outcomes] == [
        "unchanged",
        "refreshed",
        "conflict",
        "merged",
    ]
    offset = CheckOutcome(
        BASE, ONTO, "v2", (PatchCheck("o", (hunk("offset", offset=4),), TREE, TREE),), {}
    )
    assert DryRunOutcome(offset).exit_code == 0  # drift rebase handles alone: not a stop
    assert offset.exit_code == 1  # while `check` calls it drift
    fuzzed = CheckOutcome(BASE, ONTO, "v2", (check_outcome().patches[1],), {})
    assert DryRunOutcome(fuzzed).exit_code == 3 and fuzzed.exit_code == 3  # a proposal
    fuzzed = replace(fuzzed, accept=("fuzz",))
    assert DryRunOutcome(fuzzed).exit_code == 1 and fuzzed.exit_code == 1  # accepted
    (doc,) = render.dry_run(dry, as_json=True)
    assert isinstance(doc, Doc)
    assert doc.value["patches"][2] == {
        "name": "0003-fp4.patch",
        "outcome": "conflict",
        "status": "conflict",
        "drift": [str(i) * 40 for i in range(1, 8)],
    }


def test_a_rebase_stopped_at_a_conflict_reports_it_as_its_problem() -> None:
    done = (
        DonePatch(PatchOutcome("0001-policy.patch", "clean", "unchanged", commit=HEAD), TREE, TREE),
    )
    conflict = check_outcome().patches[2]
    subjects = {"1" * 40: "Move the FP4 kernels"}
    out = RebaseOutcome(done, False, conflict, subjects, BASE, ONTO, "patches/0003-fp4.patch")
    assert texts(render.rebased(out)) == [("err", " unchanged 0001-policy.patch")]
    problem = out.problem
    assert isinstance(problem, ConflictError) and out.exit_code == 3
    assert problem.line() == (
        f"patches/0003-fp4.patch: 0003-fp4.patch does not apply to {ONTO[:12]}: conflict in "
        f"csrc/fp4.cu (upstream: {'1' * 12} Move the FP4 kernels; {'2' * 12}; {'3' * 12}) — edit "
        "the files to resolve, then `patchq rebase --continue` (or --skip, --abort)"
    )
    finished = RebaseOutcome(done, True, None, {}, BASE, ONTO)
    assert finished.problem is None and finished.exit_code == 0
    assert texts(render.rebased(finished))[-1] == (
        "err",
        f"rebased 1 patch onto {ONTO[:12]}; see `patchq report`",
    )
    (doc,) = render.rebased(out, as_json=True)
    assert isinstance(doc, Doc) and doc.value["conflict"] == "0003-fp4.patch"
    assert doc.value["patches"][0]["commit"] == HEAD and doc.value["finished"] is False


@pytest.mark.parametrize(
    "st, want",
    [
        (
            Status(None, None, (), ("0001.patch",), (), (), False, None),
            ["no patches applied in this target", "guards: (none)"],
        ),
        (
            Status(
                "patchq/main",
                BASE,
                ("0001.patch", "0002.patch"),
                (),
                ("sm120",),
                tuple(f"f{i}.c" for i in range(7)),
                False,
                "interrupted fold 0004.patch",
            ),
            [
                f"stack patchq/main (not checked out) on {BASE[:12]}: 2 applied, 0 unapplied",
                "top: 0002.patch",
                "guards: sm120",
                "unrefreshed changes: f0.c, f1.c, f2.c, f3.c, f4.c and 2 more",
                "interrupted fold 0004.patch: patchq was stopped while changing the target "
                "(`patchq recover --continue` to finish, `patchq recover --abort` to undo)",
            ],
        ),
        (
            Status("patchq/main", BASE, (), (), (), (), True, "rebase"),
            [
                f"stack patchq/main on {BASE[:12]}: 0 applied, 0 unapplied",
                "guards: (none)",
                "in progress: rebase (`patchq rebase --continue` or `--abort`)",
            ],
        ),
    ],
)
def test_status_lines(st: Status, want: list[str]) -> None:
    assert texts(render.status(st)) == [("out", w) for w in want]


def test_import_lint_report_recover_and_errors() -> None:
    out = ImportOutcome(
        (Incoming("0001-a.patch", b""),),
        (Skipped("series.mbox:1", "[PATCH 0/1] cover", "no diff"),),
    )
    assert texts(render.imported(out)) == [
        ("out", "0001-a.patch"),
        ("err", "skipped series.mbox:1: [PATCH 0/1] cover (no diff)"),
        ("err", "imported 1 patch"),
    ]
    assert texts(render.imported(ImportOutcome(())))[-1] == ("err", "imported 0 patches")
    warn = LintOutcome((Finding("warning", "patches/x.patch", "trailing whitespace"),))
    assert texts(render.linted(warn)) == [("out", "patches/x.patch: warning: trailing whitespace")]
    assert warn.exit_code == 1 and LintOutcome(()).exit_code == 0
    assert texts(render.linted(LintOutcome(()))) == [("err", "lint: no findings")]
    assert LintOutcome((Finding("error", "series", "no such patch"),)).exit_code == 4
    written = ReportOutcome("# review\n", "a rebase is in progress", Path("r.md"))
    assert texts(render.reported(written)) == [
        ("err", "patchq: a rebase is in progress"),
        ("err", "wrote r.md"),
    ]
    assert texts(render.reported(ReportOutcome("text\n", None, None))) == [("raw", "'text\\n'")]
    assert texts(render.recovered(RecoverOutcome("fold", "abort", "a" * 40))) == [
        ("err", f"saved uncommitted changes found on the way in stash {'a' * 12}"),
        ("err", "undid the interrupted `patchq fold`"),
    ]
    err = BadInputError("unknown patch", "series", "see `patchq series`")
    assert texts(render.error(err)) == [
        ("err", "patchq: series: unknown patch — see `patchq series`")
    ]


def test_output_show_sends_each_item_to_its_stream(capsys: pytest.CaptureFixture[str]) -> None:
    output.show(
        (
            Line("data"),
            Line("  fuzz x.patch", err=True, colour="yellow", span=6),
            Doc({"b": 1, "a": [2]}),
            Raw("raw text"),
        )
    )
    got = capsys.readouterr()
    # Not a terminal: no colour codes.
    assert got.out == 'data\n{\n  "a": [\n    2\n  ],\n  "b": 1\n}\nraw text'
    assert got.err == "  fuzz x.patch\n"
