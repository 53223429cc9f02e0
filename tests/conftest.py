"""Hermetic test fixtures: real git repositories in temporary folders, no mocks of git.

Every test runs with its own HOME, no system or global git config, fixed dates and
GIT_EDITOR=false, so results are reproducible and the developer's setup cannot leak in.

The tests mirror the package: tests/core/, git/, store/, formats/, stack/, rebase/,
commands/ and cli/ test those folders of src/patchq; tests/hostile/ holds the hostile
inputs' tests (their patches are in tests/data/hostile/) and tests/project/ the checks of
the repository as a whole (layers, docs, the design's sections, the README, bench).
Fixtures shared by all live here; tests/project/test_layout.py keeps the layout.
"""

from __future__ import annotations

import compileall
import faulthandler
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
# The developer's real home, read before any test seals the environment.
REAL_HOME = Path(os.path.expanduser("~"))
# What a run of patchq or git could write in a home: git's global config and credentials
# (and the lock git takes to write them), and patchq's own names. Only these are
# watched: the real home is shared with every other program on the machine (a shell's
# history, a package manager's cache, another checkout's test run), and their files are
# none of a test's doing.
HOME_FILES = (
    ".gitconfig",
    ".gitconfig.lock",
    ".git-credentials",
    ".config/git",
    ".config/patchq",
    ".patchq",
    ".cache/patchq",
    ".local/share/patchq",
)
HomePrint = dict[str, str | None]


def home_print(home: Path) -> HomePrint:
    """The content of each file git or patchq could write under `home` (a folder's files
    one by one), by hash, or None where it is absent. Contents, not times: a program
    that only reads or rewrites the same bytes changes nothing."""
    out: HomePrint = {}
    for name in HOME_FILES:
        path = home / name
        if path.is_dir() and not path.is_symlink():
            found = sorted(p for p in path.rglob("*") if not p.is_dir())
            out[name] = None if found else "(empty folder)"
            for p in found:
                out[str(p.relative_to(home))] = _digest(p)
        else:
            out[name] = _digest(path)
    return out


def _digest(path: Path) -> str | None:
    try:
        if path.is_symlink():
            return "-> " + os.readlink(path)
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def home_touched(before: HomePrint, after: HomePrint) -> list[str]:
    """The watched names a test created, removed or changed."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


# Hypothesis' own clocks, the per-example deadline and the too-slow health check, fail a
# test when the machine is busy, not when patchq is slow: neither is used.
settings.register_profile("patchq", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("patchq")

# Where wall-clock measurements go (bench/wall_clock.py sets it), read before any test
# seals the environment.
WALL_CLOCK = os.environ.get("PATCHQ_WALL_CLOCK")


def wall_clock(
    what: str, seconds: float, at_most: float | None = None, at_least: float | None = None
) -> None:
    """Record a wall-clock measurement and its bound, for bench/wall_clock.py to judge. A
    test never asserts one: elapsed time says as much about the machine's load as about
    patchq, so a bound asserted here flakes on a busy machine. Recorded only when
    PATCHQ_WALL_CLOCK names a file."""
    if WALL_CLOCK:
        record = {"what": what, "seconds": seconds, "at_most": at_most, "at_least": at_least}
        with open(WALL_CLOCK, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


@pytest.fixture(autouse=True, scope="session")
def byte_compiled_children(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Child `python -m patchq` runs load byte-compiled modules, as an installed patchq
    does. Where PYTHONDONTWRITEBYTECODE is set, a child run from the sources compiles
    every module again (about 0.15 s a run: most of the kill tests' time), so the
    children run a byte-compiled copy of the sources, taken when the session starts."""
    if not sys.dont_write_bytecode:
        yield
        return
    copy = tmp_path_factory.mktemp("src")
    shutil.copytree(
        ROOT / "src" / "patchq", copy / "patchq", ignore=shutil.ignore_patterns("__pycache__")
    )
    compileall.compile_dir(str(copy / "patchq"), quiet=1)
    path = os.pathsep.join(p for p in (str(copy), os.environ.get("PYTHONPATH", "")) if p)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", path)
        yield


HANG_SECONDS = 240


class TestHung(Exception):
    """A test ran past HANG_SECONDS: stopped, so that the suite ends and names it."""


@pytest.fixture(autouse=True)
def hang_guard() -> Iterator[None]:
    """Fails a test that runs longer than HANG_SECONDS instead of letting it hang the run:
    a wait that never ends (a pipe nobody drains, a child that never answers) fails with
    every thread's stack on stderr, and CI ends naming the test. The slowest test takes
    about 30 s on a loaded two-core machine."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def hung(signum: int, frame: object) -> None:
        faulthandler.dump_traceback(all_threads=True)
        raise TestHung(f"the test ran longer than {HANG_SECONDS} s")

    # SIGUSR2 from a timer thread, not SIGALRM: patchq's own Ctrl-C handling, run in
    # process by the CLI tests, uses SIGALRM and its timer.
    previous = signal.signal(signal.SIGUSR2, hung)
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(HANG_SECONDS, signal.pthread_kill, (main, signal.SIGUSR2))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR2, previous)


@pytest.fixture(autouse=True)
def home_tripwire() -> Iterator[None]:
    """Fails any test that writes, in the real home directory, a file git or patchq could
    write there: every test's HOME is sealed (`sealed_env`), so only
    a test that reaches past the seal can."""
    before = home_print(REAL_HOME)
    yield
    touched = home_touched(before, home_print(REAL_HOME))
    assert not touched, f"the test touched the real home {REAL_HOME}: {touched}"


@pytest.fixture(autouse=True)
def sealed_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(("GIT_", "PATCHQ_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Up Stream")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "up@example.org")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Up Stream")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "up@example.org")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1700000000 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1700000000 +0000")
    monkeypatch.setenv("GIT_EDITOR", "false")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("LC_ALL", "C")
    yield


def git(cwd: Path, *args: str, input: bytes | None = None, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def new_repo(path: Path, files: dict[str, str], message: str = "base") -> str:
    """A new git repository at `path` on `main` whose first commit holds `files` (name →
    text); that commit's id."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD").strip()


@dataclass
class Upstream:
    """A git repository the tests write files into and commit."""

    path: Path

    def write(self, name: str, data: str | bytes) -> Upstream:
        p = self.path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        return self

    def read(self, name: str) -> bytes:
        return (self.path / name).read_bytes()

    def remove(self, name: str) -> Upstream:
        git(self.path, "rm", "-q", name)
        return self

    def commit(self, message: str = "upstream change") -> str:
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD").strip()

    def git(self, *args: str) -> str:
        return git(self.path, *args)

    def diff(self, *args: str) -> bytes:
        proc = subprocess.run(
            ["git", "diff", *args], cwd=self.path, capture_output=True, check=True
        )
        return proc.stdout


@dataclass
class Queue:
    """A patch repo folder: series, patches/ and patchq.toml."""

    path: Path

    def add(self, name: str, data: bytes | str, suffix: str = "") -> Queue:
        p = self.path / "patches" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        with (self.path / "series").open("a") as f:
            f.write(name + suffix + "\n")
        return self

    def series(self) -> str:
        return (self.path / "series").read_text()

    def lock(self) -> bytes:
        return (self.path / "series.lock").read_bytes()


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    path = tmp_path / "upstream"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return Upstream(path)


@pytest.fixture
def queue(tmp_path: Path) -> Queue:
    path = tmp_path / "queue"
    (path / "patches").mkdir(parents=True)
    (path / "series").write_text("")
    (path / "patchq.toml").write_text('target = "../upstream"\n')
    return Queue(path)


@contextmanager
def held_lock(path: Path) -> Iterator[int]:
    """Another process holding patchq's flock on `path` (as a running patchq would), with
    its pid written in the file; yields that pid, and kills the holder on exit."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, os, sys, time\n"
                f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                "os.pwrite(fd, b'%d\\n' % os.getpid(), 0)\n"
                "print('held', flush=True)\n"
                "time.sleep(30)\n"
            ),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_patchq(*args: str, cwd: Path | None = None, input: bytes | None = None) -> Result:
    """Run the real CLI in a subprocess, as a user would."""
    proc = subprocess.run(
        [sys.executable, "-m", "patchq", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=os.environ.copy(),
    )
    return Result(
        proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    )


def run_inprocess(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    """Run the CLI's `main` in this process (fast); output captured from stdout/stderr."""
    from patchq.cli.main import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return Result(code, out, err)


# `patchq(*args)`: the CLI run on the `queue` patch repo, in process.
Runner = Callable[..., Result]


@pytest.fixture
def patchq(queue: Queue, capsys: pytest.CaptureFixture[str]) -> Runner:
    """`patchq(...)` runs the CLI on the `queue` patch repo, in process."""

    def run(*args: str) -> Result:
        return run_inprocess(capsys, "--dir", str(queue.path), *args)

    return run


def line_series(up: Upstream, queue: Queue, n: int, new_every: int | None = None) -> str:
    """A base commit with one long file and `n` one-line patches down it (plus a patch
    creating a file after every `new_every`-th); returns the base commit."""
    up.write("f.txt", "".join(f"line {i}\n" for i in range(4 * n + 10)))
    base = up.commit("base")
    for i in range(n):
        queue.add(
            f"{i:04d}.patch",
            f"--- a/f.txt\n+++ b/f.txt\n@@ -{4 * i + 2},3 +{4 * i + 2},3 @@\n"
            f" line {4 * i + 1}\n-line {4 * i + 2}\n+LINE {4 * i + 2}\n line {4 * i + 3}\n",
        )
        if new_every and i % new_every == 0:
            queue.add(
                f"{i:04d}-new.patch",
                f"--- /dev/null\n+++ b/dir{i}/new.txt\n@@ -0,0 +1 @@\n+new {i}\n",
            )
    return base
