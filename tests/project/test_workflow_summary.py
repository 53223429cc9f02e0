"""The example workflow's pull-request summary, run for real: its `jq`
program over `check --json` of a repository whose rebase takes a proposal gives, for each
proposed hunk, its method, measured precision and evidence, and names the upstream
commits of a patch that may be fixed differently upstream."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.core import tiers

from ..conftest import Queue, Result, Upstream
from ..rebase.test_check_rebase import advance, make_patch, pin, sub
from ..rebase.test_fixed_upstream import LINES
from ..rebase.test_tiers import cli, word_case

ROOT = Path(__file__).resolve().parents[2]


def summary_program() -> str:
    """The jq program the workflow turns check.json into the summary with."""
    text = (ROOT / "examples" / "github-workflow.yml").read_text(encoding="utf-8")
    found = re.search(r"jq -r '(\.patches\[\].*?)' \\\n", text, re.S)
    assert found is not None, "the workflow's jq program"
    return found.group(1)


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_summary_names_method_precision_evidence_and_upstream_commits(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    fix = word_case(upstream, queue, patchq)
    r = cli(queue, "check", "--onto", "main", "--accept", "all", "--json")
    assert r.code == 1, r.err
    assert json.loads(r.out)["patches"][0]["rewritten"]["commits"] == [fix]
    done = subprocess.run(
        ["jq", "-r", summary_program()], input=r.out.encode(), capture_output=True, check=True
    )
    uses, right, _ = tiers.MEASURED["word"]
    assert done.stdout.decode() == (
        f"- `p.patch` f.txt:2 (hunk #1): **word**, precision {right} right of {uses} uses"
        " — the 3-way merge conflicted; the change was merged word by word"
        f"; fixed differently upstream? upstream changed every line it changes ({fix[:12]})\n"
    )


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_summary_names_a_patch_taken_as_rewritten_with_no_hunk_proposed(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    # git's merge places the patch, but upstream changed its lines: `--accept all` takes
    # it as `rewritten` (no hunk is a proposal), and the merge request must still name it.
    upstream.write("f.c", LINES)
    base = upstream.commit("base")
    mine = sub(sub(LINES, "line 5\n", "LINE 5\n"), "line 8\n", "LINE 8\n")
    pin(upstream, queue, patchq, [("p.patch", make_patch(upstream, "", {"f.c": mine}))], base)
    fix = advance(upstream, "capital five", {"f.c": sub(LINES, "line 5\n", "LINE 5\n")})
    r = cli(queue, "check", "--onto", "main", "--accept", "all", "--json")
    assert r.code == 1, r.err
    done = subprocess.run(
        ["jq", "-r", summary_program()], input=r.out.encode(), capture_output=True, check=True
    )
    assert done.stdout.decode() == (
        "- `p.patch`: **rewritten**, merged as it is — fixed differently upstream? upstream "
        f"changed every line it changes ({fix[:12]})\n"
    )
