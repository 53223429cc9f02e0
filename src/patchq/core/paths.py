"""Path rules, in one place: which paths a patch may touch in the target, and which
names a patch may have in the patch repo.

A target path stays inside the target: no absolute path, no `.`/`..`/empty component,
no `.git` in any spelling that means `.git` on some file system, no NUL, and within the
usual file-system limits. A patch name stays inside `patches/`: relative, no backslash,
no control character, no `.`/`..`/empty component. Whether a path passes through a
symlink, a file or a submodule depends on the tree, and is checked where the tree is
(`git/memtree.py`); whether a name passes through a symlink out of `patches/`, where
the files are (`store/patchrepo.py`).
"""

from __future__ import annotations

from patchq.core.errors import BadInputError, UnsafePathError

# The usual file-system limits (Linux's NAME_MAX and PATH_MAX): a longer name would go
# into the tree and then fail only when git checks the tree out.
NAME_MAX, PATH_MAX = 255, 4095


def check_path(path: str, where: str) -> list[bytes]:
    """Split a repo path into components, refusing anything that could leave the target."""
    raw = path.encode("utf-8", "surrogateescape")
    if not raw:
        raise UnsafePathError("empty file name", where)
    if b"\0" in raw:
        raise UnsafePathError(f"file name {path!r} contains a NUL byte", where)
    if raw.startswith(b"/"):
        raise UnsafePathError(
            f"absolute path {path!r}", where, "patches may only touch files inside the target"
        )
    if len(raw) > PATH_MAX:
        raise UnsafePathError(
            f"path {path[:60]!r}… is longer than {PATH_MAX} bytes",
            where,
            "no checkout could hold it",
        )
    parts = raw.split(b"/")
    for p in parts:
        if len(p) > NAME_MAX:
            raise UnsafePathError(
                f"a name in {path[:60]!r}… is longer than {NAME_MAX} bytes",
                where,
                "no common file system can hold it",
            )
        if p in (b"", b".", b".."):
            raise UnsafePathError(
                f"path {path!r} has a {p.decode() or 'empty'!r} component",
                where,
                "patches may only touch files inside the target",
            )
        if is_git_name(p):
            raise UnsafePathError(f"path {path!r} goes into .git", where)
    return parts


def is_git_name(name: bytes) -> bool:
    """.git, and the spellings that mean .git on case-insensitive or NTFS/HFS+ disks."""
    return name.rstrip(b". ").lower() == b".git" or name.lower() == b"git~1"


def name_problem(name: str) -> str | None:
    """Why a patch name could escape `patches/` or drive a terminal; None if it cannot."""
    problem = None
    if not name:
        problem = "is empty"
    elif name.startswith("/"):
        problem = "is absolute"
    elif "\\" in name:
        problem = "contains a backslash"
    elif any(ord(c) < 32 or ord(c) == 127 for c in name):
        problem = "contains a control character or NUL"
    elif any(part in ("", ".", "..") for part in name.split("/")):
        problem = "has an empty, `.` or `..` component"
    return problem


def check_name(name: str, where: str, new: bool = False) -> None:
    """Refuse an unsafe patch name; a `new` one (imported or created) may not be hidden
    either (a `.`-name would vanish from `ls` and from most build globs)."""
    problem = name_problem(name)
    if problem is None and new and any(p.startswith(".") for p in name.split("/")):
        problem = "starts with `.` (a hidden file)"
    if problem is not None:
        raise BadInputError(
            f"unsafe patch name {name!r}: it {problem}",
            where,
            "patch names are relative paths under patches/",
        )
