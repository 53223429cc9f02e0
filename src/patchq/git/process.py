"""The repository as the place git runs: its folders, its config read once and every
driver it defines disarmed, one git command run with a scrubbed environment
(`environment.py`), and the marks that tell a stale `index.lock` of patchq's own killed
git from one a live process holds.

`GitProcesses` is the base of `GitRepo` (repo.py); the object store, refs, history,
merges and working tree build on it.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from patchq.core.errors import BadInputError, GitError, MissingObjectError, UnsafeStateError
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


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


# git's last line where an object the command needs is not in the object store.
_MISSING = re.compile(
    r"unable to read|missing (?:blob|tree|commit) object|could not read|bad object|is corrupt",
    re.IGNORECASE,
)
_OBJECT = re.compile(r"\b[0-9a-f]{40}\b")
# In `.git/patchq/` while a git patchq started changes the index (holds its lock).
GIT_STEP = "git-step"
# The git commands patchq runs that take the index's lock (on the real index).
# (`status` writes the index when it can, and takes the lock to: marked, never waited for.)
_INDEX_WRITERS = frozenset(
    {"checkout", "read-tree", "reset", "stash", "add", "status", "update-index"}
)


class GitProcesses:
    """A target checkout as the place its git children run: the folders, the pinned
    config, one command run, and the index lock's marks."""

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
        self.removed_lock: str | None = None  # a stale index.lock of patchq's killed git
        # Evidence the run went without because git could not read an object of the
        # upstream range (MissingObjectError): what it was → the object git named. The
        # CLI says it once, at the end of the command.
        self.unavailable: dict[str, str] = {}

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

    def env(self, **extra: str) -> dict[str, str]:
        """The environment for one git child in this repository (see `child_environment`)."""
        return child_environment(self._pins, None, **self._place, **extra)

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

    def state_dir(self) -> Path:
        """`.git/patchq/`: state that is not in commits (queue name, an operation in progress)."""
        return self.git_dir / STATE

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

    def close(self) -> None:
        """End the git children this repository keeps (none at this level)."""
