"""A last hunk the patch file ends short of: read exactly as GNU patch 2.7.6 reads it.

GNU patch (pch.c, another_hunk, unified case) meets the end of the patch file inside a
hunk and, while at most three new lines are missing, reads a blank context line
("assume blank lines got chopped"); a context line fills both sides, so only a hunk
missing as many old as new lines (1 to 3) and holding a change is whole. A last line
cut in the middle is dropped first ("patch unexpectedly ends in middle of line").
patchq pads the same hunks, records `eof-blank-context` (and `eof-mid-line` for the
dropped line), and refuses every other short hunk as GNU patch does. Found by the parity
corpus: an MSYS2 patch that ends after its `+` lines, three lines short.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchq.core import hunks as engine
from patchq.core.errors import BadInputError
from patchq.core.names import EOF_CONTEXT, EOF_MID_LINE
from patchq.core.patch import parse

from ..conftest import Queue, Result, Upstream
from ..core.test_differential import body, git_diff, run_tool

needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch missing")

HEAD = b"--- a/f.py\n+++ b/f.py\n"
# Three context lines, the change, and the three blank lines after it chopped off.
CHOPPED = HEAD + b"@@ -2,7 +2,8 @@\n a\n b\n c\n-d\n+D\n+E\n"
SOURCE = b"top\na\nb\nc\nd\n\n\n\nafter\n"


def kinds(data: bytes) -> list[str]:
    return [n.kind for n in parse(data, "p").normalisations]


def test_a_hunk_cut_after_its_change_is_padded_with_blank_context() -> None:
    patch = parse(CHOPPED, "p")
    (hunk,) = patch.sections[0].hunks
    assert hunk.lines[-4:] == (("+", b"E\n"), (" ", b"\n"), (" ", b"\n"), (" ", b"\n"))
    assert (len(hunk.old_lines), len(hunk.new_lines)) == (7, 8)
    (note,) = patch.normalisations
    assert (note.kind, note.line) == (EOF_CONTEXT, 3)
    assert "3 blank context line(s) short" in note.detail
    assert patch.render() == CHOPPED  # the file's text is kept as it is
    res = engine.apply_hunks(SOURCE, patch.sections[0].hunks, gnu=True)
    assert res.ok and res.content == b"top\na\nb\nc\nD\nE\n\n\n\nafter\n"


@pytest.mark.parametrize(
    "data, found",
    [
        # Four lines short: more than GNU patch takes for chopped blank lines.
        (HEAD + b"@@ -2,8 +2,9 @@\n a\n b\n c\n-d\n+D\n+E\n", "found 4 and 5"),
        # One old line and two new ones short: a context line cannot fill that.
        (HEAD + b"@@ -2,5 +2,7 @@\n a\n b\n c\n-d\n+D\n", "found 4 and 4"),
        # Two old lines and one new one short.
        (HEAD + b"@@ -2,6 +2,6 @@\n a\n b\n c\n-d\n+D\n+E\n", "found 4 and 5"),
        # Nothing but context before the end: the change itself is gone.
        (HEAD + b"@@ -2,7 +2,7 @@\n a\n b\n c\n d\n", "found 4 and 4"),
    ],
)
def test_other_short_hunks_at_the_end_are_refused(data: bytes, found: str) -> None:
    with pytest.raises(BadInputError, match=f"truncated hunk: .*{found}") as caught:
        parse(data, "p")
    assert caught.value.where == "p:3"


def test_a_short_hunk_before_more_text_is_not_padded() -> None:
    # GNU patch pads at the end of the file only; here the next file's `---` follows.
    data = CHOPPED + b"--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n"
    with pytest.raises(BadInputError, match="hunk header says 7 old and 8 new lines"):
        parse(data, "p")


def test_a_last_line_cut_in_the_middle_is_dropped_then_padded() -> None:
    data = HEAD + b"@@ -2,5 +2,5 @@\n a\n b\n-c\n+C\n d"
    patch = parse(data, "p")
    assert patch.sections[0].hunks[0].lines[-1] == (" ", b"\n")  # not `d`
    assert [n.kind for n in patch.normalisations] == [EOF_MID_LINE, EOF_CONTEXT]
    assert patch.normalisations[0].line == 8 and "dropped" in patch.normalisations[0].detail
    assert patch.render() == data


def test_a_cut_change_line_is_refused() -> None:
    # The cut `+C` is dropped: one new line short and no old one, which no blank fills.
    with pytest.raises(BadInputError, match="truncated hunk"):
        parse(HEAD + b"@@ -2,2 +2,2 @@\n a\n-c\n+C", "p")
    # A complete hunk followed by a cut line: the hunk is whole, the line is text after it.
    assert kinds(HEAD + b"@@ -2,2 +2,2 @@\n a\n-b\n+B\n text") == ["lines-after-hunk"]


# --- against GNU patch itself ------------------------------------------------------------

WORDS = ["", "", "a", "b", "}", "x++;"]


@st.composite
def chopped(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """(old file, a target, a patch of the old file cut inside its last hunk)."""
    n = draw(st.integers(3, 14))
    old = [draw(st.sampled_from(WORDS)) for _ in range(n)] + [""] * draw(st.integers(0, 3))
    new = list(old)
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, len(new) - 1))
        new[i] = new[i] + " ours" if draw(st.booleans()) else "ins"
    target = old if draw(st.booleans()) else [*old[:1], "drift", *old[1:]]
    return body(old), body(target), body(new)


def cut(patch: bytes, drop: int, partial: int) -> bytes | None:
    """`patch` without its last `drop` lines and `partial` bytes of the one then last,
    never cutting into the last hunk's `@@` line."""
    lines = patch.splitlines(keepends=True)
    last_at = max(i for i, x in enumerate(lines) if x.startswith(b"@@"))
    keep = len(lines) - drop
    if keep <= last_at + 1:
        return None
    text = b"".join(lines[:keep])
    if partial:
        text = text[: -min(partial, len(lines[keep - 1]) - 1)]
    return text


@needs_patch
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(chopped(), st.integers(1, 5), st.integers(0, 3))
def test_reads_and_applies_a_cut_patch_as_gnu_patch_does(
    tmp_path_factory: pytest.TempPathFactory, c: tuple[bytes, bytes, bytes], drop: int, part: int
) -> None:
    tmp = tmp_path_factory.mktemp("gnu")
    old, target, new = c
    whole = git_diff(tmp, old, new)
    patch = cut(whole, drop, part) if whole else None
    if patch is None:
        return
    try:
        hunks = parse(patch, "p").sections[0].hunks
    except BadInputError:
        hunks = None
    for fuzz in (0, 2):
        cmd = ["patch", "-p1", f"--fuzz={fuzz}", "--no-backup-if-mismatch", "-r", "-"]
        work = tmp / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        (work / "f").write_bytes(target)
        (tmp / "p.diff").write_bytes(patch)
        proc = subprocess.run([*cmd, "-i", str(tmp / "p.diff")], cwd=work, capture_output=True)
        malformed = proc.returncode == 2 and (
            b"malformed patch" in proc.stderr or b"unexpected end of file" in proc.stderr
        )
        # Read alike: GNU patch calls the patch malformed exactly where patchq refuses it.
        assert malformed == (hunks is None), (patch, proc.stderr)
        if hunks is None:
            continue
        gnu = run_tool(tmp, [*cmd, "-s", "-i"], target, patch)
        if gnu is not None:
            ours = engine.apply_hunks(target, hunks, fuzz=fuzz, gnu=True)
            assert ours.ok and ours.content == gnu, (fuzz, patch, target)


# --- through the CLI ---------------------------------------------------------------------


@needs_patch
def test_apply_takes_the_chopped_hunk_gives_gnu_patchs_tree_and_lint_says_so(
    tmp_path: Path, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    gnu = tmp_path / "gnu"
    gnu.mkdir()
    (gnu / "f.py").write_bytes(SOURCE)
    proc = subprocess.run(
        ["patch", "-p1", "-F0", "--batch", "--no-backup-if-mismatch", "-r", "-"],
        cwd=gnu,
        input=CHOPPED,
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stdout
    upstream.write("f.py", SOURCE)
    base = upstream.commit("release")
    queue.add("chopped.patch", CHOPPED)
    r = patchq("apply", "--onto", base, "--json")
    assert r.code == 0, r.err
    assert upstream.read("f.py") == (gnu / "f.py").read_bytes()
    notes = json.loads(r.out)["patches"][0]["normalisations"]
    assert [(n["kind"], n["line"]) for n in notes] == [(EOF_CONTEXT, 3)]
    r = patchq("lint")
    assert r.code == 1 and "chopped.patch" in r.out
    assert "needed normalisation eof-blank-context at line 3" in r.out, r.out
    # The patch file itself is left as it was; the lock names it as read.
    assert (queue.path / "patches" / "chopped.patch").read_bytes() == CHOPPED
    assert b"chopped.patch" in queue.lock()
