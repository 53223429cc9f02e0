"""`report` after a real rebase: outcomes, cosmetic vs substantive, change-only interdiff.

DESIGN §5: a cosmetic patch (only positions or context moved) shows no interdiff; a
substantive one shows only the added/removed lines that changed; every moved hunk names
the upstream commits that moved it. Text, GitHub Markdown and JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Queue, Result, Upstream, git, run_inprocess
from ..rebase.test_check_rebase import BASE, advance, make_patch, pin, resolve, sub

KEEP = "  keep one\n  keep two\n"


@pytest.fixture
def rebased(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> dict[str, str]:
    """A finished rebase: cos.patch moved (cosmetic), sub.patch resolved (substantive),
    up.patch upstreamed. Returns the upstream commits by role."""
    for f in ("cos", "sub", "up"):
        upstream.write(f"{f}.txt", BASE)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [
            (
                "cos.patch",
                make_patch(
                    upstream, "Cosmetic\n\n", {"cos.txt": sub(BASE, "line 20\n", "COS 20\n")}
                ),
            ),
            (
                "sub.patch",
                make_patch(
                    upstream,
                    "Substantive\n\n",
                    {"sub.txt": sub(BASE, "line 20\n", "SUB 20\n" + KEEP)},
                ),
            ),
            (
                "up.patch",
                make_patch(upstream, "Upstreamed\n\n", {"up.txt": sub(BASE, "line 5\n", "UP 5\n")}),
            ),
        ],
        base,
    )
    c = {
        "move": advance(upstream, "Insert a license header", {"cos.txt": "# license\n" + BASE}),
        "edit": advance(
            upstream,
            "Rename line 20 | with a pipe",
            {"sub.txt": sub(BASE, "line 20\n", "Line twenty\n")},
        ),
        "take": advance(upstream, "Take UP 5", {"up.txt": sub(BASE, "line 5\n", "UP 5\n")}),
    }
    assert patchq("rebase", "--onto", "main").code == 3
    resolve(upstream.path / "sub.txt", "SUB twenty\n" + KEEP)
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    return c


INTERDIFF = [" === sub.txt", "--line 20", "-+SUB 20", "+-Line twenty", "++SUB twenty"]


def test_text_report(rebased: dict[str, str], patchq: Callable[..., Result]) -> None:
    r = patchq("report")
    assert r.code == 0, r.err
    out = r.out
    heads = [m.groups() for m in re.finditer(r"(?m)^ *(\w+)  (\S+)  \[([\w, ]+)\]$", out)]
    assert heads == [
        ("refreshed", "cos.patch", "cosmetic, 1 hunk moved"),
        ("resolved", "sub.patch", "substantive, 1 hunk moved"),
        ("upstreamed", "up.patch", "removed"),
    ]
    assert out.splitlines()[1] == "needs a reviewer's eye: sub.patch"
    cos = _section(out, "cos.patch")
    # The license header only shifted the hunk: a count, no commit named.
    assert cos[1].strip() == "cos.txt hunk #1: moved +1 line (shifted by 1 upstream commit)"
    assert not any(x.strip().startswith(("--", "-+", "+-", "++")) for x in cos)
    sub_ = _section(out, "sub.patch")
    assert sub_[1].strip() == (
        f"sub.txt hunk #1: conflict, resolved by hand (by "
        f"{rebased['edit'][:12]} Rename line 20 | with a pipe)"
    )
    # Only the changed lines; the unchanged added lines ("keep …") are not repeated.
    assert [x[12:] for x in sub_[2 : 2 + len(INTERDIFF)]] == INTERDIFF
    # Then the new hunk itself, as the refreshed patch has it.
    new_hunk = [x[12:] for x in sub_[2 + len(INTERDIFF) :]]
    assert new_hunk[0] == "new hunk in sub.txt (resolved by hand):"
    assert new_hunk[1].startswith("| @@ -17,")
    assert new_hunk[2:] == [
        "|  line 17",
        "|  line 18",
        "|  line 19",
        "| -Line twenty",
        "| +SUB twenty",
        "| +  keep one",
        "| +  keep two",
        "|  line 21",
        "|  line 22",
        "|  line 23",
    ]
    assert "new hunk" not in "\n".join(cos)
    assert f"{rebased['take'][:12]} Take UP 5" in "\n".join(_section(out, "up.patch"))
    assert "summary: 1 refreshed, 1 resolved, 1 upstreamed" in out


def _section(out: str, name: str) -> list[str]:
    """The lines of a patch's entry in the text report."""
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if f"  {name}  [" in x)
    end = start + 1
    while end < len(lines) and lines[end].startswith("            "):
        end += 1
    return lines[start:end]


def test_markdown_report(
    rebased: dict[str, str], patchq: Callable[..., Result], tmp_path: Path
) -> None:
    target = tmp_path / "review.md"
    r = patchq("report", "--format", "md", "-o", str(target))
    assert r.code == 0 and r.out == "" and str(target) in r.err
    md = target.read_text()
    assert md == patchq("report", "--format", "md").out
    assert md.startswith("## patchq rebase: ")
    assert "| patch | outcome | change | hunks moved | upstream commits |\n| --- |" in md
    assert (
        f"| `cos.patch` | refreshed | cosmetic | 1 | `{rebased['move'][:12]} "
        "Insert a license header` |"
    ) in md
    assert (
        f"| `sub.patch` | resolved | substantive | 1 | `{rebased['edit'][:12]} "
        "Rename line 20 \\| with a pipe` |"
    ) in md
    assert f"| `up.patch` | upstreamed | removed | 1 | `{rebased['take'][:12]} Take UP 5` |" in md
    assert "Needs a reviewer's eye: `sub.patch`" in md and "`cos.patch`," not in md
    # For the substantive patch only: a fenced interdiff with only the changed lines,
    # then its new hunk.
    assert md.count("```diff") == 2
    fence = md[md.index("```diff\n") + 8 :]
    assert fence[: fence.index("```")].splitlines() == INTERDIFF
    assert "New hunk in `sub.txt` (resolved by hand):\n\n```diff\n@@ -17," in md
    assert "\n-Line twenty\n+SUB twenty\n+  keep one\n" in md
    cos = md[md.index("### `cos.patch`") : md.index("### `sub.patch`")]
    assert "```" not in cos and "moved +1 line" in cos


def test_json_report(rebased: dict[str, str], patchq: Callable[..., Result]) -> None:
    r = patchq("report", "--format", "json")
    assert r.code == 0
    doc: dict[str, Any] = json.loads(r.out)
    by = {p["name"]: p for p in doc["patches"]}
    assert {n: (p["outcome"], p["change"]) for n, p in by.items()} == {
        "cos.patch": ("refreshed", "cosmetic"),
        "sub.patch": ("resolved", "substantive"),
        "up.patch": ("upstreamed", "removed"),
    }
    assert by["cos.patch"]["interdiff"] == [] and by["sub.patch"]["interdiff"] == INTERDIFF
    assert {n: p["drift"] for n, p in by.items()} == {
        "cos.patch": [rebased["move"]],
        "sub.patch": [rebased["edit"]],
        "up.patch": [rebased["take"]],
    }
    assert by["cos.patch"]["hunks"][0]["offset"] == 1
    assert doc["subjects"][rebased["edit"]] == "Rename line 20 | with a pipe"


def test_report_without_a_rebase_says_so(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("a.txt", "a\n")
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("a.patch", make_patch(upstream, "", {"a.txt": "A\n"}))], base)
    r = patchq("report")
    assert r.code == 4 and "no rebase recorded" in r.err


def test_report_from_the_lock_alone(
    rebased: dict[str, str], upstream: Upstream, patchq: Callable[..., Result]
) -> None:
    # On another machine the rebase record is absent: the lock still gives the summary.
    (upstream.path / ".git/patchq/main.last-rebase.json").unlink()
    r = patchq("report", "--format", "md")
    assert r.code == 0
    assert "| `sub.patch` | resolved |" in r.out and rebased["edit"][:12] in r.out


def test_report_during_a_stopped_rebase_says_it_is_the_previous_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "demo"
    assert run_inprocess(capsys, "demo", str(root)).code == 0
    up, q = root / "sgl-kernel", str(root / "patches-repo")
    git(up, "checkout", "-q", "main")
    cm = up / "CMakeLists.txt"
    cm.write_text(cm.read_text().replace('"100a;103a"', '"100a;103a;110a"'))
    git(up, "commit", "-q", "-am", "Build FP4 kernels for sm_110a")
    git(up, "checkout", "-q", "patchq/main")
    assert run_inprocess(capsys, "--dir", q, "rebase", "--onto", "main").code == 3
    r = run_inprocess(capsys, "--dir", q, "report")
    assert r.code == 0
    assert r.err == (
        "patchq: a rebase is in progress (stopped at a conflict): this report "
        "is of the last rebase that finished\n"
    )
    assert "0003-fp4-sm120a.patch" in r.out
