"""The repository: the one object that runs git — reads, object writes, refs and the
final checkout. Its neighbours hold what it is built from: `environment.py` (each git
child's scrubbed environment and pinned config), `objects.py` (ids, identities, trees and
the pending-object writer) and `pack.py` (the pack writer).

Reads go through one long-lived `git cat-file --batch` per repository (`catfile.py`), so
a whole-series run reads every object it needs without starting a process per object.
Objects patchq creates (blobs, trees, commits) are hashed here and written in one batch
as loose objects by `ObjectWriter.flush`, so applying a thousand patches starts no git
process at all until the final ref update and checkout. Inherited `GIT_*` variables that
would point git elsewhere are scrubbed first.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from patchq.core import merge3
from patchq.core.errors import BadInputError, GitError, MissingObjectError, UnsafeStateError
from patchq.core.patch import LineCache
from patchq.core.paths import FileMode
from patchq.core.quoting import diff_git_names, unquote
from patchq.core.resolve import Region, Resolution
from patchq.git import readahead
from patchq.git.catfile import CatFile
from patchq.git.diffserver import CommitDiffs, DiffServer
from patchq.git.environment import (
    DIFFING,
    PINNED_CONFIG,
    alive,
    check_interrupt,
    child_environment,
    dead_git_hook,
    lock_holders,
    neutralised,
    user_identity,
)
from patchq.git.gitdir import STATE
from patchq.git.gitdir import discover as _discover
from patchq.git.objects import (
    TREE_MODE,
    Ident,
    ObjectWriter,
    object_id,
    parse_tree,
    render_tree,
    tree_entry,
)
from patchq.git.shallow import refuse_cut


def _plain_file(root: Path, rel: str) -> bool:
    """Whether `root/rel` is a file or symlink reached through real folders only."""
    cur = root
    for part in rel.split("/")[:-1]:
        cur = cur / part
        if cur.is_symlink() or not cur.is_dir():
            return False
    path = root / rel
    return path.is_symlink() or path.is_file()


def _patch_diff(context: int, full_index: bool = False) -> tuple[str, ...]:
    """The diff options of every patch patchq writes: renames detected, 12-digit index ids
    (stable across machines; whole ids with `full_index`, for a writer that abbreviates
    them as the patch did), no colour, no external tools, a/ and b/ prefixes."""
    return (
        "-p",
        "-M",
        f"-U{context}",
        "--full-index" if full_index else "--abbrev=12",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--binary",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--no-relative",
    )


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


_READ_CACHE = 32 << 20  # bytes of recent reads kept by GitRepo.read (the read-ahead fills it)
# The most paths path_history names to git as pathspecs (see there).
PATHSPEC_MAX = 64


# git's last line where an object the command needs is not in the object store.
_MISSING = re.compile(
    r"unable to read|missing (?:blob|tree|commit) object|could not read|bad object|is corrupt",
    re.IGNORECASE,
)
_OBJECT = re.compile(r"\b[0-9a-f]{40}\b")
# What a run goes without where rename detection cannot read a blob (tree_changes).
RENAMES = "the renames upstream made (a patch on a renamed file stops instead)"


class GitRepo:
    """A target checkout, spoken to in intentions: read, resolve, commit, move refs, check out."""

    def __init__(self, path: Path) -> None:
        self.root = Path(os.path.abspath(path))
        self.git_dir, self.common_dir = _discover(self.root)
        self.processes = 1  # the cat-file --batch reader, started on first read
        # Every git child speaks to this repository alone, with the pinned config: the
        # inherited environment (a hook's GIT_DIR, an IDE's index) cannot redirect it.
        self._place = {"GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.root)}
        self._pins: list[tuple[str, str]] = list(PINNED_CONFIG)
        self._config_in_tree = False  # the config includes a file a patch may change
        self._config_stale = False
        config = self._read_config()
        if config.get("core.bare") == "true":
            raise BadInputError(
                "the target is a bare repository",
                str(path),
                "patchq needs a checkout with a working tree",
            )
        fmt = config.get("extensions.objectformat", "")
        if fmt not in ("", "sha1"):
            raise BadInputError(f"object format {fmt!r} is not supported yet", str(path))
        self.cat = CatFile(self.root, self.env)  # the persistent object readers
        self._merges: dict[tuple[bytes, bytes, bytes, tuple[str, str, str]], tuple[bytes, int]] = {}
        self._overlay: ObjectWriter | None = None  # see `objects`
        self._read_cache: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self._read_cache_bytes = 0
        self.lines = LineCache()  # the run's split texts: the replay splits files often
        self._differ: DiffServer | None = None  # git's diff for merges, started on need
        self._differ_failed = False
        self._commit_differ: CommitDiffs | None = None  # commits' own diffs, on need
        self.removed_lock: str | None = None  # a stale index.lock of patchq's killed git
        # Evidence the run went without because git could not read an object of the
        # upstream range (MissingObjectError): what it was → the object git named. The
        # CLI says it once, at the end of the command.
        self.unavailable: dict[str, str] = {}

    # --- the environment of git children ------------------------------------------------

    def env(self, **extra: str) -> dict[str, str]:
        """The environment for one git child in this repository (see `child_environment`)."""
        return child_environment(self._pins, None, **self._place, **extra)

    def _read_config(self) -> dict[str, str]:
        """Read the effective config once (`git config --list`, includes followed): every
        driver it defines is disarmed for the run, and an include that reads a file of the
        working tree — which a patch may edit — makes the config re-read after each git
        command, so a driver a patch defines there is disarmed before it could run."""
        proc = subprocess.run(
            ["git", "config", "-z", "--list", "--show-origin"],
            cwd=self.root,
            capture_output=True,
            env=self.env(),
        )
        self.processes += 1
        check_interrupt(proc)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            raise BadInputError(
                f"git cannot read the target's config: {err[-1] if err else proc.returncode}",
                str(self.root),
            )
        values: dict[str, str] = {}
        fields = proc.stdout.split(b"\0")
        in_tree = False
        for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
            key_b, _, value_b = entry.partition(b"\n")
            key = key_b.decode("utf-8", "surrogateescape").lower()
            value = value_b.decode("utf-8", "surrogateescape")
            values[key] = value
            where = origin.decode("utf-8", "surrogateescape")
            source = Path(where[5:]) if where.startswith("file:") else None
            if source is not None and not source.is_absolute():
                source = self.root / source
            if source is not None and self._in_work_tree(source):
                in_tree = True
            if source is not None and (
                key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))
            ):
                target = Path(os.path.expanduser(value))
                if not target.is_absolute():
                    target = source.parent / target
                in_tree = in_tree or self._in_work_tree(target)
        self._config_in_tree = in_tree
        self._pins = list(PINNED_CONFIG) + neutralised(values)
        self._user = user_identity(values)
        self._config_stale = False
        return {
            k: v.strip().lower()
            for k, v in values.items()
            if k in ("core.bare", "extensions.objectformat")
        }

    def user_identity(self) -> tuple[str, str] | None:
        """The user's name and email as git resolves an author here (see `user_identity`)."""
        return self._user

    def _in_work_tree(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        root = Path(os.path.realpath(self.root))
        return (
            _inside(real, root)
            and not _inside(real, Path(os.path.realpath(self.git_dir)))
            and not _inside(real, Path(os.path.realpath(self.common_dir)))
        )

    # --- reads ------------------------------------------------------------------------

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

    # --- writes -----------------------------------------------------------------------

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

    def _run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> bytes:
        """Run one git command in the target; failures become GitError with its stderr."""
        if self._config_stale:
            self._read_config()
        if args and args[0] in DIFFING:  # no textconv or external diff from attributes
            args = (args[0], "--no-ext-diff", "--no-textconv", *args[1:])
        self.processes += 1
        step = None
        if args and args[0] in _INDEX_WRITERS and "GIT_INDEX_FILE" not in (env or {}):
            step = self._begin_index_step(args[0] != "status")
        try:
            proc = subprocess.run(
                ["git", *args],
                cwd=self.root,
                input=input,
                capture_output=True,
                env=self.env(**(env or {})),
            )
        finally:
            if step is not None:
                step.unlink(missing_ok=True)
        self._config_stale = self._config_in_tree
        check_interrupt(proc)
        if check and proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            last = err[-1] if err else str(proc.returncode)
            what = f"`git {' '.join(args)}` failed: {last}"
            if _MISSING.search(last):
                found = _OBJECT.search(last)
                raise MissingObjectError(what, str(self.root), oid=found.group(0) if found else "")
            raise GitError(what, str(self.root))
        return proc.stdout

    def went_without(self, what: str, err: MissingObjectError) -> None:
        """Record that the run went on without `what` (evidence), git having failed to
        read an object of it: the CLI names it once on stderr."""
        self.unavailable.setdefault(what, err.oid[:12])

    def update_ref(self, ref: str, new: str, old: str | None, reason: str) -> None:
        args = ["update-ref", "-m", reason, ref, new]
        if old is not None:
            args.append(old)
        self._run(*args)

    def checkout_branch(self, branch: str, commit: str, reason: str, force: bool = False) -> None:
        """Point `branch` at `commit` and check it out (`force`: over any local changes)."""
        self._run(
            "checkout",
            "-q",
            *(("-f",) if force else ()),
            "-B",
            branch,
            commit,
            env={"GIT_REFLOG_ACTION": f"patchq: {reason}"},
        )

    def move_checked_out(self, branch: str, commit: str, old: str | None, reason: str) -> None:
        """Point `branch` at `commit` only if it is still at `old` (`update-ref` with the
        old value: a commit made meanwhile makes it fail) and check it out without force,
        so a file changed meanwhile is carried or makes git refuse. On any failure the
        branch is put back and nothing else has moved (issue 27, class 3)."""
        why = f"patchq: {reason}"
        if old is not None and self.current_branch() == branch:
            # Already checked out: the two-tree merge `checkout` does, then the ref.
            self._run("update-index", "-q", "--refresh", check=False)
            self._run("read-tree", "-m", "-u", old, commit)
            try:
                self._run("update-ref", "-m", why, "HEAD", commit, old)
            except GitError:
                self._run("read-tree", "-m", "-u", commit, old)
                raise
            return
        ref = f"refs/heads/{branch}"
        self._run("update-ref", "-m", why, ref, commit, old or "0" * 40)
        try:
            self._run("checkout", "-q", branch, env={"GIT_REFLOG_ACTION": why})
        except GitError:
            if old is None:
                self._run("update-ref", "-d", ref, commit)
            else:
                self._run("update-ref", "-m", why, ref, old, commit)
            raise

    def switch_branch(self, branch: str, force: bool = False) -> None:
        """Check out the existing `branch` as it is (`force`: over any local changes)."""
        self._run("checkout", "-q", *(("-f",) if force else ()), branch)

    def restore_head(self, branch: str | None, head: str | None) -> None:
        """Put HEAD back on `branch`, or else detached at `head`, over any local changes."""
        if branch:
            self.switch_branch(branch, force=True)
        elif head:
            self._run("checkout", "-q", "-f", "--detach", head)

    def delete_branch(self, branch: str) -> None:
        """Delete `branch`, whether or not its commits are merged anywhere."""
        self._run("branch", "-q", "-D", branch)

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

    def symlinks(self, tree: str) -> list[tuple[str, str]]:
        """Every symlink of `tree`, at any depth, as (path, blob id)."""
        out = self._run("ls-tree", "-r", "-z", "--full-tree", tree)
        links = []
        for rec in out.split(b"\0"):
            meta, _, name = rec.partition(b"\t")
            if meta.startswith(b"120000 "):
                links.append((name.decode("utf-8", "surrogateescape"), meta.split()[2].decode()))
        return links

    def added_paths(self, a: str, b: str) -> list[str]:
        """The files tree (or commit) `b` has and `a` has not."""
        out = self._run("diff-tree", "-r", "--name-only", "-z", "--diff-filter=A", a, b)
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def changed_paths(self, a: str, b: str, paths: Iterable[str] = ()) -> list[str]:
        """The files that differ between two trees (no renames), only under `paths` if any."""
        out = self._run(
            "diff-tree",
            "-r",
            "-z",
            "--name-only",
            "--no-renames",
            a,
            b,
            "--",
            *(f":(literal){p}" for p in paths),
        )
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def changed_blobs(self, a: str, b: str) -> dict[str, tuple[str | None, str | None]]:
        """Each file that differs between two trees → (blob in `a`, blob in `b`), or None."""
        raw = self._run("diff-tree", "-r", "--no-renames", "-z", a, b)
        out: dict[str, tuple[str | None, str | None]] = {}
        parts = raw.split(b"\0")
        i = 0
        zero = "0" * 40
        while i + 1 < len(parts):
            meta = parts[i].decode()
            path = parts[i + 1].decode("utf-8", "surrogateescape")
            i += 2
            fields = meta.lstrip(":").split()
            if len(fields) < 5:
                continue
            old, new = fields[2], fields[3]
            out[path] = (None if old == zero else old, None if new == zero else new)
        return out

    def renames(self, a: str, b: str) -> dict[str, str]:
        """The files git sees renamed between two trees or commits (old path → new path)."""
        return self.tree_changes(a, b)[0]

    def tree_changes(self, a: str, b: str) -> tuple[dict[str, str], frozenset[str]]:
        """The renames git sees between two trees or commits (old path → new path), and
        every path that changed (both names of a rename): one `diff-tree`. Where git
        cannot read a blob it would compare for a rename (a partial clone), the paths
        without the renames: a patch on a renamed file then finds it gone and stops."""
        try:
            out = self._run("diff-tree", "-r", "-M", "--name-status", "-z", "--no-ext-diff", a, b)
        except MissingObjectError as e:
            self.went_without(RENAMES, e)
            out = self._run(
                "diff-tree", "-r", "--no-renames", "--name-status", "-z", "--no-ext-diff", a, b
            )
        parts = out.split(b"\0")
        renames: dict[str, str] = {}
        changed: set[str] = set()
        i = 0
        while i < len(parts):
            status = parts[i]
            if status.startswith((b"R", b"C")) and i + 2 < len(parts):
                old = parts[i + 1].decode("utf-8", "surrogateescape")
                new = parts[i + 2].decode("utf-8", "surrogateescape")
                if status.startswith(b"R"):
                    renames[old] = new
                changed.update((old, new))
                i += 3
            elif status and i + 1 < len(parts):
                changed.add(parts[i + 1].decode("utf-8", "surrogateescape"))
                i += 2
            else:
                i += 1
        return renames, frozenset(changed)

    def path_history(self, old: str, new: str, paths: Sequence[str]) -> Iterator[bytes]:
        """The `log -p -U0` of `old..new` for `paths` (past PATHSPEC_MAX of them, for every
        file: the caller picks its own), oldest first: one output per git run."""

        # Paths go to git on its stdin, one per line, after `--`: however many files
        # drifted, one process. A name with a newline cannot go that way, nor one ending in
        # CR (git reads the lines as text and drops a CR before the LF); those few go as
        # arguments.
        def odd_name(n: str) -> bool:
            return "\n" in n or n.endswith("\r")

        plain = [n for n in paths if not odd_name(n)]
        odd = [n for n in paths if odd_name(n)]
        batches: list[tuple[list[str], bytes | None]] = []
        if len(paths) > PATHSPEC_MAX:
            # git matches every tree entry of every commit against every pathspec: 1,757
            # of them made curl's 1,100-commit log take 17 s instead of 1.8 s. Past a few
            # dozen, the whole range is asked and the caller keeps the files it wants.
            batches.append(([], None))
            odd = []
        elif plain:
            batches.append(
                (
                    ["--stdin"],
                    b"--\n" + "".join(n + "\n" for n in plain).encode("utf-8", "surrogateescape"),
                )
            )
        for i in range(0, len(odd), 400):
            batches.append((["--", *odd[i : i + 400]], None))
        for extra, stdin in batches:
            yield self._run(
                "log",
                "--reverse",
                "--topo-order",
                "--format=%x00%H %s",
                "-p",
                "-U0",
                "--no-color",
                "--no-ext-diff",
                "-M",
                f"{old}..{new}",
                *extra,
                input=stdin,
                env={"GIT_LITERAL_PATHSPECS": "1"},
            )

    def ancestors(self, candidates: Sequence[str], tip: str) -> dict[str, str]:
        """Those of `candidates` (full or abbreviated commit ids) that name a commit which
        is an ancestor of `tip` (or `tip` itself), each → its full id: one `rev-list`."""
        full = self.resolve_many(
            [c for c in candidates if c and all(x in "0123456789abcdef" for x in c.lower())]
        )
        if not full:
            return {}
        # Lists the commits `tip` cannot reach that the candidates can (a range: git walks
        # from the candidates down to what `tip` reaches), so a candidate `tip` reaches is
        # not among them. The candidates go on stdin: a whole series' origins, one process.
        tip_id = self.resolve(tip)
        wanted = "".join(f"{oid}\n" for oid in sorted(set(full.values())))
        out = self._run("rev-list", "--stdin", input=f"{wanted}^{tip_id}\n".encode())
        unreachable = set(out.decode().split())
        return {c: oid for c, oid in full.items() if oid not in unreachable}

    def patch_ids(self, diffs: Sequence[bytes]) -> list[str | None]:
        """git's stable patch-id of each diff (None where git finds no change in it): one
        `git patch-id` over them all."""
        if not diffs:
            return []
        data = b"".join(b"commit %040x\n" % (i + 1) + d for i, d in enumerate(diffs))
        out: list[str | None] = [None] * len(diffs)
        for line in self._run("patch-id", "--stable", input=data).decode().splitlines():
            pid, _, which = line.partition(" ")
            i = int(which, 16) - 1
            if 0 <= i < len(out):
                out[i] = pid
        return out

    def range_evidence(
        self, old: str, new: str, paths: Sequence[str], diffs: Sequence[bytes] = ()
    ) -> tuple[dict[str, list[str]], list[tuple[str, str, tuple[str, ...]]], list[str | None]]:
        """What provenance needs of `old..new`, in one `git log -p` and one `git patch-id`:
        patch-id → the commits (no merges) with it, whole diffs of those that touched
        one of `paths`; (commit, subject, files it changed) for each of them, newest
        first; and the patch-id of each of `diffs` (None where git finds no change)."""
        log = b""
        # Past PATHSPEC_MAX files the whole range is read and the commits that touched none
        # of them are left out here (git's pathspec match is per entry, per pathspec).
        whole = len(paths) > PATHSPEC_MAX
        if paths:
            log = self._run(
                "log",
                "-p",
                "--no-merges",
                "--no-renames",
                "--no-color",
                "--full-diff",  # the whole commit, whichever of `paths` it touched
                "--format=commit %H%n\x01%s",
                f"{old}..{new}",
                *(() if whole else ("--stdin",)),
                input=None if whole else _paths_input(paths),
                env={"GIT_LITERAL_PATHSPECS": "1"},
            )
        commits: list[tuple[str, str, tuple[str, ...]]] = []
        commit = subject = ""
        files: list[str] = []
        touched: set[str] = set()  # what each commit's `diff --git` lines name (whole)
        wanted = {p for p in paths if "\n" not in p and not p.endswith("\r")}
        kept: list[bytes] = []  # the log of the commits kept (whole), for patch-id
        start = 0

        def close(end: int) -> None:
            if commit and (not whole or touched & wanted):
                commits.append((commit, subject, tuple(dict.fromkeys(files))))
                if whole:
                    kept.append(log[start:end])

        at = 0
        for line in log.split(b"\n"):
            if line.startswith(b"commit ") and len(line) == 47:
                close(at)
                commit, subject, files, touched, start = line[7:].decode(), "", [], set(), at
            elif line.startswith(b"\x01") and not subject:
                subject = line[1:].decode("utf-8", "replace")
            elif line.startswith((b"--- a/", b"+++ b/")):
                files.append(_diff_name(line[6:]))
            elif line.startswith((b'--- "a/', b'+++ "b/')):
                files.append(_diff_name(line[4:]))
            elif whole and line.startswith(b"diff --git "):
                touched.update(diff_git_names(line[11:]))
            at += len(line) + 1
        close(len(log))
        refuse_cut(self.common_dir, str(self.root), old, new, (c for c, _, _ in commits))
        if whole:
            log = b"".join(kept)
        # The series' diffs ride in the same patch-id run, under ids no commit has.
        fake = [f"{'f' * 32}{i:08x}" for i in range(len(diffs))]
        fakes = set(fake)
        data = log + b"".join(
            f"commit {f}\n".encode() + d for f, d in zip(fake, diffs, strict=True)
        )
        ids: dict[str, list[str]] = {}
        own: dict[str, str] = {}
        if data.strip():
            for row in self._run("patch-id", "--stable", input=data).decode().splitlines():
                pid, _, which = row.partition(" ")
                if which.startswith("f" * 32) and which in fakes:
                    own[which] = pid
                else:
                    ids.setdefault(pid, []).append(which)
        return ids, commits, [own.get(f) for f in fake]

    def commit_diff(self, commit: str) -> bytes:
        """The -U0 diff of one commit against its first parent (no renames), from one
        `git diff-tree --stdin` kept for the run: however many commits are asked about,
        one process. Where that process dies (it cannot read an object of the commit),
        the commit is asked of a git of its own, whose error says why
        (MissingObjectError for a missing object), and the next commit starts another."""
        if not re.fullmatch(r"[0-9a-f]{40}", commit):
            commit = self.resolve(commit)
        if self._commit_differ is None:
            self._commit_differ = CommitDiffs(self.root, self.env())
            self.processes += 1
        try:
            return self._commit_differ.ask(commit)
        except GitError:
            self._commit_differ = None
            return self._run("diff-tree", *CommitDiffs.OPTIONS, commit)

    def ref_names(self) -> list[str]:
        """The short names of the branches, tags and remote branches (shell completion)."""
        out = self._run(
            "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags", "refs/remotes"
        )
        return [n for n in out.decode("utf-8", "surrogateescape").splitlines() if n]

    def current_branch(self) -> str | None:
        head = (self.git_dir / "HEAD").read_bytes().strip()
        prefix = b"ref: refs/heads/"
        return (
            head[len(prefix) :].decode("utf-8", "surrogateescape")
            if head.startswith(prefix)
            else None
        )

    def head(self) -> str | None:
        return self.try_resolve("HEAD")

    def dirty_paths(self, ignore: Iterable[str] = ()) -> list[str]:
        """Tracked files with changes, and untracked files not ignored, minus `ignore` prefixes."""
        out = self._run("status", "--porcelain=v1", "-z", "--untracked-files=all")
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

    def merge_file(
        self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
    ) -> tuple[bytes, int]:
        """`git merge-file --diff3` of three versions: (merged bytes, number of conflicts).

        Computed in process by `merge3` (git's algorithm, ported), so a replay with many
        conflicting hunks starts no git process per hunk. A diff too long for Python goes
        to one `git diff-tree --stdin` kept for the run (diffserver), and `git merge-file`
        runs only for input it refuses as binary. The replay asks the same question twice
        for a moved hunk it doubts and then must merge; the last few answers are kept."""
        key = (
            hashlib.sha1(ours).digest(),
            hashlib.sha1(base).digest(),
            hashlib.sha1(theirs).digest(),
            labels,
        )
        hit = self._merges.get(key)
        if hit is not None:
            return hit
        result = merge3.merge(ours, base, theirs, labels, far=self._diff, split=self.lines.split)
        if result is None:  # binary: git says why it will not merge
            result = self._merge_file(ours, base, theirs, labels)
        self._merges[key] = result
        if len(self._merges) > 8:
            self._merges.pop(next(iter(self._merges)))
        return result

    def merge_resolving(
        self,
        ours: bytes,
        base: bytes,
        theirs: bytes,
        labels: tuple[str, str, str],
        *,
        remembered: merge3.Remembered | None = None,
        regions: list[Region] | None = None,
    ) -> tuple[bytes, int, list[Resolution]]:
        """`merge_file`, with each conflict region first offered to the finer methods of
        `core.resolve` (then to `remembered`): (merged bytes, conflicts left, the
        resolutions made); `regions`, if given, is filled with every conflict region."""
        resolved: list[Resolution] = []
        result = merge3.merge(
            ours,
            base,
            theirs,
            labels,
            far=self._diff,
            split=self.lines.split,
            resolved=resolved,
            regions=regions,
            remembered=remembered,
        )
        if result is None:  # binary: nothing finer than git's answer
            return (*self.merge_file(ours, base, theirs, labels), [])
        return result[0], result[1], resolved

    def _diff(self, a: bytes, b: bytes) -> Callable[[], merge3.Script]:
        """git's diff of two texts, from the diff server; if its store cannot be written
        (a small /dev/shm that is full) or git cannot start, this run diffs in Python."""
        if not self._differ_failed:
            try:
                if self._differ is None:
                    self._differ = DiffServer()
                    self.processes += 1
                return self._differ.ask(a, b)
            except OSError:
                self._differ_failed = True  # answers already asked for can still be read
        return partial(merge3.script, a, b)

    def _merge_file(
        self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
    ) -> tuple[bytes, int]:
        with tempfile.TemporaryDirectory(prefix="patchq-merge-") as tmp:
            paths = []
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                p = Path(tmp) / name
                p.write_bytes(data)
                paths.append(str(p))
            self.processes += 1
            proc = subprocess.run(
                [
                    "git",
                    "merge-file",
                    "-p",
                    "--diff3",
                    "-L",
                    labels[0],
                    "-L",
                    labels[1],
                    "-L",
                    labels[2],
                    *paths,
                ],
                capture_output=True,
                env=self.env(),
            )
        check_interrupt(proc)
        if proc.returncode < 0 or proc.returncode > 127:
            raise GitError(
                f"git merge-file failed: {proc.stderr.decode(errors='replace')}", str(self.root)
            )
        return proc.stdout, proc.returncode

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

    def untracked(self) -> list[str]:
        out = self._run("ls-files", "--others", "--exclude-standard", "-z")
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def diff_trees_many(
        self, pairs: Sequence[tuple[str, str]], context: int = 3, *, full_index: bool = False
    ) -> list[bytes]:
        """`diff_trees` for many pairs of trees in one `git diff-tree --stdin`: a rebase
        that refreshes hundreds of patches starts one process, not hundreds."""
        if not pairs:
            return []
        lines = "".join(f"{a} {b}\n" for a, b in pairs).encode()
        out = self._run("diff-tree", "--stdin", *_patch_diff(context, full_index), input=lines)
        # git echoes each input line before that pair's diff (nothing for identical trees);
        # no diff line can equal "<40 hex> <40 hex>", every one starts with its own mark.
        waiting: dict[bytes, list[int]] = {}
        for i, (a, b) in enumerate(pairs):
            waiting.setdefault(f"{a} {b}".encode(), []).append(i)
        chunks: list[list[bytes]] = [[] for _ in pairs]
        current = -1
        for line in out.split(b"\n")[:-1] if out.endswith(b"\n") else out.split(b"\n"):
            queue = waiting.get(line)
            if queue and queue[0] > current:
                current = queue.pop(0)
                continue
            if current >= 0:
                chunks[current].append(line + b"\n")
        return [b"".join(c) for c in chunks]

    def diff_trees(self, a: str, b: str, context: int = 3, *, full_index: bool = False) -> bytes:
        """git's own diff between two trees, as `refresh` writes it: renames detected,
        12-digit index ids (stable across machines; whole ones with `full_index`), no
        colour, no external tools."""
        return self._run("diff-tree", *_patch_diff(context, full_index), a, b)

    def reset_to(self, commit: str, reason: str) -> None:
        """Move the checked-out branch and the index to `commit`, leaving files alone."""
        self._run("reset", "-q", commit, "--", env={"GIT_REFLOG_ACTION": f"patchq: {reason}"})

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

    def format_patch(self, revision_range: str) -> bytes:
        """`git format-patch --stdout` of a range: the mbox that `import --git` reads."""
        if revision_range.startswith("-"):
            raise BadInputError(f"invalid range {revision_range!r}", "import --git")
        return self._run(
            "format-patch",
            "--stdout",
            "--no-stat",
            "--full-index",
            "--no-signature",
            "--binary",
            revision_range,
        )

    # --- the user's files and other worktrees (issue 15, class 3) ---------------------

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
                if p.is_symlink() or p.is_file() or (p.is_dir() and any(p.iterdir())):
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

    def tree_paths(self, tree: str) -> list[str]:
        """Every file of `tree` (or a commit's), at any depth."""
        out = self._run("ls-tree", "-r", "-z", "--name-only", "--full-tree", tree)
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def stash_paths(self, paths: Sequence[str], message: str) -> str | None:
        """Save exactly `paths` (ignored and untracked files too) in a stash and remove
        them from the working tree; the stash's id, or None if nothing was saved."""
        before = self.try_resolve("refs/stash")
        self._run(
            "stash", "push", "--all", "-q", "-m", message, "--", *(f":(literal){p}" for p in paths)
        )
        after = self.try_resolve("refs/stash")
        return after if after != before else None

    def worktree_holding(self, branch: str) -> str | None:
        """The other worktree of this repository that has `branch` checked out, if any
        (read from git's own records of its worktrees: no process)."""
        want = f"ref: refs/heads/{branch}".encode()
        here = os.path.realpath(self.git_dir)
        places = [(self.common_dir, self.common_dir.parent)]
        wts = self.common_dir / "worktrees"
        if wts.is_dir():
            for d in sorted(wts.iterdir()):
                try:
                    gitfile = (d / "gitdir").read_text().strip()
                except OSError:
                    continue
                places.append((d, Path(gitfile).parent))
        for gd, work in places:
            if os.path.realpath(gd) == here:
                continue
            try:
                head = (gd / "HEAD").read_bytes().strip()
            except OSError:
                continue
            if head == want and not (gd == self.common_dir and self._bare_common()):
                return str(work)
        return None

    def _bare_common(self) -> bool:
        """Whether the main repository of these worktrees is bare (its HEAD is no
        checkout)."""
        try:
            text = (self.common_dir / "config").read_text(errors="replace")
        except OSError:
            return False
        return re.search(r"^\s*bare\s*=\s*true\s*$", text, re.M | re.I) is not None

    def keep_reachable(
        self, ref: str, commits: Iterable[str], trees: Iterable[str], why: str
    ) -> None:
        """Point `ref` at a commit whose parents are `commits` and whose tree holds
        `trees`, so no `git gc --prune=now` removes objects nothing else references."""
        w = ObjectWriter(self.common_dir / "objects")  # apart from the run's overlay
        entries = [(TREE_MODE, f"t{i}".encode(), t) for i, t in enumerate(dict.fromkeys(trees))]
        tree = w.add("tree", render_tree(entries))
        parents = [c for c in dict.fromkeys(commits) if c]
        who = b"patchq <patchq@localhost> 0 +0000"
        lines = [b"tree " + tree.encode(), *(b"parent " + c.encode() for c in parents)]
        lines += [b"author " + who, b"committer " + who]
        commit = w.add("commit", b"\n".join(lines) + b"\n\n" + why.encode() + b"\n")
        w.flush()
        self.update_ref(ref, commit, None, f"patchq: {why}")

    def drop_ref(self, ref: str) -> None:
        """Delete `ref` if it exists."""
        if self.try_resolve(ref, kind="") is not None:
            self._run("update-ref", "-d", ref)

    def index_lock(self) -> Path:
        """git's lock of the index: it exists while a git process changes the index."""
        return self.git_dir / "index.lock"

    def _begin_index_step(self, clear: bool) -> Path:
        """Before a git that takes the index's lock: with `clear` (a git that needs the
        lock), clear a stale lock of patchq's own killed git (`clear_stale_index_lock`);
        then mark, in `.git/patchq/git-step.<pid>`, that this patchq's git is at work."""
        if clear:
            self.clear_stale_index_lock()
        mark = self.state_dir() / f"{GIT_STEP}.{os.getpid()}"
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_bytes(b"")
        if clear:
            dead_git_hook(self.index_lock())
        return mark

    def clear_stale_index_lock(self) -> None:
        """An `index.lock` left by a git patchq started and that was killed with it (the
        mark of a patchq that no longer runs is in `.git/patchq/`, and no process holds
        the lock open) is removed, and named in `removed_lock`. A lock a live process
        holds is never removed (exit 5 naming the process), nor one no patchq git took
        (git then refuses it: exit 6). Callers hold the run lock."""
        lock = self.index_lock()
        dead = [m for m in self.state_dir().glob(f"{GIT_STEP}.*") if not alive(m.suffix[1:])]
        if not lock.exists():
            for m in dead:
                m.unlink(missing_ok=True)
            return
        holders = self.lock_holders(lock)
        if holders:
            raise UnsafeStateError(
                f"a running git (pid {holders[0]}) holds the index's lock",
                str(lock),
                "wait for it to finish, then run the command again",
            )
        if holders is None or not dead:
            return  # not known to be ours: git refuses it, and says so (exit 6)
        lock.unlink(missing_ok=True)
        for m in dead:
            m.unlink(missing_ok=True)
        self.removed_lock = str(lock)

    def lock_holders(self, path: Path) -> list[int] | None:
        """The processes that have `path` open now (see `environment.lock_holders`)."""
        return lock_holders(path)

    def state_dir(self) -> Path:
        """`.git/patchq/`: state that is not in commits (queue name, an operation in progress)."""
        return self.git_dir / STATE

    def require_clean(self, ignore: Iterable[str] = ()) -> None:
        dirty = self.dirty_paths(ignore)
        if dirty:
            more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
            raise UnsafeStateError(
                f"the target has changes patchq did not make: {dirty[0]}{more}",
                str(self.root),
                "commit or stash them first",
            )

    def close(self) -> None:
        if self._differ is not None:
            self._differ.close()
            self._differ = None
        if self._commit_differ is not None:
            self._commit_differ.close()
            self._commit_differ = None
        self.cat.close()


def _diff_name(raw: bytes) -> str:
    """A path from a `---`/`+++` line after its a/ or b/ (quoted as git quotes)."""
    raw = raw.rstrip(b"\r")
    if raw.startswith(b'"'):
        raw = unquote(raw)[2:]
    return raw.decode("utf-8", "surrogateescape")


def _paths_input(paths: Iterable[str]) -> bytes:
    """Paths for `git log --stdin` (after `--`, one a line): however many, one process.
    A name git cannot read as one line (a newline in it, or a CR at its end) is left out:
    such a file's commits are then simply not seen as evidence."""
    ok = [p for p in paths if "\n" not in p and not p.endswith("\r")]
    return b"--\n" + "".join(p + "\n" for p in ok).encode("utf-8", "surrogateescape")


def init_repository(path: Path, branch: str = "main") -> GitRepo:
    """Create a new repository (used by `demo` to build its upstream)."""
    path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["git", "init", "-q", "--template=", "-b", branch, str(path)],
        capture_output=True,
        env=child_environment(PINNED_CONFIG),
    )
    if proc.returncode != 0:
        raise GitError(
            f"git init failed: {proc.stderr.decode(errors='replace').strip()}", str(path)
        )
    return GitRepo(path)


def commit_all(g: GitRepo, message: str, who: Ident) -> str:
    """Commit every change in the working tree as `who` (demo upstreams only)."""
    env = {
        "GIT_AUTHOR_NAME": who.name,
        "GIT_AUTHOR_EMAIL": who.email,
        "GIT_AUTHOR_DATE": f"{who.when} {who.tz}",
        "GIT_COMMITTER_NAME": who.name,
        "GIT_COMMITTER_EMAIL": who.email,
        "GIT_COMMITTER_DATE": f"{who.when} {who.tz}",
    }
    g._run("add", "-A")
    g._run("-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", message, env=env)
    return g.resolve("HEAD")


# In `.git/patchq/` while a git patchq started changes the index (holds its lock).
GIT_STEP = "git-step"
# The git commands patchq runs that take the index's lock (on the real index).
# (`status` writes the index when it can, and takes the lock to: marked, never waited for.)
_INDEX_WRITERS = frozenset(
    {"checkout", "read-tree", "reset", "stash", "add", "status", "update-index"}
)
