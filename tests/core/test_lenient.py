"""Patches GNU patch reads, read by patchq too: GNU patch's leniencies.

tests/data/lenient/ holds our own real-world-shaped damaged patches over a small tree
(tree/, made by make.py). Each is parsed (its normalisations recorded, its bytes
rendered back unchanged) and applied by GNU patch (`patch -p1 -N --batch`, fuzz 0 and
`--fuzz 2`) and by `patchq apply` (`--fuzz 0` and `--fuzz 2`) to the same tree: wherever
GNU patch applies it, patchq gives the same bytes, or refuses with the documented reason
(a fuzzed match that is not unique, which GNU patch takes blindly).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.core import names as P
from patchq.core.errors import BadInputError
from patchq.core.names import resolve_section
from patchq.core.patch import parse

from ..conftest import Queue, Result, Upstream, wall_clock

DATA = Path(__file__).parent.parent / "data" / "lenient"
TREE = DATA / "tree"

# Sample → the normalisations parsing it records (kinds), and the first one's line.
PARSED: dict[str, tuple[set[str], int]] = {
    "blank-context-stripped.patch": ({P.BLANK_CONTEXT}, 6),
    "tab-context-stripped.patch": ({P.TAB_CONTEXT}, 11),
    "whitespace-damaged-mail.patch": ({P.BLANK_CONTEXT, P.TAB_CONTEXT}, 8),
    "plus-only-header.patch": ({P.PLUS_ONLY}, 3),
    "timestamp-after-spaces.patch": ({P.SPACED_STAMP}, 1),
    "orig-and-dot-names.patch": ({P.SHORT_NAME}, 1),
    "names-differ-old-exists.patch": (set(), 0),
    "index-names-the-file.patch": ({P.SHORT_NAME}, 3),
    "cvs-diff.patch": (set(), 0),
    "diff-ruN-trees.patch": (set(), 0),
    "crlf-patch-file.patch": (set(), 0),
    "trailing-whitespace.patch": (set(), 0),
    "no-newline-add-newline.patch": (set(), 0),
    "no-newline-both.patch": (set(), 0),
    "no-newline-remove-newline.patch": (set(), 0),
    "mbox-two-messages.patch": (set(), 0),
    "eof-blank-context-chopped.patch": ({P.EOF_CONTEXT}, 3),
    "needs-fuzz.patch": (set(), 0),
    "ambiguous-fuzz.patch": (set(), 0),
    "note-between-sections.patch": ({P.SKIPPED_TEXT}, 7),
    "create-at-line-zero.patch": (set(), 0),
    # Samples over tests/data/patches' files (parse only).
    "minus-without-plus.patch": ({P.MINUS_ONLY}, 3),
    "garbage-between-sections.patch": ({P.SKIPPED_TEXT}, 28),
    "garbage-after-mode-change.patch": ({P.SKIPPED_TEXT}, 4),
    # GNU patch reads a hunk up to its counts; what follows, up to the next file's header,
    # is skipped — hunks too (pch.c another_hunk, intuit_diff_type).
    "hunk-count-one-short.patch": ({P.HUNK_OVERRUN, P.SKIPPED_HUNK}, 13),
    "hunk-after-blank-line.patch": ({P.SKIPPED_HUNK}, 15),
    "hunks-overlap-context.patch": ({P.OVERLAP}, 14),
    "hunks-out-of-order.patch": ({P.OVERLAP}, 13),
}
PARSE_ONLY = {
    "minus-without-plus.patch",
    "hunk-count-one-short.patch",
    "hunk-after-blank-line.patch",
    "hunks-overlap-context.patch",
    "hunks-out-of-order.patch",
}
OVER_TREE = [n for n in PARSED if n not in PARSE_ONLY and "garbage" not in n]

# Sample → normalisations only the tree can tell (made when applying).
APPLIED = {
    "names-differ-old-exists.patch": P.NAME_CHOICE,
    "orig-and-dot-names.patch": None,  # one name left: nothing to choose
    "crlf-patch-file.patch": P.CRLF,
    "create-at-line-zero.patch": P.CREATED,
}

# Where patchq refuses what GNU patch applies, and why (docs/patch-formats.md): nowhere
# (an ambiguous fuzzed match is placed as GNU patch places it, the other match recorded).
REFUSED: dict[tuple[str, int], str] = {}

pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch missing")


def test_every_sample_has_an_expectation() -> None:
    assert sorted(p.name for p in DATA.glob("*.patch")) == sorted(PARSED)


@pytest.mark.parametrize("name", sorted(PARSED))
def test_sample_parses_with_its_normalisations_and_renders_back(name: str) -> None:
    data = (DATA / name).read_bytes()
    patch = parse(data, f"patches/{name}")
    kinds, line = PARSED[name]
    assert {n.kind for n in patch.normalisations} == kinds
    if kinds:
        assert patch.normalisations[0].line == line
        assert all(n.message().startswith("needed normalisation ") for n in patch.normalisations)
    assert patch.render() == data


def tree_files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def gnu_patch(tmp: Path, name: str, fuzz: int) -> dict[str, bytes] | None:
    work = tmp / f"gnu-{fuzz}"
    shutil.copytree(TREE, work)
    cmd = ["patch", "-p1", "-N", "--batch", "--no-backup-if-mismatch", "-r", "-"]
    cmd += ["-F0"] if fuzz == 0 else ["--fuzz", str(fuzz)]
    with (DATA / name).open("rb") as f:
        proc = subprocess.run(cmd, cwd=work, stdin=f, capture_output=True)
    return tree_files(work) if proc.returncode == 0 else None


def setup_tree(upstream: Upstream, queue: Queue, name: str) -> str:
    for path, data in tree_files(TREE).items():
        upstream.write(path, data)
    queue.add(name, (DATA / name).read_bytes())
    return upstream.commit("release 1.0.3")


# Every sample at fuzz 0; at fuzz 2 those where fuzz can change the answer (the suite's
# time budget: each case builds a repository).
FUZZ_2 = ["needs-fuzz.patch", "ambiguous-fuzz.patch", "eof-blank-context-chopped.patch"]
FUZZ_2 += ["whitespace-damaged-mail.patch", "crlf-patch-file.patch"]


@pytest.mark.parametrize("name, fuzz", [(n, 0) for n in OVER_TREE] + [(n, 2) for n in FUZZ_2])
def test_same_bytes_as_gnu_patch(
    name: str,
    fuzz: int,
    tmp_path: Path,
    upstream: Upstream,
    queue: Queue,
    patchq: Callable[..., Result],
) -> None:
    want = gnu_patch(tmp_path, name, fuzz)
    base = setup_tree(upstream, queue, name)
    r = patchq("apply", "--onto", base, "--fuzz", str(fuzz), "-v")
    if (name, fuzz) in REFUSED:
        assert want is not None, "GNU patch applies it"
        assert r.code == 3 and REFUSED[(name, fuzz)] in r.err, r.err
        assert tree_files(upstream.path) == tree_files(TREE)  # nothing changed
        return
    if want is None:
        # GNU patch does not apply it: neither does patchq.
        assert r.code == 3, r.err
        return
    assert r.code == 0, r.err
    assert tree_files(upstream.path) == want
    expected = APPLIED.get(name)
    if expected:
        assert f"needed normalisation {expected} " in r.err


def test_fuzz_gnu_patch_needs_is_named_in_the_error(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = setup_tree(upstream, queue, "needs-fuzz.patch")
    r = patchq("apply", "--onto", base)
    assert r.code == 3
    assert "applies with fuzz 2, as GNU patch would: rerun with `--fuzz 2`" in r.err
    assert r.err.count("\n") == 1
    assert patchq("apply", "--onto", base, "--fuzz", "2").code == 0
    lock = json.loads(queue.lock())
    assert lock["patches"][0]["name"] == "needs-fuzz.patch"
    r = patchq("apply", "--onto", base, "--fuzz", "2", "--json")
    (doc,) = json.loads(r.out)["patches"]
    assert doc["status"] == "fuzz" and doc["files"][0]["hunks"][0]["fuzz"] == 2


def test_apply_json_check_and_lint_name_the_normalisations(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = setup_tree(upstream, queue, "whitespace-damaged-mail.patch")
    queue.add("plus-only-header.patch", (DATA / "plus-only-header.patch").read_bytes())
    r = patchq("apply", "--onto", base, "--json")
    assert r.code == 0, r.err
    docs = json.loads(r.out)["patches"]
    assert [{n["kind"] for n in d["normalisations"]} for d in docs] == [
        {P.BLANK_CONTEXT, P.TAB_CONTEXT},
        {P.PLUS_ONLY},
    ]
    assert docs[1]["normalisations"][0] == {
        "kind": P.PLUS_ONLY,
        "line": 3,
        "detail": "a `+++` line without a `---` line before it",
    }
    r = patchq("check", "--onto", base, "--json")
    assert r.code == 0, r.err
    checked = json.loads(r.out)["patches"]
    assert [len(d["normalisations"]) for d in checked] == [2, 1]
    text = patchq("check", "--onto", base).out
    assert "needed normalisation plus-only-header at line 3" in text
    r = patchq("lint")
    assert r.code == 1
    assert (
        "patches/plus-only-header.patch:3: warning: needed normalisation plus-only-header" in r.out
    )
    assert "patches/whitespace-damaged-mail.patch:8: warning: needed normalisation" in r.out


def test_names_are_chosen_by_what_exists() -> None:
    data = (DATA / "names-differ-old-exists.patch").read_bytes()
    (s,) = parse(data).sections
    assert s.candidates == ("src/util.c", "util.c")
    assert s.path == "util.c"  # GNU's best_name() without a tree: fewest components

    class Tree:
        def __init__(self, files: set[str]) -> None:
            self.files = files

        def exists(self, path: str) -> bool:
            return path in self.files

        def is_dir(self, path: str) -> bool:
            return any(f.startswith(path + "/") for f in self.files)

        def has_crlf(self, path: str) -> bool:
            return False

        def mode(self, path: str) -> str | None:
            return "100644" if path in self.files else None

    got, notes = resolve_section(s, Tree({"src/util.c"}))
    assert (got.old_path, got.new_path) == ("src/util.c", "src/util.c")
    assert [n.kind for n in notes] == [P.NAME_CHOICE]
    got, notes = resolve_section(s, Tree({"util.c", "src/util.c"}))
    assert got.path == "util.c" and [n.kind for n in notes] == [P.NAME_CHOICE]
    got, notes = resolve_section(s, Tree(set()))
    assert got is s and notes == ()  # nothing exists: apply says which file is missing


def test_unsafe_name_is_ignored_for_the_safe_one_and_refused_alone() -> None:
    hunk = b"@@ -1 +1 @@\n-a\n+b\n"
    patch = parse(b"--- a/../build/x/src/f.c\n+++ b/src/f.c\n" + hunk)
    assert patch.sections[0].path == "src/f.c"
    assert [n.kind for n in patch.normalisations] == [P.UNSAFE_NAME]
    alone = parse(b"--- a/../f.c\n+++ b/../f.c\n" + hunk)
    assert alone.sections[0].path == "../f.c"  # refused when applied: path rules


def test_name_too_short_everywhere_is_still_refused() -> None:
    with pytest.raises(BadInputError) as caught:
        parse(b"--- f.c.orig\n+++ f.c\n@@ -1 +1 @@\n-a\n+b\n", "p")
    assert caught.value.where == "p:1" and "-p1 strips the whole of 'f.c.orig'" in caught.value.what


def test_a_truncated_hunk_is_not_taken_for_chopped_context() -> None:
    data = (DATA / "eof-blank-context-chopped.patch").read_bytes()
    cut = data[: data.rindex(b"-Licence")]  # the change itself is gone
    with pytest.raises(BadInputError, match="truncated hunk"):
        parse(cut, "p")


def test_a_damaged_megabyte_parses_in_linear_time() -> None:
    one = (DATA / "whitespace-damaged-mail.patch").read_bytes().split(b"\n\n", 1)[1]
    n = 1_000_000 // len(one)
    data = b"".join(one.replace(b"src/main.c", f"src/f{i}.c".encode()) for i in range(n))
    t = time.perf_counter()
    patch = parse(data + b"Only in src: old.c\n" + one)
    took = time.perf_counter() - t
    assert len(patch.sections) == n + 1 and patch.render() == data + b"Only in src: old.c\n" + one
    wall_clock("parse: a damaged megabyte", took, 3.0)


def test_refresh_keeps_a_damaged_hunk_it_did_not_change(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = setup_tree(upstream, queue, "whitespace-damaged-mail.patch")
    queue.add("blank-context-stripped.patch", (DATA / "blank-context-stripped.patch").read_bytes())
    before = (queue.path / "patches" / "whitespace-damaged-mail.patch").read_bytes()
    assert patchq("apply", "--onto", base).code == 0
    assert patchq("pop").code == 0
    assert patchq("refresh").code == 0
    assert (queue.path / "patches" / "whitespace-damaged-mail.patch").read_bytes() == before
