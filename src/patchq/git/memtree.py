"""An in-memory, copy-on-write view of a git tree that whole-series work edits.

Directories are read lazily (only those a patch touches) and only the directories that
changed are re-encoded when the tree is written, so applying a series to a huge
upstream costs in proportion to what the series touches. Every path is checked here:
it must stay inside the target, never enter `.git`, and never pass through a symlink,
a file or a submodule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from patchq.core.errors import UnsafePathError
from patchq.core.paths import FileMode, check_path
from patchq.git.objects import TREE_MODE, ObjectWriter

Reader = Callable[[str], list[tuple[str, bytes, str]]]
SYMLINK, GITLINK = FileMode.SYMLINK, FileMode.GITLINK


@dataclass(slots=True)
class _Entry:
    mode: str
    oid: str | None  # None: a directory whose id must be recomputed
    child: _Dir | None = None
    enc: bytes | None = None  # this entry's bytes in its parent tree object, once known
    prev: str | None = None  # the id this directory had before it changed (a delta base)


class _Dir:
    """A directory's entries; `order` caches git's sort order until a name comes or goes."""

    __slots__ = ("entries", "order")

    def __init__(self, entries: dict[bytes, _Entry], order: list[bytes] | None = None) -> None:
        self.entries = entries
        self.order = order


def _invalidate(chain: list[_Entry]) -> None:
    """Directories on a changed path must be re-encoded; remember their old ids."""
    for e in chain:
        if e.oid is not None:
            e.prev = e.oid
        e.oid = e.enc = None


class MemTree:
    """A git tree being edited in memory; `write` returns the new tree's id."""

    def __init__(self, reader: Reader, root: str | None) -> None:
        self._reader = reader
        self._root = _Entry(TREE_MODE, root, None)
        # `peek`'s answers for paths that are no directory (a directory's id changes
        # with what is below it): a file's entry changes only by `set` or `remove` of
        # that very path, which drop it. A rebase peeks at every file upstream changed
        # for every hunk that fails.
        self._peeked: dict[str, tuple[str, str | None] | None] = {}

    def _load(self, e: _Entry) -> _Dir:
        if e.child is None:
            listing = [] if e.oid is None else self._reader(e.oid)
            # A tree object is already in git's order.
            e.child = _Dir(
                {name: _Entry(mode, oid) for mode, name, oid in listing},
                [name for _, name, _ in listing],
            )
        return e.child

    def _walk(
        self, parts: list[bytes], path: str, where: str, create: bool
    ) -> tuple[list[_Entry], _Dir | None]:
        """Directory entries down to the parent of the last component (created if asked)."""
        chain = [self._root]
        d = self._load(self._root)
        for i, name in enumerate(parts[:-1]):
            e = d.entries.get(name)
            if e is None:
                if not create:
                    return chain, None
                e = _Entry(TREE_MODE, None, _Dir({}, []))
                d.entries[name] = e
                d.order = None
            elif e.mode != TREE_MODE:
                kinds: dict[str, str] = {SYMLINK: "a symlink", GITLINK: "a submodule"}
                what = kinds.get(e.mode, "a file")
                prefix = b"/".join(parts[: i + 1]).decode("utf-8", "surrogateescape")
                raise UnsafePathError(
                    f"path {path!r} goes through {what} ({prefix})",
                    where,
                    "patchq never writes through symlinks",
                )
            chain.append(e)
            d = self._load(e)
        return chain, d

    def get(self, path: str, where: str = "") -> tuple[str, str] | None:
        """(mode, blob id) at `path`, or None if nothing is there."""
        parts = check_path(path, where)
        _, d = self._walk(parts, path, where, create=False)
        if d is None:
            return None
        e = d.entries.get(parts[-1])
        if e is None:
            return None
        if e.mode == TREE_MODE:
            raise UnsafePathError(f"{path!r} is a directory", where)
        assert e.oid is not None
        return e.mode, e.oid

    def peek(self, path: str) -> tuple[str, str | None] | None:
        """(mode, id) at `path` with no checks; None if absent or below a non-directory.

        For resolving symlink targets, where a name that goes nowhere is no error."""
        if path in self._peeked:
            return self._peeked[path]
        e: _Entry | None = self._root
        for name in path.encode("utf-8", "surrogateescape").split(b"/"):
            assert e is not None
            if e.mode != TREE_MODE:
                e = None
                break
            e = self._load(e).entries.get(name)
            if e is None:
                break
        got = None if e is None else (e.mode, e.oid)
        if e is None or e.mode != TREE_MODE:
            self._peeked[path] = got
        return got

    def set(self, path: str, mode: str, oid: str, where: str = "") -> None:
        parts = check_path(path, where)
        self._forget(path)
        chain, d = self._walk(parts, path, where, create=True)
        assert d is not None
        existing = d.entries.get(parts[-1])
        if existing is not None and existing.mode == TREE_MODE:
            raise UnsafePathError(f"{path!r} is a directory", where)
        if existing is None:
            d.order = None
        d.entries[parts[-1]] = _Entry(mode, oid)
        _invalidate(chain)

    def remove(self, path: str, where: str = "") -> None:
        parts = check_path(path, where)
        chain, d = self._walk(parts, path, where, create=False)
        if d is None or parts[-1] not in d.entries:
            return
        if d.entries[parts[-1]].mode == TREE_MODE:
            self._peeked.clear()  # every path below it goes
        self._forget(path)
        del d.entries[parts[-1]]
        d.order = None
        _invalidate(chain)
        # Drop directories left empty, as git does.
        for depth in range(len(parts) - 1, 0, -1):
            parent = chain[depth - 1].child
            entry = chain[depth]
            if parent is None or entry.child is None or entry.child.entries:
                break
            del parent.entries[parts[depth - 1]]
            parent.order = None

    def _forget(self, path: str) -> None:
        """Drop `peek`'s answers for `path` and the folders on its way (a `set` may
        create them, a `remove` drop them)."""
        self._peeked.pop(path, None)
        i = path.find("/")
        while i >= 0:
            self._peeked.pop(path[:i], None)
            i = path.find("/", i + 1)

    def write(self, w: ObjectWriter) -> str:
        """Encode the changed directories (bottom-up) into `w`; the root tree's id."""
        return self._write(self._root, w)

    def _write(self, top: _Entry, w: ObjectWriter) -> str:
        # Depth-first without recursion: a patch may name a path thousands of directories
        # deep, beyond Python's recursion limit.
        stack: list[tuple[_Entry, bool]] = [(top, False)]
        while stack:
            e, children_done = stack.pop()
            if e.oid is not None:
                continue
            d = e.child
            assert d is not None
            entries = d.entries
            if not children_done:
                stack.append((e, True))
                stack.extend(
                    (c, False) for c in entries.values() if c.mode == TREE_MODE and c.oid is None
                )
                continue
            if d.order is None:
                d.order = sorted(
                    entries, key=lambda n: n + b"/" if entries[n].mode == TREE_MODE else n
                )
            parts = []
            for name in d.order:
                c = entries[name]
                if c.enc is None:
                    assert c.oid is not None
                    c.enc = b"%s %s\0%s" % (c.mode.encode(), name, bytes.fromhex(c.oid))
                parts.append(c.enc)
            e.oid = w.add("tree", b"".join(parts), base=e.prev)
        assert top.oid is not None
        return top.oid
