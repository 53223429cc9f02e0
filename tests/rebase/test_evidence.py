"""Provenance, moved blocks and review hints (DESIGN §4, §5).

Each test builds a real upstream, pins a series on it with `apply`, moves upstream on and
looks at what `check --json` says and what `rebase` records. The refusals are the point:
evidence without the change stops with the evidence shown; a block moved and edited
stops saying where it went; a block moved to two places is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..conftest import Queue, Result, Upstream
from .test_check_rebase import advance, make_patch, pin, sub

PARSE = """\
#include <stdio.h>
#include <string.h>

/* Read one length-prefixed record from the stream. */
static int read_record(FILE *f, char *buf, size_t max)
{
\tunsigned char hdr[2];
\tsize_t len;

\tif (fread(hdr, 1, 2, f) != 2)
\t\treturn -1;
\tlen = (size_t)hdr[0] << 8 | hdr[1];
\tif (len > 64)
\t\treturn -1;
\tif (fread(buf, 1, len, f) != len)
\t\treturn -1;
\tbuf[len] = '\\0';
\treturn (int)len;
}

int count_records(FILE *f)
{
\tchar buf[256];
\tint n = 0;

\twhile (read_record(f, buf, sizeof buf) >= 0)
\t\tn++;
\treturn n;
}
"""

FIXED = sub(PARSE, "\tif (len > 64)\n", "\tif (len >= max)\n")


def lock(queue: Queue) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(queue.lock())
    return doc


def check(patchq: Callable[..., Result], *args: str) -> tuple[int, dict[str, Any]]:
    r = patchq("check", "--onto", "main", "--json", *args)
    assert r.code in (0, 1, 3) and r.err == "", r.err
    doc: dict[str, Any] = json.loads(r.out)
    return r.code, doc


def one(doc: dict[str, Any]) -> dict[str, Any]:
    (p,) = doc["patches"]
    assert isinstance(p, dict)
    return p


def mail(commit: str, subject: str) -> str:
    """A format-patch mail's head naming `commit` as its origin."""
    return f"From {commit} Mon Sep 17 00:00:00 2001\nSubject: [PATCH] {subject}\n\n"


def pin_made_on(
    upstream: Upstream,
    queue: Queue,
    patchq: Callable[..., Result],
    base: str,
    header: str,
    parse_c: str,
    name: str = "bound.patch",
) -> None:
    """A patch made on `base` (`header`, then src/parse.c becoming `parse_c`), pinned
    there; upstream's `main` as it was."""
    upstream.git("checkout", "-q", base)
    p = make_patch(upstream, header, {"src/parse.c": parse_c})
    upstream.git("checkout", "-q", "main")
    pin(upstream, queue, patchq, [(name, p)], base)


def start(upstream: Upstream) -> str:
    upstream.write("src/parse.c", PARSE)
    upstream.write("README", "records\n")
    return upstream.commit("import parse.c")


# --- 1. provenance --------------------------------------------------------------------


def test_a_trimmed_backport_named_by_its_origin_is_upstreamed_though_upstream_edited_it(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    # Upstream's fix touches two files; the downstream backport took only parse.c.
    fix = advance(
        upstream,
        "parse: bound records by the caller's buffer",
        {"src/parse.c": FIXED, "README": "records, bounded by the buffer\n"},
    )
    upstream.git("checkout", "-q", base)
    p = make_patch(
        upstream,
        f"Subject: bound records\n\n(cherry picked from commit {fix})\n\n",
        {"src/parse.c": FIXED},
    )
    upstream.git("checkout", "-q", "main")
    upstream.git("reset", "-q", "--hard", base)
    upstream.git("checkout", "-q", "-B", "main", fix)
    pin(upstream, queue, patchq, [("0001-bound.patch", p)], base)
    # Later upstream changed the very line again: reverse-apply and content both fail.
    later = advance(
        upstream,
        "parse: leave room for the terminator",
        {"src/parse.c": sub(FIXED, "\tif (len >= max)\n", "\tif (len + 1 > max)\n")},
    )
    code, doc = check(patchq)
    p0 = one(doc)
    assert p0["status"] == "upstreamed"
    assert p0["evidence"] == {"kind": "origin", "commit": fix}
    assert code == 1
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    rec = lock(queue)["patches"][0]
    assert rec["rebase"] == "upstreamed"
    assert rec["evidence"] == {"kind": "origin", "commit": fix}
    assert queue.series().startswith("# upstreamed in ")
    text = patchq("report").out
    assert f"evidence: origin {fix[:12]}" in text
    rj = json.loads(patchq("report", "--format", "json").out)
    assert rj["patches"][0]["evidence"] == {"kind": "origin", "commit": fix}
    assert later  # the upstream the rebase went onto


def test_the_same_patch_id_proves_an_unannotated_backport(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    p = make_patch(upstream, "Fix the bound\n\n", {"src/parse.c": FIXED})
    pin(upstream, queue, patchq, [("bound.patch", p)], base)
    fix = advance(upstream, "parse: use max as the bound", {"src/parse.c": FIXED})
    advance(
        upstream,
        "parse: terminator room",
        {"src/parse.c": sub(FIXED, "\tif (len >= max)\n", "\tif (len + 1 > max)\n")},
    )
    code, doc = check(patchq)
    assert one(doc)["status"] == "upstreamed"
    assert one(doc)["evidence"] == {"kind": "patch-id", "commit": fix}


def test_the_same_subject_and_file_with_the_change_in_that_commit(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    # Upstream's commit also fixed a comment: a different patch-id, the same subject.
    up_fixed = sub(FIXED, "length-prefixed record", "length-prefixed record, at most max")
    p = make_patch(
        upstream, "Subject: [PATCH 2/3] parse: bound records by max\n\n", {"src/parse.c": FIXED}
    )
    pin(upstream, queue, patchq, [("bound.patch", p)], base)
    fix = advance(upstream, "parse: bound records by max.", {"src/parse.c": up_fixed})
    advance(
        upstream,
        "parse: terminator room",
        {"src/parse.c": sub(up_fixed, "\tif (len >= max)\n", "\tif (len + 1 > max)\n")},
    )
    code, doc = check(patchq)
    assert one(doc)["evidence"] == {"kind": "subject", "commit": fix}
    assert one(doc)["status"] == "upstreamed"


def test_evidence_without_the_change_stops_with_the_evidence_shown(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    # Upstream fixed the same bug its own way; the patch names that commit as its origin.
    theirs = sub(PARSE, "\tif (len > 64)\n", "\tif (len > sizeof hdr * 32)\n")
    fix = advance(upstream, "parse: another bound", {"src/parse.c": theirs})
    dep3 = (
        f"Description: bound by max\nOrigin: upstream, https://example.org/parse/commit/{fix}\n\n"
    )
    pin_made_on(upstream, queue, patchq, base, dep3, FIXED)
    code, doc = check(patchq)
    assert code == 3
    p0 = one(doc)
    assert p0["status"] == "conflict"
    assert p0["evidence"] == {"kind": "origin", "commit": fix}
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3
    assert f"upstream {fix[:12]} (its origin) names it" in r.err
    assert len(r.err.strip().splitlines()) <= 2
    state = json.loads(next((upstream.path / ".git/patchq").glob("*.rebase.json")).read_text())
    assert state["current"]["evidence"] == {"kind": "origin", "commit": fix}
    assert patchq("rebase", "--abort").code == 0


def test_a_clean_patch_whose_origin_upstream_reverted_stops(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    fix = advance(upstream, "parse: bound by max", {"src/parse.c": FIXED})
    advance(upstream, 'Revert "parse: bound by max"', {"src/parse.c": PARSE})
    pin_made_on(upstream, queue, patchq, base, mail(fix, "parse: bound by max"), FIXED)
    code, doc = check(patchq)
    assert code == 3
    assert one(doc)["status"] == "conflict"
    assert one(doc)["evidence"] == {"kind": "origin", "commit": fix}
    assert all("does not hold" in h["reason"] for h in one(doc)["hunks"])


def _taken_then_changed(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], *, include: bool
) -> tuple[str, str]:
    """A patch pinned by its origin: upstream's commit that makes its hunks (a bound and a
    note on the counter, far apart, and with `include` an #include too), then an upstream
    commit rewriting the bound's line and taking the note back out. (origin, later text)"""
    far = "".join(f"/* {i} */\n" for i in range(12))
    old = sub(PARSE, "int count", far + "int count")
    if include:
        old = sub(old, "#include <string.h>\n", "#include <string.h>\n" + far)
    upstream.write("src/parse.c", old)
    base = upstream.commit("import parse.c")
    both = sub(old, "\tif (len > 64)\n", "\tif (len >= max)\n")
    both = sub(both, "\tint n = 0;\n", "\tint n = 0; /* none yet */\n")
    if include:
        both = sub(both, "#include <string.h>\n", "#include <string.h>\n#include <stddef.h>\n")
    fix = advance(upstream, "parse: bound and note", {"src/parse.c": both})
    pin_made_on(
        upstream,
        queue,
        patchq,
        base,
        mail(fix, "parse: bound and note"),
        both,
        name="0001-bound-note.patch",
    )
    later = sub(sub(both, "\tif (len >= max)\n", "\tif (len + 1 > max)\n"), " /* none yet */", "")
    advance(upstream, "parse: room for the terminator; no note", {"src/parse.c": later})
    return fix, later


def test_a_patch_whose_origin_upstream_later_edited_and_partly_reverted_is_upstreamed(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    fix, later = _taken_then_changed(upstream, queue, patchq, include=True)
    code, doc = check(patchq)
    p0 = one(doc)
    assert len(p0["hunks"]) == 3
    assert [h["status"] for h in p0["hunks"]] == ["upstreamed"] * 3
    assert p0["status"] == "upstreamed" and p0["evidence"] == {"kind": "origin", "commit": fix}
    # The include is there as the commit made it; the other two say why they differ.
    assert ["upstream changed these lines since" in h["reason"] for h in p0["hunks"]] == [
        False,
        True,
        True,
    ]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert lock(queue)["patches"][0]["rebase"] == "upstreamed"
    assert upstream.git("show", "HEAD:src/parse.c") == later  # nothing of the patch replayed


def test_an_origin_upstream_holds_is_judged_on_the_quick_tests_alone(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # The patch's origin is an ancestor of the new upstream, and one of its hunks is there
    # as the commit made it: the patch is upstream whole on that alone (as `git rebase`
    # drops it), and the slower tests of the ladder are not run for the other hunk, whose
    # context upstream edited since (the rewritten-block test would have found it there
    # too: the same outcome, a reason naming the commit instead of the block).
    far = "".join(f"/* {i} */\n" for i in range(12))
    old = sub(PARSE, "#include <string.h>\n", "#include <string.h>\n" + far)
    upstream.write("src/parse.c", old)
    base = upstream.commit("import parse.c")
    both = sub(old, "\tif (len > 64)\n", "\tif (len >= max)\n")
    both = sub(both, "#include <string.h>\n", "#include <string.h>\n#include <stddef.h>\n")
    fix = advance(upstream, "parse: bound by max", {"src/parse.c": both})
    pin_made_on(upstream, queue, patchq, base, mail(fix, "parse: bound by max"), both)
    shift = "\tlen = (size_t)hdr[0] << 8 | hdr[1];\n"
    later = sub(both, shift, "\tlen = ((size_t)hdr[0] << 8) | hdr[1];\n")
    advance(upstream, "parse: parenthesise the length", {"src/parse.c": later})
    code, doc = check(patchq)
    p0 = one(doc)
    assert p0["status"] == "upstreamed" and p0["evidence"] == {"kind": "origin", "commit": fix}
    reasons = [h["reason"] for h in p0["hunks"]]
    assert reasons == ["", f"{fix[:12]} made this change; upstream changed these lines since"]
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert lock(queue)["patches"][0]["rebase"] == "upstreamed"
    assert upstream.git("show", "HEAD:src/parse.c") == later


def test_a_patch_whose_origin_is_in_the_history_but_none_of_it_in_the_tree_stops(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # Upstream took the commit, then rewrote one of its lines and undid the other: the
    # history names it, the tree holds none of it as made. A person decides.
    _taken_then_changed(upstream, queue, patchq, include=False)
    code, doc = check(patchq)
    assert code == 3
    assert one(doc)["status"] != "upstreamed"
    assert patchq("rebase", "--onto", "main").code == 3


def test_upstreamed_by_content_names_the_upstream_commit(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    p = make_patch(upstream, "Bound by max\n\n", {"src/parse.c": FIXED})
    pin(upstream, queue, patchq, [("bound.patch", p)], base)
    # Upstream rewrote the block around the line and holds the patch's line in it.
    rewritten = sub(
        FIXED,
        "\tlen = (size_t)hdr[0] << 8 | hdr[1];\n",
        "\tlen = ((size_t)hdr[0] << 8) | (size_t)hdr[1]; /* big endian */\n",
    )
    did = advance(upstream, "parse: spell out the byte order", {"src/parse.c": rewritten})
    code, doc = check(patchq)
    assert one(doc)["status"] == "upstreamed"
    assert one(doc)["evidence"] == {"kind": "content", "commit": did}


# --- 7. moved code --------------------------------------------------------------------

UTIL = """\
#include "util.h"

int clamp(int v, int lo, int hi)
{
\tif (v < lo)
\t\treturn lo;
\tif (v > hi)
\t\treturn hi;
\treturn v;
}

/* Trim trailing blanks in place; returns the new length. */
size_t rtrim(char *s)
{
\tsize_t n = strlen(s);

\twhile (n > 0 && s[n - 1] == ' ')
\t\tn--;
\ts[n] = '\\0';
\treturn n;
}

int sign(int v)
{
\treturn (v > 0) - (v < 0);
}
"""

RTRIM = UTIL[UTIL.index("/* Trim") : UTIL.index("int sign")]
# Enough new code beside the moved block that git sees no rename.
OTHER = "".join(
    f"\nsize_t count_{c}(const char *s)\n{{\n\tsize_t n = 0;\n\n"
    f"\tfor (; *s; s++)\n\t\tn += *s == '{c}';\n\treturn n;\n}}\n"
    for c in "abcdefgh"
)


def _trim_patch(up: Upstream) -> bytes:
    return make_patch(
        up,
        "rtrim: tabs are blanks too\n\n",
        {"src/util.c": sub(UTIL, "s[n - 1] == ' ')", "(s[n - 1] == ' ' || s[n - 1] == '\\t'))")},
    )


def test_a_block_moved_to_another_file_unchanged_is_applied_there(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("src/util.c", UTIL)
    upstream.write("src/strutil.c", '#include "strutil.h"\n\n/* String helpers. */\n')
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("rtrim.patch", _trim_patch(upstream))], base)
    moved = advance(
        upstream,
        "split string helpers out of util.c",
        {
            "src/util.c": UTIL.replace(RTRIM, ""),
            "src/strutil.c": '#include "strutil.h"\n\n/* String helpers. */\n\n' + RTRIM,
        },
    )
    code, doc = check(patchq)
    assert code == 3  # a proposal (DESIGN §4.1): a person looks first
    (h,) = one(doc)["hunks"]
    assert h["method"] == "moved" and h["status"] == "merge" and h["tier"] == "proposed"
    assert h["moved_to"] == {"file": "src/strutil.c", "line": 7, "commit": moved}
    assert check(patchq, "--accept", "moved")[0] == 1
    # The rebase stops for review with the proposal applied, no markers...
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3, r.err
    assert "rtrim.patch stops for review" in r.err
    assert (
        "src/strutil.c:7 (hunk #1) by moved (its block moved to src/strutil.c:7; upstream: "
        in r.err
    )
    assert b"s[n - 1] == '\\t'" in upstream.read("src/strutil.c")
    assert b"<<<<<<<" not in upstream.read("src/strutil.c")
    status = json.loads(patchq("status", "--json").out)
    (prop,) = status["rebase"]["stopped"]["proposals"]
    evidence = prop.pop("evidence")
    assert prop == {"file": "src/strutil.c", "line": 7, "hunk": 1, "method": "moved"}
    # As the stop said it: where the block went, and the upstream commit that moved it.
    assert evidence.startswith("its block moved to src/strutil.c:7; upstream: ")
    assert f"by moved ({evidence})" in r.err
    # ...and --continue takes what the tree holds.
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert b"s[n - 1] == '\\t'" in upstream.read("src/strutil.c")
    assert upstream.read("src/util.c") == UTIL.replace(RTRIM, "").encode()
    new = (queue.path / "patches/rtrim.patch").read_bytes()
    assert b"+++ b/src/strutil.c" in new and b"src/util.c" not in new
    assert lock(queue)["patches"][0]["methods"] == ["moved"]
    assert lock(queue)["patches"][0]["rebase"] == "resolved"
    assert "its block moved to src/strutil.c:7" in patchq("report").out
    assert patchq("verify").code == 0


def test_a_file_deleted_upstream_whose_code_moved_on_is_followed(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    # The real-world "file gone upstream": util.c split in two and deleted, the rename
    # too edited for git to see it.
    upstream.write("src/util.c", UTIL)
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("rtrim.patch", _trim_patch(upstream))], base)
    advance(
        upstream,
        "util.c: split into math.c and text.c",
        {
            "src/util.c": None,
            "src/math.c": '#include "math.h"\n\n'
            + UTIL[UTIL.index("int clamp") : UTIL.index("/* Trim")]
            + UTIL[UTIL.index("int sign") :],
            "src/text.c": '#include <string.h>\n#include "text.h"\n\n' + RTRIM + OTHER,
        },
    )
    code, doc = check(patchq)
    (h,) = one(doc)["hunks"]
    assert (h["method"], h["moved_to"]["file"]) == ("moved", "src/text.c")
    assert code == 3
    r = patchq("rebase", "--onto", "main", "--accept", "moved")
    assert r.code == 1, r.err  # done, an accepted proposal to review
    assert "accepted proposal" in r.err and "rtrim.patch (moved)" in r.err
    assert lock(queue)["patches"][0]["accepted"] == ["moved"]
    assert b"'\\t'" in upstream.read("src/text.c")


def test_a_block_moved_and_edited_stops_saying_where_it_went(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("src/util.c", UTIL)
    upstream.write("src/strutil.c", '#include "strutil.h"\n')
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("rtrim.patch", _trim_patch(upstream))], base)
    edited = sub(RTRIM, "\tsize_t n = strlen(s);\n", "\tsize_t n = s ? strlen(s) : 0;\n")
    moved = advance(
        upstream,
        "move rtrim to strutil.c, accept NULL",
        {
            "src/util.c": UTIL.replace(RTRIM, ""),
            "src/strutil.c": '#include "strutil.h"\n\n' + edited,
        },
    )
    code, doc = check(patchq)
    assert code == 3
    (h,) = one(doc)["hunks"]
    assert h["status"] == "conflict"
    assert h["moved_to"] == {"file": "src/strutil.c", "line": 5, "commit": moved}
    r = patchq("rebase", "--onto", "main")
    assert r.code == 3
    assert f"its block moved to src/strutil.c:5 by {moved[:12]}" in r.err
    assert patchq("rebase", "--abort").code == 0


REWRITTEN = """\
/* Trim trailing blanks in place; returns the new length. */
size_t rtrim(char *s) {
    size_t len = strlen(s);
    for (; len && s[len - 1] == ' '; len--) {}
    s[len] = 0;
    return len;
}

"""


def test_a_look_alike_already_in_a_sibling_file_is_not_where_the_block_went(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    """The real-world miss (uftrace's script-luajit.c and script-python.c): upstream
    reformatted both files, the block is gone from its own, and a look-alike that the
    sibling file held all along must not be called the place the block moved to."""
    sibling = sub(RTRIM, "\tsize_t n = strlen(s);\n", "\tsize_t n = wcslen(s);\n")
    upstream.write("src/util.c", UTIL)
    upstream.write("src/wutil.c", '#include "wutil.h"\n\n' + sibling)
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("rtrim.patch", _trim_patch(upstream))], base)
    advance(
        upstream,
        "rtrim: rewrite; wutil.c: a comment",
        {
            "src/util.c": UTIL.replace(RTRIM, REWRITTEN),
            "src/wutil.c": '#include "wutil.h"\n/* Wide strings. */\n\n' + sibling,
        },
    )
    code, doc = check(patchq)
    (h,) = one(doc)["hunks"]
    assert code == 3, json.dumps(h)
    assert h["status"] == "conflict"
    assert h["moved_to"] is None, h


def test_a_block_moved_to_two_places_is_refused(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("src/util.c", UTIL)
    base = upstream.commit("base")
    pin(upstream, queue, patchq, [("rtrim.patch", _trim_patch(upstream))], base)
    advance(
        upstream,
        "copy rtrim into both front ends",
        {
            "src/util.c": UTIL.replace(RTRIM, ""),
            "cli/text.c": "static " + RTRIM,
            "gui/text.c": "/* gui */\nstatic " + RTRIM,
        },
    )
    code, doc = check(patchq)
    assert code == 3
    (h,) = one(doc)["hunks"]
    assert h["status"] == "conflict" and h["moved_to"] is None
    assert "more than one place" in h["reason"]
    assert "cli/text.c" in h["reason"] and "gui/text.c" in h["reason"]


def test_a_block_moved_within_its_file_is_applied_at_its_new_place(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    big = UTIL + OTHER
    upstream.write("src/util.c", big)
    base = upstream.commit("base")
    fix = ("\tsize_t n = strlen(s);\n", "\tsize_t n = s ? strlen(s) : 0;\n")
    p = make_patch(upstream, "rtrim: accept NULL\n\n", {"src/util.c": sub(big, *fix)})
    pin(upstream, queue, patchq, [("rtrim.patch", p)], base)
    # Upstream moved rtrim to the end, past much more code than it holds, and edited the
    # line above where it was: the 3-way merge cannot place the patch's hunk.
    rest = sub(big.replace(RTRIM, ""), "\treturn v;\n}\n", "\treturn v; /* in range */\n}\n")
    advance(upstream, "util.c: helpers in order of use", {"src/util.c": rest + "\n" + RTRIM})
    code, doc = check(patchq)
    (h,) = one(doc)["hunks"]
    assert (h["status"], h["method"], code) == ("merge", "moved", 3), h
    assert h["moved_to"]["file"] == "src/util.c"
    r = patchq("rebase", "--onto", "main", "--accept", "all")
    assert r.code == 1, r.err
    assert upstream.read("src/util.c").endswith(sub(RTRIM, *fix).encode())


# --- 9. review hints ------------------------------------------------------------------

CMAKE = """\
cmake_minimum_required(VERSION 3.16)
project(sgl LANGUAGES CXX)

cmake_policy(SET CMP0135 NEW)

set(CMAKE_CXX_STANDARD 17)
add_library(sgl src/sgl.cpp)
target_include_directories(sgl PUBLIC include)
install(TARGETS sgl)
"""


def test_upstream_adding_a_sibling_of_the_guarded_line_is_a_hint(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    upstream.write("CMakeLists.txt", CMAKE)
    base = upstream.commit("base")
    guarded = sub(
        CMAKE,
        "cmake_policy(SET CMP0135 NEW)\n",
        "if(POLICY CMP0135)\n  cmake_policy(SET CMP0135 NEW)\nendif()\n",
    )
    p = make_patch(upstream, "Guard policies for old cmake\n\n", {"CMakeLists.txt": guarded})
    pin(upstream, queue, patchq, [("policy.patch", p)], base)
    advance(
        upstream,
        "cmake: new FindCUDA policy",
        {
            "CMakeLists.txt": sub(
                CMAKE,
                "cmake_policy(SET CMP0135 NEW)\n",
                "cmake_policy(SET CMP0135 NEW)\ncmake_policy(SET CMP0146 NEW)\n",
            )
        },
    )
    code, doc = check(patchq)
    assert code >= 1
    hints = one(doc)["hints"]
    (hint,) = [x for x in hints if "upstream added" in x]
    assert "`cmake_policy(SET CMP0146 NEW)` beside `cmake_policy(SET CMP0135 NEW)`" in hint
    assert hint.startswith("CMakeLists.txt hunk #1: ")
    r = patchq("rebase", "--onto", "main", "--accept", "anchored")
    assert r.code == 1, r.err
    assert lock(queue)["patches"][0]["hints"] == hints
    # The hint is text: the rebase still did its own work, and kept both lines.
    assert b"endif()\ncmake_policy(SET CMP0146 NEW)\n" in upstream.read("CMakeLists.txt")
    assert "hint: " in patchq("report").out
    md = patchq("report", "--format", "md").out
    assert "hint: CMakeLists.txt hunk #1" in md
    html = patchq("report", "--format", "html").out
    assert "CMP0146" in html


def test_upstream_inserting_at_the_spot_the_patch_edits_is_a_hint(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    # The patch replaces the bound check (two lines); upstream put a log line inside it.
    mine = sub(PARSE, "\tif (len > 64)\n\t\treturn -1;\n", "\tif (len >= max)\n\t\treturn -1;\n")
    p = make_patch(upstream, "bound\n\n", {"src/parse.c": mine})
    pin(upstream, queue, patchq, [("bound.patch", p)], base)
    advance(
        upstream,
        "parse: log long records",
        {
            "src/parse.c": sub(
                PARSE, "\tif (len > 64)\n", '\tif (len > 64)\n\t\tfprintf(stderr, "long\\n"),\n'
            )
        },
    )
    code, doc = check(patchq)
    assert code >= 1
    hints = one(doc)["hints"]
    assert any("inserted 1 line at the spot it edits" in x for x in hints), hints


def test_no_hint_where_upstream_did_not_touch_the_file(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result]
) -> None:
    base = start(upstream)
    p = make_patch(upstream, "bound\n\n", {"src/parse.c": FIXED})
    pin(upstream, queue, patchq, [("bound.patch", p)], base)
    advance(upstream, "docs", {"README": "records and more records\n"})
    code, doc = check(patchq)
    assert (code, one(doc)["hints"], one(doc)["evidence"]) == (0, [], None)
    assert re.fullmatch(r"[0-9a-f]{40}", doc["onto"])
