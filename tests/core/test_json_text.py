"""`json_text`'s quick indenting encoder writes exactly what json.dumps writes (a
thousand-patch `check --json` spent 3% of its run in json's pure-Python indenter)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.core.paths import FileMode
from patchq.core.status import Status
from patchq.core.text import _indented, json_text

SCALARS = (
    st.none()
    | st.sampled_from(list(Status))
    | st.sampled_from(list(FileMode))
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False)
    | st.just(0.5)
)
DOCS = st.recursive(
    SCALARS,
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.tuples(kids, kids)
        | st.dictionaries(st.text(max_size=5), kids, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(DOCS, st.sampled_from([None, 1, 2, 4]))
def test_the_same_text_as_json_dumps(doc: Any, indent: int | None) -> None:
    want = json.dumps(doc, indent=indent, sort_keys=True, ensure_ascii=False)
    got = json_text(doc, indent)
    # json_text escapes only what json.dumps leaves raw and a terminal would obey.
    assert json.loads(got) == json.loads(want)
    if all(c.isprintable() or c in "\n" for c in want):
        assert got == want


def test_non_string_keys_and_floats_are_left_to_json() -> None:
    doc = {"a": [1, 2.5, {"b": None}], "c": {3: True, 1: False}}
    assert json_text(doc) == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
    assert json_text({}) == "{}" and json_text([]) == "[]"
    assert json_text({"x": {}, "y": []}) == '{\n  "x": {},\n  "y": []\n}'


def test_status_enums_and_floats_take_the_quick_encoder() -> None:
    # A check's document holds Status values (str enums) in every patch: json's
    # pure-Python indenter wrote the whole 5.6 MB document for the 1,000-patch series.
    doc = {"patches": [{"status": Status.MERGE, "precision": 0.875, "hunks": 3}]}
    want = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
    assert _indented(doc, 2) == want
