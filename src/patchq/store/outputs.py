"""The one writer for the paths a person names as output (`report -o`, `export --mbox`,
`export --script`, each file `export --quilt DIR` writes, `demo FOLDER`).

A named output is whatever the name leads to, and patchq writes only that:
- a character device or a FIFO is written through in place (`-o /dev/tty`, a named pipe);
- `/dev/fd/N` (and `/dev/stdout`, `/proc/self/fd/N`: `-o >(gh pr create -F -)`) is
  written to the open descriptor N, as the shell's `>` would;
- a symlink is followed to its end and that is written, so the link stays a link;
- only a regular file (or nothing yet) is written through a temporary file and a rename
  beside it, all or nothing, keeping the file's mode;
- a folder, a socket or a block device is refused (exit 4) before anything is written.
Where a name leads is decided by `lstat` at every step, never by `stat`'s guess: a
rename onto a device's name would replace the device node for every program on the
machine.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from patchq.core.errors import BadInputError, FaultError, UnsafeStateError
from patchq.store.files import atomic_write, special_kind

# How many symlinks a name may pass through, as the kernel's own bound (ELOOP).
MAX_LINKS = 40
# The folder of this process's open descriptors, as `realpath` spells /dev/fd.
_FD_DIR = re.compile(r"/proc/(\d+)(?:/task/\d+)?/fd")

How = Literal["descriptor", "in place", "replace", "create"]


@dataclass(frozen=True, slots=True)
class Output:
    """Where a named output goes: an open descriptor, a device or FIFO written in place,
    or a regular file replaced or created at `path` (the named path, links followed)."""

    named: Path
    how: How
    path: Path
    fd: int = -1


def _kind_word(mode: int) -> str | None:
    """What a file that patchq refuses to write is, or None."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode) or stat.S_ISBLK(mode):
        return special_kind(mode)
    return None


def _refuse(named: Path, word: str) -> BadInputError:
    return BadInputError(
        f"is {word}, not a file; patchq writes only files, devices and pipes",
        str(named),
        "name a file",
    )


def _descriptor(named: Path, fd: int) -> Output:
    """The open descriptor `fd` that `/dev/fd/N` names, checked as a named file is."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        raise BadInputError(
            f"descriptor {fd} is not open in patchq", str(named), "name a file"
        ) from None
    word = _kind_word(mode)
    if word is not None and not stat.S_ISSOCK(mode):  # an open socket is the caller's own
        raise _refuse(named, word)
    return Output(named, "descriptor", named, fd)


@dataclass(frozen=True, slots=True)
class _End:
    """Where a name's links end: the path there and its `lstat` mode (None: nothing is
    there yet), or the open descriptor it names."""

    path: Path
    mode: int | None
    fd: int = -1


def _follow(named: Path) -> _End:
    """Follow `named` through every symlink, one `lstat` a step, to what it leads to."""
    cur = Path(os.path.abspath(named))
    for _ in range(MAX_LINKS):
        parent = Path(os.path.realpath(cur.parent))
        fd_dir = _FD_DIR.fullmatch(str(parent))
        if fd_dir and int(fd_dir.group(1)) == os.getpid() and cur.name.isdigit():
            return _End(parent / cur.name, None, int(cur.name))
        here = parent / cur.name
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return _End(here, None)
        except NotADirectoryError:
            raise BadInputError(
                "a folder on the way to it is a file", str(named), "name another path"
            ) from None
        except OSError as e:
            raise FaultError.from_os(e, "read", str(named)) from None
        if not stat.S_ISLNK(mode):
            return _End(here, mode)
        cur = Path(os.path.normpath(parent / os.readlink(here)))
    raise BadInputError(f"leads through more than {MAX_LINKS} symlinks", str(named), "name a file")


def target(named: Path) -> Output:
    """Where writing `named` would go (see the module's rules); refused (exit 4) for a
    folder, a socket, a block device or a loop of links. Writes nothing."""
    end = _follow(named)
    if end.fd >= 0:
        return _descriptor(named, end.fd)
    if end.mode is None:
        return Output(named, "create", end.path)
    word = _kind_word(end.mode)
    if word is not None:
        raise _refuse(named, word)
    if stat.S_ISCHR(end.mode) or stat.S_ISFIFO(end.mode):
        return Output(named, "in place", end.path)
    return Output(named, "replace", end.path)


def folder(named: Path) -> Path:
    """The folder that writing into `named` would use, links followed; refused (exit 4)
    when it is anything but a folder or nothing yet (a FIFO, a device, a file). Writes
    nothing: the caller makes it, so a refusal leaves no folder behind."""
    end = _follow(named)
    if end.mode is not None and stat.S_ISDIR(end.mode):
        return end.path
    if end.mode is None and end.fd < 0:
        return end.path
    kind = "an open descriptor" if end.fd >= 0 else special_kind(end.mode or 0) or "a file"
    raise BadInputError(f"is {kind}, not a folder", str(named), "name a folder")


def write(named: Path, data: bytes, executable: bool = False) -> Output:
    """Write `data` where `named` leads (see the module's rules) and say where it went.
    `executable`: a file created or replaced gets its execute bits (a device, a FIFO or a
    descriptor is never chmod-ed)."""
    out = target(named)
    if out.how == "descriptor":
        _write_all(out.fd, data, named)
    elif out.how == "in place":
        _write_in_place(out.path, data, named)
    else:
        atomic_write(out.path, data, mode_bits=0o111 if executable else 0)
    return out


def _write_in_place(path: Path, data: bytes, named: Path) -> None:
    """Open the device or FIFO at `path` without following a link or creating a file
    (O_NOFOLLOW, no O_CREAT: a name swapped since the `lstat` fails instead of being
    made), check it is still one, and write."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOENT):
            raise UnsafeStateError(
                "changed while patchq was about to write it", str(named), "run the command again"
            ) from None
        raise FaultError.from_os(e, "write", str(named)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
            raise UnsafeStateError(
                "changed while patchq was about to write it", str(named), "run the command again"
            )
        _write_all(fd, data, named)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes, named: Path) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError as e:
        raise FaultError.from_os(e, "write", str(named)) from None
