"""git's own line diff, in C, from one git process that serves a whole run.

merge3 reproduces `git merge-file` exactly, but its Myers walk is Python: a diff between
a file and an upstream 1,000 commits away takes it tens of milliseconds, git well under
one. `git diff-tree --stdin` diffs each pair of trees it reads and echoes back any line
that is not a pair, which marks the end of each answer, so one process can answer every
expensive diff of a run. The files go to it as loose objects in a private, temporary
object store (never the target's), in one-file trees. diff-tree's Myers diff is the one
merge-file runs (xdl_do_diff, then change compaction, then the edit script); the
indent heuristic is turned off, as merge-file has it, and no configuration is read.
Hunks with one line of context give the edit script back exactly: every run of -/+
lines between context lines is one change.

`CommitDiffs` is the same kind of server for commits' own -U0 diffs (provenance).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import weakref
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

from patchq.core.errors import GitError
from patchq.core.merge3 import Script
from patchq.git.environment import end_process

# What the private store may hold on disk before its oldest files go (a long run writes
# every version of the files it merges; most are asked about once or twice).
_KEEP = 32 << 20


class DiffServer:
    """One `git diff-tree --stdin` and its private object store; `close` removes both."""

    def __init__(self) -> None:
        where = _scratch()
        _sweep(where)
        self.dir = tempfile.mkdtemp(prefix=f"patchq-diff-{os.getpid()}-", dir=where)
        try:
            os.mkdir(os.path.join(self.dir, "objects"))
            os.mkdir(os.path.join(self.dir, "refs"))
            with open(os.path.join(self.dir, "HEAD"), "w") as f:
                f.write("ref: refs/heads/main\n")
            self._err: IO[bytes] = tempfile.TemporaryFile()
            # No system or user configuration: nothing may change the diff it makes.
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_DIR=self.dir)
            self._proc = subprocess.Popen(
                [
                    "git",
                    "diff-tree",
                    "--stdin",
                    "-p",
                    "-U1",
                    "--no-indent-heuristic",
                    "--diff-algorithm=myers",
                    "--text",
                    "--no-renames",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._err,
                env=env,
                cwd=self.dir,
            )
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        # A line diff-tree cannot read as a pair of trees, and no diff line starts with.
        self._end = b"\x01patchq-end " + secrets.token_hex(8).encode() + b"\n"
        self._stored: OrderedDict[str, int] = OrderedDict()  # oid → bytes on disk
        self._stored_bytes = 0
        self._dirs: set[str] = set()
        self._waiting: deque[list[Script]] = deque()  # questions sent, answers not read
        self._rest = b""  # read from git, not yet part of an answer
        self._finalizer = weakref.finalize(self, _shutdown, self._proc, self.dir, self._err)

    def script(self, a: bytes, b: bytes) -> Script:
        """The edit script of git's Myers diff from `a` to `b` (what merge3.diff returns)."""
        return self.ask(a, b)()

    def ask(self, a: bytes, b: bytes) -> Callable[[], Script]:
        """Send the question now, read the answer when it is called: git diffs while the
        caller goes on (merge3 does the other, short side of a merge meanwhile). Answers
        come in the order asked; calling a later one first reads the earlier ones."""
        if not self._waiting:
            self._trim()  # never while git may still read a file of an earlier question
        ta = self._tree(self._put(b"blob", a))
        tb = self._tree(self._put(b"blob", b))
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(b"%s %s\n" % (ta.encode(), tb.encode()) + self._end)
            self._proc.stdin.flush()
        except OSError:
            self._died()
        slot: list[Script] = []
        self._waiting.append(slot)

        def answer() -> Script:
            while not slot:
                self._waiting.popleft().append(_parse(self._answer()))
            return slot[0]

        return answer

    def _answer(self) -> bytes:
        """Everything diff-tree writes for the oldest unread question, up to its end line
        (what was read past it belongs to the next answer)."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        buf = self._rest
        end = self._end
        start = 0
        while True:
            k = buf.find(end, start)
            while k > 0 and buf[k - 1] != 10:  # only a whole line is the end line
                k = buf.find(end, k + 1)
            if k >= 0:
                self._rest = buf[k + len(end) :]
                return buf[:k]
            start = max(0, len(buf) - len(end))
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self._died()
            buf += chunk

    def _put(self, kind: bytes, data: bytes) -> str:
        raw = b"%s %d\0" % (kind, len(data)) + data
        oid = hashlib.sha1(raw).hexdigest()
        if oid in self._stored:
            self._stored.move_to_end(oid)
            return oid
        sub = os.path.join(self.dir, "objects", oid[:2])
        if sub not in self._dirs:
            os.makedirs(sub, exist_ok=True)
            self._dirs.add(sub)
        packed = zlib.compress(raw, 0)  # the store is read once and thrown away
        with open(os.path.join(sub, oid[2:]), "wb") as f:
            f.write(packed)
        self._stored[oid] = len(packed)
        self._stored_bytes += len(packed)
        return oid

    def _trim(self) -> None:
        """Remove the least recently used files past _KEEP bytes."""
        while self._stored_bytes > _KEEP and self._stored:
            old, size = self._stored.popitem(last=False)
            os.unlink(os.path.join(self.dir, "objects", old[:2], old[2:]))
            self._stored_bytes -= size

    def _tree(self, blob: str) -> str:
        return self._put(b"tree", b"100644 f\0" + bytes.fromhex(blob))

    def _died(self) -> None:
        self._proc.kill()
        self._proc.wait()
        self._err.seek(0)
        why = self._err.read().decode(errors="replace").strip().splitlines()
        raise GitError(
            "git diff-tree stopped answering" + (f": {why[-1]}" if why else ""), self.dir
        )

    def close(self) -> None:
        self._finalizer()


def _shutdown(proc: subprocess.Popen[bytes], where: str, err: IO[bytes]) -> None:
    """Stop git and remove the store: on close, or when a server nobody closed is
    collected or the interpreter exits (weakref.finalize)."""
    # Its output first: git may be blocked writing answers nobody will read (a run that
    # stopped on an error between asking and reading), and then exits at once.
    end_process(proc)
    err.close()
    shutil.rmtree(where, ignore_errors=True)


_RUNS = re.compile(rb"@|[-+\\]+")


def _parse(out: bytes) -> Script:
    """The edit script in diff-tree's -U1 output: each run of -/+ lines between context
    lines is one change ("\\ No newline at end of file" belongs to the line before)."""
    lines = out.split(b"\n")
    kinds = b"".join([x[:1] or b" " for x in lines])  # one byte per line
    notes = b"\\" in kinds  # "\ No newline at end of file" lines
    script: Script = []
    i = j = last = 0
    started = False
    for m in _RUNS.finditer(kinds):
        s, e = m.span()
        if kinds[s] == 64:  # "@@ -a,n +b,m @@"
            i, j = _hunk_starts(lines[s])
            last = s + 1
            started = True
            continue
        if not started:
            continue  # the file header's ---/+++ lines
        i += s - last  # context lines
        j += s - last
        if notes:
            d = kinds.count(b"-", s, e)
            a = kinds.count(b"+", s, e)
        else:  # a change lists its removed lines, then its added ones
            d = kinds.find(b"+", s, e)
            d = e - s if d < 0 else d - s
            a = e - s - d
        if d or a:  # not just the last context line's "\ No newline"
            script.append((i, j, d, a))
        i += d
        j += a
        last = e
    return script


def _scratch() -> str:
    """Where the store goes: memory (/dev/shm) where there is one, as creating a file there
    costs microseconds and on a disk up to a millisecond; else the usual temporary folder."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return tempfile.gettempdir()


_STORE = re.compile(r"patchq-diff-(\d+)-[A-Za-z0-9_]+")


def _sweep(where: str) -> None:
    """Remove the stores of runs that were killed before `close` (SIGKILL, or SIGTERM
    from a CI timeout): ours, named for a process that no longer exists."""
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        m = _STORE.fullmatch(name)
        if m is None:
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, ValueError):
            continue
        path = os.path.join(where, name)
        try:
            if os.stat(path).st_uid == os.getuid():
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def _hunk_starts(line: bytes) -> tuple[int, int]:
    """0-based starts of a hunk from "@@ -a[,n] +b[,m] @@": an empty side's number is
    the line before it."""
    parts = line.split(b" ")
    return _start(parts[1][1:]), _start(parts[2][1:])


def _start(field: bytes) -> int:
    pos, _, count = field.partition(b",")
    n = int(pos)
    return n if count == b"0" else n - 1


class CommitDiffs:
    """One `git diff-tree --stdin` in the target that answers commits' own -U0 diffs, one
    commit at a time. diff-tree echoes back (and flushes) any line that is no object id:
    a line of our own after each commit marks where its answer ends."""

    # diff-tree's options, beside `--stdin` (GitRepo.commit_diff asks a commit alone
    # with the same ones where this process died).
    OPTIONS = (
        "--no-ext-diff",
        "--no-textconv",
        "-p",
        "-U0",
        "--no-renames",
        "--no-color",
        "--root",
        "-m",
        "--first-parent",
    )

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self._end = b"\x01patchq-end " + secrets.token_hex(8).encode() + b"\n"
        self._rest = b""
        self._proc = subprocess.Popen(
            ["git", "diff-tree", "--stdin", *self.OPTIONS],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._where = str(root)

    def ask(self, commit: str) -> bytes:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(commit.encode() + b"\n" + self._end)
            self._proc.stdin.flush()
        except OSError:
            self._died()
        fd = self._proc.stdout.fileno()
        buf, start = self._rest, 0
        while True:
            k = buf.find(self._end, start)
            while k > 0 and buf[k - 1] != 10:  # only a whole line is the end line
                k = buf.find(self._end, k + 1)
            if k >= 0:
                self._rest = buf[k + len(self._end) :]
                return buf[:k]
            start = max(0, len(buf) - len(self._end))
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self._died()
            buf += chunk

    def _died(self) -> None:
        self.close()
        raise GitError("git diff-tree stopped answering", self._where)

    def close(self) -> None:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        self._proc.stdout.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
