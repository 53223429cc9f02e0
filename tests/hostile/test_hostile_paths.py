"""Nothing is written outside the target or into its `.git`, and the
patch repo stays inside itself.

- `.git` in every spelling git's own `verify_path` refuses (checked against git itself);
- file modes as git stores them (`100777` is `100755`, every `12xxxx` a symlink),
  directories and submodules refused before anything is written;
- a link that is harmless alone but escapes once another link exists, across the series
  and against the base's links;
- a `patches/` or `series` that is a symlink out of the patch repo is refused for writing.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.core.errors import BadInputError, UnsafePathError
from patchq.core.paths import check_path, file_mode, is_git_name, is_refused_link_name

from ..conftest import Queue, Result, Upstream, git

# Names whose first component git refuses (with core.protectNTFS and core.protectHFS,
# as on Windows and macOS), and look-alikes it takes. `\u200c` and friends are code
# points HFS+ ignores; `::$INDEX_ALLOCATION` an NTFS alternate data stream.
SPELLINGS = [
    ".git",
    ".GIT",
    ".Git",
    ".git.",
    ".git..",
    ".git ",
    ".git. ",
    ".git . .",
    ".git::$INDEX_ALLOCATION",
    ".git:stream",
    "GIT~1",
    "git~1",
    "Git~1. ",
    "git~1::$DATA",
    "sub\\.git",
    "sub\\GIT~1\\x",
    ".g\u200cit",
    ".\u200dgit",
    ".gi\u200et",
    ".git\u200f",
    "\u202a.git",
    ".G\u202eIT",
    ".g\u206ait",
    ".git\ufeff",
    # look-alikes git takes
    ".gitx",
    "x.git",
    "git",
    "git~2",
    "git~10",
    ".gi",
    ".git-backup",
    "g.it",
    ".g\u00efit",
    ".g\u2060it",  # WORD JOINER: not on HFS+'s list
    "\u200c",
]


def git_refuses(repo: Path, blob: str, path: str, mode: str = "100644") -> bool:
    proc = subprocess.run(
        [
            "git",
            "-c",
            "core.protectNTFS=true",
            "-c",
            "core.protectHFS=true",
            "update-index",
            "--add",
            "--cacheinfo",
            f"{mode},{blob},{path}",
        ],
        cwd=repo,
        capture_output=True,
    )
    return proc.returncode != 0


def refuses(path: str) -> bool:
    try:
        check_path(path, "test")
    except UnsafePathError:
        return True
    return False


def test_git_spellings_are_refused_exactly_as_git_refuses_them(upstream: Upstream) -> None:
    blob = git(upstream.path, "hash-object", "-w", "--stdin", input=b"x\n").strip()
    verdicts = {}
    for name in SPELLINGS:
        for path in (f"{name}/config", f"dir/{name}/hooks/pre-commit"):
            verdicts[path] = (git_refuses(upstream.path, blob, path), refuses(path))
    differ = {p: v for p, v in verdicts.items() if v[0] != v[1]}
    assert not differ, differ
    assert sum(g for g, _ in verdicts.values()) == 2 * 24  # the first 24 are refused


def test_symlink_names_git_refuses(upstream: Upstream) -> None:
    blob = git(upstream.path, "hash-object", "-w", "--stdin", input=b"x\n").strip()
    for name in (".gitmodules", ".GITMODULES", ".gitmodules. ", "GITMOD~1", "gi7eba~2"):
        assert git_refuses(upstream.path, blob, name, "120000"), name
        assert is_refused_link_name(name.encode()), name
    for name in (".gitmodulesx", "gitmodules", "gitmod~9", "x.gitmodules"):
        assert not git_refuses(upstream.path, blob, name, "120000"), name
        assert not is_refused_link_name(name.encode()), name
    # fsck's list as well: links git would follow out of the tree for its own reading.
    assert all(is_refused_link_name(n) for n in (b".gitattributes", b".gitignore", b".mailmap"))


def test_backslash_dotdot_and_non_utf8() -> None:
    # Stricter than git on Linux: Windows reads `a\..\..\x` as leaving the folder.
    assert refuses("a\\..\\..\\x") and refuses("..\\x") and refuses("a/b\\.\\c")
    assert not refuses("a\\b") and not refuses("back\\slash.txt")
    # Not UTF-8: cannot be `.git` on HFS+ (git: malformed, so not a match).
    assert not is_git_name(b".g\xffit") and not refuses("caf\udce9/x")


def test_file_modes_as_git_stores_them() -> None:
    for given, stored in {
        "100644": "100644",
        "100755": "100755",
        "100777": "100755",
        "100700": "100755",
        "100664": "100644",
        "100600": "100644",
        "100000": "100644",
        "120000": "120000",
        "120777": "120000",
        "120644": "120000",
    }.items():
        assert file_mode(given, "w") == stored, given
    for bad in ("040000", "40000", "160000", "0", "644", "200000", "1000644", "10064x", ""):
        with pytest.raises(BadInputError):
            file_mode(bad, "w")


# --- through the CLI -------------------------------------------------------------------


def new_file(path: str, body: str, mode: str = "100644", newline: bool = True) -> str:
    tail = "" if newline else "\n\\ No newline at end of file"
    return (
        f"diff --git a/{path} b/{path}\nnew file mode {mode}\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{body}{tail}\n"
    )


def link(path: str, to: str, mode: str = "120000") -> str:
    return new_file(path, to, mode, newline=False)


def everything(up: Upstream, queue: Queue, outside: Path) -> dict[str, object]:
    """HEAD, every ref, the index, every file under the target, queue and outside."""
    files: dict[str, object] = {}
    for root in (up.path, queue.path, outside):
        for dirpath, dirs, names in os.walk(root):
            for n in names + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
                p = os.path.join(dirpath, n)
                files[p] = os.readlink(p) if os.path.islink(p) else Path(p).read_bytes()
    files["refs"] = up.git("for-each-ref")
    files["HEAD"] = up.git("rev-parse", "HEAD")
    return files


@pytest.fixture
def target(upstream: Upstream, tmp_path: Path) -> tuple[Upstream, str, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("victim\n")
    upstream.write("a.txt", "a\n").write("sub/f.txt", "f\n")
    os.symlink("x/..", upstream.path / "up")  # the root while `x` is nothing
    base = upstream.commit("base")
    return upstream, base, outside


Run = Callable[..., Result]

REFUSED = [
    ("zero-width-joiner", [new_file(".g\u200cit/config", "[core]")], "goes into .git"),
    ("bidi-override", [new_file(".G\u202eIT/hooks/post-checkout", "evil")], "goes into .git"),
    ("byte-order-mark", [new_file("sub/.git\ufeff/config", "x")], "goes into .git"),
    ("ntfs-stream", [new_file(".git::$INDEX_ALLOCATION/config", "x")], "goes into .git"),
    ("ntfs-short-name", [new_file("GIT~1/config", "x")], "goes into .git"),
    ("trailing-dot-space", [new_file(".git. /config", "x")], "goes into .git"),
    ("backslash", [new_file("sub\\.git\\config", "x")], "goes into .git"),
    ("backslash-dotdot", [new_file("..\\..\\x", "x")], "between backslashes"),
    ("gitmodules-link", [link(".gitmodules", "a.txt")], "git reads as its own file"),
    # every 12xxxx mode is a link: `120777` must meet the same check as `120000`
    ("odd-link-mode", [link("l", "../outside/victim.txt", "120777")], "points outside"),
    ("submodule-mode", [new_file("m", "Subproject commit 0", "160000")], "is a submodule"),
    ("directory-mode", [new_file("d", "x", "040000")], "is a directory"),
    ("bad-mode", [new_file("d", "x", "100999")], "unknown file mode"),
    # a later link makes an earlier, harmless one escape
    ("later-link", [link("l", "s/.."), link("s", ".")], "makes symlink 'l' point outside"),
    ("same-patch", [link("l", "s/..") + link("s", ".")], "makes symlink 'l' point outside"),
    ("deeper", [link("d/e/l", "../../s/../x"), link("s", "sub/..")], "symlink 'd/e/l'"),
    # the base's `up -> x/..` is the root; a link `x -> .` makes it the root's parent
    ("base-link", [link("x", ".")], "makes symlink 'up' point outside"),
    ("chain", [link("k", "j/.."), link("j", "i"), link("i", ".")], "point outside"),
]


@pytest.mark.parametrize("patches,phrase", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_before_anything_changes(
    target: tuple[Upstream, str, Path],
    queue: Queue,
    patchq: Run,
    patches: list[str],
    phrase: str,
) -> None:
    up, base, outside = target
    for i, text in enumerate(patches):
        queue.add(f"{i}.patch", f"Patch {i}\n\n---\n{text}")
    before = everything(up, queue, outside)
    r = patchq("apply", "--onto", base)
    assert r.code == 4, r.err
    assert len(r.err.strip().splitlines()) == 1 and phrase in r.err, r.err
    assert everything(up, queue, outside) == before


def test_modes_are_normalised_and_harmless_links_work(
    target: tuple[Upstream, str, Path], queue: Queue, patchq: Run
) -> None:
    up, base, _ = target
    queue.add("modes.patch", "Modes\n\n---\n" + new_file("run.sh", "echo hi", "100777"))
    queue.add(
        "keep.patch", "Chmod\n\n---\ndiff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100700\n"
    )
    # `s` first points nowhere and then somewhere inside: `l -> s/..` stays inside.
    queue.add("links.patch", "Links\n\n---\n" + link("l", "s/..") + link("s", "sub/deeper"))
    queue.add("links2.patch", "Relink\n\n---\n" + link("t", "sub"))
    r = patchq("apply", "--onto", base)
    assert r.code == 0, r.err
    listing = up.git("ls-tree", "-r", "HEAD")
    assert "100755 blob" in next(x for x in listing.splitlines() if x.endswith("\trun.sh"))
    assert "100755 blob" in next(x for x in listing.splitlines() if x.endswith("\ta.txt"))
    assert os.readlink(up.path / "l") == "s/.." and os.readlink(up.path / "t") == "sub"
    fsck = subprocess.run(
        ["git", "fsck", "--strict", "--no-dangling"], cwd=up.path, capture_output=True
    )
    assert fsck.returncode == 0 and fsck.stderr == b"" and fsck.stdout == b"", fsck
    assert patchq("verify").code == 0


# --- the patch repo stays inside itself ------------------------------------------------


def snapshot_dir(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for dirpath, dirs, names in os.walk(root):
        for n in names + dirs:
            p = os.path.join(dirpath, n)
            if os.path.islink(p):
                out[p] = os.readlink(p)
            elif os.path.isfile(p):
                out[p] = Path(p).read_bytes()
    return out


@pytest.mark.parametrize("what", ["patches", "series", "series.lock"])
def test_a_symlink_out_of_the_patch_repo_is_refused_for_writing(
    target: tuple[Upstream, str, Path], queue: Queue, patchq: Run, tmp_path: Path, what: str
) -> None:
    up, base, _ = target
    queue.add("one.patch", "One\n\n---\n" + new_file("one.txt", "one"))
    assert patchq("apply", "--onto", base).code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = queue.path / what
    moved = elsewhere / what
    os.rename(real, moved)
    os.symlink(moved, real)
    (tmp_path / "two.diff").write_text("Two\n\n---\n" + new_file("two.txt", "two"))
    before = snapshot_dir(elsewhere), snapshot_dir(queue.path), up.git("rev-parse", "HEAD")
    for cmd in (("import", str(tmp_path / "two.diff")), ("new", "three.patch")):
        r = patchq(*cmd)
        assert r.code == 5, (cmd, r.err)
        assert len(r.err.strip().splitlines()) == 1, r.err
        assert f"{what} is a symlink out of the patch repo" in r.err, r.err
        assert (snapshot_dir(elsewhere), snapshot_dir(queue.path)) == before[:2]
        assert up.git("rev-parse", "HEAD") == before[2]
    # Reading through it is fine.
    assert patchq("series").code == 0


def test_a_symlink_inside_the_patch_repo_is_fine(
    target: tuple[Upstream, str, Path], queue: Queue, patchq: Run, tmp_path: Path
) -> None:
    (queue.path / "debian").mkdir()
    os.rename(queue.path / "patches", queue.path / "debian" / "patches")
    os.symlink("debian/patches", queue.path / "patches")
    (tmp_path / "two.diff").write_text("Two\n\n---\n" + new_file("two.txt", "two"))
    r = patchq("import", str(tmp_path / "two.diff"))
    assert r.code == 0, r.err
    assert os.listdir(queue.path / "debian" / "patches") == ["two.diff"]


def test_skip_never_deletes_through_a_folder_made_a_symlink_during_the_stop(
    target: tuple[Upstream, str, Path], queue: Queue, patchq: Run
) -> None:
    # At the stop the patch's new file `newdir/x` is in the working tree; the person
    # replaces `newdir` with a link to a folder outside holding an `x` of its own.
    up, base, outside = target
    up.write("c.txt", "one\n")
    base = up.commit("c")
    queue.add(
        "two.patch",
        "Two\n\n---\n"
        + new_file("newdir/x", "mine")
        + "diff --git a/c.txt b/c.txt\n--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-one\n+ONE\n",
    )
    assert patchq("apply", "--onto", base).code == 0
    up.git("checkout", "-q", "main")
    up.write("c.txt", "uno\n").commit("upstream edits c")
    up.git("checkout", "-q", "patchq/main")
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert (up.path / "newdir" / "x").read_text() == "mine\n"
    (outside / "x").write_text("keep me\n")
    (up.path / "newdir" / "x").unlink()
    (up.path / "newdir").rmdir()
    os.symlink(outside, up.path / "newdir")
    r = patchq("rebase", "--skip")
    assert (outside / "x").read_text() == "keep me\n"
    assert r.code == 0, r.err
    assert os.readlink(up.path / "newdir") == str(outside)
