"""The long-lived object readers: one `git cat-file --batch` (objects) and one
`--batch-check` (ids and types, for names that may not exist) per repository, started on
first use, so a whole-series run reads every object it needs without a process per object.

A reader cut off mid-answer (Ctrl-C, a broken pipe) is closed, and the next read starts a
fresh one: a leftover answer is never read as the reply to a later request.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from patchq.core.errors import GitError
from patchq.git import readahead
from patchq.git.environment import end_process


class CatFile:
    """`git cat-file --batch` and `--batch-check` in `root`, each with `env()`'s environment."""

    def __init__(self, root: Path, env: Callable[[], dict[str, str]]) -> None:
        self.root = root
        self._env = env
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self.started = 0  # processes started, for the run's count

    def _proc(self, mode: str) -> subprocess.Popen[bytes]:
        proc = self._procs.get(mode)
        if proc is not None and proc.poll() is None:
            return proc
        try:
            proc = subprocess.Popen(
                ["git", "cat-file", mode],
                cwd=self.root,
                env=self._env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as e:
            raise GitError(f"cannot start git cat-file: {e.strerror}", str(self.root)) from None
        self.started += 1
        self._procs[mode] = proc
        return proc

    def ask(self, requests: Sequence[str]) -> list[readahead.Found | None]:
        """(id, type, data) for each request (an object name), None where it names
        nothing; many requests a round trip (`readahead.ask`)."""
        if not requests:
            return []
        proc = self._proc("--batch")
        assert proc.stdin is not None and proc.stdout is not None
        try:
            return readahead.ask(proc.stdin, proc.stdout, requests, str(self.root))
        except BaseException:
            self.close()
            raise

    def read(self, name: str) -> readahead.Found | None:
        """One object's (id, type, data), None if `name` names none: a round trip of its
        own (a run reads ahead with `ask` where it can)."""
        return self.ask([name])[0] if "\n" not in name else None

    def header(self, name: str) -> tuple[str, str, int] | None:
        """(id, type, size) of the object `name` names, None if it names none."""
        if "\n" in name:
            return None
        proc = self._proc("--batch-check")
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
            reply = proc.stdout.readline()
        except BaseException:
            self.close()
            raise
        parts = reply.split()
        if len(parts) == 3 and parts[1] not in (b"missing", b"ambiguous"):
            return parts[0].decode(), parts[1].decode(), int(parts[2])
        if len(parts) == 2 and parts[1] in (b"missing", b"ambiguous"):
            return None
        self.close()
        raise GitError(f"{name}: unexpected reply {reply!r} from git cat-file", str(self.root))

    def close(self) -> None:
        """Stop the readers (the next read starts new ones)."""
        procs, self._procs = self._procs, {}
        for proc in procs.values():
            end_process(proc)
