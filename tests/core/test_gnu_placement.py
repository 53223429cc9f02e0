"""GNU patch's placement: `apply`/`push` place hunks where GNU patch does.

A distribution's series was made and tested with GNU patch on its own base. Wherever
GNU patch places every hunk of a file, patchq's `apply` gives the same bytes — nearest
match first, fuzz by GNU's prefix/suffix rules, a hunk overlapping the trailing context
of the one before — and records a fuzzed or passed-over placement; where GNU patch fails,
patchq's own rules decide. Checked on hand-made cases and against GNU patch itself on
generated ones, at fuzz 0 and at its default fuzz 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from patchq.core import hunks as engine
from patchq.core.patch import parse, split_lines
from patchq.core.status import AMBIGUOUS

from ..conftest import Queue, Result, Upstream
from ..core.test_differential import body, case, git_diff, run_tool

needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch missing")

BLOCK = ["{", "int a;", "x++;", "}", "return 0;"]


def lines(*parts: str) -> bytes:
    return "".join(p + "\n" for p in parts).encode()


def hunk_patch(header: str, *body_lines: str) -> bytes:
    return b"--- a/f\n+++ b/f\n" + header.encode() + b"\n" + lines(*body_lines)


def test_nearest_match_first_where_the_strict_rules_see_a_tie() -> None:
    # The block stated at line 6 is gone; copies stand 4 lines above and 4 below.
    content = lines("top", *BLOCK, "mid 1", "mid 2", "mid 3", *BLOCK, "end")
    patch = hunk_patch("@@ -6,5 +6,5 @@", " {", " int a;", "-x++;", "+x--;", " }", " return 0;")
    hunks = parse(patch).sections[0].hunks
    strict = engine.apply_hunks(content, hunks)
    assert not strict.ok and strict.hunks[0].status == AMBIGUOUS
    res = engine.apply_hunks(content, hunks, gnu=True)
    assert res.ok
    (h,) = res.hunks
    # GNU patch tries +k before -k: the copy below the stated line wins.
    assert (h.status, h.offset, h.line) == ("offset", 4, 10)
    assert h.passed_over == (2,)
    assert res.content == content.replace(b"x++;\n}\nreturn 0;\nend", b"x--;\n}\nreturn 0;\nend")


def test_fuzz_drops_context_by_gnu_levels_and_keeps_the_files_lines() -> None:
    content = lines("a", "b", "c", "CHANGED", "e", "f", "g", "h")
    patch = hunk_patch("@@ -2,7 +2,7 @@", " b", " c", " d", "-e", "+E", " f", " g", " h")
    hunks = parse(patch).sections[0].hunks
    assert not engine.apply_hunks(content, hunks, gnu=True).ok  # fuzz 0: GNU fails too
    res = engine.apply_hunks(content, hunks, fuzz=2, gnu=True)
    assert not res.ok  # `d`, three lines before the change, goes only at fuzz 3
    res = engine.apply_hunks(content, hunks, fuzz=3, gnu=True)
    assert res.ok and res.hunks[0].status == "fuzz" and res.hunks[0].fuzz == 3
    assert res.content == lines("a", "b", "c", "CHANGED", "E", "f", "g", "h")


def test_less_trailing_than_leading_context_anchors_to_the_end_until_fuzz_evens_it() -> None:
    content = lines("1", "2", "3", "4", "5", "6", "7", "8")
    # Three lines before the change, one after: GNU patch reads it as the end of a file.
    patch = hunk_patch("@@ -2,5 +2,5 @@", " 2", " 3", " 4", "-5", "+five", " 6")
    hunks = parse(patch).sections[0].hunks
    placed = engine.gnu_apply(split_lines(content), hunks, 0)
    assert placed is None  # `patch -F0` fails it
    placed = engine.gnu_apply(split_lines(content), hunks, 2)
    assert placed is not None and placed.hunks[0].status == "exact"  # fuzz 2 evens it
    # As `patch -F0`, `apply` without fuzz refuses it; the rules of a rebase take it.
    res = engine.apply_hunks(content, hunks, gnu=True)
    assert not res.ok and "longer at one end than the other" in res.hunks[0].reason
    assert res.content == content
    assert engine.apply_hunks(content, hunks, fuzz=2, gnu=True).content == content.replace(
        b"5\n", b"five\n"
    )
    assert engine.apply_hunks(content, hunks).content == content.replace(b"5\n", b"five\n")


def test_a_hunk_may_overlap_the_trailing_context_of_the_one_before() -> None:
    content = lines(*(f"line {i}" for i in range(1, 13)))
    first = (
        parse(
            hunk_patch("@@ -2,5 +2,5 @@", " line 2", " line 3", "-line 4", "+LINE 4", " line 5")
            + b" line 6\n"
        )
        .sections[0]
        .hunks[0]
    )
    second = (
        parse(
            hunk_patch(
                "@@ -5,5 +5,5 @@", " line 5", " line 6", "-line 7", "+LINE 7", " line 8", " line 9"
            )
        )
        .sections[0]
        .hunks[0]
    )
    assert not engine.apply_hunks(content, [first, second]).ok  # the strict rules: no
    res = engine.apply_hunks(content, [first, second], gnu=True)
    assert res.ok, res.hunks
    assert res.content == content.replace(b"line 4\n", b"LINE 4\n").replace(
        b"line 7\n", b"LINE 7\n"
    )


@needs_patch
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(case())
def test_same_bytes_as_gnu_patch_wherever_it_applies(
    tmp_path_factory: pytest.TempPathFactory, c: tuple[list[str], list[str], list[str]]
) -> None:
    tmp = tmp_path_factory.mktemp("gnu")
    old, new, drift = c
    patch = git_diff(tmp, body(old), body(new))
    if not patch:
        return
    hunks = parse(patch).sections[0].hunks
    target = body(drift)
    for fuzz in (0, 2):
        cmd = ["patch", "-s", "-p1", f"--fuzz={fuzz}", "--no-backup-if-mismatch", "-r", "-"]
        gnu = run_tool(tmp, cmd + ["-i"], target, patch)
        ours = engine.apply_hunks(target, hunks, fuzz=fuzz, gnu=True)
        if gnu is not None:
            assert ours.ok and ours.content == gnu, (fuzz, patch, target)


# --- through the CLI ---------------------------------------------------------------------

TWICE = lines("head", *BLOCK, "gap 1", "gap 2", "gap 3", "gap 4", *BLOCK, "tail")
# Made where the block stood once, at line 6, opened by `(`: fuzz 1 drops that line (and
# `return 0;`), and the rest matches at lines 2 and 11.
FUZZY = hunk_patch("@@ -6,5 +6,5 @@", " (", " int a;", "-x++;", "+x += 2;", " }", " return 0;")


def test_apply_needs_the_option_says_which_and_records_what_it_passed_over(
    tmp_path: Path, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("f", TWICE)
    base = upstream.commit("two copies")
    queue.add("fuzzy.patch", FUZZY)
    r = patchq("apply", "--onto", base)
    assert r.code == 3 and r.err.count("\n") == 1
    assert "applies with fuzz 1, as GNU patch would: rerun with `--fuzz 1`" in r.err
    assert "`fuzz = 1` in patchq.toml" in r.err
    assert upstream.read("f") == TWICE  # nothing changed
    r = patchq("apply", "--onto", base, "--fuzz", "2", "--json")
    assert r.code == 0, r.err
    (hunk,) = json.loads(r.out)["patches"][0]["files"][0]["hunks"]
    # Stated at line 6: the copy at line 2 (-4) is nearer than the one at line 11 (+5).
    assert (hunk["status"], hunk["fuzz"], hunk["line"], hunk["passed_over"]) == (
        "fuzz",
        1,
        2,
        [11],
    )
    assert upstream.read("f") == TWICE.replace(b"x++;", b"x += 2;", 1)
    (rec,) = json.loads(queue.lock())["patches"]
    assert rec["placed"] == [{"file": "f", "hunk": 1, "line": 2, "fuzz": 1, "passed_over": [11]}]
    r = patchq("lint")
    assert r.code == 1
    assert (
        "patches/fuzzy.patch: warning: f hunk #1 placed with fuzz 1 at line 2, passing over "
        "the match at line 11 (GNU patch's placement, kept by series.lock)"
    ) in r.out
    r = patchq("status")
    assert "fuzzy.patch: f hunk #1 placed with fuzz 1 at line 2" in r.out
    assert json.loads(patchq("status", "--json").out)["placed"][0]["patch"] == "fuzzy.patch"
    # The lock keeps the placement: verify and the exported script re-place it the same way.
    r = patchq("verify")
    assert r.code == 0, r.err
    r = patchq("export", "--script", str(tmp_path / "apply.py"))
    assert r.code == 0, r.err


@needs_patch
def test_apply_with_fuzz_gives_gnu_patchs_tree(
    tmp_path: Path, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    gnu = tmp_path / "gnu"
    gnu.mkdir()
    (gnu / "f").write_bytes(TWICE)
    proc = subprocess.run(
        ["patch", "-s", "-p1", "--no-backup-if-mismatch", "-r", "-"],
        cwd=gnu,
        input=FUZZY,
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stdout
    upstream.write("f", TWICE)
    base = upstream.commit("two copies")
    queue.add("fuzzy.patch", FUZZY)
    assert patchq("apply", "--onto", base, "--fuzz", "2").code == 0
    assert upstream.read("f") == (gnu / "f").read_bytes()


# --- read as GNU patch reads it: each case applied by GNU patch and by patchq ------------

SRC = "".join(f"line {i}\n" for i in range(1, 31)).encode()
GIT_HUNK = b"@@ -3,5 +3,5 @@\n line 3\n line 4\n-line 5\n+LINE 5\n line 6\n line 7\n"
ONE_SHORT = b"@@ -3,5 +3,5 @@\n line 3\n line 4\n-line 5\n+LINE 5\n line 6\n line 7\n line 8\n"
LATER = b"@@ -20,5 +20,5 @@\n line 20\n line 21\n-line 22\n+LINE 22\n line 23\n line 24\n"
READS = {
    # A `diff --git` line naming a backup file, the `---`/`+++` lines the real one.
    "git-backup-name": (
        b"diff --git a/src/x.c.~1~ b/src/x.c\nindex 1111111..2222222 100644\n"
        b"--- a/src/x.c\n+++ b/src/x.c\n" + GIT_HUNK,
        {"git-names"},
    ),
    "git-orig-names": (
        b"diff --git a/src/x.c.orig b/src/x.c\n--- a/src/x.c.orig\n+++ b/src/x.c\n" + GIT_HUNK,
        set(),
    ),
    # The backup name on the new side: two names and no rename, the one that exists.
    "git-new-side-backup-name": (
        b"diff --git a/src/x.c b/src/x.c-patched\nindex 1111111..2222222 100644\n"
        b"--- a/src/x.c\n+++ b/src/x.c-patched\n" + GIT_HUNK,
        {"name-choice"},
    ),
    # `diff --git` names without the a/ b/ prefixes that `---`/`+++` have.
    "git-no-prefix": (
        b"diff --git src/x.c src/x.c\nindex 1111111..2222222 100644\n"
        b"--- a/src/x.c\n+++ b/src/x.c\n" + GIT_HUNK,
        {"git-names"},
    ),
    # A hunk counting a line fewer than it holds: the rest (and a later hunk) skipped.
    "count-one-short": (
        b"--- a/src/x.c\n+++ b/src/x.c\n"
        + ONE_SHORT.replace(b"-3,5 +3,5", b"-2,6 +2,6", 1)
        + b" line 9\n"
        + LATER,
        {"lines-after-hunk", "skipped-hunk"},
    ),
    # Two diffs of one file, the second made on the first's result and pasted as one
    # section: it starts inside the first hunk's trailing context.
    "two-diffs-one-section": (
        b"--- a/src/x.c\n+++ b/src/x.c\n"
        + GIT_HUNK
        + b"@@ -6,5 +6,5 @@\n line 6\n line 7\n-line 8\n+LINE 8\n line 9\n line 10\n"
        + b"--- a/src/x.c\n+++ b/src/x.c\n"
        + b"@@ -4,5 +4,5 @@\n line 4\n LINE 5\n-line 6\n+LINE 6\n line 7\n LINE 8\n",
        {"overlapping-hunks"},
    ),
    # The patch file cut inside its last (context) line: dropped, a blank line read there.
    "eof-mid-line": (
        b"--- a/src/x.c\n+++ b/src/x.c\n" + GIT_HUNK[:-1],
        {"eof-mid-line", "eof-blank-context"},
    ),
    # Cut inside a line, one more blank context line short of its counts.
    "eof-mid-line-short": (
        b"--- a/src/x.c\n+++ b/src/x.c\n@@ -2,7 +2,7 @@\n line 2\n"
        + GIT_HUNK.split(b"\n", 1)[1][:-1],
        {"eof-mid-line", "eof-blank-context"},
    ),
    # A hunk stated before the one above it: GNU patch looks for it after that one.
    "hunks-out-of-order": (
        b"--- a/src/x.c\n+++ b/src/x.c\n"
        + b"@@ -20,5 +20,5 @@\n line 20\n line 21\n-line 22\n+LINE 22\n line 23\n line 24\n"
        + b"@@ -10,5 +10,5 @@\n line 26\n line 27\n-line 28\n+LINE 28\n line 29\n line 30\n",
        {"overlapping-hunks"},
    ),
}


@needs_patch
@pytest.mark.parametrize("name", sorted(READS))
def test_reads_the_patch_as_gnu_patch_does(
    name: str, tmp_path: Path, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    data, kinds = READS[name]
    gnu = tmp_path / "gnu"
    (gnu / "src").mkdir(parents=True)
    (gnu / "src" / "x.c").write_bytes(SRC)
    proc = subprocess.run(
        ["patch", "-p1", "--batch", "--no-backup-if-mismatch", "-r", "-"],
        cwd=gnu,
        input=data,
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stdout
    upstream.write("src/x.c", SRC)
    base = upstream.commit("release")
    queue.add(f"{name}.patch", data)
    r = patchq("apply", "--onto", base, "--fuzz", "2", "--json")
    assert r.code == 0, r.err
    assert upstream.read("src/x.c") == (gnu / "src" / "x.c").read_bytes()
    assert sorted(upstream.path.glob("src/*")) == [upstream.path / "src" / "x.c"]
    got = {n["kind"] for n in json.loads(r.out)["patches"][0]["normalisations"]}
    assert kinds <= got, got
    if kinds:
        r = patchq("lint")
        parsed = kinds - {"name-choice"}  # the tree's choice: lint names the candidates
        assert r.code == 1 and all(f"needed normalisation {k} " in r.out for k in parsed), r.out
        if "name-choice" in kinds:
            assert "differ; the one that exists in the target is patched" in r.out
