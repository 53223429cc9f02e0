"""The subject parser drops `[PATCH …]`/`[RFC …]` prefixes as `git am -b` does, in time
linear in the subject: held here to the regular expression that defines which brackets
are prefixes, on the hostile shapes (an unclosed `[` followed by `PATCH` many times) and
on random subjects. Its time is measured by `patchq-bench subject`, not asserted here."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.core.header import _clean_subject, _one_line

# The definition: optional space, `[`, anything but `]`, PATCH or RFC not inside a word,
# anything but `]`, `]` — repeated from the start of the subject.
PREFIX = re.compile(r"\s*\[[^\]]*(?<![A-Za-z])(?:PATCH|RFC)[^\]]*\]", re.I)


def by_definition(raw: str) -> str:
    text = _one_line(raw)
    pos = 0
    while (m := PREFIX.match(text, pos)) is not None:
        pos = m.end()
    return text[pos:].lstrip()


HOSTILE = [
    "[" + " PATCH" * 2000,
    "[" + " PATCH" * 2000 + "]",
    "[PATCH]" * 2000 + " fix",
    "[PATCH" + "[" * 3000 + "] x",
    "[" * 5000,
    "]" * 5000,
    "[media] [PATCH v2 3/7] media: fix",
    "[PATCH] [RFC] [media] fix",
    "[PATCHES] x",
    "[XPATCH] x",
    "[patch v3] lower case",
    "  [PATCH]   spaced   out  ",
    "[PATCH 0/3]",
    "",
    "[",
    "[PATCH",
]


def test_hostile_shapes_match_the_definition() -> None:
    for raw in HOSTILE:
        assert _clean_subject(raw) == by_definition(raw), raw[:40]


@settings(max_examples=2000)
@given(st.text(alphabet="[] \tPATCHRFCpatchrfcx/v12", max_size=24))
def test_random_subjects_match_the_definition(raw: str) -> None:
    assert _clean_subject(raw) == by_definition(raw)
