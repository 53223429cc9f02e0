"""No merge-conflict markers in the repository's text.

A merge that was committed unresolved leaves `<<<<<<< `, `=======` and `>>>>>>> ` lines
behind, which a reader takes for content. Every tracked text file is scanned, except the test data
that needs markers (tests/data/). The one kind of marker block allowed elsewhere is
patchq's own output shown as documentation — the README's walk-through prints the diff3
markers a stopped rebase leaves: `<<<<<<< upstream`, `||||||| base`, `=======`,
`>>>>>>> NAME.patch`. A git merge's own labels (`HEAD`, a branch, a commit) never are.
"""

from __future__ import annotations

import re
import subprocess

from ..conftest import ROOT

OPEN, BASE, MID, CLOSE = "<" * 7, "|" * 7, "=" * 7, ">" * 7
# Test data that needs markers: files as a conflicted target holds them.
EXEMPT = ("tests/data/",)


def markers(text: str) -> list[str]:
    """Each conflict-marker line of `text` not inside a block of patchq's own markers, as
    `line: text`."""
    found = []
    ours = False  # inside `<<<<<<< upstream` … `>>>>>>> NAME.patch`
    for n, line in enumerate(text.splitlines(), 1):
        if line == f"{OPEN} upstream":
            ours = True
            continue
        if ours and (line == MID or line.startswith(BASE + " ")):
            continue
        if ours and re.fullmatch(re.escape(CLOSE) + r" \S+\.(patch|diff)", line):
            ours = False
            continue
        if line.startswith((OPEN + " ", CLOSE + " ")) or line in (OPEN, CLOSE, MID):
            found.append(f"{n}: {line}")
    return found


def test_no_tracked_text_file_holds_conflict_markers() -> None:
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    bad, scanned = [], 0
    for name in (n.decode() for n in names if n):
        path = ROOT / name
        if name.startswith(EXEMPT) or not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        scanned += 1
        text = data.decode("utf-8", errors="replace")
        bad += [f"{name}:{m}" for m in markers(text)]
    assert scanned > 100
    assert bad == [], "\n" + "\n".join(bad)


def test_the_scan_catches_a_committed_conflict() -> None:
    git_merge = f"a\n{OPEN} HEAD\nours\n{MID}\ntheirs\n{CLOSE} rerere\nb\n"
    assert markers(git_merge) == [f"2: {OPEN} HEAD", f"4: {MID}", f"6: {CLOSE} rerere"]
    diff3 = f"{OPEN} main\nx\n{BASE} merged common ancestors\ny\n{MID}\nz\n{CLOSE} topic\n"
    assert markers(diff3) == [f"1: {OPEN} main", f"5: {MID}", f"7: {CLOSE} topic"]
    # patchq's own markers, as the README shows a stopped rebase's file, are documentation.
    shown = f"{OPEN} upstream\nu\n{BASE} base\nb\n{MID}\np\n{CLOSE} 0003-fp4-sm120a.patch\n"
    assert markers(shown) == []
    # ...but a stray marker after such a block is still found, and so is a bare one.
    assert markers(shown + f"{MID}\n{OPEN}\n") == [f"8: {MID}", f"9: {OPEN}"]
    # Lines that only contain the characters are not markers.
    assert markers(f"x = '{OPEN} upstream'\n{MID}=\n  {CLOSE} y\n") == []
