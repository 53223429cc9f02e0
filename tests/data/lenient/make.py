"""Re-create the real-world-shaped damaged patches of tests/data/lenient/ over tree/.

Each sample is `diff -u` output over the files of tree/ (our own small C project),
damaged the way editors, mailers and old tools damage patches, or written in a shape
old tools produce (CVS, `diff -ruN`, a lone `+++`, an mbox of two messages). The
corpus is checked in; this script documents how each sample was made.
tests/test_lenient.py applies each one with GNU patch and with patchq and compares.

Usage: python tests/data/lenient/make.py   (needs GNU diff)
"""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).parent
TREE = HERE / "tree"
STAMP_A = "2010-05-13 04:57:46.878010140 +0100"
STAMP_B = "2010-05-13 05:01:12.112233445 +0100"


def udiff(path: str, new: bytes, old_label: str, new_label: str, old: bytes | None = None) -> bytes:
    """`diff -u` of tree/`path` (or `old`) against `new`, with the given labels."""
    a, b = HERE / ".a", HERE / ".b"
    a.write_bytes((TREE / path).read_bytes() if old is None else old)
    b.write_bytes(new)
    try:
        out = subprocess.run(
            ["diff", "-u", "--label", old_label, "--label", new_label, str(a), str(b)],
            capture_output=True,
        ).stdout
    finally:
        a.unlink()
        b.unlink()
    return out


def text(path: str) -> str:
    return (TREE / path).read_text()


def edit(path: str, old: str, new: str) -> bytes:
    body = text(path)
    assert old in body, (path, old)
    return body.replace(old, new, 1).encode()


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def write(name: str, data: bytes) -> None:
    (HERE / name).write_bytes(data)


def main() -> None:
    verbose = edit("src/main.c", "static int verbose;", "static int verbose = 1;")
    # 1. Blank context lines written as empty lines (an editor stripped the lone space).
    d = udiff("src/main.c", verbose, "a/src/main.c", "b/src/main.c")
    write("blank-context-stripped.patch", d.replace(b"\n \n", b"\n\n"))
    # 2. Tab-led context lines whose leading space was lost (Makefile recipes, C).
    mk = edit("Makefile", "\t$(CC) $(LDFLAGS) -o $@ $^", "\t$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^")
    d = udiff("Makefile", mk, "a/Makefile", "b/Makefile")
    write("tab-context-stripped.patch", d.replace(b"\n \t", b"\n\t"))
    # 3. Both damages in one C hunk, with a header.
    body = edit("src/main.c", "\t\tn++;\n", "\t\tn += 1;\n")
    d = udiff("src/main.c", body, "a/src/main.c", "b/src/main.c")
    write(
        "whitespace-damaged-mail.patch",
        b"From: Ada <ada@example.org>\nSubject: [PATCH] count: spell the increment out\n\n"
        + d.replace(b"\n \n", b"\n\n").replace(b"\n \t", b"\n\t"),
    )
    # 4. A section with only a `+++ ./path` line (Termux style).
    d = udiff("src/util.c", edit("src/util.c", "\treturn 2 * v;", "\treturn v + v;"), "x", "x")
    write(
        "plus-only-header.patch",
        b"Drop the multiplication.\n\n+++ ./src/util.c\n" + b"".join(lines_of(d)[2:]),
    )
    # 5. Names followed by a timestamp after spaces, not a tab.
    d = udiff(
        "src/util.h",
        edit("src/util.h", "int twice(int v);", "int twice(int v); /* 2v */"),
        "pkg-1.0/src/util.h.orig",
        "pkg-1.0/src/util.h",
    )
    ls = lines_of(d)
    ls[0] = f"--- pkg-1.0/src/util.h.orig   {STAMP_A}\n".encode()
    ls[1] = f"+++ pkg-1.0/src/util.h   {STAMP_B}\n".encode()
    write("timestamp-after-spaces.patch", b"".join(ls))
    # 6. `--- util.c.orig` / `+++ ./src/util.c` under -p1: the old name is too short.
    d = udiff(
        "src/util.c",
        edit("src/util.c", "\tif (v > hi)\n", "\tif (v >= hi)\n"),
        "util.c.orig",
        "./src/util.c",
    )
    write("orig-and-dot-names.patch", d)
    # 7. Old and new names that are different files: only the old one exists.
    d = udiff(
        "src/util.c",
        edit("src/util.c", "int twice(int v)\n", "int twice(const int v)\n"),
        "a/src/util.c",
        "b/util.c",
    )
    write("names-differ-old-exists.patch", d)
    # 8. Both names too short for -p1: the `Index:` line names the file (CVS style).
    d = udiff("README", edit("README", "None yet.", "None yet; see NEWS."), "README", "README")
    write(
        "index-names-the-file.patch",
        b"Index: hello/README\n" + b"=" * 67 + b"\n" + d,
    )
    # 9. A CVS diff of two files: Index:, ====, RCS file:, retrieving revision, diff -u -r.
    out = []
    for path, old, new in (
        ("src/main.c", "\treturn 0;\n", "\treturn fflush(stdout) ? 1 : 0;\n"),
        (
            "docs/NEWS",
            "1.0.3\n- fix the count\n",
            "1.0.4\n- flush stdout\n\n1.0.3\n- fix the count\n",
        ),
    ):
        d = udiff(
            path,
            edit(path, old, new),
            f"{path}\t25 Mar 2004 10:00:00 -0000\t1.4",
            f"{path}\t25 Mar 2004 10:10:00 -0000",
        )
        out.append(
            f"Index: {path}\n{'=' * 67}\nRCS file: /cvs/hello/{path},v\n"
            f"retrieving revision 1.4\ndiff -u -r1.4 {path}\n".encode()
            + d
        )
    write("cvs-diff.patch", b"".join(out))
    # 10. `diff -ruN` between two trees, with `Only in` lines and a new file.
    a = udiff(
        "Makefile",
        edit("Makefile", "CFLAGS ?= -O2 -Wall", "CFLAGS ?= -O2 -Wall -Wextra"),
        f"hello-1.0.orig/Makefile\t{STAMP_A}",
        f"hello-1.0/Makefile\t{STAMP_B}",
    )
    b = udiff(
        "VERSION", b"1.0.4\n", f"hello-1.0.orig/VERSION\t{STAMP_A}", f"hello-1.0/VERSION\t{STAMP_B}"
    )
    c = udiff(
        "VERSION",
        b'#!/bin/sh\nexec make "$@"\n',
        "hello-1.0.orig/build.sh\t1970-01-01 01:00:00.000000000 +0100",
        f"hello-1.0/build.sh\t{STAMP_B}",
        old=b"",
    )
    write(
        "diff-ruN-trees.patch",
        b"diff -ruN hello-1.0.orig/Makefile hello-1.0/Makefile\n"
        + a
        + b"Only in hello-1.0: build\n"
        + b"diff -ruN hello-1.0.orig/VERSION hello-1.0/VERSION\n"
        + b
        + b"diff -ruN hello-1.0.orig/build.sh hello-1.0/build.sh\n"
        + c,
    )
    # 11. A patch file converted to CRLF line ends (a Windows editor), for LF files.
    d = udiff(
        "docs/NEWS",
        edit("docs/NEWS", "- first release", "- first public release"),
        "a/docs/NEWS",
        "b/docs/NEWS",
    )
    write("crlf-patch-file.patch", b"Reword the first entry.\r\n\r\n" + d.replace(b"\n", b"\r\n"))
    # 12. Hunk lines (and a hunk header) with trailing whitespace the file has too.
    d = udiff(
        "README",
        edit(
            "README",
            "A tiny program that says hello.  \n",
            "A tiny program that says hello, politely.  \n",
        ),
        "a/README",
        "b/README",
    )
    write("trailing-whitespace.patch", d.replace(b" @@\n", b" @@ \n", 1))
    # 13. `\ No newline at end of file` in every position.
    write("no-newline-add-newline.patch", udiff("VERSION", b"1.0.3\n", "a/VERSION", "b/VERSION"))
    write("no-newline-both.patch", udiff("VERSION", b"1.0.4", "a/VERSION", "b/VERSION"))
    write(
        "no-newline-remove-newline.patch",
        udiff(
            "src/util.h",
            b"int clamp(int v, int lo, int hi);\nint twice(int v);",
            "a/src/util.h",
            "b/src/util.h",
        ),
    )
    # 14. An mbox of two messages, each with its diff and signature.
    m1 = udiff(
        "src/util.c",
        edit("src/util.c", "\t\treturn lo;\n", "\t\treturn lo; /* low */\n"),
        "a/src/util.c",
        "b/src/util.c",
    )
    m2 = udiff(
        "docs/NEWS",
        edit("docs/NEWS", "- fix the count\n", "- fix the letter count\n"),
        "a/docs/NEWS",
        "b/docs/NEWS",
    )
    msg = (
        "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
        "From: Ada <ada@example.org>\nDate: Fri, 1 Mar 2024 12:00:00 +0000\n"
        "Subject: [PATCH {n}/2] {subject}\n\n{subject}.\n---\n {file} | 2 +-\n"
        " 1 file changed, 1 insertion(+), 1 deletion(-)\n\n"
    )
    write(
        "mbox-two-messages.patch",
        msg.format(n=1, subject="util: say which bound", file="src/util.c").encode()
        + m1
        + b"-- \n2.39.2\n\n"
        + msg.format(n=2, subject="NEWS: say which count", file="docs/NEWS").encode()
        + m2
        + b"-- \n2.39.2\n\n",
    )
    # 15. Blank trailing context lines chopped off the end of the file by an editor.
    d = udiff(
        "README", edit("README", "Licence: public domain.", "Licence: CC0."), "a/README", "b/README"
    )
    assert d.endswith(b"\n \n \n"), d
    write("eof-blank-context-chopped.patch", d[: -len(b" \n")])
    # 16. Context that drifted: GNU patch's default fuzz 2 places it.
    body = edit(
        "src/main.c",
        '\tprintf("hello, %s (%zu)\\n", who, count(who));',
        '\tprintf("hello, %s! (%zu)\\n", who, count(who));',
    )
    d = udiff("src/main.c", body, "a/src/main.c", "b/src/main.c")
    write(
        "needs-fuzz.patch",
        d.replace(
            b' \t\tfprintf(stderr, "greeting %s\\n", who);',
            b' \t\tfprintf(stderr, "hello %s\\n", who);',
        ),
    )
    # 17. Repeated blocks: with fuzz, the shortened hunk matches in three places; GNU
    #     patch takes the nearest, patchq refuses the ambiguous match.
    body = edit(
        "docs/settings.conf",
        "# section 2\nenabled = true\ncolor = auto\nsize = 10\n",
        "# section 2\nenabled = true\ncolor = auto\nsize = 20\n",
    )
    d = udiff("docs/settings.conf", body, "a/docs/settings.conf", "b/docs/settings.conf")
    write(
        "ambiguous-fuzz.patch",
        d.replace(b" # section 2\n", b" # section II\n").replace(
            b" # section 3\n", b" # section III\n"
        ),
    )
    # 18. Text between file sections (a note pasted into a mail).
    x = udiff(
        "src/util.h",
        edit("src/util.h", "int clamp(", "extern int clamp("),
        "a/src/util.h",
        "b/src/util.h",
    )
    y = udiff(
        "Makefile",
        edit("Makefile", "PREFIX ?= /usr/local", "PREFIX ?= /usr"),
        "a/Makefile",
        "b/Makefile",
    )
    write("note-between-sections.patch", x + b"And the Makefile, while we are at it:\n" + y)
    # 19. A plain diff creating a file without /dev/null (`@@ -0,0`, no timestamps).
    write(
        "create-at-line-zero.patch",
        b"--- a/src/version.h\n+++ b/src/version.h\n@@ -0,0 +1,2 @@\n"
        b'+#define VERSION "1.0.4"\n+#define YEAR 2024\n',
    )


if __name__ == "__main__":
    main()
