"""The hunk engine on bytes: properties, anchors, offsets, fuzz and the uniqueness rule."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchq.core import hunks as engine
from patchq.core.patch import Hunk, parse, split_lines
from patchq.core.status import AMBIGUOUS, EXACT, FAILED

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def text(lines: list[str], eol: bool = True) -> bytes:
    data = "".join(f"{x}\n" for x in lines).encode()
    return data if eol or not data else data[:-1]


# Files of short lines from a small alphabet (so repeats happen), optionally CRLF or
# missing their final newline.
line_st = st.sampled_from(["a", "b", "c", "{", "}", "", "  x = 1;", "return;", "é"])
file_st = st.builds(
    lambda lines, crlf, eol: b"".join((x.encode() + (b"\r\n" if crlf else b"\n")) for x in lines)[
        : None if eol or not lines else -1
    ],
    st.lists(line_st, max_size=30),
    st.booleans(),
    st.booleans(),
)


@SETTINGS
@given(file_st, file_st, st.integers(0, 4))
def test_diff_then_apply_reproduces_the_new_file(a: bytes, b: bytes, ctx: int) -> None:
    hunks = engine.diff(a, b, ctx)
    res = engine.apply_hunks(a, hunks)
    assert res.ok
    assert all(h.status == EXACT for h in res.hunks)
    assert res.content == b


@SETTINGS
@given(file_st, file_st, st.integers(0, 4))
def test_apply_then_reverse_is_the_identity(a: bytes, b: bytes, ctx: int) -> None:
    hunks = engine.diff(a, b, ctx)
    forward = engine.apply_hunks(a, hunks)
    back = engine.apply_hunks(forward.content, hunks, reverse=True)
    assert back.ok
    assert back.content == a


@SETTINGS
@given(file_st, file_st)
def test_rendered_hunks_parse_back_and_apply(a: bytes, b: bytes) -> None:
    hunks = engine.diff(a, b)
    data = b"--- a/f\n+++ b/f\n" + b"".join(h.render() for h in hunks)
    if not hunks:
        return
    parsed = parse(data, "gen.patch").sections[0].hunks
    assert list(parsed) == hunks
    assert engine.apply_hunks(a, parsed).content == b


# Unique lines: a realistic file whose context identifies each place.
@st.composite
def drifted(draw: st.DrawFn) -> tuple[bytes, bytes, bytes, bytes]:
    """(old, new, drifted old, expected new on the drifted old)."""
    n = draw(st.integers(1, 40))
    a = [f"line {i}" for i in range(n)]
    b = list(a)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["change", "insert", "delete"]))
        i = draw(st.integers(0, max(len(b) - 1, 0)))
        if op == "change" and b:
            b[i] = b[i] + " changed"
        elif op == "insert":
            b.insert(i, f"added {draw(st.integers(0, 999))}")
        elif b:
            del b[i]
    hunks = engine.diff(text(a), text(b))
    # Upstream inserts unrelated lines at a place no hunk covers (not even its context).
    covered: set[int] = set()
    for h in hunks:
        covered.update(range(h.old_pos + 1, h.old_pos + h.old_len))
    free = [p for p in range(n + 1) if p not in covered]
    p = draw(st.sampled_from(free))
    extra = [f"upstream {k}" for k in range(draw(st.integers(1, 5)))]
    a2 = a[:p] + extra + a[p:]
    shift = sum(
        h.new_len - h.old_len
        for h in hunks
        if h.old_pos + h.old_len <= p and not (h.old_len == 0 and h.old_pos == p)
    )
    b2 = b[: p + shift] + extra + b[p + shift :]
    return text(a), text(b), text(a2), text(b2)


@SETTINGS
@given(drifted())
def test_unrelated_upstream_edits_never_move_a_hunk(
    case: tuple[bytes, bytes, bytes, bytes],
) -> None:
    a, b, a2, expected = case
    res = engine.apply_hunks(a2, engine.diff(a, b))
    # Either the hunk lands where it belongs, or the engine refuses; never elsewhere.
    if res.ok:
        assert res.content == expected
    else:
        assert all(h.status in (FAILED, AMBIGUOUS) for h in res.failures)


def hunk(patch_text: str) -> list[Hunk]:
    return list(parse(patch_text.encode(), "t.patch").sections[0].hunks)


BLOCK = ["if (x) {", "  a();", "  b();", "}"]


def test_exact_offset_and_report() -> None:
    a = text(["p", "q", "r", "s", "t"])
    hs = engine.diff(a, text(["p", "q", "R", "s", "t"]), 1)
    res = engine.apply_hunks(text(["new", "new2", "p", "q", "r", "s", "t"]), hs)
    assert res.content == text(["new", "new2", "p", "q", "R", "s", "t"])
    (h,) = res.hunks
    assert (h.status, h.offset, h.line, h.candidates) == ("offset", 2, 4, 1)


def test_offset_prefers_the_nearest_match() -> None:
    old = ["head"] + BLOCK + ["mid"] * 10 + BLOCK + ["tail"]
    h = engine.diff(
        text(old), text(old[:1] + ["  A();" if x == "  a();" else x for x in BLOCK] + old[5:]), 1
    )
    # Shift everything by one line: the first block is nearer to the stated line.
    res = engine.apply_hunks(text(["top"] + old), h)
    assert res.hunks[0].status == "offset" and res.hunks[0].offset == 1
    assert res.hunks[0].candidates == 2
    assert split_lines(res.content)[3] == b"  A();\n"


def test_equally_near_matches_are_refused() -> None:
    hs = hunk("--- a/f\n+++ b/f\n@@ -5,3 +5,3 @@\n x\n-y\n+Y\n z\n")
    # The stated place (line 5) no longer matches; two copies sit 2 lines above and below.
    f = text(["0", "x", "y", "z", "4", "5", "6", "x", "y", "z"])
    res = engine.apply_hunks(f, hs)
    assert not res.ok
    assert res.hunks[0].status == "ambiguous"
    assert res.content == f


def test_fuzz_is_off_by_default_and_takes_only_unique_matches() -> None:
    hs = hunk("--- a/f\n+++ b/f\n@@ -2,5 +2,5 @@\n c1\n c2\n-old\n+new\n c3\n c4\n")
    drift = text(["0", "C1 edited", "c2", "old", "c3", "c4", "9"])
    assert engine.apply_hunks(drift, hs).hunks[0].status == "failed"
    res = engine.apply_hunks(drift, hs, fuzz=1)
    assert res.ok and res.hunks[0].status == "fuzz" and res.hunks[0].fuzz == 1
    assert res.content == text(["0", "C1 edited", "c2", "new", "c3", "c4", "9"])
    # With the same core twice in the file, fuzz must not pick one.
    twice = text(["C1 edited", "c2", "old", "c3", "X", "y", "C1 again", "c2", "old", "c3", "Z"])
    res = engine.apply_hunks(twice, hs, fuzz=2)
    assert not res.ok and res.hunks[0].status == "ambiguous"
    assert res.content == twice


def test_hunk_at_top_must_match_at_top() -> None:
    hs = engine.diff(text(["a", "b", "c", "d"]), text(["A", "b", "c", "d"]))
    res = engine.apply_hunks(text(["new", "a", "b", "c", "d"]), hs)
    assert not res.ok and res.hunks[0].status == "failed"


def test_hunk_without_trailing_context_must_match_at_end() -> None:
    hs = engine.diff(text(["a", "b", "c", "d"]), text(["a", "b", "c", "d", "e"]))
    assert not engine.apply_hunks(text(["a", "b", "c", "d", "more"]), hs).ok
    assert engine.apply_hunks(text(["x", "a", "b", "c", "d"]), hs).content == text(
        ["x", "a", "b", "c", "d", "e"]
    )


def test_no_newline_at_end_of_file_on_either_side() -> None:
    a, b = b"a\nb\nc", b"a\nb\nc\n"
    for x, y in ((a, b), (b, a), (b"a\nb", b"a\nB")):
        assert engine.apply_hunks(x, engine.diff(x, y)).content == y


def test_crlf_content_is_kept_byte_for_byte() -> None:
    a = b"one\r\ntwo\r\nthree\r\n"
    b = b"one\r\nTWO\r\nthree\r\n"
    hs = engine.diff(a, b)
    assert hs[0].lines[1] == ("-", b"two\r\n")
    assert engine.apply_hunks(a, hs).content == b
    # A CRLF hunk never matches an LF file.
    assert not engine.apply_hunks(a.replace(b"\r\n", b"\n"), hs).ok


def test_zero_context_insertion_goes_only_where_stated() -> None:
    hs = hunk("--- a/f\n+++ b/f\n@@ -2,0 +3 @@\n+new\n")
    assert engine.apply_hunks(text(["a", "b", "c"]), hs).content == text(["a", "b", "new", "c"])
    assert not engine.apply_hunks(text(["a"]), hs).ok


def test_new_file_and_deleted_file() -> None:
    new = hunk("--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n")
    assert engine.apply_hunks(None, new).content == b"a\nb\n"
    gone = engine.apply_hunks(b"a\nb\n", new, reverse=True)
    assert gone.ok and gone.content == b""


def test_second_hunk_uses_first_hunks_offset_to_break_ties() -> None:
    old = ["top", "x", "y", "z"] + [f"l{i}" for i in range(10)] + ["x", "y", "z", "end"]
    new = ["top", "x", "Y", "z"] + [f"l{i}" for i in range(10)] + ["x", "Y2", "z", "end"]
    hs = engine.diff(text(old), text(new), 1)
    drifted = text(["d1", "d2", "d3", "d4", "d5", "d6"] + old)
    res = engine.apply_hunks(drifted, hs)
    assert [h.offset for h in res.hunks] == [6, 6]
    assert res.content == text(["d1", "d2", "d3", "d4", "d5", "d6"] + new)


def test_a_mid_hunk_line_without_newline_is_not_glued_to_the_next() -> None:
    """Found by review: `\\ No newline` in the middle of a hunk leaves an old line without
    one; the byte-splicing fast path joined it onto the next and matched the single file
    line `bc` for `b` + `c`. It now leaves such hunks to the line engine, which refuses."""
    patch = parse(
        b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n c\n",
        "f.patch",
        1,
    )
    hunks = patch.sections[0].hunks
    assert engine._exact_in_place(b"a\nbc\nd\n", hunks) is None
    res = engine.apply_hunks(b"a\nbc\nd\n", hunks)
    assert not res.ok and res.content == b"a\nbc\nd\n"
