"""The README's walk-throughs run as written.

Every fenced block after a `<!-- run -->` line is taken, in README order, into one bash
script (so `cd` carries from block to block) and run in the sealed HOME with `patchq` on
PATH — this interpreter running this checkout's `src/`. A command whose trailing comment
starts `# exit N` must exit N; every other command must exit 0 (`set -e`). Heredoc bodies
are passed through untouched.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT

README = ROOT / "README.md"
RUN = "<!-- run -->"
EXPECT = re.compile(r"^(?P<cmd>.*?\S)\s+#\s*exit (?P<code>\d+)\b.*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<tag>\w+)\1")


def run_blocks(text: str) -> list[tuple[int, list[str]]]:
    """(line number of the block's first line, its lines) for every marked block."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == RUN:
            j = i + 1
            assert lines[j].startswith("```"), f"README.md:{j + 1}: {RUN} must precede a fence"
            k = j + 1
            while not lines[k].startswith("```"):
                k += 1
            out.append((j + 2, lines[j + 1 : k]))
            i = k
        i += 1
    return out


def to_script(blocks: list[tuple[int, list[str]]]) -> str:
    """One bash script: each command line checks its exit code and says where it was."""
    out = [
        "set -eu -o pipefail",
        "trap 'echo \"README.md:$__at: command failed (exit $?)\" >&2' ERR",
        "__at=0",
    ]
    for first, lines in blocks:
        heredoc: str | None = None
        continued = False
        for n, line in enumerate(lines, first):
            if heredoc is not None:
                out.append(line)
                if line.strip() == heredoc:
                    heredoc = None
                continue
            if not continued:
                out.append(f"__at={n}")
            m = EXPECT.match(line)
            if m and not continued and not line.rstrip().endswith("\\"):
                cmd, code = m.group("cmd"), int(m.group("code"))
                out.append(f"{{ {cmd}\n}} && __rc=0 || __rc=$?")
                out.append(
                    f'[ "$__rc" -eq {code} ] || {{ echo "README.md:{n}: exit $__rc, '
                    f'expected {code}" >&2; exit 99; }}'
                )
            else:
                out.append(line)
            h = HEREDOC.search(line)
            if h:
                heredoc = h.group("tag")
            continued = line.rstrip().endswith("\\")
    return "\n".join(out) + "\n"


def test_readme_walkthroughs_run_as_written(tmp_path: Path) -> None:
    blocks = run_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 6, "the walk-throughs lost their <!-- run --> marks"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in (
        ("patchq", f'exec "{sys.executable}" -m patchq "$@"'),
        ("python3", f'exec "{sys.executable}" "$@"'),
    ):
        shim = bindir / name
        shim.write_text(f"#!/bin/sh\n{body}\n")
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["PYTHONPATH"] = str(ROOT / "src")
    script = tmp_path / "walkthroughs.sh"
    script.write_text(to_script(blocks))
    proc = subprocess.run(
        ["bash", str(script)], cwd=env["HOME"], env=env, capture_output=True, timeout=120
    )
    tail = (proc.stdout + proc.stderr).decode(errors="replace")[-4000:]
    assert proc.returncode == 0, tail
    home = Path(env["HOME"])
    # What the walk-throughs say they leave behind.
    assert (
        (home / "patchq-tour" / "patches-repo" / "review.md")
        .read_text()
        .startswith("## patchq rebase")
    )
    cmake = (home / "plain" / "CMakeLists.txt").read_text()
    assert 'set(FP4_ARCHS "100a;103a;110a;120a")' in cmake
    assert cmake.endswith("# a local edit\n")


def test_setup_commands_come_first() -> None:
    text = README.read_text(encoding="utf-8")
    first = text.index(
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && patchq demo\n"
    )
    assert first < text.index("bash .ci/run\n") < text.index("## ")


def test_readme_shows_the_example_workflow_verbatim() -> None:
    text = README.read_text(encoding="utf-8")
    workflow = (ROOT / "examples" / "github-workflow.yml").read_text(encoding="utf-8")
    assert f"```yaml\n{workflow}```\n" in text
    # check and rebase take the same --accept; the proposals taken lead
    # the pull request (method, measured precision, evidence) and make it a draft to
    # review; a stop fails the job with its message in the summary.
    assert 'patchq check --onto "$first" --accept "$ACCEPT" --json' in workflow
    assert 'patchq check --watch $onto --accept "$ACCEPT"' in workflow
    assert 'patchq rebase --onto "$FIRST" --accept "$ACCEPT" --json' in workflow
    # Exactly what the rebase wrote is staged, after verify and lint passed on it.
    assert "add-paths: ${{ steps.rebase.outputs.paths }}" in workflow
    assert "patchq verify" in workflow and "patchq lint" in workflow
    assert 'select(.tier == "accepted")' in workflow and ".proposal.precision" in workflow
    assert "draft: ${{ steps.rebase.outputs.review == 'true' }}" in workflow
    assert "### The rebase stopped" in workflow
    assert "patchq report --format md" in workflow
    assert "--exec" not in workflow.split("steps:", 1)[1]  # no build without an explicit --exec
    assert not (ROOT / ".github" / "workflows" / "github-workflow.yml").exists()


def test_script_checks_expected_exit_codes() -> None:
    """The runner itself: an `# exit N` line passes only with exit N."""
    good = to_script([(1, ["false   # exit 1", "true"])])
    bad = to_script([(1, ["true   # exit 3"])])
    unmarked = to_script([(1, ["false"])])
    assert subprocess.run(["bash", "-c", good]).returncode == 0
    assert subprocess.run(["bash", "-c", bad], capture_output=True).returncode == 99
    assert subprocess.run(["bash", "-c", unmarked], capture_output=True).returncode != 0
