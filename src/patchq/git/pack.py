"""Writing objects as one git pack (version 2) and its index, with OFS_DELTA compression
against an earlier version of the same file: two file creations for a thousand-patch
series instead of one per object.
"""

from __future__ import annotations

import hashlib
import os
import signal
import struct
import tempfile
import threading
import zlib
from pathlib import Path

from patchq.core.hunks import Edit

PACK_THRESHOLD = 64
_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


# The signals write_pack holds back while its worker threads run.
_DEFERRED = {signal.SIGINT, signal.SIGALRM}


def atomic_bytes(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 32:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    while a[lo] == b[lo]:
        lo += 1
    return lo


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    la, lb = len(a), len(b)
    if limit == 0 or a[la - 1] != b[lb - 1]:
        return 0
    if a[la - limit :] == b[lb - limit :]:
        return limit
    lo, hi = 0, limit  # the last lo bytes agree, the last hi do not
    while hi - lo > 32:
        mid = (lo + hi) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid
    while a[la - lo - 1] == b[lb - lo - 1]:
        lo += 1
    return lo


# A stretch shorter than this is inserted, not searched for in the base.
_ANCHOR = 32
# At most this many copies a delta (each found with one search of the base).
_MAX_COPIES = 256


def _agree(x: bytes, y: bytes, way: int) -> int:
    """How many bytes two equally long strings share at the start (way 1) or the end
    (way -1): the highest bit of their difference as numbers, found in C."""
    diff = int.from_bytes(x, "big" if way > 0 else "little") ^ int.from_bytes(
        y, "big" if way > 0 else "little"
    )
    return len(x) - 1 - (diff.bit_length() - 1) // 8 if diff else len(x)


def _grow(a: bytes, i: int, b: bytes, k: int, limit: int, *, way: int) -> int:
    """How many bytes a and b share going forward from a[i], b[k] (way 1) or backward
    from just before them (way -1), at most `limit`: compared in growing steps, then
    halved down to a few hundred bytes, so a short match costs a short comparison."""

    def part(lo: int, hi: int) -> tuple[bytes, bytes]:
        if way > 0:
            return a[i + lo : i + hi], b[k + lo : k + hi]
        return a[i - hi : i - lo], b[k - hi : k - lo]

    lo, step = 0, 1024  # lo bytes agree
    while lo < limit:
        hi = min(lo + step, limit)
        x, y = part(lo, hi)
        if x != y:
            while hi - lo > 256:
                mid = (lo + hi) // 2
                x, y = part(lo, mid)
                if x == y:
                    lo = mid
                else:
                    hi = mid
            x, y = part(lo, hi)
            return lo + _agree(x, y, way)
        lo, step = hi, step * 8
    return limit


def _matches(
    base: bytes, target: bytes, span: tuple[int, int, int, int]
) -> list[tuple[int, int, int]]:
    """Copies (target offset, base offset, size) that rebuild target[ts:te] from
    base[bs:be] (`span` = bs, be, ts, te), in order: a piece of the target's middle is
    looked up in the base (`bytes.find`, in C), the match is grown both ways, and both
    sides are done alike. Every copy is of equal bytes (grown by comparing them), so any
    choice is right; a poor one only leaves more to insert."""
    out: list[tuple[int, int, int]] = []
    stack = [span]
    while stack and len(out) < _MAX_COPIES:
        bs, be, ts, te = stack.pop()
        if te - ts < _ANCHOR or be - bs < _ANCHOR:
            continue
        found = None
        for frac in (2, 4, 1.333):
            a = ts + int((te - ts) / frac) - _ANCHOR // 2
            a = max(ts, min(a, te - _ANCHOR))
            j = base.find(target[a : a + _ANCHOR], bs, be)
            if j >= 0:
                found = a, j
                break
        if found is None:
            continue
        a, j = found
        back = _grow(base, j, target, a, min(j - bs, a - ts), way=-1)
        fwd = _ANCHOR + _grow(
            base, j + _ANCHOR, target, a + _ANCHOR, min(be - j, te - a) - _ANCHOR, way=1
        )
        out.append((a - back, j - back, back + fwd))
        stack.append((j + fwd, be, a + fwd, te))
        stack.append((bs, j - back, ts, a - back))
    return sorted(out)


def _copy(out: bytearray, off: int, size: int) -> None:
    """Append copy instructions for base[off : off + size] (24-bit sizes)."""
    while size:
        chunk = min(size, 0xFFFFFF)
        op, args = 0x80, bytearray()
        for i in range(4):
            byte = (off >> (8 * i)) & 0xFF
            if byte:
                op |= 1 << i
                args.append(byte)
        for i in range(3):
            byte = (chunk >> (8 * i)) & 0xFF
            if byte:
                op |= 1 << (4 + i)
                args.append(byte)
        out.append(op)
        out.extend(args)
        off += chunk
        size -= chunk


def _insert(out: bytearray, data: bytes) -> None:
    """Append insert instructions for `data` (at most 127 bytes each)."""
    for i in range(0, len(data), 127):
        chunk = data[i : i + 127]
        out.append(len(chunk))
        out.extend(chunk)


def make_delta(base: bytes, target: bytes) -> bytes:
    """A git delta turning `base` into `target`: copy the common head and tail and the
    stretches of the middle found again in the base (`_matches`), insert the rest. A
    patch changes a few places of a file, so this is about the size of its change."""
    p = common_prefix(base, target)
    s = common_suffix(base, target, min(len(base), len(target)) - p)
    out = bytearray(_varint(len(base)) + _varint(len(target)))
    _copy(out, 0, p)
    at = p
    for t_off, b_off, size in _matches(base, target, (p, len(base) - s, p, len(target) - s)):
        _insert(out, target[at:t_off])
        _copy(out, b_off, size)
        at = t_off + size
    _insert(out, target[at : len(target) - s])
    _copy(out, len(base) - s, s)
    return bytes(out)


def delta_from_edit(base: bytes, target: bytes, edit: Edit) -> bytes | None:
    """The git delta that `edit` describes, with no search: the engine that spliced the
    hunks into `base` knows which spans it kept. None unless replaying `edit` on `base`
    gives exactly `target` (checked in C), so a wrong script can only cost a search."""
    out = bytearray(_varint(len(base)) + _varint(len(target)))
    view = memoryview(base)
    parts: list[bytes | memoryview] = []
    for op in edit:
        if isinstance(op, tuple):
            start, end = op
            if not 0 <= start <= end <= len(base):
                return None
            if end > start:
                _copy(out, start, end - start)
                parts.append(view[start:end])
        elif op:
            _insert(out, op)
            parts.append(op)
    if b"".join(parts) != target:
        return None
    return bytes(out)


def _obj_header(kind: int, size: int) -> bytearray:
    header = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        header.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    header.append(byte)
    return header


def _ofs(distance: int) -> bytes:
    """The negative offset of an OFS_DELTA's base, in git's big-endian 'minus one' form."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(reversed(out))


_MAX_DEPTH = 50
_OFS_DELTA = 6


_Job = tuple[str, bytes, bytes | None, Edit | None]


def _packed(job: _Job) -> tuple[int, bytes, bytes | None]:
    """(type, zlib data, delta-or-None) for one object, computed off the main thread:
    the delta from the engine's edit script where one came with it, else searched."""
    kind, data, base, edit = job
    if base is not None:
        delta = delta_from_edit(base, data, edit) if edit is not None else None
        if delta is None:
            delta = make_delta(base, data)
        if len(delta) < len(data) // 2:
            return _OFS_DELTA, zlib.compress(delta, 1), delta
    return _PACK_TYPES[kind], zlib.compress(data, 1), None


_BATCH = 64


def _packed_batch(
    jobs: list[_Job],
) -> list[tuple[int, bytes, bytes | None]]:
    return [_packed(job) for job in jobs]


def write_pack(
    pack_dir: Path,
    items: list[tuple[str, tuple[str, bytes]]],
    bases: dict[str, str] | None = None,
    edits: dict[str, Edit] | None = None,
) -> str:
    """Write `items` as a version-2 pack with its index; returns the pack's name.

    An object whose `bases` hint names an earlier object of the same pack is stored as
    an OFS_DELTA against it (chains at most 50 deep). Deltas and zlib run on a small
    thread pool (zlib releases the GIL); `edits` holds, for an object whose base hint is
    the file the hunk engine spliced it from, that splice (`delta_from_edit`).
    """
    from concurrent.futures import ThreadPoolExecutor

    bases = bases or {}
    edits = edits or {}
    position = {oid: i for i, (oid, _) in enumerate(items)}
    data_of = dict(items)
    depth: dict[str, int] = {}  # planned chain depth (an upper bound of the real one)
    jobs: list[_Job] = []
    base_of: list[str | None] = []
    for i, (oid, (kind, data)) in enumerate(items):
        b = bases.get(oid)
        if (
            b is not None
            and position.get(b, i) < i
            and depth.get(b, 0) < _MAX_DEPTH
            and data_of[b][0] == kind
        ):
            jobs.append((kind, data, data_of[b][1], edits.get(oid)))
            base_of.append(b)
            depth[oid] = depth.get(b, 0) + 1
        else:
            jobs.append((kind, data, None, None))
            base_of.append(None)
    workers = min(4, os.cpu_count() or 1)
    records: list[Record] = []
    # Ctrl-C (and its re-delivery, SIGALRM) waits until the pool is done: raised in the
    # main thread while it holds the pool's lock, it left the workers blocked on that lock
    # and the main thread joining them — a hang (clean-clone CI, the random Ctrl-C test).
    # The workers are made while the signals are blocked, so they never take them either.
    held = threading.current_thread() is threading.main_thread()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED) if held else None
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            # A future per batch of objects, not per object (ThreadPoolExecutor ignores
            # map's chunksize): thousands of futures cost more than the small deltas.
            batches = [jobs[i : i + _BATCH] for i in range(0, len(jobs), _BATCH)]
            done = (r for batch in pool.map(_packed_batch, batches) for r in batch)
            for i, (kind_no, packed, delta) in enumerate(done):
                oid, (_, data) = items[i]
                if delta is not None and base_of[i] is not None:
                    records.append((oid, base_of[i], _OFS_DELTA, len(delta), packed))
                else:
                    records.append((oid, None, kind_no, len(data), packed))
    finally:
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a pending Ctrl-C lands now
    return write_records(pack_dir, records)


# One object of a pack, ready: (id, base id for an OFS_DELTA or None, pack type, size of
# the data or delta before zlib, the zlib data).
Record = tuple[str, str | None, int, int, bytes]


_WRITE_CHUNK = 4 << 20


def write_records(pack_dir: Path, records: list[Record]) -> str:
    """Lay `records` out as a version-2 pack and write its index; returns the pack's name.
    A delta's base must come before it. The index is written last — git only sees a pack
    once its .idx exists — both through a rename."""
    pack_dir.mkdir(parents=True, exist_ok=True)
    body = hashlib.sha1()
    offsets: dict[str, tuple[int, int]] = {}
    fd, tmp_pack = tempfile.mkstemp(prefix="tmp_pack_", dir=pack_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            head = b"PACK" + struct.pack(">II", 2, len(records))
            parts = [head]
            pos = held = len(head)
            last = len(records) - 1
            for i, (oid, base, kind_no, size, packed) in enumerate(records):
                head_bytes = bytes(_obj_header(kind_no, size))
                if base is not None:
                    head_bytes += _ofs(pos - offsets[base][0])
                record = head_bytes + packed
                offsets[oid] = (pos, zlib.crc32(record))
                parts.append(record)
                pos += len(record)
                held += len(record)
                if held > _WRITE_CHUNK or i == last:
                    # Written and hashed a few MB at a time, not a call per object.
                    data = b"".join(parts)
                    body.update(data)
                    f.write(data)
                    parts, held = [], 0
            if parts:
                data = b"".join(parts)  # a pack of no objects: its header alone
                body.update(data)
                f.write(data)
            checksum = body.digest()
            f.write(checksum)
        name = checksum.hex()
        os.chmod(tmp_pack, 0o444)
        idx = _pack_index(offsets, checksum)
        os.replace(tmp_pack, pack_dir / f"pack-{name}.pack")
    except BaseException:
        if os.path.exists(tmp_pack):
            os.unlink(tmp_pack)
        raise
    atomic_bytes(pack_dir / f"pack-{name}.idx", idx, 0o444)
    return name


def _pack_index(offsets: dict[str, tuple[int, int]], pack_checksum: bytes) -> bytes:
    """A version-2 .idx for a pack: fan-out, sorted ids, CRCs, offsets, checksums."""
    oids = sorted(offsets)
    raw = [bytes.fromhex(o) for o in oids]
    fanout = [0] * 256
    for r in raw:
        fanout[r[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for o in oids:
        off = offsets[o][0]
        if off < 0x80000000:
            small.append(off)
        else:
            small.append(0x80000000 | len(large))
            large.append(off)
    out = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    out += struct.pack(">256I", *fanout)
    out += b"".join(raw)
    out += struct.pack(f">{len(oids)}I", *(offsets[o][1] for o in oids))
    out += struct.pack(f">{len(small)}I", *small)
    if large:
        out += struct.pack(f">{len(large)}Q", *large)
    out += pack_checksum
    out += hashlib.sha1(out).digest()
    return bytes(out)
