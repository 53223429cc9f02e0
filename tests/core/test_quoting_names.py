"""`diff --git` names as git writes them without renames, read back (provenance's whole-range
log keeps the commits whose names are wanted)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.core.quoting import diff_git_names, quote_path

_names = st.text(alphabet=st.sampled_from('ab /"\\\té-x.'), min_size=1, max_size=12).filter(
    lambda n: not n.startswith("/") and not n.endswith("/") and "//" not in n
)


@settings(max_examples=500, deadline=None)
@given(_names)
def test_a_diff_git_line_names_its_file(name: str) -> None:
    a, b = quote_path("a/" + name), quote_path("b/" + name)
    assert diff_git_names(a + b" " + b) == (name,)
    assert diff_git_names(a + b" " + b + b"\r") == (name,)


def test_what_names_no_single_file_is_none() -> None:
    assert diff_git_names(b"a/x b/y") == ()  # a rename: not asked of this reader
    assert diff_git_names(b'"a/unterminated') == ()
    assert diff_git_names(b"") == ()
