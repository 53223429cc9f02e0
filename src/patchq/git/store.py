"""The object store as `GitRepo` reads and writes it: names resolved to ids, objects
read through one persistent `git cat-file --batch` (`catfile.py`) with a cache of recent
reads and batched read-ahead, trees walked and listed, and the pending-object overlay
that the run's new objects go to before one `flush` writes them (`objects.py`), so
applying a thousand patches starts no git process for its objects.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from patchq.core.errors import BadInputError, GitError
from patchq.core.patch import LineCache
from patchq.git import readahead
from patchq.git.catfile import CatFile
from patchq.git.objects import TREE_MODE, Ident, ObjectWriter, parse_tree, tree_entry
from patchq.git.process import GitProcesses

_READ_CACHE = 32 << 20  # bytes of recent reads kept by GitRepo.read (the read-ahead fills it)


class ObjectStore(GitProcesses):
    """Reads of blobs, trees and commits, and the overlay of objects this run made."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.cat = CatFile(self.root, self.env)  # the persistent object readers
        self._overlay: ObjectWriter | None = None  # see `objects`
        self._read_cache: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self._read_cache_bytes = 0
        self.lines = LineCache()  # the run's split texts: the replay splits files often

    def resolve(self, ref: str, kind: str = "commit") -> str:
        """The 40-hex id `ref` names, peeled to `kind`; bad input if it names nothing."""
        if not ref or any(c.isspace() for c in ref):
            raise BadInputError(f"invalid revision {ref!r}", "target")
        got = self.cat.header(f"{ref}^{{{kind}}}")
        if got is None:
            raise BadInputError(
                f"unknown revision {ref!r}",
                str(self.root),
                "name a branch, tag or commit of the target",
            )
        return got[0]

    def try_resolve(self, ref: str, kind: str = "commit") -> str | None:
        try:
            return self.resolve(ref, kind)
        except BadInputError:
            return None

    def resolve_many(self, refs: Sequence[str], kind: str = "commit") -> dict[str, str]:
        """`try_resolve` of many object names at once: those that name a `kind`, each →
        its 40-hex id (what they name is read into the cache on the way)."""
        ok = [r for r in dict.fromkeys(refs) if r and not any(c.isspace() for c in r)]
        out: dict[str, str] = {}
        for ref, got in zip(ok, self._ask([f"{r}^{{{kind}}}" for r in ok]), strict=True):
            if got is not None:
                out[ref] = got[0]
                self._cache((got[1], got[2]), got[0])
        return out

    def read(self, oid: str) -> tuple[str, bytes]:
        """(type, data) of an object: from the pending-object overlay if it is there,
        else through the persistent cat-file reader."""
        if self._overlay is not None:
            hit = self._overlay.find(oid)
            if hit is not None:
                return hit
        return self._stored(oid)

    def _stored(self, oid: str) -> tuple[str, bytes]:
        """(type, data) of an object in the repository's store (not the overlay)."""
        hit = self._read_cache.get(oid)
        if hit is not None:
            self._read_cache.move_to_end(oid)
            return hit
        found = self.cat.read(oid)
        if found is None:
            raise GitError(f"object {oid} is missing", str(self.root))
        got = (found[1], found[2])
        self._cache(got, oid)
        return got

    def prefetch(self, oids: Iterable[str]) -> None:
        """Read objects ahead into the read cache, many requests to the cat-file reader
        at a time instead of one round trip each (a series' first touch of a thousand
        files is a thousand round trips, each a wait on another process). A missing
        object is left out: `read` reports it when it is asked for."""
        want = [o for o in dict.fromkeys(oids) if len(o) == 40 and o not in self._read_cache]
        if self._overlay is not None:
            want = [o for o in want if self._overlay.find(o) is None]
        for oid, got in zip(want, self._ask(want), strict=True):
            if got is not None:
                self._cache((got[1], got[2]), oid)

    def _ask(self, requests: Sequence[str]) -> list[readahead.Found | None]:
        """What the cat-file reader answers to each request (`readahead.ask`)."""
        # Cut off between a chunk's requests and its last answer (Ctrl-C, a broken pipe),
        # the reader is closed and the next read starts afresh (CatFile.ask).
        return self.cat.ask(requests)

    def _cache(self, got: tuple[str, bytes], oid: str) -> None:
        if len(oid) == 40 and len(got[1]) <= _READ_CACHE // 8 and oid not in self._read_cache:
            # An object id names the same bytes forever: keep recent reads, since a
            # replay's trees (upstream's, the old base's, the drift's) and the files
            # several patches touch are read again and again.
            self._read_cache[oid] = got
            self._read_cache_bytes += len(got[1])
            while self._read_cache_bytes > _READ_CACHE:
                _, old = self._read_cache.popitem(last=False)
                self._read_cache_bytes -= len(old[1])

    def prefetch_paths(self, wanted: Iterable[tuple[str, str]], blobs: bool = True) -> None:
        """Read ahead the files at (tree, path) pairs and the trees on their way: one
        batch a directory level, then the files' blobs in one (see `prefetch`); with
        `blobs` false, only the trees (for files that may not all be read)."""

        def cached(oid: str) -> tuple[str, bytes] | None:
            hit = self._read_cache.get(oid)
            return hit if hit is not None or self._overlay is None else self._overlay.find(oid)

        files = readahead.files_at(wanted, self.prefetch, cached)
        if blobs:
            self.prefetch(files)

    def read_blob(self, oid: str) -> bytes:
        kind, data = self.read(oid)
        if kind != "blob":
            raise GitError(f"object {oid} is a {kind}, not a blob", str(self.root))
        return data

    def read_tree(self, oid: str) -> list[tuple[str, bytes, str]]:
        """Entries (mode, name, id) of a tree object."""
        kind, data = self.read(oid)
        if kind != "tree":
            raise GitError(f"object {oid} is a {kind}, not a tree", str(self.root))
        return parse_tree(data)

    def entry_at(self, tree: str, path: str) -> tuple[str, str] | None:
        """(mode, id) at `path` below `tree`, or None where nothing is there (or a
        non-directory is on the way); only the entries on the way are decoded."""
        oid, mode = tree, str(TREE_MODE)
        for name in path.encode("utf-8", "surrogateescape").split(b"/"):
            if mode != TREE_MODE:
                return None
            kind, data = self.read(oid)
            if kind != "tree":
                raise GitError(f"object {oid} is a {kind}, not a tree", str(self.root))
            got = tree_entry(data, name)
            if got is None:
                return None
            mode, oid = got
        return mode, oid

    def commit_info(self, oid: str) -> dict[str, bytes]:
        """Headers of a commit object (tree, first parent, author, committer) and its message."""
        kind, data = self.read(oid)
        if kind != "commit":
            raise GitError(f"object {oid} is a {kind}, not a commit", str(self.root))
        head, _, msg = data.partition(b"\n\n")
        out: dict[str, bytes] = {"message": msg}
        for line in head.split(b"\n"):
            key, _, value = line.partition(b" ")
            out.setdefault(key.decode(errors="replace"), value)
        return out

    def has_object(self, oid: str) -> bool:
        return self.cat.header(oid) is not None

    def tree_paths(self, tree: str) -> list[str]:
        """Every file of `tree` (or a commit's), at any depth."""
        out = self._run("ls-tree", "-r", "-z", "--name-only", "--full-tree", tree)
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def symlinks(self, tree: str) -> list[tuple[str, str]]:
        """Every symlink of `tree`, at any depth, as (path, blob id)."""
        out = self._run("ls-tree", "-r", "-z", "--full-tree", tree)
        links = []
        for rec in out.split(b"\0"):
            meta, _, name = rec.partition(b"\t")
            if meta.startswith(b"120000 "):
                links.append((name.decode("utf-8", "surrogateescape"), meta.split()[2].decode()))
        return links

    @property
    def objects(self) -> ObjectWriter:
        """The pending-object overlay: the objects this run made and has not flushed,
        which every read sees first. Work that makes objects adds them here; the command
        that started the overlay (`writer`) flushes it, or never does in a dry run."""
        if self._overlay is None:
            self._overlay = ObjectWriter(self.common_dir / "objects")
        return self._overlay

    def writer(self, dry_run: bool = False) -> ObjectWriter:
        """Start a new overlay over the current one (reads see both): written to the
        object store by its `flush`, or, in a dry run, kept in memory only."""
        below = self._overlay if self._overlay is not None and not self._overlay.empty() else None
        if dry_run:
            w = ObjectWriter(None, self._stored, below)
        else:
            w = ObjectWriter(self.common_dir / "objects", None, below)
        self._overlay = w
        return w

    @contextmanager
    def dry_run(self) -> Iterator[ObjectWriter]:
        """An in-memory overlay for the block (a re-application whose objects are never
        written), the current one back in place after it."""
        before = self._overlay
        try:
            yield self.writer(dry_run=True)
        finally:
            self._overlay = before

    def commit_object(
        self,
        tree: str,
        parents: Sequence[str],
        message: str,
        author: Ident,
        committer: Ident,
    ) -> str:
        lines = [b"tree " + tree.encode()]
        lines += [b"parent " + p.encode() for p in parents]
        lines.append(b"author " + author.render())
        lines.append(b"committer " + committer.render())
        body = message if message.endswith("\n") else message + "\n"
        # surrogateescape: a message made from a non-UTF-8 patch name keeps its bytes.
        return self.objects.add(
            "commit", b"\n".join(lines) + b"\n\n" + body.encode("utf-8", "surrogateescape")
        )

    def close(self) -> None:
        super().close()
        self.cat.close()
