"""A git section's stated mode against the file's own, as GNU patch 2.7.6 decides it.

pch.c reads `index <a>..<b> <mode>` into both the old and the new mode, and `old mode` /
`new mode` lines into one each; patch.c changes the file's mode only when the two differ
(`set_mode = new_mode && old_mode != new_mode`), else the file keeps its own. patchq keeps
the file's mode too, and records `index-mode`: taking the `index` line's mode would turn an
executable file into a plain one wherever the patch was made on a copy that was 100644 (an
MSYS2 firebird patch does that), where GNU patch and `git apply` (which warns) keep 100755.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.core.names import INDEX_MODE, resolve_section
from patchq.core.patch import parse

from ..conftest import Queue, Result, Upstream

needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch missing")

HUNK = b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"


def section(extended: bytes) -> bytes:
    return b"diff --git a/f b/f\n" + extended + HUNK


class Tree:
    def __init__(self, mode: str | None) -> None:
        self._mode = mode

    def exists(self, path: str) -> bool:
        return self._mode is not None

    def is_dir(self, path: str) -> bool:
        return False

    def has_crlf(self, path: str) -> bool:
        return False

    def mode(self, path: str) -> str | None:
        return self._mode


def test_an_index_line_mode_other_than_the_files_keeps_the_files() -> None:
    (s,) = parse(section(b"index 1111111..2222222 100644\n")).sections
    got, notes = resolve_section(s, Tree("100755"))
    assert (got.old_mode, got.new_mode) == ("100755", "100755")
    (note,) = notes
    assert (note.kind, note.line) == (INDEX_MODE, 1)
    assert "states mode 100644 and no mode change, the file's mode is 100755" in note.detail
    assert got.hunks == s.hunks


@pytest.mark.parametrize(
    "extended, have",
    [
        (b"index 1111111..2222222 100755\n", "100755"),  # the same mode: nothing to say
        (b"index 1111111..2222222\n", "100755"),  # no mode stated
        (b"old mode 100644\nnew mode 100755\n", "100755"),  # a change: GNU patch makes it
        (b"old mode 100755\nnew mode 100644\n", "100644"),
        (b"index 1111111..2222222 100644\n", "120000"),  # a symlink: not a mode to keep
    ],
)
def test_other_sections_are_left_as_they_are(extended: bytes, have: str) -> None:
    (s,) = parse(section(extended)).sections
    got, notes = resolve_section(s, Tree(have))
    assert got is s and notes == ()


# --- against GNU patch itself, through the CLI -------------------------------------------

CASES = {
    "index-644-on-755": (0o755, b"index 1111111..2222222 100644\n", True),
    "index-755-on-644": (0o644, b"index 1111111..2222222 100755\n", True),
    "index-755-on-755": (0o755, b"index 1111111..2222222 100755\n", False),
    "mode-change-644-755": (0o644, b"old mode 100644\nnew mode 100755\n", False),
    "mode-change-755-644-on-644": (0o644, b"old mode 100755\nnew mode 100644\n", False),
    "mode-change-644-755-on-755": (0o755, b"old mode 100644\nnew mode 100755\n", False),
    "mode-change-without-hunk": (0o644, b"old mode 100644\nnew mode 100755\n", False),
}


def git_mode(path: Path) -> str:
    return "100755" if os.stat(path).st_mode & 0o100 else "100644"


@needs_patch
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_mode_is_gnu_patchs(
    name: str, tmp_path: Path, upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    perm, extended, noted = CASES[name]
    data = section(extended)
    if name == "mode-change-without-hunk":
        data = b"diff --git a/f b/f\n" + extended
    gnu = tmp_path / "gnu"
    gnu.mkdir()
    (gnu / "f").write_bytes(b"a\nb\n")
    (gnu / "f").chmod(perm)
    proc = subprocess.run(
        ["patch", "-p1", "-F0", "--batch", "--no-backup-if-mismatch", "-r", "-"],
        cwd=gnu,
        input=data,
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stdout
    upstream.write("f", b"a\nb\n")
    (upstream.path / "f").chmod(perm)
    base = upstream.commit("release")
    queue.add("mode.patch", data)
    r = patchq("apply", "--onto", base, "--json")
    assert r.code == 0, r.err
    assert upstream.read("f") == (gnu / "f").read_bytes()
    assert git_mode(upstream.path / "f") == git_mode(gnu / "f")
    staged = upstream.git("ls-tree", "HEAD", "f").split()[0]
    assert staged == git_mode(gnu / "f")
    kinds = [n["kind"] for n in json.loads(r.out)["patches"][0]["normalisations"]]
    assert (INDEX_MODE in kinds) == noted, kinds
