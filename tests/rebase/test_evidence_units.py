"""The pure parts of provenance, moved blocks and hints, and their git calls.

Headers name origins; `find_block` finds a block exactly, then by similarity, and never
picks one of two places; `hunk_hints` flags siblings and insertions; the git layer asks
ancestry and patch-ids in one process each.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchq.core.header import origins
from patchq.core.hints import hunk_hints
from patchq.core.moved import find_block
from patchq.core.patch import parse
from patchq.git.repo import GitRepo
from patchq.rebase.evidence import Provenance, diff_text

from ..conftest import Upstream

SHA = "0123456789abcdef0123456789abcdef01234567"


# --- origins --------------------------------------------------------------------------


def test_origins_in_every_spelling_in_evidence_order() -> None:
    header = (
        f"From {SHA} Mon Sep 17 00:00:00 2001\n"
        "From: A Dev <a@example.org>\n"
        "Subject: [PATCH] net: fix it\n\n"
        "commit 89abcdef0123456 upstream.\n\n"
        "(cherry picked from commit fedcba9876543210)\n"
    ).encode()
    assert origins(header) == (SHA, "fedcba9876543210", "89abcdef0123456")


def test_dep3_origin_applied_upstream_and_backport_urls() -> None:
    header = (
        b"Description: fix the bound\n"
        b"Origin: upstream, https://github.com/x/y/commit/abcdef1234567\n"
        b"Applied-Upstream: 2.4.1, https://gitlab.com/x/y/-/commit/1234567abcdef\n"
        b"Upstream-Status: Backport [https://git.example.org/cgit/y.git/commit/?id=cafe12345678]\n"
    )
    assert origins(header) == ("abcdef1234567", "1234567abcdef", "cafe12345678")


def test_a_version_or_a_vendor_origin_names_no_commit() -> None:
    assert origins(b"Applied-Upstream: 2.4\nOrigin: vendor, https://x.org/bug/1234567\n") == ()
    assert origins(b"Upstream-Status: Pending\nFix it.\n") == ()
    # A date is digits, not a commit id.
    assert origins(b"Upstream-Status: Backport [20240131]\n") == ()


# --- find_block ---------------------------------------------------------------------

BLOCK = [
    b"\tsize_t n = strlen(s);\n",
    b"\n",
    b"\twhile (n > 0 && s[n - 1] == ' ')\n",
    b"\t\tn--;\n",
]
filler = st.lists(
    st.sampled_from([b"int x;\n", b"\n", b"}\n", b"return 0;\n", b"/* other */\n"]), max_size=30
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from(["a.c", "b.c", "c.c"]), st.tuples(filler, filler)), st.data()
)
def test_a_block_planted_once_is_found_exactly_there(
    files: dict[str, tuple[list[bytes], list[bytes]]], data: st.DataObject
) -> None:
    names = sorted(files) or ["a.c"]
    where = data.draw(st.sampled_from(names))
    built = {}
    for n in names:
        before, after = files.get(n, ([], []))
        built[n] = before + (BLOCK if n == where else []) + after
    found = find_block(BLOCK, built)
    line = len(files.get(where, ([], []))[0])
    assert [(f.path, f.line, f.exact) for f in found] == [(where, line, True)]


@settings(max_examples=40, deadline=None)
@given(filler, filler, filler)
def test_a_block_planted_twice_gives_two_places(
    a: list[bytes], b: list[bytes], c: list[bytes]
) -> None:
    found = find_block(BLOCK, {"x.c": a + BLOCK + b, "y.c": c + BLOCK})
    assert {(f.path, f.exact) for f in found} == {("x.c", True), ("y.c", True)}


def test_an_edited_block_is_found_by_similarity_and_a_look_alike_pair_is_a_tie() -> None:
    edited = [BLOCK[0].replace(b"strlen(s)", b"s ? strlen(s) : 0"), *BLOCK[1:]]
    (f,) = find_block(BLOCK, {"x.c": [b"int a;\n", *edited, b"}\n"]})
    assert (f.path, f.line, f.exact) == ("x.c", 1, False)
    assert f.ratio == SequenceMatcher(None, BLOCK, edited).ratio()
    two = find_block(BLOCK, {"x.c": edited, "y.c": list(edited)})
    assert len(two) == 2  # the caller refuses: two equally good places


def test_a_block_of_braces_and_blanks_is_found_nowhere() -> None:
    assert find_block([b"}\n", b"\n", b"{\n"], {"x.c": [b"}\n", b"\n", b"{\n"]}) == []


def test_skip_hides_the_block_s_own_place() -> None:
    files = {"x.c": [*BLOCK, b"int y;\n", *BLOCK]}
    assert [f.line for f in find_block(BLOCK, files)] == [0, 5]
    assert [f.line for f in find_block(BLOCK, files, lambda p, n: n < 2)] == [5]


# --- hunk_hints ---------------------------------------------------------------------

POLICY = b"""\
--- a/CMakeLists.txt
+++ b/CMakeLists.txt
@@ -2,3 +2,5 @@
 project(x)
+if(POLICY CMP0135)
 cmake_policy(SET CMP0135 NEW)
+endif()
 add_library(x x.cpp)
"""


def _ops(a: list[bytes], b: list[bytes]) -> list[tuple[str, int, int, int, int]]:
    return [(t, i1, i2, j1, j2) for t, i1, i2, j1, j2 in SequenceMatcher(None, a, b).get_opcodes()]


def test_a_sibling_of_the_guarded_line_is_hinted_and_an_unlike_line_is_not() -> None:
    (h,) = parse(POLICY, "p").sections[0].hunks
    pre = [b"cmake_minimum_required(VERSION 3.16)\n", *h.old_lines]
    sibling = [*pre[:3], b"cmake_policy(SET CMP0146 NEW)\n", *pre[3:]]
    out = hunk_hints("CMakeLists.txt", 0, h, 1, sibling, ops=_ops(pre, sibling))
    assert any("upstream added `cmake_policy(SET CMP0146 NEW)`" in x for x in out)
    other = [*pre[:3], b"set(CMAKE_CXX_STANDARD 17)\n", *pre[3:]]
    out = hunk_hints("CMakeLists.txt", 0, h, 1, other, ops=_ops(pre, other))
    assert not any("upstream added" in x for x in out)
    far = [*pre, *[b"# pad\n"] * 10, b"cmake_policy(SET CMP0146 NEW)\n"]
    assert hunk_hints("CMakeLists.txt", 0, h, 1, far, ops=_ops(pre, far)) == []


def test_nothing_changed_upstream_means_no_hints() -> None:
    (h,) = parse(POLICY, "p").sections[0].hunks
    pre = [b"cmake_minimum_required(VERSION 3.16)\n", *h.old_lines]
    assert hunk_hints("CMakeLists.txt", 0, h, 1, pre, ops=_ops(pre, pre)) == []


# --- git layer and Provenance ---------------------------------------------------------


def test_ancestors_and_patch_ids_in_one_process_each(upstream: Upstream) -> None:
    upstream.write("f.c", "int a;\nint b;\n")
    first = upstream.commit("one")
    upstream.write("f.c", "int a;\nint c;\n")
    second = upstream.commit("two")
    upstream.git("checkout", "-q", "-b", "side", first)
    upstream.write("g.c", "side\n")
    side = upstream.commit("side")
    upstream.git("checkout", "-q", "main")
    g = GitRepo(upstream.path)
    before = g.processes
    got = g.ancestors([first[:10], side, "deadbeef00", second], second)
    assert got == {first[:10]: first, second: second}
    assert g.processes - before == 1  # abbreviations resolve through the object reader
    diff = (
        b"diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n"
        b"@@ -1,2 +1,2 @@\n int a;\n-int b;\n+int c;\n"
    )
    before = g.processes
    (pid, nothing) = g.patch_ids([diff, b"no diff here\n"])
    assert nothing is None and pid is not None
    assert g.processes - before == 1
    before = g.processes
    ids, commits, own = g.range_evidence(first, second, ["f.c"], [diff, b""])
    assert g.processes - before == 2  # one log -p, one patch-id for the range and the series
    assert ids == {pid: [second]} and own == [pid, None]
    assert commits == [(second, "two", ("f.c",))]


def test_a_commit_holds_a_trimmed_hunk_but_not_a_different_one(upstream: Upstream) -> None:
    upstream.write("f.c", "int a;\nint b;\nint z;\n")
    upstream.write("g.c", "g\n")
    base = upstream.commit("base")
    upstream.write("f.c", "int a;\nint c;\nint z;\n")
    upstream.write("g.c", "G\n")
    fix = upstream.commit("fix both")
    g = GitRepo(upstream.path)
    mine = parse(
        b"--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n int a;\n-int b;\n+int c;\n int z;\n", "p"
    )
    other = parse(
        b"--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n int a;\n-int b;\n+int d;\n int z;\n", "p"
    )
    prov = Provenance(g, base, fix)
    (h,) = mine.sections[0].hunks
    (o,) = other.sections[0].hunks
    assert prov.holds(fix, [(("f.c",), h)])
    assert not prov.holds(fix, [(("f.c",), o)])
    assert not prov.holds(fix, [(("g.c",), h)])  # the right lines, in another file
    assert diff_text(mine.sections).startswith(b"diff --git a/f.c b/f.c\n--- a/f.c\n")


def test_in_an_exact_only_file_an_edited_look_alike_is_not_a_place() -> None:
    edited = [BLOCK[0].replace(b"strlen(s)", b"s ? strlen(s) : 0"), *BLOCK[1:]]
    files = {"own.c": [b"int a;\n", *edited], "other.c": [*edited, b"}\n"]}
    assert [f.path for f in find_block(BLOCK, files, exact_only=frozenset({"own.c"}))] == [
        "other.c"
    ]
    exact = {"own.c": [b"int a;\n", *BLOCK]}
    assert [f.line for f in find_block(BLOCK, exact, exact_only=frozenset({"own.c"}))] == [1]


def test_a_line_a_hunk_removes_and_adds_again_need_not_be_in_the_commit(
    upstream: Upstream,
) -> None:
    # Two declarations rewritten with a blank line between them: git's -U0 diff of the
    # commit keeps the blank as context; a patch of the same change (another diff
    # algorithm) removes it and adds it again. The commit still makes that change.
    upstream.write("f.h", "int\na(int x,\n  int y);\n\nint\nb(int x,\n  int y);\n")
    base = upstream.commit("base")
    upstream.write("f.h", "int a(int x, int y);\n\nint b(int x, int y);\n")
    fix = upstream.commit("one line each")
    g = GitRepo(upstream.path)
    diff = g.commit_diff(fix)
    assert b"\n-\n" not in diff and b"\n+\n" not in diff  # the blank is context there
    mine = parse(
        b"--- a/f.h\n+++ b/f.h\n@@ -1,7 +1,3 @@\n-int\n-a(int x,\n-  int y);\n-\n-int\n"
        b"-b(int x,\n-  int y);\n+int a(int x, int y);\n+\n+int b(int x, int y);\n",
        "p",
    )
    other = parse(
        b"--- a/f.h\n+++ b/f.h\n@@ -1,7 +1,3 @@\n-int\n-a(int x,\n-  int y);\n-\n-int\n"
        b"-b(int x,\n-  int y);\n+int a(int x, int y);\n+\n+\n+int b(int x, int y);\n",
        "p",
    )
    prov = Provenance(g, base, fix)
    (h,) = mine.sections[0].hunks
    (o,) = other.sections[0].hunks
    assert prov.holds(fix, [(("f.h",), h)])
    assert not prov.holds(fix, [(("f.h",), o)])  # a second blank line is a change of its own
