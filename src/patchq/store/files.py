"""Atomic writes for the files patchq owns (series, patches, lock, state), confined to
the folder they belong to."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from patchq.core.errors import UnsafeStateError


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


def atomic_write(path: Path, data: bytes, root: Path | None = None) -> None:
    """Write `data` to `path` through a temporary file and a rename: all or nothing.
    With `root`, refused if the way to `path` leaves `root` through a symlink."""
    if root is not None:
        confine(root, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
