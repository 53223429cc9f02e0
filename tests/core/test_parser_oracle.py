"""The patch parser against an independent one: python-unidiff.

unidiff is not patchq's parser — it is lenient where patchq must be strict and knows
nothing of strip levels or path safety — but where both read a text diff they must see
the same thing: the same files in the same order, the same hunks with the same ranges,
and the same removed, added and context lines with the same bytes. That is what this
test holds, over every sample of the corpus and over generated diffs. unidiff is
therefore a test dependency, not a runtime one (pyproject.toml says why).
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unidiff.patch import PatchSet

from patchq.core.patch import Patch, parse

from .test_patch import STRIP

CORPUS = Path(__file__).resolve().parent.parent / "data" / "patches"
# Samples unidiff reads differently by design, each with the reason.
UNIDIFF_DIFFERS = {
    "git-binary.patch": "unidiff does not read git's base85 binary hunks",
    "git-binary-files-differ.patch": "no text hunks to compare",
    "svn-diff.patch": "svn's Index:/==== framing: unidiff keeps no per-file names",
    "git-no-prefix-p0.patch": "unidiff cannot read a name with a space and an empty "
    "timestamp field (`--- my file.txt<TAB>`)",
}


def ours(p: Patch) -> list[tuple[int, int, int, int, list[tuple[str, bytes]]]]:
    return [
        (
            h.old_start,
            h.old_len,
            h.new_start,
            h.new_len,
            [(t, c.rstrip(b"\r\n")) for t, c in h.lines],
        )
        for s in p.sections
        for h in s.hunks
    ]


def theirs(data: bytes) -> list[tuple[int, int, int, int, list[tuple[str, bytes]]]]:
    ps = PatchSet(io.StringIO(data.decode("utf-8", "surrogateescape")), metadata_only=False)
    out = []
    for f in ps:
        for h in f:
            lines = [
                (ln.line_type, ln.value.encode("utf-8", "surrogateescape").rstrip(b"\r\n"))
                for ln in h
                if ln.line_type in (" ", "-", "+")
            ]
            out.append((h.source_start, h.source_length, h.target_start, h.target_length, lines))
    return out


def _text_samples() -> list[Path]:
    return [p for p in sorted(CORPUS.glob("*.patch")) if p.name not in UNIDIFF_DIFFERS]


@pytest.mark.parametrize("path", _text_samples(), ids=lambda p: p.name)
def test_every_corpus_sample_reads_as_unidiff_reads_it(path: Path) -> None:
    data = path.read_bytes()
    mine = parse(data, path.name, STRIP.get(path.name, 1))
    assert ours(mine) == theirs(data)
    files = PatchSet(io.StringIO(data.decode("utf-8", "surrogateescape")))
    assert len(files) == len(mine.sections)
    for f, s in zip(files, mine.sections, strict=True):
        assert (f.is_added_file, f.is_removed_file) == (s.is_new, s.is_delete), f.path


LINES = st.lists(
    st.sampled_from(["a", "b", "c", "int x;", "", "}", "  indented", "x\ty"]),
    min_size=0,
    max_size=30,
)


@settings(max_examples=120, deadline=None)
@given(old=LINES, new=LINES, context=st.integers(0, 4))
def test_generated_diffs_read_the_same(
    tmp_path_factory: pytest.TempPathFactory, old: list[str], new: list[str], context: int
) -> None:
    """git's own diffs of random edits: both parsers see the same hunks and lines."""
    tmp = tmp_path_factory.mktemp("oracle")
    (tmp / "a").write_text("".join(x + "\n" for x in old))
    (tmp / "b").write_text("".join(x + "\n" for x in new))
    proc = subprocess.run(
        ["git", "diff", "--no-index", f"-U{context}", "--no-color", "a", "b"],
        cwd=tmp,
        capture_output=True,
    )
    data = proc.stdout
    if not data:
        return
    assert ours(parse(data, "generated", 1)) == theirs(data)
