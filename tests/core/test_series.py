"""The series file: byte-identical round trips, strip levels, MQ guards, refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchq.core.errors import BadInputError
from patchq.core.series import Series, make_entry

QUILT = """\
# Debian-style series, written by quilt
01-fix-build.patch -p0

02-cuda13.patch -p1  # upstream: https://example.org/pr/1
sub/dir/03-sm120.patch #+sm120 #-rocm
04-rocm-only.patch #+rocm
\t
05-last.diff"""


def test_round_trip_is_byte_identical() -> None:
    s = Series.parse(QUILT)
    assert s.format() == QUILT
    assert s.names() == [
        "01-fix-build.patch",
        "02-cuda13.patch",
        "sub/dir/03-sm120.patch",
        "04-rocm-only.patch",
        "05-last.diff",
    ]
    e = {x.name: x for x in s.patches}
    assert e["01-fix-build.patch"].strip == 0
    assert e["02-cuda13.patch"].strip_level() == 1
    assert e["05-last.diff"].strip is None and e["05-last.diff"].strip_level(1) == 1
    assert e["sub/dir/03-sm120.patch"].guards == ("+sm120", "-rocm")
    assert e["02-cuda13.patch"].guards == ()


def test_guards_follow_mq() -> None:
    s = Series.parse(QUILT)
    assert [x.name for x in s.active([])] == [
        "01-fix-build.patch",
        "02-cuda13.patch",
        "05-last.diff",
    ]
    assert "sub/dir/03-sm120.patch" in [x.name for x in s.active(["sm120"])]
    both = [x.name for x in s.active(["sm120", "rocm"])]
    assert "sub/dir/03-sm120.patch" not in both and "04-rocm-only.patch" in both


def test_appending_keeps_existing_bytes() -> None:
    s = Series.parse("a.patch\n# keep me\nb.patch")
    s2 = s.with_appended([make_entry("c.patch", 0, ["+g"])], after="a.patch")
    assert s2.format() == "a.patch\nc.patch -p0 #+g\n# keep me\nb.patch"
    s3 = s.with_appended([make_entry("d.patch")])
    assert s3.format() == "a.patch\n# keep me\nb.patch\nd.patch\n"
    with pytest.raises(BadInputError, match="already in the series"):
        s.with_appended([make_entry("a.patch")])
    with pytest.raises(BadInputError, match="no patch named"):
        s.with_appended([make_entry("z.patch")], after="nope")


@pytest.mark.parametrize(
    "text,phrase,line",
    [
        ("a.patch\nb.patch\na.patch\n", "listed twice", 3),
        ("a.patch --fuzz\n", "unexpected option", 1),
        ("a.patch #+\n", "malformed guard", 1),
    ],
)
def test_bad_series(text: str, phrase: str, line: int) -> None:
    with pytest.raises(BadInputError, match=phrase) as e:
        Series.parse(text, "series")
    assert e.value.where == f"series:{line}"


lines = st.one_of(
    st.just(""),
    st.just("# comment"),
    st.just("   "),
    st.from_regex(
        r"[a-z0-9][a-z0-9._/-]{0,12}\.patch( -p[0-3])?( #[+-][a-z0-9]{1,5}){0,2}", fullmatch=True
    ),
)


@given(st.lists(lines, max_size=12), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_any_series_round_trips(items: list[str], eol: str, final: bool) -> None:
    names = [x.split()[0] for x in items if x.strip() and not x.startswith("#")]
    if len(set(names)) != len(names):
        return
    text = eol.join(items) + (eol if final and items else "")
    assert Series.parse(text).format() == text


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e", "\r"])
def test_only_lf_ends_a_series_line(sep: str) -> None:
    """U+2028, NEL, VT, FF, the file separators and a lone CR are inside a line, as quilt
    reads it: they never split one entry into two."""
    s = Series.parse(f"a{sep}b.patch\nc.patch\r\n")
    assert s.names() == [f"a{sep}b.patch", "c.patch"]
    assert s.format() == f"a{sep}b.patch\nc.patch\r\n"


def test_words_are_split_on_space_and_tab_only() -> None:
    """A no-break space is part of a name (quilt's shell does not split there)."""
    s = Series.parse("a\u00a0b.patch\t-p0 #+x\n")
    assert s.names() == ["a\u00a0b.patch"] and s.patches[0].guards == ("+x",)
