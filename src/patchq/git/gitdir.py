"""Where a checkout's git folders are, found as git finds them and without a process:
what `GitRepo` opens, and where shell completion reads patchq's state from (a TAB starts
no git)."""

from __future__ import annotations

import os
from pathlib import Path

from patchq.core.errors import BadInputError

STATE = "patchq"  # patchq's own folder in the git dir (`GitRepo.state_dir`)


def discover(root: Path) -> tuple[Path, Path]:
    """(git dir, common dir) of the checkout whose top folder is `root`, found as git
    finds them: a `.git` folder, or a `.git` file naming one (a linked worktree or a
    submodule), whose `commondir` names the shared one. No process, no environment."""
    dotgit = root / ".git"
    gd: Path | None = None
    if dotgit.is_dir():
        gd = dotgit
    elif dotgit.is_file():
        text = dotgit.read_bytes()
        if text.startswith(b"gitdir:"):
            gd = Path(os.fsdecode(text[7:].strip()))
            gd = gd if gd.is_absolute() else Path(os.path.normpath(root / gd))
    elif is_git_dir(root):
        raise BadInputError(
            "the target is a bare repository",
            str(root),
            "patchq needs a checkout with a working tree",
        )
    if gd is None or not is_git_dir(gd):
        raise BadInputError(
            "not a git checkout", str(root), "give the upstream checkout with --target DIR"
        )
    common = gd
    pointer = gd / "commondir"
    if pointer.is_file():
        c = Path(os.fsdecode(pointer.read_bytes().strip()))
        common = c if c.is_absolute() else Path(os.path.normpath(gd / c))
    return gd, common


def is_git_dir(d: Path) -> bool:
    return (d / "HEAD").is_file() and ((d / "objects").is_dir() or (d / "commondir").is_file())


def state_dir(root: Path) -> Path:
    """`.git/patchq/` of the checkout at `root`, as `GitRepo.state_dir` names it."""
    return discover(Path(os.path.abspath(root)))[0] / STATE
