"""The person's trust file: `$XDG_CONFIG_HOME/patchq/trusted.json` (else
`~/.config/patchq/trusted.json`), the marks `patchq trust` writes (core/trust.py).

The file must be the person's own: one inside a patch repo could come with a clone and
trust its own commands. So a trust file lying inside any patch repo (a folder holding
`patchq.toml` or `series`, at or above it) is never written, and never read — its marks
count for nothing. Written atomically, like every file patchq owns, and changed only
under an exclusive lock on its folder (`update`): a `trust --revoke` is never undone by a
`trust` that read the marks before it and wrote after.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from patchq.core.errors import BadInputError, UnsafeStateError
from patchq.core.trust import KEYS, Configured, Mark, parse, render, trusts
from patchq.store.files import atomic_write, read_optional
from patchq.store.patchrepo import CONFIG, SERIES, Config

NAME = "trusted.json"


def folder() -> Path:
    """The person's patchq configuration folder (XDG: an absolute XDG_CONFIG_HOME, else
    ~/.config)."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "patchq"
    home = os.environ.get("HOME", "")
    if not home or not os.path.isabs(home):
        raise BadInputError(
            "no configuration folder: neither XDG_CONFIG_HOME nor HOME is an absolute path",
            "environment",
            "set HOME",
        )
    return Path(home) / ".config" / "patchq"


def path() -> Path:
    """Where the marks are kept."""
    return folder() / NAME


def patch_repo_around(p: Path) -> Path | None:
    """The file that makes a folder at or above `p` (resolved) a patch repo, or None."""
    real = Path(os.path.realpath(p))
    for d in (real, *real.parents):
        for name in (CONFIG, SERIES):
            if (d / name).is_file():
                return d / name
    return None


def read() -> tuple[Mark, ...]:
    """The person's marks (none without a file, or when the file lies in a patch repo)."""
    p = path()
    if patch_repo_around(p.parent) is not None:
        return ()
    data = read_optional(p)
    return parse(data, str(p)) if data is not None else ()


def _refuse_in_patch_repo(p: Path) -> None:
    found = patch_repo_around(p.parent)
    if found is not None:
        raise UnsafeStateError(
            f"the configuration folder is inside a patch repo ({found}): a mark there could "
            "come with a clone",
            str(p.parent),
            "set XDG_CONFIG_HOME to a folder of your own",
        )


@contextmanager
def _locked(where: Path) -> Iterator[None]:
    """An exclusive flock on the configuration folder (no file added; it dies with its
    holder), so two changes of the marks take turns."""
    where.mkdir(parents=True, exist_ok=True)
    fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def update(change: Callable[[tuple[Mark, ...]], tuple[Mark, ...]]) -> tuple[Path, tuple[Mark, ...]]:
    """Change the marks as `change` says, reading them and writing the result under the
    folder's lock (refused, exit 5, inside a patch repo); the file and the new marks."""
    p = path()
    _refuse_in_patch_repo(p)
    with _locked(p.parent):
        data = read_optional(p)
        before = parse(data, str(p)) if data is not None else ()
        marks = change(before)
        if marks != before:
            atomic_write(p, render(marks))
    return p, marks


def configured(root: Path, config: Config, marks: tuple[Mark, ...]) -> tuple[Configured, ...]:
    """The commands the patch repo at `root` names, each with whether it is trusted."""
    commands = {"exec": config.exec, "exec-each": config.exec_each}
    return tuple(Configured(k, c, trusts(marks, str(root), c)) for k in KEYS if (c := commands[k]))
