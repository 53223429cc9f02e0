"""The patch model against real tools' output: round trips, parsed shapes, refusals.

tests/data/patches/ holds samples made by git, GNU diff and quilt (see
tests/data/make-corpus.sh); tests/data/malformed/ holds broken ones. Every sample must
render back byte for byte and parse to the shape in SHAPES; every broken one must be
refused with the line and phrase in MALFORMED. Hypothesis then checks the same round
trip on patches built in memory and rendered in git's canonical spelling.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.core.errors import BadInputError
from patchq.core.patch import FilePatch, Hunk, Patch, parse
from patchq.core.quoting import quote_path, unquote

DATA = Path(__file__).parent.parent / "data"
SAMPLES = sorted((DATA / "patches").glob("*.patch"))
BROKEN = sorted((DATA / "malformed").glob("*.patch"))

# Samples made for another -p level than quilt's default 1.
STRIP = {"quilt-p0.patch": 0, "git-no-prefix-p0.patch": 0, "diff-u-timestamps.patch": 0}


def load(name: str, strip: int | None = None) -> tuple[bytes, Patch]:
    data = (DATA / "patches" / name).read_bytes()
    return data, parse(data, name, STRIP.get(name, 1) if strip is None else strip)


def canonical(p: Patch) -> Patch:
    """The same patch with every source byte forgotten, so it renders in git's spelling."""
    return dataclasses.replace(
        p,
        sections=tuple(
            dataclasses.replace(
                s,
                raw_header=None,
                raw_tail=b"",
                hunks=tuple(dataclasses.replace(h, raw=None) for h in s.hunks),
            )
            for s in p.sections
        ),
    )


# --- the corpus ----------------------------------------------------------------------

# For each sample, each section as (old path, new path, (old mode, new mode) or None,
# flags, hunk ranges (old start, old count, new start, new count)).
M = ("100644", "100644")
SHAPES: dict[str, list[tuple[object, ...]]] = {
    "diff-ruN-trees.patch": [
        ("README", "README", None, "plain", [(6, 3, 6, 4)]),
        (None, "doc/added.txt", None, "new plain", [(0, 0, 1, 3)]),
        ("doc/gone.txt", None, None, "delete plain", [(1, 4, 0, 0)]),
        ("src/logo.bin", "src/logo.bin", None, "binary plain", []),
        ("src/main.c", "src/main.c", None, "plain", [(2, 7, 2, 7)]),
    ],
    "diff-u-crlf-everywhere.patch": [
        ("greeting.txt", "greeting.txt", None, "plain", [(3, 7, 3, 7)])
    ],
    "diff-u-labels.patch": [("greeting.txt", "greeting.txt", None, "plain", [(3, 7, 3, 7)])],
    "diff-u-timestamps.patch": [("greeting.txt", "greeting.txt", None, "plain", [(3, 7, 3, 7)])],
    "git-binary-files-differ.patch": [
        ("blob.bin", "blob.bin", M, "binary", []),
        (None, "new.bin", (None, "100644"), "new binary", []),
    ],
    "git-binary.patch": [
        ("blob.bin", "blob.bin", M, "binary", []),
        ("gone.bin", None, ("100644", None), "delete binary", []),
        (None, "new.bin", (None, "100644"), "new binary", []),
    ],
    "git-copy.patch": [("source.c", "copy.c", M, "copy", [(1, 5, 1, 5)])],
    "git-crlf-content.patch": [("win.txt", "win.txt", M, "", [(1, 4, 1, 5)])],
    "git-crlf-no-newline.patch": [("win.txt", "win.txt", M, "", [(1, 4, 1, 4)])],
    "git-deleted-file.patch": [("old.txt", None, ("100644", None), "delete", [(1, 5, 0, 0)])],
    "git-diff-blank-context-stripped.patch": [
        ("hello.c", "hello.c", M, "", [(2, 7, 2, 7), (12, 6, 12, 6)])
    ],
    "git-diff-function-heading.patch": [
        ("hello.c", "hello.c", M, "", [(4, 3, 4, 3), (14, 3, 14, 3)])
    ],
    "git-diff-zero-context-insert-delete.patch": [
        ("list.txt", "list.txt", M, "", [(3, 1, 2, 0), (10, 0, 10, 1), (15, 1, 15, 1)])
    ],
    "git-diff-zero-context.patch": [("hello.c", "hello.c", M, "", [(5, 1, 5, 1), (15, 1, 15, 1)])],
    "git-diff.patch": [("hello.c", "hello.c", M, "", [(2, 7, 2, 7), (12, 6, 12, 6)])],
    "git-format-patch-base-commit.patch": [
        (None, "NEWS", (None, "100644"), "new", [(0, 0, 1, 3)]),
        ("hello.c", "hello.c", M, "", [(2, 7, 2, 7)]),
    ],
    "git-format-patch-empty.patch": [],
    "git-format-patch-no-signature.patch": [
        (None, "NEWS", (None, "100644"), "new", [(0, 0, 1, 3)]),
        ("hello.c", "hello.c", M, "", [(2, 7, 2, 7)]),
    ],
    "git-format-patch.patch": [
        (None, "NEWS", (None, "100644"), "new", [(0, 0, 1, 3)]),
        ("hello.c", "hello.c", M, "", [(2, 7, 2, 7)]),
    ],
    "git-mode-change-with-content.patch": [
        ("build.sh", "build.sh", ("100644", "100755"), "", [(1, 5, 1, 5)])
    ],
    "git-mode-change.patch": [("run.sh", "run.sh", ("100644", "100755"), "", [])],
    "git-multi-file-multi-hunk.patch": [
        ("a.txt", "a.txt", M, "", [(1, 5, 1, 5), (17, 7, 17, 7), (36, 5, 36, 5)]),
        ("b.txt", "b.txt", M, "", [(8, 3, 8, 4)]),
    ],
    "git-new-empty-file.patch": [(None, "empty.txt", (None, "100644"), "new", [])],
    "git-new-file.patch": [(None, "new.txt", (None, "100644"), "new", [(0, 0, 1, 4)])],
    "git-new-symlink.patch": [(None, "link", (None, "120000"), "new", [(0, 0, 1, 1)])],
    "git-no-newline-both-changed.patch": [("c.txt", "c.txt", M, "", [(1, 3, 1, 3)])],
    "git-no-newline-both.patch": [("c.txt", "c.txt", M, "", [(1, 3, 1, 3)])],
    "git-no-newline-new.patch": [("b.txt", "b.txt", M, "", [(1, 3, 1, 3)])],
    "git-no-newline-old.patch": [("a.txt", "a.txt", M, "", [(1, 3, 1, 3)])],
    "git-no-prefix-p0.patch": [("my file.txt", "my file.txt", M, "", [(1, 1, 1, 1)])],
    "git-quoted-names.patch": [
        ("back\\", "back\\", M, "", [(1, 1, 1, 1)]),
        ("naïve café.txt", "naïve café.txt", M, "", [(1, 1, 1, 1)]),
        ("new\nline", "new\nline", M, "", [(1, 1, 1, 1)]),
        ('quote"and\\back.txt', 'quote"and\\back.txt', M, "", [(1, 1, 1, 1)]),
        ("tab\tname.txt", "tab\tname.txt", M, "", [(1, 1, 1, 1)]),
    ],
    "git-rename-quoted.patch": [("source.c", "söurce.c", None, "rename", [])],
    "git-rename-space-in-name.patch": [
        ("renamed.txt", "sub dir/renamed file.txt", None, "rename", [])
    ],
    "git-rename-with-changes.patch": [("moved.txt", "renamed.txt", M, "rename", [(12, 7, 12, 7)])],
    "git-rename.patch": [("orig.txt", "moved.txt", None, "rename", [])],
    "git-rewrite-dissimilarity.patch": [("rewrite.txt", "rewrite.txt", M, "", [(1, 30, 1, 30)])],
    "git-space-in-name.patch": [("my file.txt", "my file.txt", M, "", [(1, 1, 1, 1)])],
    "git-two-sections-one-file.patch": [
        ("twice.txt", "twice.txt", M, "", [(1, 6, 1, 6)]),
        ("twice.txt", "twice.txt", M, "", [(22, 7, 22, 7)]),
    ],
    "git-unquoted-utf8-name.patch": [("naïve café.txt", "naïve café.txt", M, "", [(1, 1, 1, 1)])],
    "quilt-dep3-header-only.patch": [],
    "quilt-dep3-header.patch": [
        ("Makefile", "Makefile", None, "plain", [(4, 3, 4, 4)]),
        ("src/util.c", "src/util.c", None, "plain", [(1, 7, 1, 7)]),
    ],
    "quilt-new-and-deleted.patch": [
        ("Makefile", None, None, "delete plain", [(1, 7, 0, 0)]),
        (None, "src/new.c", None, "new plain", [(0, 0, 1, 3)]),
    ],
    **{
        name: [
            ("Makefile", "Makefile", None, "plain", [(4, 3, 4, 4)]),
            ("src/util.c", "src/util.c", None, "plain", [(1, 7, 1, 7)]),
        ]
        for name in (
            "quilt-p-ab.patch",
            "quilt-p0.patch",
            "quilt-p1-index.patch",
            "quilt-p1-no-timestamps.patch",
        )
    },
    "svn-diff.patch": [("src/config.h", "src/config.h", None, "plain", [(1, 4, 1, 4)])],
}


def shape(s: FilePatch) -> tuple[object, ...]:
    flags = " ".join(
        name
        for name, on in (
            ("new", s.is_new),
            ("delete", s.is_delete),
            ("rename", s.rename),
            ("copy", s.copy),
            ("binary", s.binary),
            ("plain", not s.git),
        )
        if on
    )
    modes = None if s.old_mode is None and s.new_mode is None else (s.old_mode, s.new_mode)
    ranges = [(h.old_start, h.old_len, h.new_start, h.new_len) for h in s.hunks]
    return (s.old_path, s.new_path, modes, flags, ranges)


def test_every_sample_has_a_shape() -> None:
    assert sorted(p.name for p in SAMPLES) == sorted(SHAPES)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_round_trips_byte_for_byte(path: Path) -> None:
    data, p = load(path.name)
    assert p.render() == data


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_parses_to_its_shape(path: Path) -> None:
    _, p = load(path.name)
    assert [shape(s) for s in p.sections] == SHAPES[path.name]
    for s in p.sections:
        for h in s.hunks:
            assert len(h.old_lines) == h.old_len and len(h.new_lines) == h.new_len


# git's own output is the canonical spelling: a parsed git patch with its source bytes
# forgotten must render back to the same bytes (this is what `refresh` writes). Not so
# for samples whose spelling git would not choose, or binary data the model does not keep.
NOT_CANONICAL = {
    "git-binary.patch",
    "git-binary-files-differ.patch",
    "git-diff-blank-context-stripped.patch",  # git writes " \n" for an empty context line
    "git-no-prefix-p0.patch",  # canonical names carry a/ and b/
    "git-rewrite-dissimilarity.patch",  # the dissimilarity index is not kept
    "git-unquoted-utf8-name.patch",  # made with core.quotePath=false
}


@pytest.mark.parametrize(
    "path",
    [p for p in SAMPLES if p.name.startswith("git-") and p.name not in NOT_CANONICAL],
    ids=lambda p: p.name,
)
def test_git_sample_is_canonical(path: Path) -> None:
    data, p = load(path.name)
    assert canonical(p).render() == data


def hunk(name: str, section: int = 0, index: int = 0) -> Hunk:
    return load(name)[1].sections[section].hunks[index]


def test_no_newline_on_the_old_side() -> None:
    h = hunk("git-no-newline-old.patch")
    assert h.lines[-2:] == (("-", b"three"), ("+", b"three\n"))
    assert h.old_lines[-1] == b"three" and h.new_lines[-1] == b"three\n"


def test_no_newline_on_the_new_side() -> None:
    h = hunk("git-no-newline-new.patch")
    assert h.lines[-2:] == (("-", b"three\n"), ("+", b"three"))


def test_no_newline_on_both_sides() -> None:
    h = hunk("git-no-newline-both.patch")
    assert h.lines[-1] == (" ", b"three")
    assert h.lines[:3] == ((" ", b"one\n"), ("-", b"two\n"), ("+", b"2\n"))
    h = hunk("git-no-newline-both-changed.patch")
    assert h.lines[-2:] == (("-", b"three"), ("+", b"three 3"))


def test_no_newline_on_a_symlink() -> None:
    h = hunk("git-new-symlink.patch")
    assert h.lines == (("+", b"target.txt"),)


def test_crlf_content_is_kept() -> None:
    h = hunk("git-crlf-content.patch")
    assert h.lines == (
        (" ", b"alpha\r\n"),
        ("-", b"beta\r\n"),
        ("+", b"BETA\r\n"),
        (" ", b"gamma\r\n"),
        ("+", b"\r\n"),
        (" ", b"delta\r\n"),
    )
    h = hunk("git-crlf-no-newline.patch")
    assert h.lines[-2:] == (("-", b"delta\r\n"), ("+", b"delta"))


def test_crlf_everywhere_keeps_cr_in_content_not_in_names() -> None:
    _, crlf = load("diff-u-crlf-everywhere.patch")
    _, lf = load("diff-u-labels.patch")
    assert crlf.sections[0].path == "greeting.txt"
    assert crlf.sections[0].hunks[0].lines == tuple(
        (t, c[:-1] + b"\r\n") for t, c in lf.sections[0].hunks[0].lines
    )


def test_stripped_blank_context_line_is_context() -> None:
    _, stripped = load("git-diff-blank-context-stripped.patch")
    _, spaced = load("git-diff.patch")
    assert stripped.sections[0].hunks[0].lines[0] == (" ", b"\n")
    assert stripped.sections == spaced.sections  # equal values, different bytes


def test_function_heading() -> None:
    h0 = hunk("git-diff-function-heading.patch")
    h1 = hunk("git-diff-function-heading.patch", index=1)
    assert h0.heading == b" static int count(const char *s)"
    assert h1.heading == b" int main(int argc, char **argv)"
    assert hunk("git-diff.patch").heading == b""


def test_zero_context_positions() -> None:
    delete, insert, change = load("git-diff-zero-context-insert-delete.patch")[1].sections[0].hunks
    assert (delete.old_pos, delete.new_pos, delete.has_context) == (2, 2, False)
    assert delete.lines == (("-", b"line 3\n"),)
    assert (insert.old_pos, insert.new_pos) == (10, 9)  # after old line 10, as new line 10
    assert insert.lines == (("+", b"inserted after 10\n"),)
    assert change.changes == (("-", b"line 15\n"), ("+", b"line 15 changed\n"))


def test_context_counts() -> None:
    h = hunk("git-diff.patch")
    assert (h.leading_context, h.trailing_context, h.has_context) == (3, 3, True)
    assert h.changes == (("-", b"\tint n = 0;\n"), ("+", b"\tsize_t n = 0;\n"))


def test_git_ids_and_similarity() -> None:
    s = load("git-copy.patch")[1].sections[0]
    assert (s.similarity, s.old_id, s.new_id) == (96, "ac9837c", "55bad3c")
    assert load("git-rename.patch")[1].sections[0].similarity == 100
    # A rewrite's dissimilarity is not a similarity.
    assert load("git-rewrite-dissimilarity.patch")[1].sections[0].similarity is None
    s = load("git-binary.patch")[1].sections[0]
    assert s.old_id == "64bbec80a11a832b6b3829c114c3625cd7dadb49"


def test_binary_sections_keep_their_data() -> None:
    data, p = load("git-binary.patch")
    assert all(s.binary and not s.hunks for s in p.sections)
    assert b"GIT binary patch\nliteral 20\n" in p.sections[0].render()
    assert b"".join(s.render() for s in p.sections) == data


def test_format_patch_header_and_signature() -> None:
    data, p = load("git-format-patch.patch")
    assert p.header.startswith(b"From 1b7f3333f1fb3fe8e3114f043dc1f3263401164e Mon Sep 17")
    assert p.header.endswith(b" create mode 100644 NEWS\n\n")
    assert p.trailer == b"-- \n2.39.5\n\n"
    _, based = load("git-format-patch-base-commit.patch")
    assert based.trailer == (
        b"\nbase-commit: 9aed45f7b758b8974516e793aaa0eb0321701a7f\n-- \n2.39.5\n\n"
    )
    assert based.sections == p.sections


def test_header_only_patches() -> None:
    for name in ("git-format-patch-empty.patch", "quilt-dep3-header-only.patch"):
        data, p = load(name)
        assert (p.header, p.sections, p.trailer) == (data, (), b"")


def test_dep3_header_ends_where_quilt_index_begins() -> None:
    data, p = load("quilt-dep3-header.patch")
    assert p.header.startswith(b"Description: make util.c count from four\n")
    assert p.header.endswith(
        b"This patch header follows DEP-3: https://dep-team.pages.debian.net/deps/dep3/\n"
    )
    assert p.sections[0].render_header().startswith(b"Index: b/Makefile\n=====")


def test_two_sections_for_one_file() -> None:
    p = load("git-two-sections-one-file.patch")[1]
    assert [s.path for s in p.sections] == ["twice.txt", "twice.txt"]
    assert p.paths == ("twice.txt",)


def test_paths() -> None:
    p = load("git-rename-with-changes.patch")[1]
    assert p.sections[0].paths == ("moved.txt", "renamed.txt")
    p = load("quilt-new-and-deleted.patch")[1]
    assert [s.path for s in p.sections] == ["Makefile", "src/new.c"]
    assert p.paths == ("Makefile", "src/new.c")


@pytest.mark.parametrize(
    "strip, path", [(0, "trunk/src/config.h"), (1, "src/config.h"), (2, "config.h")]
)
def test_strip_levels(strip: int, path: str) -> None:
    assert load("svn-diff.patch", strip)[1].sections[0].path == path


@pytest.mark.parametrize(
    "stamp, new",
    [
        (b"1970-01-01 00:00:00.000000000 +0000", True),
        (b"1970-01-01 01:00:00.000000000 +0100", True),  # the epoch, east of Greenwich
        (b"1969-12-31 19:00:00 -0500", True),
        (b"1970-01-01 01:00:00.000000000 +0000", False),
        (b"2024-03-01 12:00:00.000000000 +0000", False),
    ],
)
def test_diff_N_epoch_marks_a_missing_file(stamp: bytes, new: bool) -> None:
    """Like GNU patch: an epoch timestamp with a hunk at line 0 means "no such file"."""
    data = (
        b"--- a/x.txt\t" + stamp + b"\n+++ b/x.txt\t2024-03-01 12:00:00 +0000\n@@ -0,0 +1 @@\n+x\n"
    )
    s = parse(data).sections[0]
    assert s.is_new is new and s.new_path == "x.txt"
    assert parse(data).render() == data


def test_epoch_without_a_hunk_at_line_zero_is_just_a_date() -> None:
    data = b"--- a/x.txt\t1970-01-01 00:00:00 +0000\n+++ b/x.txt\n@@ -1 +1 @@\n-x\n+y\n"
    assert not parse(data).sections[0].is_new


@pytest.mark.parametrize(
    "raw, name",
    [
        (b'"a/na\\303\\257ve"', b"a/na\xc3\xafve"),
        (b'"tab\\there"', b"tab\there"),
        (b'"back\\\\"', b"back\\"),
        (b"plain name", b"plain name"),
    ],
)
def test_unquote(raw: bytes, name: bytes) -> None:
    assert unquote(raw) == name


def test_quote_path_matches_git() -> None:
    assert quote_path("plain name.txt") == b"plain name.txt"
    assert quote_path("naïve café.txt") == b'"na\\303\\257ve caf\\303\\251.txt"'
    assert quote_path('q"b\\\tn\n') == b'"q\\"b\\\\\\tn\\n"'


def test_differing_names_with_spaces_come_from_the_other_lines() -> None:
    """`diff --git a/x y b/p q` cannot say where a name ends; like git apply, ask the rest."""
    rename = b"diff --git a/x y b/p q\nsimilarity index 100%\nrename from x y\nrename to p q\n"
    assert parse(rename).sections[0].paths == ("x y", "p q")
    plain = (
        b"diff --git a/x y b/p q\nindex 1234567..89abcde 100644\n--- a/x y\t\n+++ b/p q\t\n"
        b"@@ -1 +1 @@\n-a\n+b\n"
    )
    assert parse(plain).sections[0].paths == ("x y", "p q")
    with pytest.raises(BadInputError) as caught:
        parse(b"diff --git a/x y b/p q\nold mode 100644\nnew mode 100755\n", "p")
    assert caught.value.where == "p:1" and "cannot read the file names" in caught.value.what


def test_name_ending_in_a_space_survives_a_canonical_round_trip() -> None:
    h = Hunk(1, 1, 1, 1, (("-", b"a\n"), ("+", b"b\n")))
    p = Patch(
        b"",
        (
            FilePatch(
                "dir/x ", "dir/x ", (h,), "100644", "100644", old_id="1234567", new_id="89abcde"
            ),
        ),
    )
    data = p.render()
    assert b"--- a/dir/x \t\n+++ b/dir/x \t\n" in data
    assert parse(data) == p


# --- malformed input -----------------------------------------------------------------

# file, -p level, line the error names, phrase it must hold.
MALFORMED = [
    (
        "truncated-hunk.patch",
        1,
        5,
        "truncated hunk: header says 7 old and 7 new lines, found 4 and 3",
    ),
    (
        "hunk-count-too-many.patch",
        1,
        14,
        "hunk header says 8 old and 8 new lines, found 7 and 7 before this line",
    ),
    ("hunk-count-too-many-before-next-file.patch", 1, 28, "hunk header says 6 old and 6 new"),
    ("bad-hunk-header.patch", 1, 5, "malformed hunk header"),
    ("hunk-at-line-zero.patch", 1, 5, "puts lines at line 0"),
    ("hunk-outside-section.patch", 1, 1, "hunk outside any file section"),
    ("bad-index-line.patch", 1, 2, "malformed `index` line"),
    ("unknown-file-mode.patch", 1, 2, "unknown file mode '100999'"),
    ("nul-in-name.patch", 1, 1, "NUL byte"),
    ("bad-escape-in-quoted-name.patch", 1, 1, "bad escape in quoted path"),
    ("both-sides-dev-null.patch", 1, 1, "both sides of the section are /dev/null"),
    ("context-diff.patch", 1, 3, "context-format diff"),
    ("context-then-unified.patch", 1, 3, "context-format diff"),
    ("ed-diff.patch", 1, 1, "ed-script diff"),
    ("normal-diff.patch", 1, 1, "normal-format diff"),
    ("ed-diff-after-header.patch", 1, 3, "ed-script diff"),
    ("normal-diff-after-header.patch", 1, 3, "normal-format diff"),
    ("combined-diff.patch", 1, 1, "combined diff"),
    ("quilt-p0-read-with-p1.patch", 1, 3, "-p1 strips the whole of 'Makefile.orig'"),
    # (The `diff --git` names too short, GNU patch goes by the `---`/`+++` ones: line 3.)
    ("git-diff-read-with-p2.patch", 2, 3, "-p2 strips the whole of 'a/hello.c'"),
    ("git-no-prefix-read-with-p1.patch", 1, 3, "-p1 strips the whole of 'my file.txt'"),
]


def test_every_broken_sample_has_an_expectation() -> None:
    assert sorted(p.name for p in BROKEN) == sorted(name for name, *_ in MALFORMED)


@pytest.mark.parametrize("name, strip, line, phrase", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_broken_sample_is_refused(name: str, strip: int, line: int, phrase: str) -> None:
    data = (DATA / "malformed" / name).read_bytes()
    with pytest.raises(BadInputError) as caught:
        parse(data, f"patches/{name}", strip)
    assert caught.value.where == f"patches/{name}:{line}"
    assert phrase in caught.value.what
    assert str(caught.value).startswith(f"patches/{name}:{line}: ")
    assert "\n" not in str(caught.value)
    assert caught.value.exit_code == 4


@pytest.mark.parametrize(
    "data, line, phrase",
    [
        (b"diff --git /dev/null b/x\n", 1, "names /dev/null"),
        # One old and two new lines missing: GNU patch's blank padding cannot fill it.
        (b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n-a\n+b\n", 4, "truncated hunk"),
        (
            b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n\\ No newline at end of file\n",
            5,
            "hunk header says 1 old and 1 new",
        ),
        (b"diff --git a/x b/x\nrename from \nrename to y\n", 2, "empty file name"),
        (b"--- a/\n+++ b/\n@@ -1 +1 @@\n-a\n+b\n", 1, "file name ends in a slash"),
    ],
)
def test_small_broken_inputs(data: bytes, line: int, phrase: str) -> None:
    with pytest.raises(BadInputError) as caught:
        parse(data, "p")
    assert caught.value.where == f"p:{line}" and phrase in caught.value.what


def test_a_commit_message_may_quote_a_hunk_header() -> None:
    data = load("git-format-patch.patch")[0]
    quoting = data.replace(b"64-bit hosts.\n", b"64-bit hosts.\n@@ -2,7 +2,7 @@\n")
    assert parse(quoting).render() == quoting
    stray = data.replace(b" create mode 100644 NEWS\n", b"@@ -2,7 +2,7 @@\n")
    with pytest.raises(BadInputError) as caught:
        parse(stray, "p")
    assert caught.value.where == "p:11" and "hunk outside" in caught.value.what


def test_a_context_marker_alone_is_header_text() -> None:
    data = b"Subject: tidy up\n\n***************\n\nNothing else.\n"
    assert parse(data).header == data


# --- properties ----------------------------------------------------------------------

# Names: spaces (also trailing), non-ASCII, quotes, backslashes, tabs, newlines.
component = st.text(alphabet=st.sampled_from('ab.-_ éü"\\\t\n'), min_size=1, max_size=6)
paths = st.lists(component, min_size=1, max_size=3).map("/".join)
modes = st.sampled_from(["100644", "100755", "120000"])
object_ids = st.text(alphabet="0123456789abcdef", min_size=7, max_size=7)
# Content without its line end: anything but LF; CR may end it (CRLF files).
content = (
    st.binary(max_size=8).map(lambda b: b.replace(b"\n", b""))
    | st.just(b"")
    | st.sampled_from([b"x\r", b"- x", b"\\ x", b"@@ -1 +1 @@"])
)
headings = st.sampled_from([b"", b" int main(void)", b" class X:", b" \xc3\xa9"])


@st.composite
def hunk_lines(
    draw: st.DrawFn, tags: str = " -+", last: bool = False
) -> tuple[tuple[str, bytes], ...]:
    """Hunk lines; in a file's last hunk, the last old and new lines may lack their LF."""
    tagged = draw(st.lists(st.tuples(st.sampled_from(tags), content), min_size=1, max_size=6))
    lines = [(t, c + b"\n") for t, c in tagged]
    if last:
        olds = [i for i, (t, _) in enumerate(lines) if t != "+"]
        news = [i for i, (t, _) in enumerate(lines) if t != "-"]
        for side in (olds, news):
            # A context line may lack its LF only at the very end of the hunk.
            if (
                side
                and (lines[side[-1]][0] != " " or side[-1] == len(lines) - 1)
                and draw(st.booleans())
            ):
                t, c = lines[side[-1]]
                lines[side[-1]] = (t, c[:-1])
    return tuple(lines)


@st.composite
def hunk_runs(draw: st.DrawFn, tags: str = " -+") -> tuple[Hunk, ...]:
    """Hunks in file order, with git's ranges (an empty side starts at the line before)."""
    count = draw(st.integers(1, 3))
    out: list[Hunk] = []
    old_next, delta = 0, 0  # 0-based first old line still free; new minus old
    for i in range(count):
        lines = draw(hunk_lines(tags, last=i == count - 1))
        old_len = sum(t != "+" for t, _ in lines)
        new_len = sum(t != "-" for t, _ in lines)
        old_pos = old_next + draw(st.integers(0, 5))
        new_pos = old_pos + delta
        out.append(
            Hunk(
                old_pos + 1 if old_len else old_pos,
                old_len,
                new_pos + 1 if new_len else new_pos,
                new_len,
                lines,
                draw(headings),
            )
        )
        old_next, delta = old_pos + old_len, delta + new_len - old_len
    return tuple(out)


@st.composite
def file_patches(draw: st.DrawFn) -> FilePatch:
    kind = draw(st.sampled_from(["modify", "new", "delete", "rename", "copy"]))
    path = draw(paths)
    ids = draw(st.none() | st.tuples(object_ids, object_ids))
    old_id, new_id = ids if ids else (None, None)
    if kind in ("new", "delete"):
        tag = "+" if kind == "new" else "-"
        body = draw(st.none() | hunk_lines(tag, last=True))
        hunks: tuple[Hunk, ...] = ()
        if body:
            n = len(body)
            hunks = (Hunk(0, 0, 1, n, body),) if kind == "new" else (Hunk(1, n, 0, 0, body),)
        mode = draw(modes)
        if kind == "new":
            return FilePatch(
                None, path, hunks, new_mode=mode, old_id=old_id and "0000000", new_id=new_id
            )
        return FilePatch(
            path, None, hunks, old_mode=mode, old_id=old_id, new_id=new_id and "0000000"
        )
    old_path = path if kind == "modify" else draw(paths.filter(lambda p: p != path))
    hunks = draw(st.just(()) | hunk_runs())
    old_mode: str | None = draw(modes)
    new_mode: str | None = draw(modes)
    if old_mode == new_mode and not ids:
        old_mode = new_mode = None  # git names an unchanged mode only on the index line
    elif old_mode == new_mode and draw(st.booleans()):
        old_mode = new_mode = None  # index line without a mode
    return FilePatch(
        old_path,
        path,
        hunks,
        old_mode,
        new_mode,
        rename=kind == "rename",
        copy=kind == "copy",
        similarity=draw(st.integers(1, 100)) if kind in ("rename", "copy") else None,
        old_id=old_id,
        new_id=new_id,
    )


headers = st.sampled_from(
    [
        b"",
        b"Description: fix the frobnicator\nAuthor: A <a@example.org>\n---\n",
        b"From 1b7f3333f1fb3fe8e3114f043dc1f3263401164e Mon Sep 17 00:00:00 2001\n"
        b"From: A <a@example.org>\nSubject: [PATCH] x\n\nWhy.\n---\n x | 2 +-\n\n",
    ]
)


@st.composite
def patches(draw: st.DrawFn) -> Patch:
    sections = tuple(draw(st.lists(file_patches(), min_size=1, max_size=3)))
    trailer = draw(st.sampled_from([b"", b"-- \n2.39.5\n\n"]))
    return Patch(draw(headers), sections, trailer)


@settings(max_examples=300, deadline=None)
@given(patches())
def test_built_patch_renders_and_parses_back(p: Patch) -> None:
    data = p.render()
    parsed = parse(data, "built.patch")
    assert parsed == p
    assert parsed.render() == data


@settings(max_examples=200, deadline=None)
@given(hunk_runs())
def test_reversing_twice_keeps_the_lines(hunks: tuple[Hunk, ...]) -> None:
    for h in hunks:
        back = h.reversed()
        assert (back.old_lines, back.new_lines) == (h.new_lines, h.old_lines)
        twice = back.reversed()
        assert (twice.old_lines, twice.new_lines) == (h.old_lines, h.new_lines)
        assert (twice.old_start, twice.old_len, twice.new_start, twice.new_len) == (
            h.old_start,
            h.old_len,
            h.new_start,
            h.new_len,
        )
        assert twice.heading == h.heading


@settings(max_examples=100, deadline=None)
@given(hunk_runs())
def test_reversed_hunk_renders_and_parses_back(hunks: tuple[Hunk, ...]) -> None:
    back = tuple(h.reversed() for h in hunks)
    p = Patch(b"", (FilePatch("f", "f", back),))
    assert parse(p.render()) == p


# Junk that mail, editors and people mix into patches.
JUNK = [
    b"\\ x\n",
    b"@@ -1 +1 @@\n",
    b"--- a/x\n",
    b"+++ b/x\n",
    b"diff --git a/x b/x\n",
    b"\n",
    b"-- \n",
    b"rename from \n",
    b"index ..\n",
    b"new file mode 100644\n",
    b'diff --git "a/x\n',
    b"GIT binary patch\n",
    b"Binary files  and  differ\n",
    b"\x00\n",
    b"@@ -0,0 +0,0 @@\n",
]


@st.composite
def damaged_samples(draw: st.DrawFn) -> bytes:
    lines = draw(st.sampled_from(SAMPLES)).read_bytes().splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "repeat", "insert", "cut"]))
        if op == "delete":
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "insert":
            lines.insert(i, draw(st.sampled_from(JUNK)))
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return b"".join(lines)


@settings(max_examples=200, deadline=None)
@given(damaged_samples(), st.integers(0, 2))
def test_damaged_input_parses_or_is_refused_never_crashes(data: bytes, strip: int) -> None:
    """Whatever the damage: a value that renders back to the input, or one BadInputError."""
    try:
        p = parse(data, "damaged.patch", strip)
    except BadInputError as e:
        assert str(e).startswith("damaged.patch:") and "\n" not in str(e)
        return
    assert p.render() == data


def test_line_cache_gives_every_caller_its_own_list() -> None:
    """Large texts are split once and remembered; every caller still gets its own list,
    and a different text (even one equal in length) is split afresh."""
    from patchq.core.patch import LineCache, split_lines

    cache = LineCache()
    text = b"".join(b"line %d\n" % i for i in range(2000)) + b"last"
    first = cache.split(text)
    first[0:3] = [b"changed\n"]  # the anchored placement edits its copy in place
    again = cache.split(text)
    assert again[0] == b"line 0\n" and len(again) == 2001 and again[-1] == b"last"
    assert again is not cache.split(text) and again == split_lines(text)
    other = text.replace(b"line 7\n", b"LINE 7\n")
    assert cache.split(other)[7] == b"LINE 7\n"
    crlf = text.replace(b"\n", b"\r\n")
    assert cache.split(crlf)[1] == b"line 1\r\n" and cache.split(crlf) == split_lines(crlf)


def test_line_cache_keeps_a_bounded_amount() -> None:
    from patchq.core.patch import LineCache

    cache = LineCache()
    texts = [bytes([65 + i % 26]) * 1_500_000 + b"\n" for i in range(12)]
    for t in texts:
        assert cache.split(t) == [t]
    assert cache._bytes <= LineCache.MAX
    assert sum(len(t) for t, _ in cache._kept.values()) == cache._bytes
    huge = b"x\n" * (5 << 20)  # 10 MB: split, never kept
    assert len(cache.split(huge)) == 5 << 20 and id(huge) not in cache._kept


def test_split_lines_keeps_nothing_between_calls() -> None:
    """No module-level cache: splitting large texts grows no container of any core
    module (run caches live on the run's objects, so two runs in one process never
    share one)."""
    import sys

    import patchq.core.hunks
    import patchq.core.merge3
    from patchq.core.patch import split_lines

    mods = [m for n, m in sys.modules.items() if n.startswith("patchq.core.")]

    def sizes() -> dict[tuple[str, str], int]:
        return {
            (m.__name__, n): len(v)
            for m in mods
            for n, v in vars(m).items()
            if isinstance(v, dict | list | set) and n != "__builtins__"
        }

    before = sizes()
    texts = [b"".join(b"%d line\n" % (i * j) for j in range(3000)) for i in range(3)]
    for t in texts:
        assert split_lines(t) == t.splitlines(keepends=True)
    patchq.core.merge3.merge(texts[0], texts[1], texts[2], ("a", "b", "c"))
    patchq.core.hunks.apply_hunks(texts[0], [])
    assert sizes() == before
