"""Packs patchq writes: a delta rebuilds its object exactly, is about the size of the
change (not of the stretch between the first and last change), and git reads it."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from patchq.core import hunks as engine
from patchq.git import pack as pack_mod
from patchq.git.objects import object_id
from patchq.git.pack import delta_from_edit, make_delta, write_pack

from ..conftest import Upstream
from ..strategies import Case, cases


def apply_delta(base: bytes, delta: bytes) -> bytes:
    """git's delta format, read as patch-delta.c reads it."""
    i = 0

    def varint() -> int:
        nonlocal i
        n = shift = 0
        while True:
            b = delta[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    assert varint() == len(base)
    size = varint()
    out = bytearray()
    while i < len(delta):
        op = delta[i]
        i += 1
        if op & 0x80:
            off = sz = 0
            for k in range(4):
                if op & (1 << k):
                    off |= delta[i] << (8 * k)
                    i += 1
            for k in range(3):
                if op & (1 << (4 + k)):
                    sz |= delta[i] << (8 * k)
                    i += 1
            out += base[off : off + (sz or 0x10000)]
        else:
            assert op, "opcode 0 is reserved"
            out += delta[i : i + op]
            i += op
    assert len(out) == size
    return bytes(out)


_text = st.binary(max_size=600).map(lambda b: bytes(c % 4 + 97 if c % 9 else 10 for c in b))


@settings(max_examples=300, deadline=None)
@given(
    _text,
    st.lists(st.tuples(st.integers(0, 700), st.integers(0, 80), _text), max_size=6),
)
def test_a_delta_rebuilds_its_target(base: bytes, edits: list[tuple[int, int, bytes]]) -> None:
    # Few distinct bytes: repeats everywhere, so the anchor searches find wrong places too.
    target = bytearray(base)
    for at, cut, text in edits:
        at = min(at, len(target))
        target[at : at + cut] = text[:100]
    assert apply_delta(base, make_delta(base, bytes(target))) == bytes(target)


def _file(n: int) -> bytes:
    return b"".join(b"line %d of a long file, unchanged by the patch\n" % i for i in range(n))


def test_a_delta_is_the_size_of_the_change_not_of_its_span() -> None:
    base = _file(2000)  # about 90 kB
    target = (
        base.replace(b"line 10 of", b"LINE 10 of")
        .replace(b"line 1000 of", b"LINE 1000 of")
        .replace(b"line 1990 of", b"LINE 1990 of")
    )
    delta = make_delta(base, target)
    assert apply_delta(base, delta) == target
    assert len(delta) < 200, len(delta)  # head/tail copies alone would insert ~88 kB


def test_git_reads_a_pack_of_deltas(upstream: Upstream) -> None:
    upstream.write("a", "a\n").commit()
    versions = [_file(500)]
    for k in (3, 250, 490, 7):
        versions.append(versions[-1].replace(b"line %d of" % k, b"LINE %d of" % k))
    items = [(object_id("blob", v), ("blob", v)) for v in versions]
    bases = {items[i][0]: items[i - 1][0] for i in range(1, len(items))}
    name = write_pack(upstream.path / ".git" / "objects" / "pack", items, bases)
    pack = upstream.path / ".git" / "objects" / "pack" / f"pack-{name}.pack"
    assert pack.stat().st_size < len(versions[0]) // 3 + 2000
    verify = upstream.git("verify-pack", "-v", str(pack.with_suffix(".idx")))
    assert verify.count(" blob ") == len(versions)
    for oid, (_, data) in items:
        assert upstream.git("cat-file", "blob", oid).encode() == data
    upstream.git("fsck", "--strict", "--no-dangling")


@settings(max_examples=300, deadline=None)
@given(cases(), st.sampled_from([0, 1, 3]), st.booleans())
def test_the_engines_splice_is_the_delta(case: Case, context: int, reverse: bool) -> None:
    """Where the hunk engine splices bytes, its edit script is a delta from the file it was
    given to the result (no search), about the size of the change, and a script that does
    not rebuild the target is refused (None), never written."""
    base, ours, _ = case.data
    hunks = engine.diff(base, ours, context)
    hs = [h.reversed() for h in hunks] if reverse else hunks
    given_ = ours if reverse else base
    res = engine.apply_hunks(given_, hs)
    event(f"edit script: {'made' if res.edit is not None else 'none'}")
    if res.edit is None:
        return
    delta = delta_from_edit(given_, res.content, res.edit)
    assert delta is not None
    assert apply_delta(given_, delta) == res.content
    inserted = sum(len(op) for op in res.edit if isinstance(op, bytes))
    changed = sum(len(line) for h in hs for line in h.new_lines)
    assert inserted <= changed
    assert delta_from_edit(given_, res.content + b"x", res.edit) is None
    # A kept span moved by one byte: refused unless it happens to rebuild the target.
    at = next((i for i, op in enumerate(res.edit) if isinstance(op, tuple) and op[1] > op[0]), None)
    if at is not None:
        start, end = res.edit[at]
        wrong = (*res.edit[:at], (start + 1, end + 1), *res.edit[at + 1 :])
        shifted = delta_from_edit(given_, res.content, wrong)
        assert shifted is None or apply_delta(given_, shifted) == res.content


def test_git_reads_a_pack_whose_deltas_are_the_engines(upstream: Upstream) -> None:
    upstream.write("a", "a\n").commit()
    versions, edits = [_file(500)], {}
    for k in (3, 250, 490, 7):
        wanted = versions[-1].replace(b"line %d of" % k, b"LINE %d of" % k)
        res = engine.apply_hunks(versions[-1], engine.diff(versions[-1], wanted, 3))
        assert res.ok and res.content == wanted and res.edit is not None
        edits[object_id("blob", res.content)] = res.edit
        versions.append(res.content)
    items = [(object_id("blob", v), ("blob", v)) for v in versions]
    bases = {items[i][0]: items[i - 1][0] for i in range(1, len(items))}
    # One script that does not rebuild its target: refused, searched for instead.
    bogus = items[2][0]
    edits[bogus] = ((0, 10), b"nonsense")
    name = write_pack(upstream.path / ".git" / "objects" / "pack", items, bases, edits)
    pack = upstream.path / ".git" / "objects" / "pack" / f"pack-{name}.pack"
    assert pack.stat().st_size < len(versions[0]) // 3 + 2000
    for oid, (_, data) in items:
        assert upstream.git("cat-file", "blob", oid).encode() == data
    upstream.git("fsck", "--strict", "--no-dangling")


def test_a_pack_written_in_chunks_is_the_pack_written_whole(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write_records writes and hashes a few MB at a time: the bytes (and so the name)
    are those of the pack written at once, and git reads it."""
    upstream.write("a", "a\n").commit()
    versions = [_file(300)]
    for k in range(1, 40, 3):
        versions.append(versions[-1].replace(b"line %d of" % k, b"LINE %d of" % k))
    items = [(object_id("blob", v), ("blob", v)) for v in versions]
    bases = {items[i][0]: items[i - 1][0] for i in range(1, len(items))}
    pack_dir = upstream.path / ".git" / "objects" / "pack"
    whole = write_pack(tmp := upstream.path / "whole", items, bases)
    monkeypatch.setattr(pack_mod, "_WRITE_CHUNK", 64)
    chunked = write_pack(pack_dir, items, bases)
    assert chunked == whole
    assert (pack_dir / f"pack-{chunked}.pack").read_bytes() == (
        tmp / f"pack-{whole}.pack"
    ).read_bytes()
    for oid, (_, data) in items:
        assert upstream.git("cat-file", "blob", oid).encode() == data
    upstream.git("fsck", "--strict", "--no-dangling")
