"""Reading git objects ahead, in batches: many requests to the persistent
`git cat-file --batch` reader at a time instead of one round trip (a wait on another
process) each, and the walk that finds, one directory level a batch, the trees and files
at a list of paths: a whole-series run's reads cost a few round trips, not one a patch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import IO

from patchq.core.errors import GitError
from patchq.core.paths import FileMode

CHUNK = 64  # requests written to the cat-file reader at a time

Found = tuple[str, str, bytes]  # (id, type, data) of an object a request named


def ask(
    stdin: IO[bytes], stdout: IO[bytes], requests: Sequence[str], where: str
) -> list[Found | None]:
    """(id, type, data) for each request line to a `cat-file --batch` reader, None where
    it names nothing (missing, ambiguous)."""
    out: list[Found | None] = []
    for i in range(0, len(requests), CHUNK):
        # A chunk's requests are a few kB: the pipe takes them whole, and every answer is
        # read before the next chunk goes, so neither side waits on a full pipe.
        chunk = requests[i : i + CHUNK]
        stdin.write("".join(f"{r}\n" for r in chunk).encode())
        stdin.flush()
        for r in chunk:
            head = stdout.readline().split()
            if len(head) != 3:
                if len(head) == 2 and head[1] in (b"missing", b"ambiguous"):
                    out.append(None)
                    continue
                raise GitError(f"{r}: unexpected reply {b' '.join(head)!r}", where)
            data = stdout.read(int(head[2]))
            stdout.read(1)  # the newline after the object
            out.append((head[0].decode(), head[1].decode(), bytes(data)))
    return out


def files_at(
    wanted: Iterable[tuple[str, str]],
    prefetch: Callable[[Iterable[str]], None],
    cached: Callable[[str], tuple[str, bytes] | None],
) -> list[str]:
    """The blob ids at (tree, path) pairs, found reading the trees on the way one batch a
    directory level (`prefetch` reads a batch, `cached` gives what it brought)."""
    todo = [
        (tree, p.encode("utf-8", "surrogateescape").split(b"/"))
        for tree, p in dict.fromkeys(wanted)
    ]
    at: dict[tuple[str, bytes], str] = {(tree, b""): tree for tree, _ in todo}
    files: list[str] = []
    level = 0
    while todo:
        prefetch(at.values())
        deeper: dict[tuple[str, bytes], str] = {}
        rest = []
        for tree, parts in todo:
            oid = at.get((tree, b"/".join(parts[:level])))
            hit = cached(oid) if oid is not None else None  # a guessed id may name nothing
            got = guess_entry(hit[1], parts[level]) if hit and hit[0] == "tree" else None
            if got is None:
                continue
            mode, child = got
            if level == len(parts) - 1:
                if mode not in (FileMode.TREE, FileMode.GITLINK):
                    files.append(child)
            elif mode == FileMode.TREE:
                deeper[(tree, b"/".join(parts[: level + 1]))] = child
                rest.append((tree, parts))
        at, todo = deeper, rest
        level += 1
    return files


def guess_entry(data: bytes, name: bytes) -> tuple[str, str] | None:
    """(mode, id) of the entry `name` of a tree object's data, found with one search (in
    C) for ` name\\0` after a mode: a guess, good enough to read ahead with (a name that
    ends in a space and digits, or an id's bytes, could mislead it; `objects.tree_entry`
    is exact), where decoding each tree of a thousand commits would cost more than the
    round trips it saves."""
    i = data.find(b" " + name + b"\0")
    if i < 0:
        return None
    start = i
    while start > 0 and 48 <= data[start - 1] <= 55:
        start -= 1
    end = i + len(name) + 2
    if start == i or len(data) < end + 20:
        return None
    return data[start:i].decode(), data[end : end + 20].hex()
