"""importers: loose files, mbox (real `git format-patch --stdout` output), quilt series.

Pure functions over bytes; the mbox inputs come from real git runs in sealed temporary
repositories (own HOME, no system config, fixed identities and dates).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.core.errors import BadInputError
from patchq.core.header import HeaderInfo, commit_message, header_info
from patchq.core.patch import parse
from patchq.core.paths import check_name
from patchq.formats.importers import (
    Incoming,
    MboxImport,
    Skipped,
    from_files,
    from_mbox,
    from_quilt,
    slug,
)

from ..conftest import wall_clock

DATA = Path(__file__).resolve().parent.parent / "data"
CORPUS = DATA / "patches"

# 2024-03-01T12:00:00+0100, the authors' date below.
ADA_DATE = 1709290800


# --- a sealed git repository ------------------------------------------------------------


class Repo:
    """A throwaway git repository driven with an explicit, sealed environment."""

    def __init__(self, tmp: Path) -> None:
        home = tmp / "home"
        home.mkdir()
        self.path = tmp / "repo"
        self.path.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PATCHQ_"))}
        self.env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            GIT_CONFIG_NOSYSTEM="1",
            LC_ALL="C",
            TZ="UTC",
            GIT_EDITOR="false",
            GIT_PAGER="cat",
            GIT_COMMITTER_NAME="Up Stream",
            GIT_COMMITTER_EMAIL="up@example.org",
            GIT_COMMITTER_DATE="1700000000 +0000",
        )
        self.git("init", "-q", "-b", "main")
        self.git("config", "core.abbrev", "7")

    def git(
        self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
    ) -> bytes:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.path,
            input=input,
            capture_output=True,
            env={**self.env, **(env or {})},
        )
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout

    def commit(
        self,
        files: dict[str, str],
        message: str,
        author: str = "Ada Lovelace",
        email: str = "ada@example.org",
        date: str = "2024-03-01T12:00:00+0100",
    ) -> None:
        for name, text in files.items():
            p = self.path / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        self.git("add", "-A")
        self.git(
            "commit",
            "-q",
            "--allow-empty",
            "-F",
            "-",
            input=message.encode(),
            env={"GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date},
        )


def lines(a: int, b: int) -> str:
    return "".join(f"line {i}\n" for i in range(a, b + 1))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path)
    r.commit({"hello.c": lines(1, 20), "README": "hello\n"}, "base")
    return r


@pytest.fixture
def three(repo: Repo) -> bytes:
    """`git format-patch --stdout --cover-letter` of three commits, one sent for its author."""
    repo.commit(
        {"hello.c": lines(1, 3) + "line three\n" + lines(5, 20)},
        "count: use size_t for lengths\n\nA string can be longer than INT_MAX.\n\n"
        "Signed-off-by: Ada Lovelace <ada@example.org>\n",
    )
    repo.commit(
        {"README": "Grüße\n"},
        "Grüße aus Köln: translate the greeting\n",
        author="Jörg Müller",
        email="joerg@example.de",
        date="2024-03-02T08:30:00-0130",
    )
    repo.commit(
        {"hello.c": lines(1, 3) + "line three\n" + lines(5, 19) + "line twenty\n"},
        "A rather long subject line that git format-patch will certainly fold when "
        "it writes the mail header\n",
    )
    return repo.git(
        "format-patch",
        "--stdout",
        "--cover-letter",
        "--from=Sender <s@example.org>",
        "main~3..main",
    )


def envelope_offsets(mbox: bytes) -> list[int]:
    return [m.start() for m in re.finditer(rb"^From [0-9a-f]{40} ", mbox, re.M)]


def line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


# --- slug -------------------------------------------------------------------------------

GIT_SUBJECTS = [
    "count: use size_t for lengths",
    "Jörg's fix",
    "[media] xxxxxxxxxx. . . .y",
    "x__y..z   w",
    "Fix: tabs\tand  spaces",
    "A very long subject line with many words that goes past the limit of fifty-two "
    "characters easily here",
]


def test_slug_matches_git_format_patch_file_names(repo: Repo, tmp_path: Path) -> None:
    for i, subject in enumerate(GIT_SUBJECTS):
        repo.commit({"README": f"{i}\n"}, subject + "\n")
    out = tmp_path / "out"
    repo.git("format-patch", "-q", "-o", str(out), f"main~{len(GIT_SUBJECTS)}..main")
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"{i:04d}-{slug(s)}.patch" for i, s in enumerate(GIT_SUBJECTS, 1)]
    assert names[5] == "0006-A-very-long-subject-line-with-many-words-that-goes-p.patch"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("count: use size_t for lengths", "count-use-size_t-for-lengths"),
        ("CMake: Keep Case", "CMake-Keep-Case"),
        # git keeps a leading `.` (`.gitignore-fix`); we strip it, no hidden-looking names.
        (".gitignore: fix", "gitignore-fix"),
        # git leaves the `-` the cut ends on (`aaa…a-`); we drop it.
        ("a" * 51 + " bcd", "a" * 51),
        ("...", ""),
        ("", ""),
        ("--- [PATCH] ---", "PATCH"),
        ("a..b...c", "a.b.c"),
    ],
)
def test_slug(text: str, expected: str) -> None:
    assert slug(text) == expected


@given(st.text())
def test_slug_is_always_a_safe_name_part(text: str) -> None:
    s = slug(text)
    assert len(s) <= 52
    assert re.fullmatch(r"([A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?)?", s)
    assert ".." not in s
    if s:
        check_name(f"0001-{s}.patch", "test")


# --- header_info ------------------------------------------------------------------------


def test_header_of_git_format_patch_from_the_corpus() -> None:
    p = parse((CORPUS / "git-format-patch.patch").read_bytes())
    assert header_info(p.header) == HeaderInfo(
        "Ada Lovelace",
        "ada@example.org",
        1709294400,
        "+0000",
        "count: use size_t for lengths",
        "A string can be longer than INT_MAX on 64-bit hosts.",
    )


def test_header_without_stat_or_signature() -> None:
    p = parse((CORPUS / "git-format-patch-no-signature.patch").read_bytes())
    assert header_info(p.header) == HeaderInfo(
        "Ada Lovelace",
        "ada@example.org",
        1709294400,
        "+0000",
        "count: use size_t for lengths",
        "A string can be longer than INT_MAX on 64-bit hosts.",
    )


def test_rfc2047_subject_and_author_and_folded_subject(three: bytes) -> None:
    # The mail's own From: is the sender; the in-body From: names the author (git am).
    assert b"Subject: [PATCH 2/3] =?UTF-8?q?Gr=C3=BC=C3=9Fe" in three
    assert (
        b"Subject: [PATCH 3/3] A rather long subject line that git format-patch will\n"
        b" certainly fold" in three
    )
    msgs = [
        three[a:b]
        for a, b in zip(
            envelope_offsets(three), envelope_offsets(three)[1:] + [len(three)], strict=True
        )
    ]
    infos = [header_info(parse(m).header) for m in msgs[1:]]
    assert infos == [
        HeaderInfo(
            "Ada Lovelace",
            "ada@example.org",
            ADA_DATE,
            "+0100",
            "count: use size_t for lengths",
            "A string can be longer than INT_MAX.\n\nSigned-off-by: Ada Lovelace <ada@example.org>",
        ),
        HeaderInfo(
            "Jörg Müller",
            "joerg@example.de",
            1709373600,
            "-0130",
            "Grüße aus Köln: translate the greeting",
            "",
        ),
        HeaderInfo(
            "Ada Lovelace",
            "ada@example.org",
            ADA_DATE,
            "+0100",
            "A rather long subject line that git format-patch will certainly fold "
            "when it writes the mail header",
            "",
        ),
    ]


def test_encoded_words_in_a_hand_written_header() -> None:
    header = (
        b"From: =?UTF-8?q?Doe=2C_J=C3=B6rg?= <jd@example.org>\n"
        b"Date: Mon, 2 Jan 2006 15:04:05 -0000\n"
        b"Subject: [RFC PATCH v2 07/12] =?ISO-8859-1?Q?caf=E9?=\n"
        b" =?ISO-8859-1?Q?_cr=E8me?=\n"
        b"\n"
        b"Body.\n"
    )
    assert header_info(header) == HeaderInfo(
        "Doe, Jörg", "jd@example.org", 1136214245, "+0000", "café crème", "Body."
    )


def test_subject_prefixes_other_than_patch_are_kept() -> None:
    info = header_info(b"Subject: [PATCH net-next] [media] Re: fix it\n\n")
    assert info.subject == "[media] Re: fix it"


def test_quoted_author_and_date_without_zone() -> None:
    info = header_info(
        b'From: "Roe, Jane" <jane@example.org>\nDate: Mon, 2 Jan 2006 15:04:05\nSubject: x\n\n'
    )
    assert info == HeaderInfo("Roe, Jane", "jane@example.org", 1136214245, None, "x", "")


def test_header_of_git_show_output(repo: Repo) -> None:
    repo.commit({"README": "bye\n"}, "Say goodbye\n\nThe README said hello.\n\n    code block\n")
    p = parse(repo.git("show", "--no-color", "HEAD"))
    assert header_info(p.header) == HeaderInfo(
        "Ada Lovelace",
        "ada@example.org",
        ADA_DATE,
        "+0100",
        "Say goodbye",
        "The README said hello.\n\n    code block",
    )


def test_dep3_header_from_the_corpus() -> None:
    p = parse((CORPUS / "quilt-dep3-header.patch").read_bytes())
    assert header_info(p.header) == HeaderInfo(
        "Ada Lovelace",
        "ada@example.org",
        1709251200,
        "+0000",
        "make util.c count from four",
        "util.c counted from line 4 in words; make it say four.",
    )


def test_dep3_aliases_paragraphs_and_dot_lines() -> None:
    header = (
        b"Subject: Fix the frobnicator\n"
        b" The frobnicator broke with gcc 14.\n"
        b" .\n"
        b" This restores the old cast.\n"
        b"From: Jane Roe <jane@example.org>\n"
        b"Bug-Debian: https://bugs.debian.org/1\n"
        b"Last-Update: 2023-12-31\n"
        b"\n"
        b"Forwarded: https://example.org/pr/2\n"
        b"Reviewed-By: Some One <one@example.org>\n"
        b"\n"
        b"Free text after the fields.\n"
        b"---\n"
        b"Ignored: text after the dashes.\n"
    )
    assert header_info(header) == HeaderInfo(
        "Jane Roe",
        "jane@example.org",
        1703980800,
        "+0000",
        "Fix the frobnicator",
        "The frobnicator broke with gcc 14.\n\nThis restores the old cast.\n\n"
        "Free text after the fields.",
    )


def test_dep3_last_update_that_is_not_a_date() -> None:
    info = header_info(b"Description: x\nLast-Update: soon\n")
    assert info == HeaderInfo(None, None, None, None, "x", "")


def test_dep3_description_on_the_next_line() -> None:
    info = header_info(b"Description:\n Summary here\n More text.\nAuthor: A <a@b>\n")
    assert info == HeaderInfo("A", "a@b", None, None, "Summary here", "More text.")


def test_hg_export_header() -> None:
    header = (
        b"# HG changeset patch\n"
        b"# User Jane Roe <jane@example.org>\n"
        b"# Date 1136214245 -7200\n"
        b"#      Mon Jan 02 17:04:05 2006 +0200\n"
        b"# Node ID 0123456789abcdef0123456789abcdef01234567\n"
        b"# Parent  89abcdef0123456789abcdef0123456789abcdef\n"
        b"Fix the thing\n"
        b"\n"
        b"Longer text.\n"
        b"\n"
    )
    assert header_info(header) == HeaderInfo(
        "Jane Roe", "jane@example.org", 1136214245, "+0200", "Fix the thing", "Longer text."
    )


def test_free_text_header() -> None:
    header = (
        b"\n"
        b"Make the build find libfoo on Fedora   \n"
        b"\n"
        b"The pkg-config name differs there.\n"
        b"  indented detail\n"
        b"Note: this is not a field.\n"
        b"\n\n"
        b"---\n"
        b" CMakeLists.txt | 2 +-\n"
    )
    assert header_info(header) == HeaderInfo(
        None,
        None,
        None,
        None,
        "Make the build find libfoo on Fedora",
        "The pkg-config name differs there.\n  indented detail\nNote: this is not a field.",
    )


def test_free_text_starting_with_from_is_no_envelope() -> None:
    info = header_info(b"From now on, build with -O2\n\nIt is faster.\n")
    assert info == HeaderInfo(
        None, None, None, None, "From now on, build with -O2", "It is faster."
    )


def test_crlf_header() -> None:
    header = b"From: A <a@example.org>\r\nSubject: [PATCH] crlf\r\n\r\nBody line.\r\n---\r\n"
    assert header_info(header) == HeaderInfo("A", "a@example.org", None, None, "crlf", "Body line.")


@pytest.mark.parametrize(
    "header",
    [
        b"",
        b"\n\n",
        b"---\n",
        b"From \n",
        b"Subject:\n\n",
        b"From: <>\nDate: Mon, 99 Foo\n\n",
        b"Date: Mon, 2 Jan 2006 15:04:05 +9999\nSubject: \xff\xfe\n\n",
        b"From: =?utf-8?b?!!!?= <<<>>>\nSubject: =?x-unknown?q?x?=\n\n",
        b"# HG changeset patch\n# Date nonsense\n# User\n",
        b"commit 0123456\nDate: never\n",
        b"Description:\nLast-Update: 2024-13-45\n",
        b"Description: x\nLast-Update: 2024-02-30\n",
        b"# HG changeset patch\n# Date inf 0\n",
        b"# HG changeset patch\n# Date 1 999999\n",
    ],
)
def test_odd_headers_give_none_not_errors(header: bytes) -> None:
    info = header_info(header)
    assert info.date is None and info.tz is None
    assert isinstance(info.body, str)


FIELDISH = st.sampled_from(
    [
        "From ",
        "From: ",
        "Subject: ",
        "Date: ",
        "Description: ",
        "Author: ",
        "Last-Update: ",
        "# HG changeset patch",
        "# User ",
        "# Date ",
        "commit 0123456789abcdef",
        " ",
        "\t",
        "---",
        "=?utf-8?q?",
        "?=",
        "=?",
        "[PATCH 0/3]",
        "<",
        ">",
        "@",
        ",",
        '"',
        "\\",
        "\r",
        ".",
        ":",
    ]
)


@settings(max_examples=300)
@given(st.lists(st.one_of(FIELDISH, st.text(max_size=8)), max_size=30))
def test_header_info_never_raises(parts: list[str]) -> None:
    text = "".join(p + ("\n" if i % 3 == 2 else "") for i, p in enumerate(parts))
    info = header_info(text.encode("utf-8", "surrogatepass"))
    assert info.subject is None or "\n" not in info.subject


@given(st.binary(max_size=300))
def test_header_info_never_raises_on_bytes(data: bytes) -> None:
    header_info(data)


# --- commit_message ---------------------------------------------------------------------


def test_commit_message() -> None:
    info = HeaderInfo(None, None, None, None, "Fix it", "Because.\n\nSigned-off-by: A <a@b>")
    assert commit_message(info, "0001-x.patch") == "Fix it\n\nBecause.\n\nSigned-off-by: A <a@b>\n"
    assert commit_message(HeaderInfo(None, None, None, None, "Fix it", ""), "y") == "Fix it\n"
    assert (
        commit_message(
            HeaderInfo(None, None, None, None, None, "Body only."), "0003-fix-cmake.patch"
        )
        == "0003-fix-cmake.patch\n\nBody only.\n"
    )
    assert commit_message(HeaderInfo(None, None, None, None, "  ", ""), "fallback") == "fallback\n"


# --- mbox -------------------------------------------------------------------------------


def test_mbox_from_git_format_patch(three: bytes) -> None:
    env = envelope_offsets(three)
    assert len(env) == 4
    result = from_mbox(three, "q.mbox", [], 5)
    assert result == MboxImport(
        patches=(
            Incoming(
                "0005-count-use-size_t-for-lengths.patch",
                three[env[1] : env[2]],
                None,
                (),
                f"q.mbox:{line_of(three, env[1])}",
            ),
            Incoming(
                "0006-Gr-e-aus-K-ln-translate-the-greeting.patch",
                three[env[2] : env[3]],
                None,
                (),
                f"q.mbox:{line_of(three, env[2])}",
            ),
            Incoming(
                "0007-A-rather-long-subject-line-that-git-format-patch-wil.patch",
                three[env[3] :],
                None,
                (),
                f"q.mbox:{line_of(three, env[3])}",
            ),
        ),
        skipped=(Skipped("q.mbox:1", "*** SUBJECT HERE ***", "cover letter"),),
    )
    # Nothing is lost or changed: the cover letter and the patches are the mbox again.
    assert three[: env[1]] + b"".join(p.data for p in result.patches) == three
    assert [parse(p.data).paths for p in result.patches] == [
        ("hello.c",),
        ("README",),
        ("hello.c",),
    ]


def test_mbox_names_avoid_existing_names_case_insensitively(three: bytes) -> None:
    result = from_mbox(
        three,
        "q.mbox",
        [
            "0001-COUNT-use-size_t-for-lengths.patch",
            "0001-count-use-size_t-for-lengths-2.patch",
            "0002-Gr-e-aus-K-ln-translate-the-greeting.patch/x",
        ],
        1,
    )
    assert [p.name for p in result.patches] == [
        "0001-count-use-size_t-for-lengths-3.patch",
        "0002-Gr-e-aus-K-ln-translate-the-greeting-2.patch",
        "0003-A-rather-long-subject-line-that-git-format-patch-wil.patch",
    ]


def test_mbox_with_300_messages_is_fast_and_in_order(tmp_path: Path) -> None:
    r = Repo(tmp_path)
    stream = []
    for i in range(301):
        msg = f"Step {i}: append line {i} to log.txt\n".encode()
        content = "".join(f"entry {k}\n" for k in range(i + 1)).encode()
        stream.append(
            b"commit refs/heads/main\n"
            b"author Ada Lovelace <ada@example.org> %d +0000\n"
            b"committer Up Stream <up@example.org> %d +0000\n"
            b"data %d\n%s"
            b"M 100644 inline log.txt\ndata %d\n%s\n"
            % (1700000000 + i, 1700000000 + i, len(msg), msg, len(content), content)
        )
    r.git("fast-import", "--quiet", input=b"".join(stream))
    mbox = r.git("format-patch", "--stdout", "main~300..main")
    t0 = time.perf_counter()
    result = from_mbox(mbox, "big.mbox", [], 1)
    elapsed = time.perf_counter() - t0
    assert [p.name for p in result.patches] == [
        f"{i:04d}-Step-{i}-append-line-{i}-to-log.txt.patch" for i in range(1, 301)
    ]
    assert result.skipped == ()
    assert b"".join(p.data for p in result.patches) == mbox
    assert header_info(parse(result.patches[299].data).header) == HeaderInfo(
        "Ada Lovelace",
        "ada@example.org",
        1700000300,
        "+0000",
        "Step 300: append line 300 to log.txt",
        "",
    )
    wall_clock("import --mbox: 300 messages", elapsed, 2.0)
    # Linear time: ten times the messages, well under ten times quadratic's cost.
    t0 = time.perf_counter()
    assert len(from_mbox(mbox * 10, "big.mbox", [], 1).patches) == 3000
    wall_clock("import --mbox: 3,000 messages", time.perf_counter() - t0, 10.0)


def test_mbox_malformed_patch_in_the_middle_names_the_mbox_line(three: bytes) -> None:
    env = envelope_offsets(three)
    bad_at = three.index(b"@@ -1 +1 @@", env[2])
    broken = three[:bad_at] + b"@@ -1 +1,3 @@" + three[bad_at + len(b"@@ -1 +1 @@") :]
    with pytest.raises(BadInputError) as err:
        from_mbox(broken, "q.mbox", [], 1)
    sig = broken.index(b"\n-- \n", bad_at) + 1
    assert err.value.where == f"q.mbox:{line_of(broken, sig)}"
    assert err.value.what == (
        "hunk header says 1 old and 3 new lines, found 1 and 1 before this line"
    )
    assert err.value.hint == (
        f"the hunk starting on line {line_of(broken, bad_at)} has wrong line counts"
    )


def test_mbox_message_without_a_diff_is_skipped() -> None:
    mbox = (
        b"From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
        b"From: A <a@example.org>\n"
        b"Subject: Re: [PATCH 1/2] thanks\n"
        b"\n"
        b"> quoted\n"
        b"\n"
        b"From 2222222222222222222222222222222222222222 Mon Sep 17 00:00:00 2001\n"
        b"From: A <a@example.org>\n"
        b"Subject: [PATCH] add b\n"
        b"\n"
        b"From the docs: a line that starts with From but is no envelope.\n"
        b"---\n"
        b"diff --git a/b b/b\n"
        b"new file mode 100644\n"
        b"--- /dev/null\n"
        b"+++ b/b\n"
        b"@@ -0,0 +1 @@\n"
        b"+b\n"
        b"\n"
        b"From 3333333333333333333333333333333333333333 Mon Sep 17 00:00:00 2001\n"
        b"From: A <a@example.org>\n"
        b"Subject: [PATCH] no signature, no stat\n"
        b"\n"
        b"diff --git a/c b/c\n"
        b"new file mode 100644\n"
        b"--- /dev/null\n"
        b"+++ b/c\n"
        b"@@ -0,0 +1 @@\n"
        b"+c\n"
    )
    result = from_mbox(mbox, "m", [], 1)
    assert result.skipped == (Skipped("m:1", "Re: [PATCH 1/2] thanks", "no diff in this message"),)
    assert [(p.name, p.source) for p in result.patches] == [
        ("0001-add-b.patch", "m:7"),
        ("0002-no-signature-no-stat.patch", "m:20"),
    ]
    assert (
        header_info(parse(result.patches[0].data).header).body
        == "From the docs: a line that starts with From but is no envelope."
    )


def test_mbox_single_mail_without_envelope_and_crlf() -> None:
    mail = (
        b"From: A <a@example.org>\r\nSubject: [PATCH] one\r\n\r\n"
        b"diff --git a/a b/a\r\n--- a/a\r\n+++ b/a\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n"
    )
    result = from_mbox(mail, "one.eml", [], 9)
    assert result == MboxImport((Incoming("0009-one.patch", mail, None, (), "one.eml:1"),), ())


def test_mbox_empty() -> None:
    assert from_mbox(b"", "e", [], 1) == MboxImport((), ())
    assert from_mbox(b"\n\n", "e", [], 1) == MboxImport((), ())


def test_mbox_encoded_body_is_refused() -> None:
    mbox = (
        b"From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\n"
        b"From: A <a@example.org>\n"
        b"Subject: [PATCH] qp\n"
        b"Content-Transfer-Encoding: quoted-printable\n"
        b"\n"
        b"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x =3D 1\n+x =3D 2\n"
    )
    with pytest.raises(BadInputError) as err:
        from_mbox(mbox, "qp.mbox", [], 1)
    assert err.value.where == "qp.mbox:1"
    assert err.value.what == (
        "the mail is quoted-printable-encoded; patchq keeps patch bytes as they are"
    )


# --- loose files ------------------------------------------------------------------------

GIT_DIFF = (CORPUS / "git-diff.patch").read_bytes()
FORMAT_PATCH = (CORPUS / "git-format-patch.patch").read_bytes()
GIST = b"Make it count in size_t\n\nFrom a gist.\n\n" + GIT_DIFF


def test_files_keep_patch_and_diff_names_and_number_the_rest() -> None:
    got = from_files(
        [
            ("/dl/0001-count-use-size_t-for-lengths.patch", FORMAT_PATCH),
            ("/dl/fix.diff", GIT_DIFF),
            ("/dl/gist.txt", GIST),
            ("raw-diff.txt", GIT_DIFF),
        ],
        [],
        7,
    )
    assert got == [
        Incoming(
            "0001-count-use-size_t-for-lengths.patch",
            FORMAT_PATCH,
            None,
            (),
            "/dl/0001-count-use-size_t-for-lengths.patch",
        ),
        Incoming("fix.diff", GIT_DIFF, None, (), "/dl/fix.diff"),
        Incoming("0009-Make-it-count-in-size_t.patch", GIST, None, (), "/dl/gist.txt"),
        Incoming("0010-raw-diff.patch", GIT_DIFF, None, (), "raw-diff.txt"),
    ]


def test_files_taken_names_get_numbered_names() -> None:
    got = from_files(
        [
            ("a/fix.patch", GIT_DIFF),
            ("b/FIX.patch", GIST),
            ("c/fix.patch", GIT_DIFF),
            ("my fix.patch", GIT_DIFF),
        ],
        ["fix.diff", "0004-FIX.patch", "0004-fix-2.patch"],
        3,
    )
    assert [i.name for i in got] == [
        "fix.patch",
        "0004-Make-it-count-in-size_t.patch",
        "0005-fix.patch",
        "0006-my-fix.patch",
    ]
    got = from_files(
        [("x/fix.diff", GIT_DIFF)], ["FIX.DIFF", "0004-FIX.patch", "0004-fix-2.patch"], 4
    )
    assert [i.name for i in got] == ["0004-fix-3.patch"]


def test_files_p0_patch_gets_strip_zero() -> None:
    data = (CORPUS / "quilt-p0.patch").read_bytes()
    assert from_files([("quilt-p0.patch", data)], [], 1) == [
        Incoming("quilt-p0.patch", data, 0, (), "quilt-p0.patch")
    ]


@pytest.mark.parametrize(
    ("path", "what"),
    [
        (
            "/dl/.hidden.patch",
            "unsafe patch name '.hidden.patch': it starts with `.` (a hidden file)",
        ),
        ("/dl/a\\b.patch", "unsafe patch name 'a\\\\b.patch': it contains a backslash"),
        (
            "/dl/a\nb.patch",
            "unsafe patch name 'a\\nb.patch': it contains a control character or NUL",
        ),
    ],
)
def test_files_unsafe_names_are_refused(path: str, what: str) -> None:
    with pytest.raises(BadInputError) as err:
        from_files([("ok.patch", GIT_DIFF), (path, GIT_DIFF)], [], 1)
    assert (err.value.what, err.value.where) == (what, path)


def test_files_without_a_diff_are_refused() -> None:
    with pytest.raises(BadInputError) as err:
        from_files([("README.patch", b"Just text.\n")], [], 1)
    assert (err.value.what, err.value.where) == ("no diff in this file", "README.patch")


def test_files_header_only_patches_are_kept() -> None:
    empty = (CORPUS / "git-format-patch-empty.patch").read_bytes()
    dep3 = (CORPUS / "quilt-dep3-header-only.patch").read_bytes()
    assert from_files([("/dl/0001-Empty-commit.patch", empty), ("note.txt", dep3)], [], 1) == [
        Incoming("0001-Empty-commit.patch", empty, None, (), "/dl/0001-Empty-commit.patch"),
        Incoming(
            "0002-record-that-upstream-s-fix-for-42-is-not-needed-here.patch",
            dep3,
            None,
            (),
            "note.txt",
        ),
    ]


def test_files_malformed_patch_in_the_middle_raises() -> None:
    bad = (DATA / "malformed" / "hunk-count-too-many.patch").read_bytes()
    with pytest.raises(BadInputError) as err:
        from_files([("good.patch", GIT_DIFF), ("/dl/bad.patch", bad), ("more.patch", GIST)], [], 1)
    assert err.value.where is not None and err.value.where.startswith("/dl/bad.patch:")
    with pytest.raises(BadInputError) as direct:
        parse(bad, "/dl/bad.patch")
    assert err.value.line() == direct.value.line()


def test_files_quoted_printable_mail_is_refused() -> None:
    mail = b"From: A <a@b>\nSubject: x\nContent-Transfer-Encoding: base64\n\n" + GIT_DIFF
    with pytest.raises(BadInputError) as err:
        from_files([("x.patch", mail)], [], 1)
    assert err.value.what == "the mail is base64-encoded; patchq keeps patch bytes as they are"


def test_files_empty_input() -> None:
    assert from_files([], ["a.patch"], 1) == []


# --- quilt ------------------------------------------------------------------------------

QUILT_SERIES = """\
# Patches for the frobnicator
fixes/0001-p1.patch
0002-p0.patch -p0
0003-guarded.patch -p1 #+sm120 #-rocm
# 0004-disabled.patch

0005-plain.patch #+sm120 only where the arch has it
"""


def quilt_files() -> dict[str, bytes]:
    return {
        "fixes/0001-p1.patch": (CORPUS / "quilt-p1-index.patch").read_bytes(),
        "0002-p0.patch": (CORPUS / "quilt-p0.patch").read_bytes(),
        "0003-guarded.patch": (CORPUS / "quilt-dep3-header.patch").read_bytes(),
        "0005-plain.patch": GIT_DIFF,
    }


def test_quilt_series_keeps_names_strip_and_guards() -> None:
    files = quilt_files()
    got = from_quilt(QUILT_SERIES, files.__getitem__, "up/debian/patches/series", ["other.patch"])
    assert got == [
        Incoming(
            "fixes/0001-p1.patch",
            files["fixes/0001-p1.patch"],
            None,
            (),
            "up/debian/patches/fixes/0001-p1.patch",
            before=("# Patches for the frobnicator\n",),
        ),
        Incoming("0002-p0.patch", files["0002-p0.patch"], 0, (), "up/debian/patches/0002-p0.patch"),
        Incoming(
            "0003-guarded.patch",
            files["0003-guarded.patch"],
            1,
            ("+sm120", "-rocm"),
            "up/debian/patches/0003-guarded.patch",
        ),
        Incoming(
            "0005-plain.patch",
            GIT_DIFF,
            None,
            ("+sm120",),
            "up/debian/patches/0005-plain.patch",
            before=("# 0004-disabled.patch\n", "\n"),
        ),
    ]


def test_quilt_reads_from_a_real_folder(tmp_path: Path) -> None:
    qdir = tmp_path / "patches"
    for name, data in quilt_files().items():
        (qdir / name).parent.mkdir(parents=True, exist_ok=True)
        (qdir / name).write_bytes(data)
    got = from_quilt(QUILT_SERIES, lambda n: (qdir / n).read_bytes(), "patches/series", [])
    assert [i.name for i in got] == [
        "fixes/0001-p1.patch",
        "0002-p0.patch",
        "0003-guarded.patch",
        "0005-plain.patch",
    ]
    (qdir / "0003-guarded.patch").unlink()
    with pytest.raises(BadInputError) as err:
        from_quilt(QUILT_SERIES, lambda n: (qdir / n).read_bytes(), "patches/series", [])
    assert err.value.line() == (
        "patches/series:4: patch file '0003-guarded.patch' listed here "
        "is missing — expected it at patches/0003-guarded.patch"
    )


@pytest.mark.parametrize(
    ("existing", "what"),
    [
        (["0002-p0.patch"], "patch '0002-p0.patch' is already in the patch repo"),
        (
            ["0002-P0.PATCH"],
            "patch '0002-p0.patch' clashes with '0002-P0.PATCH' already in the patch repo",
        ),
        (["fixes"], "patch 'fixes/0001-p1.patch' clashes with 'fixes' already in the patch repo"),
        (
            ["0005-plain.patch/old.patch"],
            "patch '0005-plain.patch' clashes with '0005-plain.patch/old.patch' already in "
            "the patch repo",
        ),
    ],
)
def test_quilt_name_clash_names_both(existing: list[str], what: str) -> None:
    with pytest.raises(BadInputError) as err:
        from_quilt(QUILT_SERIES, quilt_files().__getitem__, "q/series", existing)
    assert err.value.what == what
    assert err.value.where is not None and err.value.where.startswith("q/series:")


def test_quilt_case_clash_inside_the_series() -> None:
    files = {"a.patch": GIT_DIFF, "A.patch": GIT_DIFF}
    with pytest.raises(BadInputError) as err:
        from_quilt("a.patch\nA.patch\n", files.__getitem__, "q/series", [])
    assert err.value.line() == (
        "q/series:2: patch 'A.patch' clashes with 'a.patch' on line 1 "
        "of this series — rename or delete one of them first"
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../evil.patch", "has an empty, `.` or `..` component"),
        ("fixes/../../evil.patch", "has an empty, `.` or `..` component"),
        ("/etc/evil.patch", "is absolute"),
        (".hidden.patch", "starts with `.` (a hidden file)"),
        ("fixes/.git/config", "starts with `.` (a hidden file)"),
        ("a\\b.patch", "contains a backslash"),
        ("a//b.patch", "has an empty, `.` or `..` component"),
    ],
)
def test_quilt_unsafe_names_are_refused(name: str, problem: str) -> None:
    series = f"ok.patch\n{name}\n"
    files = {"ok.patch": GIT_DIFF}
    with pytest.raises(BadInputError) as err:
        from_quilt(series, lambda n: files.get(n, GIT_DIFF), "q/series", [])
    assert err.value.what == f"unsafe patch name {name!r}: it {problem}"
    assert err.value.where == "q/series:2"


def test_quilt_malformed_patch_names_its_file() -> None:
    files = quilt_files()
    files["0003-guarded.patch"] = (DATA / "malformed" / "truncated-hunk.patch").read_bytes()
    with pytest.raises(BadInputError) as err:
        from_quilt(QUILT_SERIES, files.__getitem__, "q/series", [])
    with pytest.raises(BadInputError) as direct:
        parse(files["0003-guarded.patch"], "q/0003-guarded.patch", 1)
    assert err.value.line() == direct.value.line()


def test_quilt_p0_patch_read_at_p1_is_refused() -> None:
    files = quilt_files()
    with pytest.raises(BadInputError) as err:
        from_quilt("0002-p0.patch\n", files.__getitem__, "q/series", [])
    assert err.value.where == "q/0002-p0.patch:3"


def test_quilt_bad_series_line() -> None:
    with pytest.raises(BadInputError) as err:
        from_quilt("a.patch -R\n", quilt_files().__getitem__, "q/series", [])
    assert err.value.where == "q/series:1"


def test_quilt_header_only_patch_is_kept() -> None:
    empty = (CORPUS / "git-format-patch-empty.patch").read_bytes()
    got = from_quilt("empty.patch\n", {"empty.patch": empty}.__getitem__, "series", [])
    assert got == [Incoming("empty.patch", empty, None, (), "empty.patch")]


# --- check_name -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["a.patch", "fixes/0001-x.patch", "a-b_c.d.diff", "0001-Gr-e.patch", "x.y/z"]
)
def test_safe_names(name: str) -> None:
    check_name(name, "here")


def test_unsafe_name_error_line() -> None:
    with pytest.raises(BadInputError) as err:
        check_name("a\0b", "series:3")
    assert err.value.line() == (
        "series:3: unsafe patch name 'a\\x00b': it contains a control "
        "character or NUL — patch names are relative paths under "
        "patches/"
    )
    assert err.value.exit_code == 4


def test_the_series_and_import_share_one_name_rule(tmp_path: Path) -> None:
    """A series entry is held to the rule import uses (core/paths.py): a control
    character (here ESC, which could drive the terminal that prints the name) is refused
    there too; the series may keep a hidden name that import would not create."""
    from patchq.store.patchrepo import PatchRepo

    (tmp_path / "patches").mkdir()
    (tmp_path / "series").write_bytes(b"ok.patch\n")
    repo = PatchRepo.open(tmp_path)
    for bad in ("a\x1b[2Jb.patch", "a\\b.patch", "../x.patch", "/x.patch"):
        with pytest.raises(BadInputError, match="unsafe patch name"):
            repo.patch_path(bad)
        with pytest.raises(BadInputError, match="unsafe patch name"):
            check_name(bad, "import", new=True)
    assert repo.patch_path(".hidden.patch") == tmp_path / "patches" / ".hidden.patch"
    with pytest.raises(BadInputError, match="hidden"):
        check_name(".hidden.patch", "import", new=True)
