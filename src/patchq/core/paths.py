"""Path rules, in one place: which paths a patch may touch in the target, and which
names a patch may have in the patch repo.

A target path stays inside the target: no absolute path, no `.`/`..`/empty component,
no `.git` in any spelling that means `.git` on some file system git protects (git's
`verify_path`, `is_ntfs_dotgit`, `is_hfs_dotgit`: case, trailing dots and spaces, 8.3
short names, alternate data streams, backslashes, HFS+-ignored code points), no NUL,
and within the usual file-system limits. A file mode is one git stores (`file_mode`).
A patch name stays inside `patches/`: relative, no backslash, no control character,
no `.`/`..`/empty component. Whether a path passes through a
symlink, a file or a submodule depends on the tree, and is checked where the tree is
(`git/memtree.py`); whether a name passes through a symlink out of `patches/`, where
the files are (`store/patchrepo.py`).
"""

from __future__ import annotations

import functools
import re
from enum import StrEnum

from patchq.core.errors import BadInputError, UnsafePathError
from patchq.core.text import shortened


class FileMode(StrEnum):
    """A tree entry's mode as git writes it in a tree object."""

    REGULAR = "100644"
    EXECUTABLE = "100755"
    SYMLINK = "120000"
    GITLINK = "160000"  # a submodule
    TREE = "40000"


FILES = (FileMode.REGULAR, FileMode.EXECUTABLE)  # the modes of a file with text in it

# The usual file-system limits (Linux's NAME_MAX and PATH_MAX): a longer name would go
# into the tree and then fail only when git checks the tree out.
NAME_MAX, PATH_MAX = 255, 4095


def check_path(path: str, where: str) -> list[bytes]:
    """Split a repo path into components, refusing anything that could leave the target.

    A replay asks about the same few thousand paths tens of thousands of times: a path
    found safe is remembered (its components), an unsafe one checked afresh each time so
    its error names the place that asked."""
    safe = _SAFE.get(path)
    if safe is not None:
        return list(safe)
    parts = _check_path(path, where)
    if len(_SAFE) >= 1 << 16:
        _SAFE.clear()
    _SAFE[path] = tuple(parts)
    return parts


_SAFE: dict[str, tuple[bytes, ...]] = {}


def _check_path(path: str, where: str) -> list[bytes]:
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
        if b"\\" in p and any(q in (b".", b"..") for q in p.split(b"\\")):
            raise UnsafePathError(
                f"path {path!r} has a '..' component between backslashes",
                where,
                "Windows reads a backslash as a folder separator",
            )
    return parts


def check_link_path(path: str, where: str) -> None:
    """A symlink's own path: git refuses `.gitmodules` (and fsck `.gitattributes`,
    `.gitignore`, `.mailmap`) as a symlink, since git follows them out of the tree."""
    name = path.encode("utf-8", "surrogateescape").rsplit(b"/", 1)[-1]
    if is_refused_link_name(name):
        raise UnsafePathError(
            f"symlink {path!r} has a name git reads as its own file",
            where,
            "git refuses .gitmodules, .gitattributes, .gitignore and .mailmap as symlinks",
        )


# The code points HFS+ and APFS ignore when they compare names, as git's `is_hfs_dotgit`
# lists them: `.g\u200cit` is `.git` on a Mac.
HFS_IGNORED = frozenset(
    chr(c)
    for c in (
        0x200C,
        0x200D,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x206A, 0x2070),
        0xFEFF,
    )
)
# Names git refuses as symlinks (`.gitmodules` in `verify_path`; the others in fsck),
# each with the stem and hash of its NTFS 8.3 short names (`GITMOD~1`, `GI7EBA~1`).
_LINK_REFUSED = (
    (b"gitmodules", b"gitmod", b"gi7eba"),
    (b"gitattributes", b"gitatt", b"gi7d29"),
    (b"gitignore", b"gitign", b"gi250a"),
    (b"mailmap", b"mailma", b"maba30"),
)


def _ntfs_rest_empty(rest: bytes) -> bool:
    """What NTFS drops after a name: trailing dots and spaces, an alternate data stream
    (`::$INDEX_ALLOCATION`)."""
    return rest.split(b":", 1)[0].strip(b". ") == b""


def _hfs_fold(name: bytes) -> str | None:
    """`name` as HFS+/APFS compares it (ignored code points dropped, ASCII case folded);
    None when it is not UTF-8 (git: then it cannot be `.git` there)."""
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return None
    folded = "".join(c for c in text if c not in HFS_IGNORED)
    return folded.lower() if folded.isascii() else None


def is_ntfs_git(piece: bytes) -> bool:
    """git's `is_ntfs_dotgit`: `.git` or `git~1` in any case, then only dots, spaces or an
    alternate data stream."""
    low = piece.lower()
    return (low.startswith(b".git") and _ntfs_rest_empty(low[4:])) or (
        low.startswith(b"git~1") and _ntfs_rest_empty(low[5:])
    )


def is_git_name(name: bytes) -> bool:
    """One path component that means `.git` on some file system git protects: any case,
    trailing dots and spaces, NTFS 8.3 (`GIT~1`) and alternate data streams, a backslash
    that Windows reads as a separator (`x\\.git`), HFS+/APFS-ignored code points."""
    if any(is_ntfs_git(piece) for piece in name.split(b"\\")):
        return True
    return _hfs_fold(name) == ".git"


def is_refused_link_name(name: bytes) -> bool:
    """A symlink git would refuse for its name: `.gitmodules`, `.gitattributes`,
    `.gitignore`, `.mailmap` in any spelling those file systems fold together."""
    low = name.lower()
    folded = _hfs_fold(name)
    for full, stem, hashed in _LINK_REFUSED:
        if folded == "." + full.decode():
            return True
        for piece in low.split(b"\\"):
            if piece.startswith(b"." + full) and _ntfs_rest_empty(piece[len(full) + 1 :]):
                return True
            m = re.match(rb"(?:%s~[1-4]|%s~[1-9])" % (stem, hashed), piece)
            if m and _ntfs_rest_empty(piece[m.end() :]):
                return True
    return False


def file_mode(mode: str, where: str) -> str:
    """A patch's file mode as git stores it (`canon_mode`): a regular file is `100644`, or
    `100755` when the owner may execute it (`100777` → `100755`); every `12xxxx` is a
    symlink, `120000`. Directories (`040000`) and submodules (`160000`) are no files a
    patch can write, and anything else is no mode at all: both are refused."""
    try:
        value = int(mode, 8)
    except ValueError:
        value = -1
    kind = value & 0o170000 if 0 <= value <= 0o177777 else -1
    if kind == 0o100000:
        return FileMode.EXECUTABLE if value & 0o100 else FileMode.REGULAR
    if kind == 0o120000:
        return FileMode.SYMLINK
    if kind in (0o040000, 0o160000):
        what = "a directory" if kind == 0o040000 else "a submodule"
        raise BadInputError(
            f"file mode {mode} is {what}", where, "patchq only writes files and symlinks"
        )
    raise BadInputError(f"unknown file mode {mode!r}", where)


# The folders of patches/ that retired patches are moved to (`retired = "move"`).
RETIRED_FOLDERS = (".dropped", ".upstreamed")


_CONTROL = re.compile("[\x00-\x1f\x7f]")


@functools.lru_cache(maxsize=4096)
def name_problem(name: str) -> str | None:
    """Why a patch name could escape `patches/` or drive a terminal; None if it cannot
    (kept per name: a check asks it of each patch several times)."""
    problem = None
    if not name:
        problem = "is empty"
    elif name.startswith("/"):
        problem = "is absolute"
    elif "\\" in name:
        problem = "contains a backslash"
    elif _CONTROL.search(name):
        problem = "contains a control character or NUL"
    elif any(part in ("", ".", "..") for part in name.split("/")):
        problem = "has an empty, `.` or `..` component"
    elif any(len(p.encode("utf-8", "surrogateescape")) > NAME_MAX for p in name.split("/")):
        problem = f"has a name longer than {NAME_MAX} bytes, more than file systems hold"
    elif len(name.encode("utf-8", "surrogateescape")) > PATH_MAX // 2:
        problem = f"is longer than {PATH_MAX // 2} bytes"
    elif name.split("/")[0] in RETIRED_FOLDERS:
        # Those folders are patchq's to fill: a retired patch moved there must never land
        # on an active one, nor an active one be written over by a retired one.
        problem = f"lies in {name.split('/')[0]}/, where patchq moves retired patches"
    return problem


def check_name(name: str, where: str, new: bool = False) -> None:
    """Refuse an unsafe patch name; a `new` one (imported or created) may not be hidden
    either (a `.`-name would vanish from `ls` and from most build globs)."""
    problem = name_problem(name)
    if problem is None and new and any(p.startswith(".") for p in name.split("/")):
        problem = "starts with `.` (a hidden file)"
    if problem is not None:
        raise BadInputError(
            f"unsafe patch name {shortened(name)!r}: it {problem}",
            where,
            "patch names are relative paths under patches/",
        )
