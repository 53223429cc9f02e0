"""The working tree and the index: what has changed there, the tree it holds now
(built in a copy of the index), files written over or set aside in a stash, and the
person's own files that a checkout would overwrite or that no tree holds.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from patchq.core.errors import GitError, UnsafeStateError
from patchq.core.paths import FileMode
from patchq.git.objects import object_id
from patchq.git.store import ObjectStore


def _plain_file(root: Path, rel: str) -> bool:
    """Whether `root/rel` is a file or symlink reached through real folders only."""
    cur = root
    for part in rel.split("/")[:-1]:
        cur = cur / part
        if cur.is_symlink() or not cur.is_dir():
            return False
    path = root / rel
    return path.is_symlink() or path.is_file()


class WorkTree(ObjectStore):
    """The checked-out files and the index, and the person's changes in them."""

    def dirty_paths(self, ignore: Iterable[str] = (), untracked: bool = True) -> list[str]:
        """Tracked files with changes, and (with `untracked`) untracked files not ignored,
        minus `ignore` prefixes."""
        which = "--untracked-files=all" if untracked else "--untracked-files=no"
        out = self._run("status", "--porcelain=v1", "-z", which)
        paths = []
        skip = tuple(ignore)
        entries = out.split(b"\0")
        i = 0
        while i < len(entries):
            e = entries[i]
            i += 1
            if not e:
                continue
            status, path = e[:2], e[3:].decode("utf-8", "surrogateescape")
            if status[:1] in (b"R", b"C"):
                i += 1  # the source path follows
            if any(path == s or path.startswith(s.rstrip("/") + "/") for s in skip):
                continue
            paths.append(path)
        return paths

    def require_clean(self, ignore: Iterable[str] = (), untracked: bool = True) -> None:
        """Refuse (exit 5) changes patchq did not make: edits of tracked files, and with
        `untracked` files git does not track."""
        dirty = self.dirty_paths(ignore, untracked)
        if dirty:
            more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
            raise UnsafeStateError(
                f"the target has changes patchq did not make: {dirty[0]}{more}",
                str(self.root),
                "commit or stash them first",
            )

    def untracked(self) -> list[str]:
        out = self._run("ls-files", "--others", "--exclude-standard", "-z")
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def worktree_tree(self, also: Sequence[str] = ()) -> str:
        """The tree of the working tree's tracked files (and files staged in the index),
        built in a temporary copy of the index so the user's index is untouched; with
        the files of `also` that are there too, tracked or not (a stopped patch's files
        the person created to resolve it)."""
        with tempfile.TemporaryDirectory(prefix="patchq-index-") as tmp:
            index = Path(tmp) / "index"
            real = self.git_dir / "index"
            if real.exists():
                # copy2 keeps the index mtime: git trusts an entry whose stat matches only
                # when the file is older than the index (racy-git), and a fresh mtime
                # would make an edit in the same timestamp tick as the checkout unseen.
                shutil.copy2(real, index)
            env = {"GIT_INDEX_FILE": str(index)}
            if not real.exists():
                self._run("read-tree", "HEAD", env=env)
            self._run("add", "-u", "--", ".", env=env)
            present = [p for p in also if _plain_file(self.root, p)]
            if present:
                self._run("add", "-f", "--", *present, env=env | {"GIT_LITERAL_PATHSPECS": "1"})
            return self._run("write-tree", env=env).decode().strip()

    def overlay(self, head: str, tree: str) -> None:
        """Write `tree`'s files over the checked-out `head`, leaving the index at `head`."""
        self._run("read-tree", "-m", "-u", head, tree)
        self._run("reset", "-q", "--", ".")

    def intend_to_add(self, paths: Sequence[str]) -> None:
        """Mark new files as intended to be added; names are names, never pathspecs."""
        if paths:
            self._run("add", "-N", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"})

    def discard_changes(self) -> None:
        """Throw away every change to the files HEAD tracks, in the working tree and the
        index. A file only staged (a new file the person `git add`ed) is unstaged first,
        so it stays on disk as an untracked file: `reset --hard` would delete it."""
        self._run("reset", "-q", "HEAD", "--")
        self._run("reset", "-q", "--hard", "HEAD")

    def stash_save(self, message: str) -> str | None:
        """Save uncommitted work (untracked files too) as a stash; its id, or None if none."""
        before = self.try_resolve("refs/stash")
        try:
            self._run("stash", "push", "--include-untracked", "-q", "-m", message)
        except GitError:
            # git's stash cannot save intent-to-add entries (a conflict shown for a new
            # file): unstage everything, so they are plain untracked files, and save again.
            self._run("reset", "-q")
            self._run("stash", "push", "--include-untracked", "-q", "-m", message)
        after = self.try_resolve("refs/stash")
        return after if after != before else None

    def stash_paths(self, paths: Sequence[str], message: str) -> str | None:
        """Save exactly `paths` (ignored and untracked files too) in a stash and remove
        them from the working tree; the stash's id, or None if nothing was saved."""
        before = self.try_resolve("refs/stash")
        self._run(
            "stash", "push", "--all", "-q", "-m", message, "--", *(f":(literal){p}" for p in paths)
        )
        after = self.try_resolve("refs/stash")
        return after if after != before else None

    def in_the_way(self, a: str | None, b: str) -> list[str]:
        """The files on disk that checking out tree (or commit) `b` over `a` would write
        over or replace and that `a` does not track: ignored and untracked files (a build
        output, a file the person created). git overwrites ignored files silently."""
        if a is None:
            added = [(p, True) for p in self.tree_paths(b)]
            gone: set[str] = set()
        else:
            raw = self._run("diff-tree", "-r", "-z", "--name-status", "--no-renames", a, b)
            parts = raw.split(b"\0")
            added, gone = [], set()
            for status, name in zip(parts[::2], parts[1::2], strict=False):
                path = name.decode("utf-8", "surrogateescape")
                if status == b"A":
                    added.append((path, True))
                elif status in (b"D", b"T"):
                    gone.add(path)
        found: list[str] = []
        for path, _ in added:
            parts_ = path.split("/")
            for k in range(1, len(parts_)):
                prefix = "/".join(parts_[:k])
                if prefix in gone:
                    break  # a tracked file of `a` that `b` turns into a folder
                p = self.root / prefix
                if p.is_symlink() or (p.exists() and not p.is_dir()):
                    if prefix not in found:
                        found.append(prefix)
                    break
            else:
                p = self.root / path
                if p.is_symlink() or p.is_file():
                    found.append(path)
                elif p.is_dir() and _holds_other_than(p, path, gone):
                    found.append(path)
        return found

    def foreign_files(
        self, paths: Sequence[str], trees: Sequence[str], torn: Sequence[str] = ()
    ) -> list[str]:
        """Those of `paths` whose file on disk (or its absence) is what none of `trees`
        holds at that path, compared byte for byte as git stores them. A file that is the
        start of what a tree of `torn` holds (a checkout toward it killed mid-write) is
        not foreign either."""
        held: list[dict[str, tuple[str, str]]] = []
        for t in trees:
            out = self._run(
                "ls-tree", "-z", "--full-tree", t, "--", *(f":(literal){p}" for p in paths)
            )
            entries = {}
            for rec in out.split(b"\0"):
                meta, _, name = rec.partition(b"\t")
                if meta:
                    mode, _, oid = meta.decode().split(" ")
                    entries[name.decode("utf-8", "surrogateescape")] = (mode, oid)
            held.append(entries)
        foreign = []
        for path in paths:
            p = self.root / path
            if p.is_symlink():
                disk: tuple[str, str] | None = (
                    FileMode.SYMLINK,
                    object_id("blob", os.fsencode(os.readlink(p))),
                )
            elif p.is_file():
                mode = FileMode.EXECUTABLE if p.stat().st_mode & 0o100 else FileMode.REGULAR
                disk = (mode, object_id("blob", p.read_bytes()))
            else:
                disk = None
            if not any(h.get(path) == disk for h in held) and not self._torn(p, path, torn):
                foreign.append(path)
        return foreign

    def _torn(self, p: Path, path: str, trees: Sequence[str]) -> bool:
        if not trees or p.is_symlink() or not p.is_file():
            return False
        data = p.read_bytes()
        for t in trees:
            out = self._run("rev-parse", "--verify", "-q", f"{t}:{path}", check=False)
            oid = out.decode().strip()
            if oid:
                whole = self.read_blob(oid)
                if len(data) < len(whole) and whole.startswith(data):
                    return True
        return False


def _holds_other_than(folder: Path, rel: str, gone: set[str]) -> bool:
    """Whether `folder` (at `rel`) holds a file that is not among the tracked files the
    checkout removes (`gone`): a folder upstream turned into a link or a file is no
    obstacle when all it holds are tracked files that go with it."""
    for top, dirs, files in os.walk(folder):
        base = os.path.relpath(top, folder)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            inner = name if base == "." else f"{base}/{name}"
            if f"{rel}/{inner}" not in gone:
                return True
    return False
