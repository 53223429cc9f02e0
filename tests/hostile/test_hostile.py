"""Hostile and broken inputs through the real CLI, each with its exact outcome.

One table, one row per input: the patches it puts in the series (files under
tests/data/hostile/, written by us), or what it generates at test time (a 50 MB file, an
mbox of hundreds of messages), the command, the exit code and a key phrase of the
one-line error. Every row that fails must change nothing: the target (HEAD, every ref,
`git status`, every file's bytes and symlink, `.git/config`, hooks and `.git/patchq/`),
the patch repo and a folder outside the target that symlinks point to are snapshotted
before and compared after. A row that must work says what the result holds.

The target every row starts from (`template`), committed as one base commit:

    a.txt         "a b c" (three lines)      lines.txt  "line 1" … "line 20"
    sub/f.txt     "f"                        mixed.txt  CRLF and LF lines mixed
    latin1.txt    ISO-8859-1 bytes            dot        -> .          (inside)
    inlink        -> a.txt (inside)           out        -> ../outside (a folder outside)
    out-file      -> ../outside/victim.txt   (a file outside)
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Queue, Runner, Upstream, git, wall_clock

HOSTILE = Path(__file__).parent.parent / "data" / "hostile"
LINES = "".join(f"line {i}\n" for i in range(1, 21))
MIXED = b"one\r\ntwo\nthree\r\nfour\nfive\r\n"
LATIN1 = b"caf\xe9\nna\xefve\n\xff\xfe\n"


@dataclass
class Env:
    up: Upstream
    queue: Queue
    outside: Path
    tmp: Path
    run: Callable[..., Any]
    base: str = ""

    def blob(self, path: bytes | str, rev: str = "HEAD") -> bytes:
        """A file's bytes in a commit (names may be any bytes)."""
        name = path if isinstance(path, bytes) else path.encode()
        entries = subprocess.run(
            ["git", "ls-tree", "-z", "-r", rev], cwd=self.up.path, capture_output=True, check=True
        ).stdout.split(b"\0")
        for e in entries:
            meta, _, p = e.partition(b"\t")
            if p == name:
                return subprocess.run(
                    ["git", "cat-file", "blob", meta.split()[2]],
                    cwd=self.up.path,
                    capture_output=True,
                    check=True,
                ).stdout
        raise AssertionError(f"{name!r} not in {rev}")


@dataclass(frozen=True)
class Row:
    id: str
    patches: tuple[str, ...] = ()  # from tests/data/hostile/, listed in series in this order
    code: int = 4
    phrase: str = ""
    series: str | None = None  # the series text (default: the patches, one a line)
    cmd: tuple[str, ...] = ("apply", "--onto", "{base}")
    prepare: Callable[[Env], None] | None = None  # adds to the target (and commits) or queue
    expect: Callable[[Env], None] | None = None  # for a row that must work
    seconds: float = 10.0  # wall-time bound of the command (bench/wall_clock.py judges it)
    first: tuple[tuple[str, ...], ...] = ()  # commands run on an empty series first


# --- the target and the snapshot ------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The target with its base commit, made once and copied for each row (fast)."""
    path = tmp_path_factory.mktemp("hostile") / "upstream"
    up = Upstream(path)
    up.write("a.txt", "a\nb\nc\n").write("lines.txt", LINES).write("sub/f.txt", "f\n")
    up.write("mixed.txt", MIXED).write("latin1.txt", LATIN1)
    for name, to in (
        ("dot", "."),
        ("inlink", "a.txt"),
        ("out", "../outside"),
        ("out-file", "../outside/victim.txt"),
    ):
        os.symlink(to, path / name)
    env = {
        "HOME": str(path.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
        "PATH": os.environ["PATH"],
    }
    who = ["-c", "user.name=Up Stream", "-c", "user.email=up@example.org"]
    # Few files to copy per row: no sample hooks, objects in one pack.
    for args in (
        ["init", "-q", "--template=", "-b", "main"],
        ["add", "-A"],
        [*who, "commit", "-q", "-m", "base", "--date=1700000000 +0000"],
        ["repack", "-adq"],
        ["prune-packed"],
    ):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path, git(path, "rev-parse", "HEAD").strip()


def tree_bytes(root: Path, skip: bytes = b"") -> dict[bytes, object]:
    """Every file and symlink under `root`, not following links: bytes and mode, or target.

    Names stay bytes (they need not be UTF-8); directories count only by what they hold.
    """
    out: dict[bytes, object] = {}
    top = os.fsencode(root)
    if not os.path.isdir(top):
        return out
    for dirpath, dirs, files in os.walk(top):
        rel_dir = os.path.relpath(dirpath, top)
        if rel_dir == b"." and skip in dirs:
            dirs.remove(skip)
        for name in dirs + files:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    out[rel] = ("file", st.st_mode & 0o777, f.read())
    return out


def snapshot(env: Env) -> dict[str, object]:
    up = env.up.path
    gitdir = up / ".git"
    packed = gitdir / "packed-refs"
    return {
        "HEAD": (gitdir / "HEAD").read_bytes(),
        "refs": (tree_bytes(gitdir / "refs"), packed.read_bytes() if packed.exists() else b""),
        "status": git(up, "status", "--porcelain", "--untracked-files=all", "--ignored"),
        "worktree": tree_bytes(up, skip=b".git"),
        "config": (gitdir / "config").read_bytes(),
        "hooks": tree_bytes(gitdir / "hooks"),
        "patchq": tree_bytes(gitdir / "patchq"),
        "queue": tree_bytes(env.queue.path),
        "outside": tree_bytes(env.outside),
    }


# --- generated inputs -------------------------------------------------------------------

BIG_LINES = 1_000_000  # × 52 bytes ≈ 50 MB


def big_line(i: int) -> bytes:
    return b"%07d the quick brown fox jumps over the lazy dog\n" % i


def big_file(env: Env) -> None:
    """A 50 MB file upstream, and a patch changing a line in its middle and its last."""
    env.up.write("big.txt", b"".join(big_line(i) for i in range(BIG_LINES))).commit("big")
    mid, last = BIG_LINES // 2, BIG_LINES - 1
    patch = b"--- a/big.txt\n+++ b/big.txt\n@@ -%d,3 +%d,3 @@\n %s-%s+CHANGED\n %s" % (
        mid,
        mid,
        big_line(mid - 1),
        big_line(mid),
        big_line(mid + 1),
    ) + b"@@ -%d,2 +%d,2 @@\n %s-%s+LAST\n" % (last, last, big_line(last - 1), big_line(last))
    env.queue.add("big.patch", patch)


def _expect_file(env: Env, name: str, text: str) -> None:
    assert (env.up.path / name).read_text() == text


def expect_big_file(env: Env) -> None:
    data = (env.up.path / "big.txt").read_bytes()
    assert len(data) == BIG_LINES * 52 - 52 * 2 + len(b"CHANGED\n") + len(b"LAST\n")
    assert b"\nCHANGED\n" in data and data.endswith(big_line(BIG_LINES - 2) + b"LAST\n")


def big_patch(env: Env) -> None:
    """A 50 MB patch: one hunk creating a file of a million lines."""
    body = b"".join(b"+" + big_line(i) for i in range(BIG_LINES))
    env.queue.add(
        "big-new.patch", b"--- /dev/null\n+++ b/big-new.txt\n@@ -0,0 +1,%d @@\n" % BIG_LINES + body
    )


def expect_big_patch(env: Env) -> None:
    data = (env.up.path / "big-new.txt").read_bytes()
    assert len(data) == BIG_LINES * 52 and data.endswith(big_line(BIG_LINES - 1))


MBOX_COUNT = 300


def mail(i: int, subject: str | None = None, body: bytes | None = None) -> bytes:
    diff = (
        body
        if body is not None
        else (
            b"diff --git a/m/%d.txt b/m/%d.txt\nnew file mode 100644\n--- /dev/null\n"
            b"+++ b/m/%d.txt\n@@ -0,0 +1 @@\n+message %d\n" % (i, i, i, i)
        )
    )
    return (
        b"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n"
        b"From: Ann Author <ann@example.org>\n"
        b"Date: Tue, 5 Mar 2024 10:%02d:%02d +0100\n"
        % (i // 60 % 60, i % 60)
        + b"Subject: [PATCH %d/%d] %s\n\n" % (i, MBOX_COUNT, (subject or f"add m/{i}").encode())
        + b"Message %d.\n---\n" % i
        + diff
        + b"-- \n2.39.5\n\n"
    )


def mbox(env: Env, broken: int | None = None, subject: str | None = None) -> None:
    parts = []
    for i in range(1, MBOX_COUNT + 1):
        if i == broken:
            parts.append(mail(i, body=b"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n"))
        else:
            parts.append(mail(i, subject if i == 1 else None))
    (env.tmp / "series.mbox").write_bytes(b"".join(parts))


def expect_mbox(env: Env) -> None:
    names = env.queue.series().split()
    assert len(names) == MBOX_COUNT and names[0] == "0001-add-m-1.patch"
    assert names[-1] == f"{MBOX_COUNT:04d}-add-m-{MBOX_COUNT}.patch"
    # Each message kept byte for byte; together they are the mbox again.
    joined = b"".join((env.queue.path / "patches" / n).read_bytes() for n in names)
    assert joined == (env.tmp / "series.mbox").read_bytes()


def quilt_dir(env: Env, series: str) -> None:
    d = env.tmp / "quilt"
    d.mkdir()
    shutil.copy(HOSTILE / "simple.patch", d / "simple.patch")
    (d / "series").write_text(series)


def link_in_patches(env: Env) -> None:
    os.symlink(env.outside / "victim.txt", env.queue.path / "patches" / "evil.patch")


def dir_in_patches(env: Env) -> None:
    (env.queue.path / "patches" / "adir.patch").mkdir()


def non_utf8_patch_name(env: Env) -> None:
    name = b"caf\xe9.patch"
    (env.queue.path / "patches").joinpath(os.fsdecode(name)).write_bytes(
        (HOSTILE / "simple.patch").read_bytes()
    )
    (env.queue.path / "series").write_bytes(name + b"\n")


def ignored_link(env: Env, to: str, name: str = "build") -> None:
    env.up.write(".gitignore", f"{name}\n")
    env.up.commit("ignore")
    os.symlink(to, env.up.path / name)


# --- what rows that must work produce -----------------------------------------------


def imported_as(name: str) -> Callable[[Env], None]:
    """The import took the first message as `name`, a file inside `patches/`."""

    def check(env: Env) -> None:
        assert env.queue.series().split()[0] == name
        assert (env.queue.path / "patches" / name).is_file()

    return check


def file_is(path: bytes | str, data: bytes) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        assert env.blob(path) == data
        # ... and the checkout holds the same bytes under the same (byte) name.
        p = os.path.join(
            os.fsencode(env.up.path), path if isinstance(path, bytes) else path.encode()
        )
        with open(p, "rb") as f:
            assert f.read() == data

    return check


def outside_untouched(env: Env) -> None:
    assert tree_bytes(env.outside) == {b"victim.txt": ("file", 0o644, b"victim\n")}


def both(*checks: Callable[[Env], None]) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        for c in checks:
            c(env)

    return check


def deep_path(env: Env) -> None:
    """1,000 folders deep (beyond Python's recursion limit), then removed without
    recursion: pytest's own clean-up would hit that limit."""
    deep = ["d"] * 1000
    file_is("/".join(deep) + "/x", b"deep\n")(env)
    os.unlink(env.up.path.joinpath(*deep, "x"))
    for n in range(len(deep), 0, -1):
        os.rmdir(env.up.path.joinpath(*deep[:n]))


def verifies(env: Env) -> None:
    """The lock written can be read back and proves the result (names of any bytes)."""
    r = env.run("verify")
    assert r.code == 0, r.err


def links_inside(env: Env) -> None:
    up = env.up.path
    assert [os.readlink(up / n) for n in ("sub/l", "l2", "inlink")] == [
        "../a.txt",
        "dot/dot/sub/../lines.txt",
        "sub/f.txt",
    ]
    assert (up / "l2").read_text() == LINES and (up / "inlink").read_text() == "f\n"


def link_replaced_by_file(env: Env) -> None:
    assert not os.path.islink(env.up.path / "out-file")
    assert (env.up.path / "out-file").read_bytes() == b"evil\n"
    outside_untouched(env)


A = "{base}"
TABLE: list[Row] = [
    # -- absolute paths
    Row("absolute", ("abs-path.patch",), phrase="absolute path '/etc/passwd'"),
    Row("absolute-in-plus-line", ("abs-path-plus-only.patch",), phrase="absolute path '/tmp/evil'"),
    Row(
        "absolute-in-git-header",
        ("abs-path-git-header.patch",),
        phrase="absolute path '/etc/cron.d/x'",
    ),
    Row("absolute-rename-to", ("rename-to-absolute.patch",), phrase="absolute path '/tmp/a.txt'"),
    # -- `..` and `.` components
    Row("dotdot", ("dotdot.patch",), phrase="has a '..' component"),
    Row("dotdot-in-the-middle", ("dotdot-middle.patch",), phrase="has a '..' component"),
    Row("dotdot-git-diff", ("dotdot-git.patch",), phrase="has a '..' component"),
    Row("dot-component", ("dot-component.patch",), phrase="has a '.' component"),
    Row("dotdot-rename-to", ("rename-to-dotdot.patch",), phrase="has a '..' component"),
    Row("dotdot-rename-from", ("rename-from-dotdot.patch",), phrase="has a '..' component"),
    Row("dotdot-copy-to", ("copy-to-dotdot.patch",), phrase="has a '..' component"),
    # -- into .git, in every spelling
    Row("git-hook", ("git-dir-hook.patch",), phrase="goes into .git"),
    Row("git-config", ("git-dir-config.patch",), phrase="goes into .git"),
    Row("git-upper-case", ("git-dir-upper.patch",), phrase="goes into .git"),
    Row("git-mixed-case", ("git-dir-mixed-case.patch",), phrase="goes into .git"),
    Row("git-nested", ("git-dir-nested.patch",), phrase="goes into .git"),
    Row("git-trailing-dot", ("git-dir-trailing-dot.patch",), phrase="goes into .git"),
    Row("git-8.3-name", ("git-dir-8dot3.patch",), phrase="goes into .git"),
    Row("git-file-itself", ("git-file-itself.patch",), phrase="goes into .git"),
    Row("git-rename-into", ("rename-into-git.patch",), phrase="goes into .git"),
    Row("git-rename-into-slash", ("rename-into-git-slash.patch",), phrase="goes into .git"),
    Row("git-rename-into-upper", ("rename-into-git-upper.patch",), phrase="goes into .git"),
    Row("git-rename-out-of", ("rename-out-of-git.patch",), phrase="goes into .git"),
    # -- a symlink in the target pointing outside: as a path component, as the file
    Row("link-component-new", ("through-link-new.patch",), phrase="goes through a symlink (out)"),
    Row(
        "link-component-modify",
        ("through-link-modify.patch",),
        phrase="goes through a symlink (out)",
    ),
    Row(
        "link-component-delete",
        ("through-link-delete.patch",),
        phrase="goes through a symlink (out)",
    ),
    Row(
        "link-component-rename-into",
        ("rename-into-outside-link.patch",),
        phrase="goes through a symlink (out)",
    ),
    Row(
        "link-component-rename-out-of",
        ("rename-out-of-outside-link.patch",),
        phrase="goes through a symlink (out)",
    ),
    Row("link-as-file", ("the-link-modify.patch",), phrase="'out-file' is a symlink"),
    Row("link-as-file-its-text", ("the-link-as-text.patch",), phrase="'out-file' is a symlink"),
    Row("link-inside-as-file", ("in-tree-link-modify.patch",), phrase="'inlink' is a symlink"),
    Row(
        "link-retargeted-outside",
        ("the-link-retarget-outside.patch",),
        phrase="points outside the target",
    ),
    Row(
        "link-rename-onto", ("rename-onto-link.patch",), code=3, phrase="'out-file' already exists"
    ),
    # Replacing the link by a regular file writes nothing through it (git apply agrees).
    Row("link-replaced-by-file", ("the-link-to-file.patch",), code=0, expect=link_replaced_by_file),
    # An ignored symlink in the checkout (not in any commit) where a patch creates a
    # file: nothing is written through it, and the person's link is not replaced either
    # (the user's file is never written over: exit 5 naming it); `--force` stashes the
    # link, then the patch's folder is made in its place.
    Row(
        "ignored-link-component",
        ("through-ignored-link.patch",),
        code=5,
        phrase="would write over build, which git does not track",
        prepare=lambda e: ignored_link(e, "../outside"),
    ),
    Row(
        "ignored-link-component-forced",
        ("through-ignored-link.patch",),
        code=0,
        cmd=("apply", "--onto", "{base}", "--force"),
        prepare=lambda e: ignored_link(e, "../outside"),
        expect=both(outside_untouched, file_is("build/new.txt", b"evil\n")),
    ),
    # -- patches creating symlinks
    Row("new-link-absolute", ("symlink-absolute.patch",), phrase="points to absolute path '/etc'"),
    Row("new-link-dotdot", ("symlink-dotdot.patch",), phrase="points outside the target"),
    Row("new-link-into-git", ("symlink-into-git.patch",), phrase="points into .git"),
    Row(
        "new-link-through-links",
        ("symlink-chain-escape.patch",),
        phrase="points outside the target",
    ),
    Row(
        "new-link-through-outside-link",
        ("symlink-via-link-escape.patch",),
        phrase="points outside the target",
    ),
    Row("new-link-then-write", ("symlink-then-write.patch",), phrase="goes through a symlink (l)"),
    Row(
        "new-link-then-modify", ("symlink-then-modify.patch",), phrase="goes through a symlink (l)"
    ),
    Row(
        "new-link-then-write-next-patch",
        ("symlink-create-inside.patch", "write-through-l.patch"),
        phrase="patches/write-through-l.patch:1: path 'l/x' goes through a symlink (l)",
    ),
    # Links that stay inside, even through `dot -> .`, are fine.
    Row("new-links-inside", ("symlink-inside-ok.patch",), code=0, expect=links_inside),
    Row(
        "file-becomes-link-outside",
        ("file-to-symlink.patch",),
        phrase="points to absolute path '/etc/passwd'",
    ),
    # check and rebase replay patches through their own code: the same refusals.
    Row(
        "check-new-link-absolute",
        ("symlink-absolute.patch",),
        cmd=("check", "--onto", A),
        first=(("apply", "--onto", A),),
        phrase="points to absolute path '/etc'",
    ),
    Row(
        "rebase-new-link-through-links",
        ("symlink-chain-escape.patch",),
        cmd=("rebase", "--onto", A),
        first=(("apply", "--onto", A),),
        phrase="points outside the target",
    ),
    Row(
        "rebase-new-link-then-write",
        ("symlink-then-write.patch",),
        cmd=("rebase", "--onto", A),
        first=(("apply", "--onto", A),),
        phrase="goes through a symlink (l)",
    ),
    # -- NUL bytes in names
    Row("nul-raw", ("nul-raw-name.patch",), phrase="contains a NUL byte"),
    Row("nul-quoted", ("nul-quoted-name.patch",), phrase="contains a NUL byte"),
    Row("nul-rename-to", ("nul-rename-to.patch",), phrase="contains a NUL byte"),
    Row("nul-diff-git-line", ("nul-diff-git-line.patch",), phrase="contains a NUL byte"),
    # -- truncated hunks and line counts that lie
    Row("truncated", ("truncated-hunk.patch",), phrase="truncated-hunk.patch:3: truncated hunk"),
    # GNU patch drops a last line cut short and reads a chopped blank context line in its
    # place: here one that then matches only with fuzz, as with `patch -F0`.
    Row(
        "truncated-mid-line",
        ("truncated-mid-line.patch",),
        code=3,
        phrase="applies with fuzz 1, as GNU patch would: rerun with `--fuzz 1`",
    ),
    Row(
        "truncated-after-header",
        ("truncated-after-header.patch",),
        phrase="truncated-after-header.patch:3: truncated hunk",
    ),
    # GNU patch stops reading a hunk at its counts: the rest is skipped (`lines-after-hunk`),
    # and the hunk, now without trailing context, fails at fuzz 0 as with `patch -F0`.
    Row(
        "count-too-few",
        ("count-too-few.patch",),
        code=3,
        phrase="applies with fuzz 1, as GNU patch would: rerun with `--fuzz 1`",
    ),
    Row(
        "count-too-many",
        ("count-too-many.patch",),
        phrase="count-too-many.patch:3: truncated hunk: header says 9 old and 9 new lines",
    ),
    Row(
        "count-too-many-next-file",
        ("count-too-many-next-file.patch",),
        phrase="count-too-many-next-file.patch:10: hunk header says 5 old and 5 new lines, "
        "found 4 and 4",
    ),
    Row("count-huge", ("count-huge.patch",), phrase="truncated hunk"),
    Row("start-at-line-zero", ("hunk-at-line-zero.patch",), phrase="puts lines at line 0"),
    Row(
        "hunk-outside-section",
        ("hunk-outside-section.patch",),
        phrase="hunk outside any file section",
    ),
    # A start line far past the end: found by offset, as git apply finds it.
    Row(
        "start-line-huge",
        ("hunk-start-huge.patch",),
        code=0,
        expect=file_is("lines.txt", LINES.replace("line 10\n", "LINE 10\n").encode()),
    ),
    # -- hunks out of order or overlapping
    # GNU patch looks for a hunk stated before the last one after it ("misordered hunks"):
    # not there, it fails, and so does patchq (a conflict, nothing changed).
    Row(
        "hunks-out-of-order",
        ("hunks-out-of-order.patch",),
        code=3,
        phrase="lines.txt: hunk #2 (patch line 8, file line 2) failed",
    ),
    # The second hunk changes a line of the first's trailing context: GNU patch applies
    # both (it freezes the file only up to a hunk's last change).
    Row(
        "hunks-overlap",
        ("hunks-overlap.patch",),
        code=0,
        expect=lambda env: _expect_file(
            env, "lines.txt", LINES.replace("line 4\n", "LINE 4\n").replace("line 6\n", "LINE 6\n")
        ),
    ),
    # -- two sections for one file
    Row(
        "two-sections-conflict",
        ("two-sections-conflict.patch",),
        code=3,
        phrase="a.txt: hunk #1 (patch line 10, file line 1) failed",
    ),
    Row(
        "two-sections-delete-then-modify",
        ("two-sections-delete-then-modify.patch",),
        code=3,
        phrase="'a.txt' does not exist",
    ),
    Row(
        "two-sections-create-twice",
        ("two-sections-create-twice.patch",),
        code=3,
        phrase="'new.txt' already exists",
    ),
    Row(
        "two-sections-in-sequence",
        ("two-sections-in-sequence.patch",),
        code=0,
        expect=file_is("a.txt", b"a\nBB\nc\n"),
    ),
    # -- bytes that must come through unchanged
    Row(
        "non-utf8-content",
        ("non-utf8-content.patch",),
        code=0,
        expect=file_is("latin1.txt", b"caf\xe9\nNA\xcfVE \x80\x81\n\xff\xfe\n"),
    ),
    Row(
        "non-utf8-name",
        ("non-utf8-name-raw.patch",),
        code=0,
        expect=both(file_is(b"caf\xe9/r\xe9sum\xe9.txt", b"\xe9t\xe9\n"), verifies),
    ),
    Row(
        "non-utf8-name-quoted",
        ("non-utf8-name-quoted.patch",),
        code=0,
        expect=file_is(b"caf\xe9.txt", b"x\n"),
    ),
    Row(
        "newline-in-name",
        ("newline-in-name.patch",),
        code=0,
        expect=file_is(b"two\nlines.txt", b"x\n"),
    ),
    Row(
        "crlf-and-lf-mixed",
        ("crlf-lf-mixed.patch",),
        code=0,
        expect=file_is("mixed.txt", b"one\r\nTWO\r\nthree\r\nFOUR\nfour and a half\r\nfive\r\n"),
    ),
    # -- the 50 MB file, and a 50 MB patch
    Row("50mb-file", code=0, prepare=big_file, expect=expect_big_file),
    Row("50mb-patch", code=0, prepare=big_patch, expect=expect_big_patch),
    # -- odd shapes
    Row("deep-path", ("deep-path.patch",), code=0, expect=deep_path),
    Row("name-too-long", ("long-name.patch",), phrase="longer than 255 bytes"),
    Row("directory-as-file", ("directory-as-file.patch",), phrase="'sub' is a directory"),
    Row("through-a-file", ("through-a-file.patch",), phrase="goes through a file (a.txt)"),
    Row("binary", ("binary-literal.patch",), phrase="binary patch for 'a.txt'"),
    # -- the series
    Row(
        "series-missing-file",
        series="nope.patch\n",
        phrase="patch 'nope.patch' is in the series but its file is missing",
    ),
    Row(
        "series-twice",
        ("simple.patch",),
        series="simple.patch\nsimple.patch\n",
        phrase="series:2: patch 'simple.patch' is listed twice (first on line 1)",
    ),
    Row(
        "series-leaves-patches",
        series="../../outside/victim.txt\n",
        phrase="unsafe patch name '../../outside/victim.txt'",
    ),
    Row("series-absolute", series="/etc/passwd\n", phrase="unsafe patch name '/etc/passwd'"),
    Row(
        "series-symlink-out-of-patches",
        series="evil.patch\n",
        prepare=link_in_patches,
        phrase="patch 'evil.patch' resolves outside patches/",
    ),
    Row(
        "series-directory",
        series="adir.patch\n",
        prepare=dir_in_patches,
        phrase="patch 'adir.patch' is a directory",
    ),
    Row(
        "series-bad-option",
        ("simple.patch",),
        series="simple.patch -R\n",
        phrase="series:1: unexpected option '-R'",
    ),
    Row(
        "series-second-patch-bad",
        ("simple.patch", "truncated-hunk.patch"),
        phrase="truncated-hunk.patch:3: truncated hunk",
    ),
    Row(
        "series-non-utf8-name",
        code=0,
        prepare=non_utf8_patch_name,
        expect=both(file_is("a.txt", b"A\nb\nc\n"), verifies),
    ),
    # -- -p levels
    Row(
        "strip-too-much",
        ("simple.patch",),
        series="simple.patch -p2\n",
        phrase="simple.patch:1: -p2 strips the whole of 'a/a.txt'",
    ),
    Row(
        "strip-far-too-much",
        ("simple.patch",),
        series="simple.patch -p99999999999999999999\n",
        phrase="strips the whole of 'a/a.txt'",
    ),
    Row(
        "strip-too-little",
        ("simple.patch",),
        series="simple.patch -p0\n",
        code=3,
        phrase="'a/a.txt' does not exist",
    ),
    # -- other formats than unified diffs
    Row("ed-script", ("ed-script.patch",), phrase="ed-script diff; patchq takes only unified"),
    Row("ed-script-after-text", ("ed-script-after-text.patch",), phrase="ed-script diff"),
    Row("context-diff", ("context-diff.patch",), phrase="context-format diff; patchq takes only"),
    Row("normal-diff", ("normal-diff.patch",), phrase="normal-format diff; patchq takes only"),
    # -- import
    Row("import-absolute", cmd=("import", "{hostile}/abs-path.patch"), phrase="absolute path"),
    Row("import-ed-script", cmd=("import", "{hostile}/ed-script.patch"), phrase="ed-script diff"),
    Row("import-nul", cmd=("import", "{hostile}/nul-raw-name.patch"), phrase="NUL byte"),
    Row(
        "import-mbox-hundreds",
        cmd=("import", "--mbox", "{tmp}/series.mbox"),
        code=0,
        prepare=mbox,
        expect=expect_mbox,
    ),
    Row(
        "import-mbox-one-broken",
        cmd=("import", "--mbox", "{tmp}/series.mbox"),
        prepare=lambda e: mbox(e, broken=250),
        phrase="series.mbox:3998: hunk header says 3 old and 3 new lines, found 2 and 1",
    ),
    Row(
        "import-mbox-hostile-subject",
        cmd=("import", "--mbox", "{tmp}/series.mbox"),
        code=0,
        prepare=lambda e: mbox(e, subject="../../../etc/passwd"),
        expect=imported_as("0001-etc-passwd.patch"),
    ),
    Row(
        "import-quilt-twice",
        cmd=("import", "--quilt", "{tmp}/quilt"),
        prepare=lambda e: quilt_dir(e, "simple.patch\nsimple.patch\n"),
        phrase="series:2: patch 'simple.patch' is listed twice",
    ),
    Row(
        "import-quilt-missing",
        cmd=("import", "--quilt", "{tmp}/quilt"),
        prepare=lambda e: quilt_dir(e, "simple.patch\ngone.patch\n"),
        phrase="quilt/series:2: patch file 'gone.patch' listed here is missing",
    ),
    Row(
        "import-quilt-leaves-folder",
        cmd=("import", "--quilt", "{tmp}/quilt"),
        prepare=lambda e: quilt_dir(e, "../../outside/victim.txt\n"),
        phrase="'../../outside/victim.txt'",
    ),
]


@pytest.mark.parametrize("row", TABLE, ids=[r.id for r in TABLE])
def test_hostile_input(
    row: Row, template: tuple[Path, str], queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    # Objects are immutable: link them rather than copy them (half of a row's time).
    shutil.copytree(
        template[0],
        tmp_path / "upstream",
        symlinks=True,
        copy_function=lambda a, b: os.link(a, b) if "/objects/" in a else shutil.copyfile(a, b),
    )
    env = Env(
        Upstream(tmp_path / "upstream"), queue, tmp_path / "outside", tmp_path, patchq, template[1]
    )
    env.outside.mkdir()
    (env.outside / "victim.txt").write_text("victim\n")
    for name in row.patches:
        shutil.copy(HOSTILE / name, queue.path / "patches" / name)
    if row.prepare is not None:
        row.prepare(env)  # commits what it adds to the target
    if row.series is not None:
        (queue.path / "series").write_text(row.series)
    elif row.patches and not (queue.path / "series").read_text():
        (queue.path / "series").write_text("".join(p + "\n" for p in row.patches))
    if row.prepare is not None:
        env.base = env.up.head()  # it may have committed
    series = (queue.path / "series").read_bytes()
    for cmd in row.first:
        (queue.path / "series").write_bytes(b"")
        r = patchq(*[a.format(base=env.base) for a in cmd])
        assert r.code == 0, r.err
        (queue.path / "series").write_bytes(series)
    before = snapshot(env)
    args = [a.format(base=env.base, hostile=HOSTILE, tmp=tmp_path) for a in row.cmd]
    t0 = time.monotonic()
    r = patchq(*args)
    took = time.monotonic() - t0
    assert "internal error" not in r.err and "Traceback" not in r.err, r.err
    assert r.code == row.code, r.err
    wall_clock(f"hostile row {row.id}", took, row.seconds)
    outside_untouched(env)  # whatever the outcome
    if row.code == 0:
        if row.expect is not None:
            row.expect(env)
        return
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert row.phrase in r.err
    assert snapshot(env) == before, "a refused input changed something"
