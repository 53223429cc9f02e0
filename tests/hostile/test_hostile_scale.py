"""Every input costs linear time: twice the input, about twice the time.

Each path that compares unbounded input with difflib's SequenceMatcher (up to the
product of the two sides' lengths) goes through `core.bounded`, which answers
beyond its bound in linear time: the exported script's diff (common head and tail, one
replacement), the look-alike hint (no hint), the word merge's line pairing (not paired:
a conflict), the HTML report's side-by-side layout and interdiff (a plain layout), the
report's hunk pairing (none), the moved-code search (files indexed once, windows
compared within the bound). Each test times a path on input past the bound and on
twice that input (best of three, in process) and allows three times the time; and the
linear answers are checked to still be right answers.
"""

from __future__ import annotations

import difflib
import random
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.core import bounded, placement
from patchq.core.errors import BadInputError
from patchq.core.hints import _alike
from patchq.core.hunks import diff as hunks_diff
from patchq.core.moved import find_block
from patchq.core.patch import parse
from patchq.core.resolutions import resolved_regions
from patchq.core.resolve import Region, _ratio
from patchq.formats.report import HunkView, _side_by_side, interdiff
from patchq.formats.script import build_files

T = TypeVar("T")


def best_of(f: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def linear(make: Callable[[int], Callable[[], object]], n: int) -> None:
    """`make(n)` builds a run on input of size n; twice the input may take at most about
    twice the time (three times, for a loaded machine; a small floor for timer noise)."""
    small, large = make(n), make(2 * n)
    for _ in range(3):  # a loaded machine: a slow sample is retried, a quadratic path is not
        t1, t2 = best_of(small), best_of(large)
        if t2 <= 3 * max(t1, 0.02):
            return
    raise AssertionError((n, t1, t2))


def words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"w{rng.randrange(10**9)}\n" for _ in range(n)]


def apply_opcodes(a: Sequence[T], b: Sequence[T], ops: list[bounded.Opcode]) -> list[T]:
    out: list[T] = []
    for tag, i1, i2, j1, j2 in ops:
        out += list(a[i1:i2]) if tag == "equal" else list(b[j1:j2])
    return out


@settings(max_examples=200, deadline=None)
@given(
    a=st.lists(st.sampled_from("abcd"), max_size=40),
    b=st.lists(st.sampled_from("abcd"), max_size=40),
    limit=st.sampled_from([0, 10, 10_000]),
)
def test_bounded_opcodes_turn_a_into_b_within_and_beyond_the_bound(
    a: list[str], b: list[str], limit: int
) -> None:
    old = bounded.LIMIT
    bounded.LIMIT = limit
    try:
        ops = bounded.opcodes(a, b)
    finally:
        bounded.LIMIT = old
    assert apply_opcodes(a, b, ops) == b
    # Contiguous, covering both sides, equal runs really equal.
    assert [o[1] for o in ops[1:]] == [o[2] for o in ops[:-1]]
    assert [o[3] for o in ops[1:]] == [o[4] for o in ops[:-1]]
    if ops:
        assert (ops[0][1], ops[0][3], ops[-1][2], ops[-1][4]) == (0, 0, len(a), len(b))
    assert all(a[i1:i2] == b[j1:j2] for t, i1, i2, j1, j2 in ops if t == "equal")


def test_the_exported_scripts_diff() -> None:
    def make(n: int) -> Callable[[], object]:
        # Few distinct lines, each repeated: difflib's worst case (seconds at 800 lines).
        before = ("x\ny\n" * n).encode()
        after = ("y\nx\n" * n).encode()
        return lambda: build_files({"f": (before, after)}, {"f": (None, None)}, {}, {})

    linear(make, 4000)
    # The linear answer is still an exact edit list.
    before = "".join(["same\n"] * 5 + words(3000, 1) + ["tail\n"]).encode()
    after = "".join(["same\n"] * 5 + words(3000, 2) + ["tail\n"]).encode()
    (f,) = build_files({"f": (before, after)}, {"f": (None, None)}, {}, {})
    assert f.edits == ((5, 3000, "".join(words(3000, 2))),)


def test_the_look_alike_hint() -> None:
    def make(n: int) -> Callable[[], object]:
        a = ("ab" * n).encode()  # 8,000 characters took difflib 70 s
        b = ("ba" * n).encode()
        return lambda: _alike(a, b)

    linear(make, 200_000)
    assert _alike(b"x = frobnicate(a, b);", b"x = frobnicate(a, c);")  # short: compared


def test_the_word_merges_pairing() -> None:
    def make(n: int) -> Callable[[], object]:
        a = ("a b " * n).encode()
        b = ("b a " * n).encode()
        return lambda: _ratio(a, b)

    linear(make, 20_000)
    assert _ratio(b"call(a, b)", b"call(a, c)") > 0.5


def test_interdiff_of_many_runs() -> None:
    """Every other line changed, under one file name: each run once, not walking back."""

    def make(n: int) -> Callable[[], object]:
        before = ["=== f"] + [f"line {i}" if i % 2 else f"old {i}" for i in range(n)]
        after = ["=== f"] + [f"line {i}" if i % 2 else f"new {i}" for i in range(n)]
        return lambda: interdiff(before, after)

    linear(make, 1000)
    assert interdiff(["=== f", "a", "b"], ["=== f", "a", "c"]) == (" === f", "-b", "+c")


def test_the_html_layout_and_interdiff() -> None:
    def make(n: int) -> Callable[[], object]:
        old = " x\n y\n" * n
        new = " y\n x\n" * n
        view = HunkView("f", old, new, "changed", ())
        before, after = old.splitlines(), new.splitlines()
        return lambda: (_side_by_side(view), interdiff(before, after))

    linear(make, 4000)


def test_the_moved_code_search() -> None:
    block = [f"telling line {i}\n".encode() for i in range(40)]

    def make(n: int) -> Callable[[], object]:
        # Many files and many windows that share a third of the block's telling lines.
        files = {}
        for k in range(n):
            body = [f"other {k} {j}\n".encode() for j in range(200)]
            body[50:90] = [x if i % 3 == 0 else b"edited\n" for i, x in enumerate(block)]
            files[f"f{k}.c"] = body
        return lambda: find_block(block, files)

    linear(make, 60)


def test_a_mail_subject_of_many_prefixes() -> None:
    from patchq.core.header import read_header

    def make(n: int) -> Callable[[], object]:
        h = f"From: a <a@example.org>\nSubject: {'[PATCH] ' * n}fix\n\n".encode()
        return lambda: read_header(h)

    linear(make, 40_000)
    h = read_header(b"From: a <a@example.org>\nSubject: [PATCH v2 1/3] [RFC] [media] fix\n\n")
    assert h.info.subject == "[media] fix"


def test_a_mail_subject_of_many_encoded_words() -> None:
    from patchq.core.header import read_header

    def make(n: int) -> Callable[[], object]:
        h = f"From: a <a@example.org>\nSubject: {'=?utf-8?q?a?= ' * n}x\n\n".encode()
        return lambda: read_header(h)

    linear(make, 4000)
    h = read_header(b"From: a <a@example.org>\nSubject: =?utf-8?q?caf=C3=A9?=\n\n")
    assert h.info.subject == "caf\u00e9"  # a short one is still decoded


def test_a_diff_git_line_with_many_spaces() -> None:
    from patchq.core.patch import parse

    def make(n: int) -> Callable[[], object]:
        name = "a " * n + "z"
        same = f"diff --git a/{name} b/{name}\nnew file mode 100644\n".encode()
        many = ("diff --git " + "a/b " * n + "\nnew file mode 100644\n").encode()

        def run() -> None:
            parse(same, "x", 1)
            try:
                parse(many, "x", 1)
            except BadInputError:
                pass

        return run

    linear(make, 40_000)
    (s,) = parse(b"diff --git a/x y/f b/x y/f\nnew file mode 100644\n", "x", 1).sections
    assert s.new_path == "x y/f"


def test_function_context_of_many_hunks() -> None:
    """GNU diff `-p` headings of a file's hunks: one walk down the file, not one walk
    back from each hunk (a file of no function lines and a hunk every few lines)."""
    from patchq.core.patchstyle import diff_p_heading, diff_p_headings

    def make(n: int) -> Callable[[], object]:
        lines = [b"  indented, no function here\n"] * n
        firsts = list(range(0, n, 4))
        return lambda: diff_p_headings(lines, firsts)

    linear(make, 20_000)
    lines = [b"int f(void)\n", b"{\n", b"  x;\n", b"static int g(int a)\n", b"  y;\n"]
    firsts = [0, 2, 5, 3, 2]
    assert diff_p_headings(lines, firsts) == [diff_p_heading(lines, f) for f in firsts]
    assert diff_p_headings(lines, firsts) == [
        b"",
        b" int f(void)",
        b" static int g(int a)",
        b" int f(void)",
        b" int f(void)",
    ]


@settings(max_examples=200, deadline=None)
@given(
    a=st.lists(st.sampled_from("abcd"), max_size=60),
    b=st.lists(st.sampled_from("abcd"), max_size=60),
    n=st.integers(0, 4),
)
def test_bounded_grouped_opcodes_are_difflibs_within_the_bound(
    a: list[str], b: list[str], n: int
) -> None:
    want = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(n))
    assert bounded.grouped_opcodes(a, b, n) == [list(g) for g in want]


def test_the_demos_diff() -> None:
    def make(n: int) -> Callable[[], object]:
        before = ("x\ny\n" * n).encode()
        after = ("y\nx\n" * n).encode()
        return lambda: hunks_diff(before, after)

    linear(make, 4000)
    # Beyond the bound, still a diff that turns the old text into the new one.
    before = "".join(["same\n"] * 5 + words(3000, 1) + ["tail\n"]).encode()
    after = "".join(["same\n"] * 5 + words(3000, 2) + ["tail\n"]).encode()
    (h,) = hunks_diff(before, after)
    assert [t for t, _ in h.lines].count("-") == 3000
    assert b"".join(x for t, x in h.lines if t != "-") == after[len(b"same\n") * 2 :]


def test_remembering_a_resolution_in_a_long_file() -> None:
    def make(n: int) -> Callable[[], object]:
        marked, resolved, region = long_conflict(n)
        return lambda: resolved_regions(marked, resolved, [region])

    linear(make, 4000)
    marked, resolved, region = long_conflict(4000)
    ((_, answer),) = resolved_regions(marked, resolved, [region])
    assert answer == (b"the resolution\n",)


def long_conflict(n: int) -> tuple[bytes, bytes, Region]:
    """A file of n repeated-line pairs around one conflict region, and its resolution."""
    around = "x\ny\n" * n
    markers = "<<<<<<< ours\na\n||||||| base\nb\n=======\nc\n>>>>>>> theirs\n"
    marked = (around + markers + around).encode()
    resolved = (around + "the resolution\n" + around).encode()
    region = Region((b"b\n",), (b"a\n",), (b"c\n",), 2 * n, 2 * n, 7)
    return marked, resolved, region


@settings(max_examples=200, deadline=None)
@given(
    a=st.lists(st.sampled_from("abcdef"), max_size=300),
    b=st.lists(st.sampled_from("abcdef"), max_size=300),
)
def test_the_alignment_is_difflibs_own_within_its_steps(a: list[str], b: list[str]) -> None:
    """The pinned base's alignment counts difflib's steps but changes none of them: within
    the bound its opcodes are `SequenceMatcher(None, a, b)`'s (autojunk and all, which
    lists of 200 lines or more use); a bound of no steps answers None, unless there is
    nothing to search."""
    want = difflib.SequenceMatcher(None, a, b).get_opcodes()
    assert bounded.aligned(a, b) == want
    got = bounded.aligned(a, b, 0)
    assert got is None or got == want
    if a:
        assert got is None


def test_the_pinned_base_alignment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two files of lines each repeated just under difflib's "popular" mark (1% of the
    file): difflib's alignment grows far past quadratic (5.9 million steps, 2 s at 8,000
    lines; a real 50,000-line configure script took 22 s). Past its steps (a small bound
    here, to keep the test short) the alignment is the linear answer, marked as not
    `whole`, and the checks that read where a line maps prove nothing by it."""
    monkeypatch.setattr(bounded, "WORK", 200_000)

    def lines(n: int, seed: int) -> list[bytes]:
        rng = random.Random(seed)
        return [b"line %d\n" % rng.randrange(max(n // 60, 2)) for _ in range(n)]

    def make(n: int) -> Callable[[], object]:
        pre, up = lines(n, 1), lines(n, 2)
        return lambda: placement.Alignment(pre, up)

    linear(make, 8000)
    pre, up = lines(8000, 1), lines(8000, 2)
    align = placement.Alignment(pre, up)
    assert not align.whole
    assert apply_opcodes(pre, up, align.ops) == up
    # A hunk whose added lines are all somewhere in that middle is not judged held there.
    hunk = (
        parse(b"--- a/f\n+++ b/f\n@@ -1,1 +1,2 @@\n " + pre[0] + b"+" + up[1]).sections[0].hunks[0]
    )
    assert not placement.held(hunk, pre, up, align)
    small = placement.Alignment(pre[:300], up[:300])
    assert small.whole
    assert small.ops == difflib.SequenceMatcher(None, pre[:300], up[:300]).get_opcodes()
