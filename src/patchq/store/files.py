"""Atomic writes for the files patchq owns (series, patches, lock, state), confined to
the folder they belong to."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from patchq.core.errors import BadInputError, FaultError, UnsafeStateError

_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def special_kind(mode: int) -> str | None:
    """What a file that is neither a regular file nor a folder is, or None."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return _KINDS.get(stat.S_IFMT(mode), "no regular file")


def read_regular(path: Path, allow_pipe: bool = False) -> bytes:
    """The bytes of the regular file at `path` (through symlinks). A FIFO, a device or a
    socket is refused (exit 4) from its `stat`, without being opened: opening a FIFO
    waits for a writer, reading a device may never end. `allow_pipe`: a pipe the user
    named (`import <(curl …)`) is read to its end. A missing file raises
    FileNotFoundError and a folder IsADirectoryError, for the caller to word."""
    kind = special_kind(os.stat(path).st_mode)
    pipe = kind == _KINDS[stat.S_IFIFO] and allow_pipe
    if kind is not None and not pipe:
        raise BadInputError(
            f"{path.name} is {kind}, not a file; patchq does not open it", str(path)
        )
    flags = os.O_RDONLY | os.O_NOCTTY | os.O_CLOEXEC | (0 if pipe else os.O_NONBLOCK)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(str(path))
        kind = special_kind(mode)
        if kind is not None and not pipe:  # swapped in since the stat
            raise BadInputError(
                f"{path.name} is {kind}, not a file; patchq does not open it", str(path)
            )
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_optional(path: Path) -> bytes | None:
    """`read_regular` for a file that may be absent (None); a folder is refused."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise BadInputError("is a folder, not a file", str(path)) from None


def escaping_link(root: Path, path: Path) -> Path | None:
    """The first of `path` and the folders from `root` down to it that is a symlink
    leading out of `root`, or None. A link that stays inside (`patches -> debian/patches`)
    is no escape."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    real_root = root.resolve()
    cur = root
    for part in rel.parts:
        cur = cur / part
        if cur.is_symlink():
            real = cur.resolve()
            if real != real_root and real_root not in real.parents:
                return cur
    return None


def confine(root: Path, path: Path, what: str = "the patch repo") -> None:
    """Refuse to write `path` through a symlink that leaves `root` (exit 5)."""
    link = escaping_link(root, path)
    if link is not None:
        raise UnsafeStateError(
            f"{link.name} is a symlink out of {what} (to {os.readlink(link)})",
            str(link),
            "patchq does not write through it; make it a file or folder inside",
        )


def inside(root: Path, rel: str) -> bool:
    """Whether `root/rel` is reached without following any symlink on the way (the last
    name may be one): a file there is really in `root`."""
    cur = root
    for part in rel.split("/")[:-1]:
        cur = cur / part
        if cur.is_symlink() or not cur.is_dir():
            return False
    return True


def through_link(root: Path, path: Path) -> Path:
    """Where a write or removal of `path` inside `root` lands: `path` itself, or, when
    its last name is a symlink that stays inside `root` (Debian's `series ->
    debian/patches/series`), the file the link leads to, so the link stays a link and
    what it points to is the file that changes. Refused (exit 5) if the way leaves
    `root` through a symlink."""
    confine(root, path)
    if not path.is_symlink():
        return path
    return path.resolve()


def real_names(root: Path, rels: Iterable[str]) -> tuple[str, ...]:
    """Each of `rels` (paths inside `root`) as the file it really is, relative to `root`,
    every symlink on the way followed (`patches/p.patch` under `patches ->
    debian/patches` is `debian/patches/p.patch`): sorted, each once."""
    real_root = os.path.realpath(root)
    return tuple(sorted({os.path.relpath(os.path.realpath(root / r), real_root) for r in rels}))


def remove(path: Path, root: Path) -> None:
    """Remove the file at `path` inside `root` (through a link, as `through_link` says);
    nothing if it is absent."""
    through_link(root, path).unlink(missing_ok=True)


def atomic_write(path: Path, data: bytes, root: Path | None = None, *, mode_bits: int = 0) -> None:
    """Write `data` to `path` through a temporary file and a rename: all or nothing.
    With `root`, refused if the way to `path` leaves `root` through a symlink, and a
    symlink inside it is written through (`through_link`): the rename happens beside
    the file it points to and the link itself is kept. A fault of the file system
    (full, read-only, forbidden, a name too long) is a FaultError (exit 5) naming
    `path`, and leaves no temporary file behind. `mode_bits` are added to the mode the
    file keeps (0o644 for a new one)."""
    if root is not None:
        path = through_link(root, path)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # here: a run that writes nothing (a TAB's completion) never loads it

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:64]}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            _write(f, data)
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
        os.chmod(tmp, mode | mode_bits)
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise FaultError.from_os(e, "write", str(path)) from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def _write(f: BinaryIO, data: bytes) -> None:
    """The one place bytes go to a file patchq owns (tests inject faults here)."""
    f.write(data)
    f.flush()
