"""Nothing outside the named output is touched.

Every path a person names as output goes through one writer (`store/outputs`): a
character device or a FIFO is written through in place, `/dev/fd/N` is the open
descriptor N, a symlink is followed and its end written (atomically when it is a regular
file), only a regular file is replaced by a temporary file and a rename, and a folder, a
socket or a block device is refused with exit 4 before anything is written. A rename
onto a device's name (`report -o /dev/null` run as root) replaced the device node for
every program on the machine.

Each attack uses a node or link made in the test's own temporary folder, never a system
path: the character device is a node made with `os.mknod` with the numbers of the null
device (written to, it keeps nothing), where the machine permits it.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import pytest

from patchq.cli.main import cli
from patchq.core.errors import BadInputError
from patchq.store import outputs

from ..conftest import Queue, Result, Runner, Upstream

# Every click.Path parameter of every command, by (command, parameter): what it names.
# A new option that takes a path must be added to one of the two tables, so a new output
# cannot skip the writer and this test's attacks.
# codemod's --out folder and its $SVP_RESULT are attacked in tests/cli/test_codemod.py.
OUTPUT_FILES = {("report", "out"), ("export", "mbox"), ("export", "script")}
OUTPUT_FOLDERS = {("export", "quilt"), ("demo", "folder"), ("codemod", "out")}
INPUTS = {
    ("", "dir_"),
    ("", "target"),
    ("import", "files"),
    ("import", "mbox"),
    ("import", "quilt"),
    ("import", "order"),
    ("codemod", "list_file"),
}


def _path_params(group: click.Group, prefix: str = "") -> set[tuple[str, str]]:
    found = {(prefix, p.name or "") for p in group.params if isinstance(p.type, click.Path)}
    for name, cmd in group.commands.items():
        full = f"{prefix} {name}".strip()
        if isinstance(cmd, click.Group):
            found |= _path_params(cmd, full)
        else:
            found |= {(full, p.name or "") for p in cmd.params if isinstance(p.type, click.Path)}
    return found


def test_every_path_option_is_known_as_an_input_or_an_output() -> None:
    assert _path_params(cli) == OUTPUT_FILES | OUTPUT_FOLDERS | INPUTS


@pytest.fixture
def applied(upstream: Upstream, queue: Queue, patchq: Runner) -> Runner:
    """A one-patch series applied, locked and rebased once, so report, export and the
    script all have something to write."""
    upstream.write("a.txt", "".join(f"line {i}\n" for i in range(20))).write("b.txt", "b\n")
    base = upstream.commit("base")
    upstream.write("a.txt", upstream.read("a.txt").decode().replace("line 7\n", "LINE 7\n"))
    upstream.commit("downstream work")
    queue.add("work.patch", upstream.git("format-patch", "--stdout", "-1"))
    upstream.git("reset", "-q", "--hard", base)
    new = upstream.write("b.txt", "b moved\n").commit("upstream moves")
    upstream.git("checkout", "-q", base)
    r = patchq("apply", "--onto", base)
    assert r.code == 0, r.err
    r = patchq("rebase", "--onto", new)
    assert r.code == 0, r.err
    return patchq


# The file outputs, as (arguments before the path, arguments after it).
FILE_COMMANDS = {
    "report": (("report", "-o"), ()),
    "report-md": (("report", "--format", "md", "-o"), ()),
    "mbox": (("export", "--mbox"), ()),
    "script": (("export", "--script"), ()),
}


def _expected(run: Runner, tmp_path: Path, kind: str) -> bytes:
    """What the command writes to a plain new file."""
    plain = tmp_path / f"plain-{kind}"
    before, after = FILE_COMMANDS[kind]
    r = run(*before, str(plain), *after)
    assert r.code == 0, r.err
    data = plain.read_bytes()
    assert data
    return data


def _run(run: Runner, kind: str, path: Path) -> Result:
    before, after = FILE_COMMANDS[kind]
    return run(*before, str(path), *after)


@contextmanager
def fifo_reader(path: Path) -> Iterator[list[bytes]]:
    """A FIFO at `path` with a reader draining it on a thread; yields what it read."""
    os.mkfifo(path)
    got: list[bytes] = []

    def drain() -> None:
        with open(path, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    try:
        yield got
    finally:
        if t.is_alive():  # nobody wrote: open it once so the reader ends
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        t.join(10)


def null_node(path: Path) -> None:
    """A character device node at `path` with the null device's numbers, or a skip."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        fd = os.open(path, os.O_WRONLY)
        os.close(fd)
    except (PermissionError, OSError) as e:
        pytest.skip(f"this machine permits no character device node in a temporary folder: {e}")


def _snapshot(folder: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every name under `folder` with its type and content (a link: its target)."""
    out: dict[str, tuple[int, bytes | str]] = {}
    for p in sorted(folder.rglob("*")):
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            out[str(p.relative_to(folder))] = (stat.S_IFMT(st.st_mode), os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            out[str(p.relative_to(folder))] = (stat.S_IFMT(st.st_mode), p.read_bytes())
        else:
            out[str(p.relative_to(folder))] = (stat.S_IFMT(st.st_mode), b"")
    return out


@pytest.mark.parametrize("kind", sorted(FILE_COMMANDS))
def test_a_fifo_is_written_through_in_place(applied: Runner, tmp_path: Path, kind: str) -> None:
    want = _expected(applied, tmp_path, kind)
    fifo = tmp_path / "pipe"
    with fifo_reader(fifo) as got:
        r = _run(applied, kind, fifo)
    assert r.code == 0, r.err
    assert got == [want]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not stat.S_IMODE(os.lstat(fifo).st_mode) & 0o111  # the script's chmod skipped it


@pytest.mark.parametrize("kind", sorted(FILE_COMMANDS))
def test_a_symlink_is_followed_and_its_target_written(
    applied: Runner, tmp_path: Path, kind: str
) -> None:
    want = _expected(applied, tmp_path, kind)
    real = tmp_path / "elsewhere" / "real.out"
    real.parent.mkdir()
    real.write_bytes(b"old\n")
    real.chmod(0o640)
    chain = tmp_path / "link2"
    chain.symlink_to("elsewhere/real.out")
    link = tmp_path / "link"
    link.symlink_to(chain)
    r = _run(applied, kind, link)
    assert r.code == 0, r.err
    assert os.readlink(link) == str(chain) and os.readlink(chain) == "elsewhere/real.out"
    assert real.read_bytes() == want
    assert stat.S_IMODE(real.stat().st_mode) == (0o751 if kind == "script" else 0o640)
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.out"]  # no temporary left


@pytest.mark.parametrize("kind", sorted(FILE_COMMANDS))
def test_a_dangling_symlink_makes_its_target(applied: Runner, tmp_path: Path, kind: str) -> None:
    want = _expected(applied, tmp_path, kind)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "made" / "here.out")
    r = _run(applied, kind, link)
    assert r.code == 0, r.err
    assert link.is_symlink() and (tmp_path / "made" / "here.out").read_bytes() == want


@pytest.mark.parametrize("kind", sorted(FILE_COMMANDS))
def test_a_symlink_to_a_fifo_writes_the_fifo(applied: Runner, tmp_path: Path, kind: str) -> None:
    want = _expected(applied, tmp_path, kind)
    fifo = tmp_path / "pipe"
    link = tmp_path / "link"
    link.symlink_to("pipe")
    with fifo_reader(fifo) as got:
        r = _run(applied, kind, link)
    assert r.code == 0, r.err
    assert got == [want] and link.is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("kind", sorted(FILE_COMMANDS))
def test_a_character_device_is_written_in_place_never_replaced(
    applied: Runner, tmp_path: Path, kind: str
) -> None:
    node = tmp_path / "null"
    null_node(node)
    before = os.lstat(node)
    for name in (node, tmp_path / "to-null"):
        if name != node:
            name.symlink_to(node)
        r = _run(applied, kind, name)
        assert r.code == 0, r.err
        after = os.lstat(node)
        assert stat.S_ISCHR(after.st_mode), "the device node was replaced"
        assert (after.st_ino, after.st_rdev, after.st_mode) == (
            before.st_ino,
            before.st_rdev,
            before.st_mode,
        )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("kind", sorted(FILE_COMMANDS))
def test_a_folder_a_socket_or_a_block_device_is_refused(
    applied: Runner, tmp_path: Path, kind: str
) -> None:
    attacks = tmp_path / "attacks"
    attacks.mkdir()
    (attacks / "folder").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    named: list[Path] = [attacks / "folder"]
    try:
        sock.bind(str(attacks / "sock"))
        named.append(attacks / "sock")
    except OSError:
        pass  # a path too long for a socket address: the folder and links still run
    (attacks / "to-folder").symlink_to("folder")
    named.append(attacks / "to-folder")
    try:
        os.mknod(attacks / "block", stat.S_IFBLK | 0o600, os.makedev(7, 250))
        named.append(attacks / "block")
    except OSError:
        pass  # not permitted here: the other kinds still run
    try:
        before = _snapshot(attacks)
        for path in named:
            r = _run(applied, kind, path)
            assert r.code == 4, (path, r.err)
            assert r.err.count("\n") == 1 and str(path) in r.err, r.err
            assert _snapshot(attacks) == before
    finally:
        sock.close()


def test_dev_fd_writes_the_open_descriptor(applied: Runner, queue: Queue, tmp_path: Path) -> None:
    """`-o /dev/fd/N` (bash's `>(…)`) is the descriptor patchq was given, written as it
    is: reached through a link made here, so no test names a system path itself."""
    want = _expected(applied, tmp_path, "report")
    read_end, write_end = os.pipe()
    link = tmp_path / "to-fd"
    link.symlink_to(f"/proc/self/fd/{write_end}")
    env = os.environ.copy()
    proc = subprocess.Popen(
        [sys.executable, "-m", "patchq", "--dir", str(queue.path), "report", "-o", str(link)],
        pass_fds=(write_end,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        got = f.read()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert got == want and link.is_symlink()


def test_a_descriptor_that_is_not_open_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "to-fd"
    link.symlink_to("/proc/self/fd/987")
    with pytest.raises(BadInputError, match="descriptor 987 is not open"):
        outputs.target(link)
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    with pytest.raises(BadInputError, match="symlinks"):
        outputs.target(loop)
    with pytest.raises(BadInputError, match="on the way"):
        (tmp_path / "file").write_text("x")
        outputs.target(tmp_path / "file" / "out")


def test_export_quilt_writes_each_file_through_the_writer(applied: Runner, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    assert applied("export", "--quilt", str(plain)).code == 0
    want = {p.name: p.read_bytes() for p in plain.iterdir()}
    assert set(want) == {"series", "work.patch"}

    # The folder itself through a link; its series a FIFO; its patch a link elsewhere.
    real = tmp_path / "real-dir"
    real.mkdir()
    out = tmp_path / "out"
    out.symlink_to("real-dir")
    away = tmp_path / "away.patch"
    (real / "work.patch").symlink_to(away)
    with fifo_reader(real / "series") as got:
        r = applied("export", "--quilt", str(out))
    assert r.code == 0, r.err
    assert got == [want["series"]] and stat.S_ISFIFO(os.lstat(real / "series").st_mode)
    assert (real / "work.patch").is_symlink() and away.read_bytes() == want["work.patch"]

    # A character device for the patch: written in place; the node stays.
    dev = tmp_path / "dev-dir"
    dev.mkdir()
    null_node(dev / "work.patch")
    r = applied("export", "--quilt", str(dev))
    assert r.code == 0, r.err
    assert stat.S_ISCHR(os.lstat(dev / "work.patch").st_mode)
    assert (dev / "series").read_bytes() == want["series"]


def test_export_quilt_refuses_before_writing_anything(applied: Runner, tmp_path: Path) -> None:
    # The patch's name is a folder: refused, and the series (judged first or not) unwritten.
    box = tmp_path / "box"
    (box / "work.patch").mkdir(parents=True)
    r = applied("export", "--quilt", str(box))
    assert r.code == 4 and str(box / "work.patch") in r.err, r.err
    assert sorted(p.name for p in box.iterdir()) == ["work.patch"]
    # The folder named is a FIFO or a file: refused, nothing made.
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("keep\n")
    for bad in (tmp_path / "fifo", tmp_path / "file"):
        before = _snapshot(tmp_path)
        r = applied("export", "--quilt", str(bad))
        assert r.code == 4 and "not a folder" in r.err, r.err
        assert _snapshot(tmp_path) == before


def test_demo_folder_is_a_folder_or_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from ..conftest import run_inprocess

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("keep\n")
    null_node(tmp_path / "null")
    for bad in ("fifo", "file", "null"):
        before = _snapshot(tmp_path)
        r = run_inprocess(capsys, "demo", str(tmp_path / bad))
        assert r.code == 4 and "not a folder" in r.err, r.err
        assert _snapshot(tmp_path) == before
    # A link to a folder not made yet: the demo makes it and works there; the link stays.
    link = tmp_path / "tour"
    link.symlink_to("made/tour")
    r = run_inprocess(capsys, "demo", str(link))
    assert r.code == 0, r.err
    assert link.is_symlink() and (tmp_path / "made" / "tour" / "patches-repo" / "series").is_file()


def test_every_output_goes_through_the_writer() -> None:
    """No command module writes a named output itself: the writer is the one place that
    renames or opens an output, so the attacks above cover every command."""
    src = Path(outputs.__file__).resolve().parents[1]
    offenders = []
    for name in ("report", "export", "script"):
        text = (src / "commands" / f"{name}.py").read_text()
        if "atomic_write" in text or "os.replace" in text or "os.chmod" in text:
            offenders.append(name)
    assert not offenders
