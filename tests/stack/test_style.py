"""Refresh, fold and rebase write each patch in its own style (DESIGN §2):
quilt and `diff -u` patches stay plain — their names, strip level, timestamps,
`Index:`/`diff -ruN` lines and hunk-header function context — and git-style patches stay
git-style, unless `style` in patchq.toml forces one. quilt itself, run afterwards, changes
nothing.

The patches below are written by hand in the exact shapes each tool writes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.core.patch import parse
from patchq.core.patchstyle import FUNC_DIFF, FUNC_GIT, FUNC_NONE, PLAIN, detect, diff_p_heading

from ..conftest import Queue, Result, Upstream

MAIN_C = (
    "#include <stdio.h>\n"
    "\n"
    "static int parse_configuration_file_with_long_name(const char *path)\n"
    "{\n"
    '\tFILE *f = fopen(path, "r");\n'
    "\tif (!f)\n"
    "\t\treturn -1;\n"
    "\tfclose(f);\n"
    "\treturn 0;\n"
    "}\n"
    "\n"
    "static void banner(void)\n"
    "{\n" + "".join(f'\tputs("banner line {i}");\n' for i in range(1, 9)) + "}\n"
    "\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "\tint verbose = 0;\n"
    "\tif (argc > 1)\n"
    "\t\tverbose = 1;\n"
    "\tbanner();\n"
    "\treturn parse_configuration_file_with_long_name(argv[0]) + verbose;\n"
    "}\n"
)
QUIET = "\tint verbose = 0; /* quiet */\n"
# The hunk headers' function context of the two hunks, as each tool writes it: git keeps
# 80 bytes of the function line, GNU diff -p (quilt's --show-c-function) 40.
HEADINGS = {
    FUNC_GIT: (
        " static int parse_configuration_file_with_long_name(const char *path)",
        " int main(int argc, char **argv)",
    ),
    FUNC_DIFF: (" static int parse_configuration_file_with", " int main(int argc, char **argv)"),
    FUNC_NONE: ("", ""),
}
RULE = "=" * 67 + "\n"
# style name → (header of main.c's section, the series suffix, function context)
STYLES = {
    # quilt refresh -p ab --no-timestamps --no-index (Debian), QUILT_DIFF_OPTS=-p
    "quilt-debian": ("--- a/main.c\n+++ b/main.c\n", "", FUNC_DIFF),
    # the same without function context (quilt's built-in default)
    "quilt-debian-plain": ("--- a/main.c\n+++ b/main.c\n", "", FUNC_NONE),
    # quilt's own -p1 form: Index: lines, dir.orig/ and dir/
    "quilt-default": (
        f"Index: pkg/main.c\n{RULE}--- pkg.orig/main.c\n+++ pkg/main.c\n",
        "",
        FUNC_DIFF,
    ),
    # diff -ruN of two release trees, with timestamps
    "diff-ruN": (
        "diff -ruN pkg-1.0.orig/main.c pkg-1.0/main.c\n"
        "--- pkg-1.0.orig/main.c\t2024-03-01 10:00:00.000000000 +0100\n"
        "+++ pkg-1.0/main.c\t2024-03-02 11:30:00.123456789 +0100\n",
        "",
        FUNC_NONE,
    ),
    # quilt refresh -p0: f.orig and f
    "quilt-p0": (f"Index: main.c\n{RULE}--- main.c.orig\n+++ main.c\n", " -p0", FUNC_DIFF),
    # diff -u in the tree, -p0, timestamps after the names
    "diff-u-p0": (
        "--- main.c\t2024-03-01 10:00:00 +0000\n+++ main.c\t2024-03-01 10:05:00 +0000\n",
        " -p0",
        FUNC_NONE,
    ),
    # git diff / format-patch (the index line is filled in by `git_header`)
    "git": (
        "diff --git a/main.c b/main.c\nindex {old}..{new} 100644\n--- a/main.c\n+++ b/main.c\n",
        "",
        FUNC_GIT,
    ),
}
HEADER = "Description: fix the configuration check\nAuthor: Ann <ann@example.org>\n\n"


def hunks(function: str, value: int = 2, offset: int = 0, ctx: str = "\tint verbose = 0;\n") -> str:
    """The patch's two hunks: `return 1` in the parser, `verbose = VALUE` in main."""
    h1, h2 = HEADINGS[function]
    a, b = 4 + offset, 25 + offset
    return (
        f'@@ -{a},7 +{a},7 @@{h1}\n {{\n \tFILE *f = fopen(path, "r");\n \tif (!f)\n'
        "-\t\treturn -1;\n+\t\treturn 1;\n \tfclose(f);\n \treturn 0;\n }\n"
        f"@@ -{b},7 +{b},7 @@{h2}\n {{\n {ctx} \tif (argc > 1)\n-\t\tverbose = 1;\n"
        f"+\t\tverbose = {value};\n \tbanner();\n"
        " \treturn parse_configuration_file_with_long_name(argv[0]) + verbose;\n }\n"
    )


def _hash(up: Upstream, data: str) -> str:
    proc = subprocess.run(
        ["git", "hash-object", "--stdin"], cwd=up.path, input=data.encode(), capture_output=True
    )
    return proc.stdout.decode().strip()[:12]


def header_of(style: str, up: Upstream, old: str, new: str) -> str:
    text = STYLES[style][0]
    return text.format(old=_hash(up, old), new=_hash(up, new)) if style == "git" else text


def patched(value: int = 2, offset_text: str = "", ctx: str = "\tint verbose = 0;\n") -> str:
    body = MAIN_C.replace("\t\treturn -1;\n", "\t\treturn 1;\n")
    body = body.replace("\t\tverbose = 1;\n", f"\t\tverbose = {value};\n")
    return body.replace("\tint verbose = 0;\n", ctx).replace(
        "#include <stdio.h>\n", "#include <stdio.h>\n" + offset_text
    )


def setup(
    up: Upstream, queue: Queue, style: str, patchq: Callable[..., Result]
) -> tuple[str, bytes]:
    """The base commit and the patch file in `style`, applied with `apply`."""
    up.write("main.c", MAIN_C)
    base = up.commit("base")
    header, suffix, function = STYLES[style]
    data = (HEADER + header_of(style, up, MAIN_C, patched()) + hunks(function)).encode()
    queue.add("fix.patch", data, suffix)
    r = patchq("apply", "--onto", base)
    assert r.code == 0, r.err
    return base, data


def patch_file(queue: Queue) -> bytes:
    return (queue.path / "patches" / "fix.patch").read_bytes()


def drift(up: Upstream) -> str:
    """Upstream adds an include (every hunk moves a line) and edits a context line of the
    second hunk (its text changes): a rebase must write both hunks anew."""
    back = up.git("symbolic-ref", "-q", "--short", "HEAD").strip()
    up.git("checkout", "-q", "main")
    up.write(
        "main.c",
        MAIN_C.replace("#include <stdio.h>\n", "#include <stdio.h>\n#include <string.h>\n").replace(
            "\tint verbose = 0;\n", QUIET
        ),
    )
    oid = up.commit("upstream: string.h, a quiet default")
    up.git("checkout", "-q", back)
    return oid


@pytest.mark.parametrize("style", list(STYLES))
def test_refresh_keeps_the_patch_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], style: str
) -> None:
    setup(upstream, queue, style, patchq)
    before = patch_file(queue)
    first_hunk = before[before.index(b"@@ ") : before.index(b"@@ ", before.index(b"@@ ") + 1)]
    upstream.write("main.c", patched(42))
    r = patchq("refresh")
    assert r.code == 0 and r.err.startswith("refreshed fix.patch\n"), r.err
    header, _, function = STYLES[style]
    want = HEADER + header_of(style, upstream, MAIN_C, patched(42)) + hunks(function, 42)
    assert patch_file(queue) == want.encode()
    assert first_hunk in patch_file(queue)  # the untouched hunk, byte for byte
    # Refreshing again changes nothing; the patch still applies.
    again = patch_file(queue)
    assert patchq("refresh").code == 0
    assert patch_file(queue) == again
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0


@pytest.mark.parametrize("style", list(STYLES))
def test_rebase_onto_drift_keeps_the_patch_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], style: str
) -> None:
    setup(upstream, queue, style, patchq)
    onto = drift(upstream)
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    header, _, function = STYLES[style]
    new_base = MAIN_C.replace("#include <stdio.h>\n", "#include <stdio.h>\n#include <string.h>\n")
    new_base = new_base.replace("\tint verbose = 0;\n", QUIET)
    after = patched(2, "#include <string.h>\n", QUIET)
    want = HEADER + header_of(style, upstream, new_base, after) + hunks(function, 2, 1, QUIET)
    assert patch_file(queue) == want.encode()
    assert upstream.git("rev-parse", "patchq/main~1").strip() == onto
    assert patchq("verify").code == 0


def test_diff_shows_the_top_patch_as_refresh_would_write_it(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    setup(upstream, queue, "quilt-default", patchq)
    upstream.write("main.c", patched(42))
    r = patchq("diff")
    assert (r.code, r.err) == (0, "")
    assert r.out == STYLES["quilt-default"][0] + hunks(FUNC_DIFF, 42)
    assert patchq("refresh").code == 0
    assert patch_file(queue).decode() == HEADER + r.out


def test_a_new_file_follows_the_patch_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    setup(upstream, queue, "diff-ruN", patchq)
    upstream.write("NEWS", "news\n")
    upstream.git("add", "NEWS")
    assert patchq("refresh").code == 0
    text = patch_file(queue).decode()
    # diff -N names the missing side by its name, with the epoch; the patch's own
    # sections keep their place, the new file comes after them.
    assert text == HEADER + STYLES["diff-ruN"][0] + hunks(FUNC_NONE) + (
        "diff -ruN pkg-1.0.orig/NEWS pkg-1.0/NEWS\n"
        "--- pkg-1.0.orig/NEWS\t1970-01-01 00:00:00.000000000 +0000\n"
        "+++ pkg-1.0/NEWS\t2024-03-02 11:30:00.123456789 +0100\n"
        "@@ -0,0 +1 @@\n+news\n"
    )
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0
    assert upstream.read("NEWS") == b"news\n"


def test_quilt_style_new_and_deleted_files(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("old.txt", "old\n")
    setup(upstream, queue, "quilt-default", patchq)
    upstream.write("NEWS", "news\n")
    upstream.git("add", "NEWS")
    (upstream.path / "old.txt").unlink()
    assert patchq("refresh").code == 0
    # The patch's own section first, where it was; the new ones after it, in path order.
    assert patch_file(queue).decode() == HEADER + (
        STYLES["quilt-default"][0]
        + hunks(FUNC_DIFF)
        + f"Index: pkg/NEWS\n{RULE}--- /dev/null\n+++ pkg/NEWS\n@@ -0,0 +1 @@\n+news\n"
        + f"Index: pkg/old.txt\n{RULE}--- pkg.orig/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n"
    )
    assert patchq("pop", "-a").code == 0 and patchq("push", "-a").code == 0


def test_a_repaired_header_is_written_clean_in_the_patch_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("main.c", MAIN_C)
    base = upstream.commit("base")
    spaced = (  # timestamps after spaces, as an old editor wrote them
        "--- pkg-1.16/main.c.orig   2010-05-13 04:57:46.878010140 +0100\n"
        "+++ pkg-1.16/main.c   2010-05-13 05:01:02.000000000 +0100\n"
    )
    queue.add("fix.patch", HEADER + spaced + hunks(FUNC_NONE))
    assert patchq("apply", "--onto", base).code == 0
    upstream.write("main.c", patched(42))
    assert patchq("refresh").code == 0
    assert patch_file(queue).decode() == HEADER + (
        "--- pkg-1.16/main.c.orig\t2010-05-13 04:57:46.878010140 +0100\n"
        "+++ pkg-1.16/main.c\t2010-05-13 05:01:02.000000000 +0100\n"
    ) + hunks(FUNC_NONE, 42)
    r = patchq("lint")
    assert "timestamp-after-spaces" not in r.out + r.err


def test_style_git_forces_git_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nstyle = "git"\n')
    setup(upstream, queue, "quilt-debian-plain", patchq)
    upstream.write("main.c", patched(42))
    assert patchq("refresh").code == 0
    want = HEADER + header_of("git", upstream, MAIN_C, patched(42)) + hunks(FUNC_GIT, 42)
    assert patch_file(queue) == want.encode()


def test_style_quilt_forces_quilt_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nstyle = "quilt"\n')
    setup(upstream, queue, "git", patchq)
    upstream.write("main.c", patched(42))
    assert patchq("refresh").code == 0
    want = HEADER + "--- a/main.c\n+++ b/main.c\n" + hunks(FUNC_DIFF, 42)
    assert patch_file(queue) == want.encode()


def test_a_bad_style_is_refused(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    setup(upstream, queue, "git", patchq)
    before = patch_file(queue)
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nstyle = "svn"\n')
    upstream.write("main.c", patched(42))
    r = patchq("refresh")
    assert r.code == 4
    assert r.err.count("\n") == 1 and "patchq.toml" in r.err and "`style`" in r.err
    assert "'svn'" in r.err
    assert patch_file(queue) == before


def test_fold_writes_the_top_patch_in_its_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    setup(upstream, queue, "quilt-debian", patchq)
    queue.add(
        "more.patch",
        "--- a/main.c\n+++ b/main.c\n@@ -25,7 +25,7 @@ int main(int argc, char **argv)\n {\n"
        " \tint verbose = 0;\n \tif (argc > 1)\n-\t\tverbose = 2;\n+\t\tverbose = 42;\n"
        " \tbanner();\n \treturn parse_configuration_file_with_long_name(argv[0]) + verbose;\n"
        " }\n",
    )
    r = patchq("fold", "more.patch")
    assert r.code == 0, r.err
    want = HEADER + "--- a/main.c\n+++ b/main.c\n" + hunks(FUNC_DIFF, 42)
    assert patch_file(queue) == want.encode()


# --- quilt, run afterwards, changes nothing ----------------------------------------------

QUILT = {
    # style → (quilt refresh arguments, QUILT_DIFF_OPTS, the folder quilt works in)
    "quilt-debian": (("-p", "ab", "--no-timestamps", "--no-index"), "-p", "src"),
    "quilt-debian-plain": (("-p", "ab", "--no-timestamps", "--no-index"), "", "src"),
    "quilt-default": (("--no-timestamps",), "-p", "pkg"),
}


def quilt_refreshed(up: Upstream, base: str, data: bytes, style: str, tmp: Path) -> bytes:
    """The patch after `quilt push` and `quilt refresh` in a plain copy of `base`."""
    args, opts, folder = QUILT[style]
    work = tmp / folder
    work.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", base], cwd=up.path, capture_output=True, check=True)
    subprocess.run(["tar", "-x"], cwd=work, input=archive.stdout, check=True)
    (work / "patches").mkdir()
    (work / "patches" / "fix.patch").write_bytes(data)
    (work / "patches" / "series").write_text("fix.patch\n")
    env = dict(os.environ, QUILT_DIFF_OPTS=opts)
    for step in (("push", "-q"), ("refresh", *args)):
        proc = subprocess.run(
            ["quilt", "--quiltrc", "-", *step], cwd=work, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
    return (work / "patches" / "fix.patch").read_bytes()


@pytest.mark.skipif(shutil.which("quilt") is None, reason="quilt is not installed")
@pytest.mark.parametrize("style", list(QUILT))
def test_quilt_refresh_after_patchq_changes_nothing(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], style: str, tmp_path: Path
) -> None:
    setup(upstream, queue, style, patchq)
    onto = drift(upstream)
    assert patchq("rebase", "--onto", "main").code == 0
    rebased = patch_file(queue)
    assert quilt_refreshed(upstream, onto, rebased, style, tmp_path / "rebased") == rebased
    upstream.write("main.c", upstream.read("main.c").replace(b"verbose = 2", b"verbose = 42"))
    assert patchq("refresh").code == 0
    ours = patch_file(queue)
    assert b"verbose = 42" in ours
    assert quilt_refreshed(upstream, onto, ours, style, tmp_path / "refreshed") == ours


# --- the style, read from the patch ---------------------------------------------------


def test_detect_reads_names_stamps_and_function_context() -> None:
    ruN = parse((HEADER + STYLES["diff-ruN"][0] + hunks(FUNC_NONE)).encode())
    style = detect(ruN, 1)
    assert style.kind == PLAIN and style.function == FUNC_NONE
    assert (style.old_prefix, style.new_prefix) == ("pkg-1.0.orig/", "pkg-1.0/")
    assert style.old_stamp == b"\t2024-03-01 10:00:00.000000000 +0100"
    assert style.null_stamp == b"\t1970-01-01 00:00:00.000000000 +0000"
    assert style.diff_command == b"diff -ruN" and style.null_named
    quilt = detect(parse((STYLES["quilt-p0"][0] + hunks(FUNC_DIFF)).encode(), "p", 0), 0)
    assert (quilt.old_prefix, quilt.old_suffix, quilt.index_prefix) == ("", ".orig", "")
    assert quilt.function == FUNC_DIFF
    git = detect(parse(b"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"), 1)
    assert git.kind == "git" and git.index and git.function == FUNC_GIT
    hg = b"# HG changeset patch\n# User Ann\n\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n"
    hg_style = detect(parse(hg + b"@@ -1 +1 @@\n-a\n+b\n"), 1)
    assert hg_style.kind == "git" and not hg_style.index and hg_style.function == FUNC_NONE


def test_diff_p_heading_is_gnu_diffs() -> None:
    lines = MAIN_C.encode().splitlines(keepends=True)
    assert diff_p_heading(lines, 3) == HEADINGS[FUNC_DIFF][0].encode()
    assert diff_p_heading(lines, 24) == HEADINGS[FUNC_DIFF][1].encode()
    assert diff_p_heading(lines, 1) == b""  # `#include` is no function line
    assert diff_p_heading([b"  indented\n", b"\tx\n"], 2) == b""
    assert diff_p_heading([b"$var  \r\n", b"x\n"], 1) == b" $var"


def test_a_patch_naming_a_sibling_folder_and_dot_slash_is_refreshed_in_its_style(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    """Termux writes `--- ../pkg-1.0/src/x.c` and `+++ ./src/x.c` under `-p1`: GNU patch
    takes the name that exists (the new one). Refreshing such a patch in a rebase made the
    whole rebase exit 4 ("refresh writes -p1 or -p0 patches"; 6 of 31 tuning bumps of the
    refresh corpus). It is refreshed now: a section whose shape holds keeps the
    maintainer's header byte for byte, and the patch still applies with `patch -p1`."""
    old = "".join(f"line {i}\n" for i in range(1, 21))
    upstream.write("src/x.c", old).write("src/y.c", old)
    base = upstream.commit("base")
    header_x = (
        "--- ../pkg-1.0/src/x.c\t2020-01-01 00:00:00.000000000 +0000\n"
        "+++ ./src/x.c\t2020-01-02 00:00:00.000000000 +0000\n"
    )
    data = (
        header_x
        + "@@ -5,3 +5,3 @@\n line 5\n-line 6\n+LINE 6\n line 7\n"
        + "--- ../pkg-1.0/src/y.c\n+++ ./src/y.c\n"
        + "@@ -9,3 +9,3 @@\n line 9\n-line 10\n+LINE 10\n line 11\n"
    )
    queue.add("x.patch", data)
    assert patchq("apply", "--onto", base).code == 0
    upstream.git("checkout", "-q", "main")
    upstream.write("src/x.c", "new a\nnew b\n" + old)
    upstream.write("src/y.c", old.replace("line 15\n", "line fifteen\n"))
    onto = upstream.commit("upstream moves x.c and edits y.c away from the change")
    r = patchq("rebase", "--onto", onto)
    assert r.code == 0, r.err
    text = (queue.path / "patches" / "x.patch").read_text()
    assert text.startswith(header_x + "@@ -7,3 +7,3 @@\n line 5\n-line 6\n+LINE 6\n"), text
    assert "--- ../pkg-1.0/src/y.c\n+++ ./src/y.c\n@@ -9,3 +9,3 @@\n" in text
    if shutil.which("patch") is None:
        return  # GNU patch missing: the rest is checked above
    tree = upstream.path.parent / "check"
    subprocess.run(["git", "clone", "-q", str(upstream.path), str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "checkout", "-q", onto], check=True)
    gnu = subprocess.run(
        ["patch", "-p1", "-F0", "-N", "--batch"],
        cwd=tree,
        input=text.encode(),
        capture_output=True,
    )
    assert gnu.returncode == 0, gnu.stdout
    assert (tree / "src" / "x.c").read_text().count("LINE 6") == 1
