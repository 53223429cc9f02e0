"""git's object model in memory: object ids, commit identities, tree entries, and the
`ObjectWriter` that holds the objects a run creates until one flush writes them (loose
objects for a few, one pack for a batch; never, in a dry run).
"""

from __future__ import annotations

import functools
import hashlib
import re
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from patchq.core.hunks import Edit
from patchq.core.paths import FileMode
from patchq.git.pack import (
    PACK_THRESHOLD,
    atomic_bytes,
    common_prefix,
    common_suffix,
    write_pack,
)

TREE_MODE = FileMode.TREE


@dataclass(frozen=True, slots=True)
class Ident:
    """A commit identity with an explicit, fixed date (so commits are reproducible)."""

    name: str
    email: str
    when: int
    tz: str = "+0000"

    def render(self) -> bytes:
        name = re.sub(r"[<>\n]", "", self.name).strip() or "unknown"
        email = re.sub(r"[<>\n]", "", self.email).strip()
        return f"{name} <{email}> {self.when} {self.tz}".encode()


def object_id(kind: str, data: bytes) -> str:
    """git's SHA-1 object id of `data` as an object of `kind`."""
    h = hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)))
    h.update(data)
    return h.hexdigest()


# How many delta-held objects ObjectWriter keeps whole besides (the newest).
_WHOLE = 8


class ObjectWriter:
    """Collects new objects in memory and writes them in one batch (or never, in dry runs)."""

    def __init__(
        self,
        objects_dir: Path | None,
        store: Callable[[str], tuple[str, bytes]] | None = None,
        below: ObjectWriter | None = None,
    ) -> None:
        self.objects_dir = objects_dir
        self.store = store  # reads objects already in the repository (delta bases)
        # The overlay this one was started over (still unflushed objects): read through.
        self.below = below
        self.pending: dict[str, tuple[str, bytes]] = {}
        self.bases: dict[str, str] = {}  # object → an earlier version to delta against
        self.edits: dict[str, Edit] = {}  # object → how the engine made it from its base
        self.pending_bytes = 0
        # Dry runs keep everything in memory: a big blob that differs little from its
        # base is held as (kind, base, head length, middle, tail length) instead.
        self.deltas: dict[str, tuple[str, str, int, bytes, int, int]] = {}
        # The last few objects held as deltas, whole: the next version of a file is
        # made from the one just put, so its delta base is here, not rebuilt link by link.
        self._whole: OrderedDict[str, tuple[str, bytes]] = OrderedDict()

    def add(self, kind: str, data: bytes, base: str | None = None, edit: Edit | None = None) -> str:
        """Queue an object; `base` names an earlier version (the same path's) as a hint,
        `edit` how `data` was spliced from it (pack.delta_from_edit checks it)."""
        oid = object_id(kind, data)
        if oid in self.pending or oid in self.deltas:
            return oid
        if self.objects_dir is None and base is not None and len(data) > 4096:
            if self._add_delta(oid, kind, data, base):
                return oid
        self.pending[oid] = (kind, data)
        self.pending_bytes += len(data)
        if base is not None and base != oid:
            self.bases[oid] = base
            if edit is not None and self.objects_dir is not None:
                self.edits[oid] = edit  # only a pack that will be written uses it
        return oid

    def _add_delta(self, oid: str, kind: str, data: bytes, base: str) -> bool:
        cur: str | None = base
        while cur is not None:  # never a cycle: a revert to an upstream blob is its base
            if cur == oid:
                return False
            cur = self.deltas[cur][1] if cur in self.deltas else None
        got = self.get(base)
        if got is None and self.store is not None:
            got = self.store(base)  # the first change to an upstream file
        depth = self.deltas[base][5] + 1 if base in self.deltas else 0
        if got is None or got[0] != kind or depth > 16:
            return False
        b = got[1]
        p = common_prefix(b, data)
        s = common_suffix(b, data, min(len(b), len(data)) - p)
        if p + s < len(data) // 2:
            return False
        self.deltas[oid] = (kind, base, p, data[p : len(data) - s], s, depth)
        self._keep_whole(oid, (kind, data))
        return True

    def _keep_whole(self, oid: str, obj: tuple[str, bytes]) -> None:
        self._whole[oid] = obj
        self._whole.move_to_end(oid)
        if len(self._whole) > _WHOLE:
            self._whole.popitem(last=False)

    def maybe_flush(self, limit: int = 96 << 20) -> None:
        """Bound memory on long series: write what is pending once it exceeds `limit`."""
        if self.objects_dir is not None and self.pending_bytes > limit:
            self.flush()

    def empty(self) -> bool:
        """Whether nothing is pending here or below (a flushed writer is only a sink)."""
        return not self.pending and not self.deltas and (self.below is None or self.below.empty())

    def find(self, oid: str) -> tuple[str, bytes] | None:
        """A pending object of this overlay or of those below it."""
        w: ObjectWriter | None = self
        while w is not None:
            hit = w.get(oid)
            if hit is not None:
                return hit
            w = w.below
        return None

    def get(self, oid: str) -> tuple[str, bytes] | None:
        """A pending object, so work built in memory can be read before (or without) a flush."""
        hit = self.pending.get(oid)
        if hit is not None or oid not in self.deltas:
            return hit
        whole = self._whole.get(oid)
        if whole is not None:
            self._whole.move_to_end(oid)
            return whole
        kind, base, p, middle, s, _ = self.deltas[oid]
        got = self.get(base)
        if got is None and self.store is not None:
            got = self.store(base)
        assert got is not None
        b = got[1]
        out = kind, b[:p] + middle + (b[len(b) - s :] if s else b"")
        self._keep_whole(oid, out)
        return out

    def flush(self) -> int:
        """Write every pending object; returns how many were written.

        Few objects go in as loose objects; a batch goes in as one pack (and its index),
        which costs two file creations instead of one per object — on a real disk the
        difference between seconds and milliseconds for a thousand-patch series.
        """
        if self.objects_dir is None or not self.pending:
            return 0  # a dry run keeps its objects: they are still read from here
        items = list(self.pending.items())
        bases, edits = self.bases, self.edits
        self.pending.clear()
        self.bases, self.edits = {}, {}
        self.pending_bytes = 0
        if len(items) >= PACK_THRESHOLD:
            write_pack(self.objects_dir / "pack", items, bases, edits)
            return len(items)
        written = 0
        for oid, (kind, data) in items:
            d = self.objects_dir / oid[:2]
            path = d / oid[2:]
            if path.exists():
                continue
            d.mkdir(exist_ok=True)
            atomic_bytes(
                path, zlib.compress(b"%s %d\0" % (kind.encode(), len(data)) + data, 1), 0o444
            )
            written += 1
        return written


def parse_tree(data: bytes) -> list[tuple[str, bytes, str]]:
    """Decode a tree object's entries: `<mode> <name>\\0<20-byte id>` repeated."""
    out = []
    i = 0
    n = len(data)
    while i < n:
        sp = data.index(b" ", i)
        nul = data.index(b"\0", sp)
        mode = data[i:sp].decode()
        name = data[sp + 1 : nul]
        oid = data[nul + 1 : nul + 21].hex()
        out.append((mode, name, oid))
        i = nul + 21
    return out


@functools.lru_cache(maxsize=512)
def _entry_re(name: bytes) -> re.Pattern[bytes]:
    # Whole entries skipped (`<mode> <name>\0<20 bytes>`, each matched one way only),
    # then the one named: an exact lookup, decoded in C.
    return re.compile(
        rb"(?:[0-7]+ [^\0]*\0.{20})*?([0-7]+) " + re.escape(name) + rb"\0(.{20})", re.S
    )


def tree_entry(data: bytes, name: bytes) -> tuple[str, str] | None:
    """(mode, id) of the entry `name` of a tree object's data, or None; the other entries
    are not decoded (a lookup through a large directory costs no parse of it)."""
    m = _entry_re(name).match(data)
    return None if m is None else (m.group(1).decode(), m.group(2).hex())


def render_tree(entries: Iterable[tuple[str, bytes, str]]) -> bytes:
    """Encode tree entries in git's order (a directory sorts as if its name ended in '/')."""

    def key(e: tuple[str, bytes, str]) -> bytes:
        return e[1] + b"/" if e[0] == TREE_MODE else e[1]

    return b"".join(
        b"%s %s\0%s" % (m.encode(), name, bytes.fromhex(oid))
        for m, name, oid in sorted(entries, key=key)
    )
