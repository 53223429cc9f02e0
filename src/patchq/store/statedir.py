"""State kept in the target's `.git/patchq/`: the run lock and where each state file lives.

The lock makes two patchq processes on one target exclusive; a lock left by a process
that no longer runs is taken over, so a killed run never blocks the next one.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from patchq.core.errors import BadInputError, UnsafeStateError
from patchq.store.files import special_kind


def crashpoint(label: str) -> None:
    """Fault injection for the interruption tests: PATCHQ_CRASH_AT=<label> kills this
    process with SIGKILL here (PATCHQ_CRASH_SIGNAL=INT raises Ctrl-C instead, ERR an
    OSError, and PAUSE says `paused at <label>` on stderr and waits for a real signal
    from the test; SIGUSR1 lets it go on). Never set outside tests; costs one dict lookup."""
    if os.environ.get("PATCHQ_CRASH_AT") != label:
        return
    if os.environ.get("PATCHQ_CRASH_SIGNAL") == "INT":
        raise KeyboardInterrupt
    if os.environ.get("PATCHQ_CRASH_SIGNAL") == "PAUSE":
        _pause(label)
        return
    if os.environ.get("PATCHQ_CRASH_SIGNAL") == "ERR":
        raise OSError(f"injected failure at {label}")
    os.kill(os.getpid(), signal.SIGKILL)


class _Resume(Exception):
    """SIGUSR1 from a test: go on from a PAUSE."""


def _resumed(signum: int, frame: object) -> None:
    raise _Resume


_paused: list[str] = []


def _pause(label: str) -> None:
    """Say where, then wait up to 60 s for a test's signal: SIGUSR1 goes on with the run
    (the test has done what it does mid-run), any other ends it as that signal does.
    Once a run: a point passed again (one per patch) goes on at once."""
    if _paused:
        return
    _paused.append(label)
    old = signal.signal(signal.SIGUSR1, _resumed)
    try:
        os.write(2, f"paused at {label}\n".encode())
        time.sleep(60)
    except _Resume:
        pass
    finally:
        signal.signal(signal.SIGUSR1, old)


# The verbs with their own --continue/--abort; the others recover through `recover`.
RECOVERABLE = ("apply", "push", "pop", "goto", "refresh", "rebase")
EXEC_EACH = ".exec-each.json"  # the record of `--exec-each` runs under way, by queue
JOURNAL = "op.json"  # the journal of a command changing things, in its home folder
PATCH_REPO_HOME = ".patchq"  # the journal's home in the patch repo (commands with no target)


def recovery_verb(op: str) -> str:
    """The verb whose --continue/--abort finishes an interrupted `op`."""
    verb = op.split()[0] if op else "recover"
    return verb if verb in RECOVERABLE else "recover"


# A journal records what a command will change, never the bytes (those are copies beside
# it): a megabyte is far beyond any real one, and bounds what a shipped one can cost.
JOURNAL_MAX = 1 << 20


def checked_home(home: Path) -> bool:
    """Whether the journal's folder (`.patchq/`, `.git/patchq/`) is there. It must be a
    real folder: a symlink (`.patchq -> ../elsewhere`, arrived with a clone) or any other
    kind of file is refused (exit 4), and nothing is read, written or deleted through it."""
    try:
        mode = os.lstat(home).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise BadInputError(
            f"{home.name} is a symlink (to {os.readlink(home)}); patchq reads and writes "
            "nothing through it",
            str(home),
            "remove the link",
        )
    if not stat.S_ISDIR(mode):
        raise BadInputError(
            f"{home.name} is {special_kind(mode) or 'a file'}, not patchq's folder",
            str(home),
            "remove it",
        )
    return True


def home_identity(home: Path) -> str:
    """The folder's identity on this machine (device and inode): a journal records its
    home's, so a copy of the folder (a clone, a tarball) never matches it."""
    st = os.lstat(home)
    return f"{st.st_dev}:{st.st_ino}"


class ForeignJournalError(UnsafeStateError):
    """A journal patchq did not write in this folder on this machine: never replayed."""


def foreign(home: Path) -> ForeignJournalError:
    return ForeignJournalError(
        "a journal patchq did not write here (it came with a clone or a tarball); "
        "patchq never replays it",
        str(home / JOURNAL),
        f"read it, then remove {home.name}/ (`rm -r {home}`)",
    )


def read_journal(home: Path) -> tuple[dict[str, object], bool] | None:
    """The journal in `home` and whether it is foreign (not written in this folder on
    this machine); None when there is none, or it was torn while being written (removed:
    its command had changed nothing yet). Read from its `lstat`: a symlink, a FIFO, a
    device or one over JOURNAL_MAX is refused (exit 4) without being opened."""
    if not checked_home(home):
        return None
    path = home / JOURNAL
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else special_kind(st.st_mode)
        raise BadInputError(
            f"{JOURNAL} is {kind}, not a journal; patchq does not open it",
            str(path),
            f"remove it (`rm {path}`)",
        )
    if st.st_size > JOURNAL_MAX:
        raise BadInputError(
            f"{JOURNAL} is {st.st_size} bytes, far beyond any journal patchq writes",
            str(path),
            f"remove it (`rm {path}`)",
        )
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        data = os.read(fd, JOURNAL_MAX + 1)
    finally:
        os.close(fd)
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        path.unlink(missing_ok=True)  # torn while being written
        return None
    return doc, doc.get("home_id") != home_identity(home)


def _refuse_interrupted(home: Path, what: str) -> None:
    """A journal left by a killed command: nothing may run until it is finished or undone.
    A foreign one (arrived with a clone) is refused as what it is: never replayed."""
    found = read_journal(home)
    if found is None:
        return
    doc, alien = found
    if alien:
        raise foreign(home)
    op = doc.get("op", "command")
    verb = recovery_verb(str(op))
    raise UnsafeStateError(
        f"an interrupted `patchq {op}` left the {what} half-changed",
        str(home / JOURNAL),
        f"`patchq {verb} --continue` to finish it, or `patchq {verb} --abort` to undo it",
    )


def _refuse_killed_runs(state_dir: Path) -> None:
    """`--exec-each` runs a kill cut short left the stack at one patch: nothing may move
    it until `rebase --continue` makes the rest or `--abort` gives the stack back."""
    for path in sorted(state_dir.glob(f"*{EXEC_EACH}")):
        raise UnsafeStateError(
            "an interrupted `patchq rebase --exec-each` left the stack at the patch it "
            "was building",
            str(path),
            "`patchq rebase --continue` makes the rest of the runs, `patchq rebase "
            "--abort` checks the whole stack out again",
        )


# How long a writer waits for another patchq's lock before it says it is busy (exit 5):
# at once by default; `--wait[=SECONDS]` sets it for the run (cli/group.py).
_WAIT = [0.0]


def set_wait(seconds: float) -> None:
    """How long this run's writers wait for a lock another patchq holds."""
    _WAIT[0] = seconds


def _command_of(pid: int) -> str:
    """`patchq VERB …` as process `pid` was started, or `patchq` where it cannot be read."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "patchq"
    words = [a.decode("utf-8", "replace") for a in argv if a]
    for i, w in enumerate(words):
        if w == "patchq" or w.endswith("/patchq"):
            return " ".join(["patchq", *words[i + 1 :]])[:120]
    return "patchq"


def _flock_holder(path: Path) -> int | None:
    """The process holding a flock on `path` (from /proc/locks), or None."""
    try:
        ino = os.stat(path).st_ino
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if "->" in parts or "FLOCK" not in parts or len(parts) < 6:
            continue
        if parts[5].rsplit(":", 1)[-1] == str(ino) and parts[4].isdigit():
            return int(parts[4])
    return None


def busy(path: Path, pid: int | None) -> UnsafeStateError:
    """`busy: patchq guard … (pid N) holds PATH` (exit 5)."""
    who = f"{_command_of(pid)} (pid {pid})" if pid else "another patchq"
    return UnsafeStateError(
        f"busy: {who} holds {path}", None, "wait for it to finish, or run with --wait[=SECONDS]"
    )


class _Expired(Exception):
    """The time `--wait` gave for a lock ran out."""


def _expired(signum: int, frame: object) -> None:
    raise _Expired


def _locked(fd: int, path: Path, holder: Callable[[], int | None]) -> None:
    """Take the flock on `fd`; held by another, wait for it as long as this run may (a
    blocking flock, ended by a timer), else say who is busy (exit 5)."""
    if _try_flock(fd):
        return
    if _WAIT[0] <= 0:
        raise busy(path, holder())
    try:
        old = signal.signal(signal.SIGALRM, _expired)
    except ValueError:  # not the main thread: no timer to end a blocking wait
        old = None
    try:
        if old is None:
            deadline = time.monotonic() + _WAIT[0]
            while not _try_flock(fd):
                if time.monotonic() >= deadline:
                    raise _Expired
                time.sleep(0.05)
        else:
            signal.setitimer(signal.ITIMER_REAL, _WAIT[0])
            fcntl.flock(fd, fcntl.LOCK_EX)
    except _Expired:
        raise busy(path, holder()) from None
    finally:
        if old is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


# The patch repos this process holds the lock of, with how many holds are open: a
# writer takes it before it reads `series` (cli/group.py), and the command's own hold
# inside is the same lock, not a second one that would wait for the first.
_HELD: dict[Path, int] = {}


@contextmanager
def repo_lock(root: Path, recovering: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on the patch repo folder (flock on its directory, so no
    file is added to the user's repo, and a killed holder releases it by dying). A
    second writer says it is busy (exit 5) at once, or waits as `--wait` lets it.
    Refuses to start over an interrupted command's journal kept in the patch repo,
    unless `recovering`. Held already by this process, it is held once more."""
    key = Path(os.path.realpath(root))
    if key in _HELD:
        _HELD[key] += 1
        try:
            if not recovering:
                _refuse_interrupted(root / PATCH_REPO_HOME, "patch repo")
            yield
        finally:
            _HELD[key] -= 1
        return
    fd = os.open(root, os.O_RDONLY)
    try:
        _locked(fd, root, lambda: _flock_holder(root))
        _HELD[key] = 1
        if not recovering:
            _refuse_interrupted(root / PATCH_REPO_HOME, "patch repo")
        yield
    finally:
        _HELD.pop(key, None)
        os.close(fd)  # releases the lock


@contextmanager
def run_lock(
    state_dir: Path, patch_root: Path | None = None, recovering: bool = False
) -> Iterator[None]:
    """Hold `.git/patchq/lock` (and the patch repo's lock) for the duration of a mutating
    command; refuse to start over an interrupted command's journal unless `recovering`."""
    if patch_root is not None:
        with repo_lock(patch_root, recovering=recovering), run_lock(state_dir, None, recovering):
            yield
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "lock"
    # flock, not a pid file: taking it is atomic and it dies with its holder, so there is
    # no stale lock to judge. The file is removed on release (nothing is left behind in
    # .git); whoever locked a file that was removed meanwhile sees another inode at the
    # path and tries again.
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

        def holder(fd: int = fd) -> int | None:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(text) if text.isdigit() else None

        try:
            _locked(fd, path, holder)
        except UnsafeStateError:
            os.close(fd)
            raise
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # for the message of whoever waits
        if not recovering:
            _refuse_interrupted(state_dir, "target")
            _refuse_killed_runs(state_dir)
        yield
    finally:
        path.unlink(missing_ok=True)  # before the close: nobody can lock this inode after
        os.close(fd)


def lock_holder(state_dir: Path) -> int | None:
    """The pid of the patchq that holds the target's run lock now (0 if it wrote none),
    or None when no command is running: a journal with a live holder is a command at
    work, not one that was interrupted. Tested with a shared lock taken and released at
    once, so no file is created."""
    try:
        fd = os.open(state_dir / "lock", os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(pid) if pid.isdigit() else 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def rebase_state_path(state_dir: Path, queue: str) -> Path:
    """The record of `queue`'s rebase in progress: it exists exactly while one is stopped."""
    return state_dir / f"{queue}.rebase.json"


def exec_progress_path(state_dir: Path, queue: str) -> Path:
    """The record of `queue`'s `--exec-each` runs under way: it exists while they run
    (and after a kill during one, for `status`, `recover` and `rebase --continue`)."""
    return state_dir / f"{queue}{EXEC_EACH}"


def last_rebase_path(state_dir: Path, queue: str) -> Path:
    """The record of `queue`'s last finished rebase, which `report` reads."""
    return state_dir / f"{queue}.last-rebase.json"
