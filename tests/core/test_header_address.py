"""A mail `From:` of plain words is split without parseaddr's tokenizer (a
thousand-patch series spent 0.05 s there); the answer must be parseaddr's."""

from __future__ import annotations

import email.utils

from hypothesis import event, given, settings
from hypothesis import strategies as st

from patchq.core import header
from patchq.core.header import _PLAIN_FROM, _address, _name_addr

_word = st.one_of(
    st.text(alphabet=st.sampled_from("abzAZéßØç'-"), min_size=1, max_size=8),
    st.text(alphabet=st.sampled_from("abzAZéßØ09_'-.ç"), min_size=1, max_size=8),
)
_local = st.text(alphabet=st.sampled_from("az09._+-"), min_size=1, max_size=8)
_label = st.text(alphabet=st.sampled_from("az09-"), min_size=1, max_size=6)


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(_word, min_size=1, max_size=4),
    st.sampled_from([" ", "  ", "\t"]),
    st.sampled_from(["", " ", "   "]),
    _local,
    st.lists(_label, min_size=1, max_size=3),
    st.sampled_from(["", ">", "<", '"', ",", " x"]),
)
def test_a_plain_from_splits_as_parseaddr_splits_it(
    words: list[str], sep: str, gap: str, local: str, labels: list[str], tail: str
) -> None:
    value = f"{sep.join(words)}{gap}<{local}@{'.'.join(labels)}>{tail}"
    slow = email.utils.parseaddr(value)
    expected = _name_addr(*slow) if slow != ("", "") else (value.strip() or None, None)
    assert _address(value) == expected
    event("quick path" if _PLAIN_FROM.fullmatch(value) else "parseaddr")


def test_the_quick_path_takes_real_authors() -> None:
    for value, want in (
        ("Daniel Stenberg <daniel@haxx.se>", ("Daniel Stenberg", "daniel@haxx.se")),
        ("Viktor  Szakats <commit@vsz.me>", ("Viktor Szakats", "commit@vsz.me")),
        ("D'Arcy Jean-Luc <a.b+c@x-y.co.uk>", ("D'Arcy Jean-Luc", "a.b+c@x-y.co.uk")),
    ):
        assert header._PLAIN_FROM.fullmatch(value) is not None
        assert _address(value) == want == email.utils.parseaddr(value)
