"""A patch saved as UTF-16 or UTF-32 (an editor's "Unicode") is refused (exit 4) naming
the file and the encoding, with nothing changed: parsed as bytes it holds no file
section, and was taken — and committed — as an empty patch. A UTF-8 byte-order mark is
no such case: GNU patch applies that file, and patchq does too."""

from __future__ import annotations

import pytest

from patchq.core.errors import BadInputError
from patchq.core.patch import parse

from ..conftest import Queue, Runner, Upstream

DIFF = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (DIFF.encode("utf-16"), "UTF-16LE"),  # with its byte-order mark
        (DIFF.encode("utf-16-be"), "UTF-16BE"),  # without one
        (DIFF.encode("utf-16-le"), "UTF-16LE"),
        (DIFF.encode("utf-32"), "UTF-32LE"),
    ],
)
def test_wide_text_is_refused_naming_its_encoding(data: bytes, name: str) -> None:
    with pytest.raises(BadInputError) as e:
        parse(data, "patches/p.patch")
    assert e.value.where == "patches/p.patch" and name in e.value.what


def test_a_utf8_bom_still_parses_as_gnu_patch_reads_it() -> None:
    p = parse(b"\xef\xbb\xbf" + DIFF.encode(), "p.patch")
    assert len(p.sections) == 1


def test_import_and_apply_refuse_a_wide_patch_changing_nothing(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    upstream.write("f.txt", "one\ntwo\nthree\n")
    base = upstream.commit("base")
    wide = queue.path.parent / "wide.patch"
    wide.write_bytes(DIFF.encode("utf-16"))
    r = patchq("import", str(wide))
    assert r.code == 4 and "UTF-16LE" in r.err and str(wide) in r.err
    assert queue.series() == "" and list((queue.path / "patches").iterdir()) == []
    queue.add("p.patch", DIFF)
    assert patchq("apply", "--onto", base).code == 0
    lock = queue.lock()
    (queue.path / "patches" / "p.patch").write_bytes(DIFF.encode("utf-16"))
    r = patchq("apply")
    assert r.code == 4 and "patches/p.patch" in r.err and "UTF-16LE" in r.err
    assert queue.lock() == lock
