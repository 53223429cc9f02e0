"""Output that cannot be turned against the reader.

Patch names, subjects, paths and upstream commit subjects are anyone's text. On a
terminal an ESC or C1 sequence would drive it (clear the screen, set the title, make an
OSC 8 link), a CR overwrite the line, a bidi override reorder it; in a Markdown review a
`|` would end a table cell, a backtick close a code span, `<img>` load a remote image.
Every text renderer goes through `core/text` (`shown`, `md_code`, `md_fence`,
`json_text`), and every `--json` output is valid JSON for names that are not UTF-8.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from patchq.cli import output
from patchq.core.text import json_text, md_code, md_fence, md_text, shown

from ..conftest import Queue, Result, Upstream
from ..rebase.test_check_rebase import BASE, advance, make_patch, pin, sub

# What a terminal would act on: C0 but tab and newline, DEL, C1, bidi and separators.
DRIVES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
EVIL = "x\x1b]0;owned\x07\x1b[2J\rOK \u202etxt.exe\x9b31m\u2066|`#<img src=http://e/x.png>"


def test_shown_escapes_everything_that_drives_a_terminal() -> None:
    out = shown(EVIL + "\udcff\n")
    assert not DRIVES.search(out) and "\n" not in out
    assert out == (
        "x\\x1b]0;owned\\x07\\x1b[2J\\rOK \\u202etxt.exe\\u009b31m\\u2066|`#"
        "<img src=http://e/x.png>\\xff\\n"
    )
    assert shown("two\nlines\ttab", lines=True) == "two\nlines\ttab"
    assert shown("plain naïve ü — ok") == "plain naïve ü — ok"
    assert shown(shown(EVIL)) == shown(EVIL)  # nothing left to escape


def test_markdown_pieces_cannot_be_closed_or_made_live() -> None:
    for text in ("a`b", "``", "`", " x ", "a | b", "# head", "<img src=x>", "[l](http://e)"):
        span = md_code(text)
        fence = re.match(r"`+", span)
        assert fence is not None
        inner = span[len(fence.group()) : -len(fence.group())]
        assert "`" * len(fence.group()) not in inner, span
        assert "|" not in inner.replace("\\|", ""), span
    block = md_fence(["```", "````x", "ok"], "diff")
    assert block[0] == "`````diff" and block[-1] == "`````"
    assert md_text("# a|b *c* <b>") == "\\# a\\|b \\*c\\* &lt;b&gt;"


def test_json_text_is_valid_utf8_and_round_trips() -> None:
    doc = {"name": "caf\udce9.patch", "subject": EVIL}
    text = json_text(doc)
    text.encode("utf-8")  # strict: no lone surrogate left in the text
    assert json.loads(text) == doc
    assert not DRIVES.search(text.replace("\n", ""))
    assert "\\udce9" in text


class _Tty:
    def isatty(self) -> bool:
        return True


def test_colour_survives_and_cannot_be_forged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    painted = output.paint("ok", "green", _Tty())  # type: ignore[arg-type]
    assert output._inert(painted + " \x1b[31mfake") == "\x1b[32mok\x1b[0m \\x1b[31mfake"


# --- through the CLI --------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "patchq", *args], capture_output=True, timeout=60)


def inert(proc: subprocess.CompletedProcess[bytes]) -> str:
    """Both streams are UTF-8 and carry nothing a terminal would act on."""
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert "Traceback" not in err, err
    for stream in (out, err):
        assert not DRIVES.search(stream), stream
    return out + err


@pytest.fixture
def hostile(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> Upstream:
    """A pinned series whose name, subject and file carry hostile text, and an upstream
    commit with a hostile subject that moves the patch's lines."""
    upstream.write("f.txt", BASE).write(b"caf\xe9.txt".decode("utf-8", "surrogateescape"), "x\n")
    base = upstream.commit("base")
    p = make_patch(
        upstream,
        f"From: A <a@example.org>\nSubject: [PATCH] {EVIL}\n\nBody\n\n",
        {"f.txt": sub(BASE, "line 20\n", "LINE 20\n")},
    )
    p += (
        b"diff --git a/caf\xe9.txt b/caf\xe9.txt\n--- a/caf\xe9.txt\n+++ b/caf\xe9.txt\n"
        b"@@ -1 +1 @@\n-x\n+y\n"
    )
    pin(upstream, queue, patchq, [("evil\u202etxt.\u2067patch", p)], base)
    advance(upstream, f"Move {EVIL}", {"f.txt": "new first\n" + BASE})
    return upstream


def test_every_renderer_is_inert(hostile: Upstream, queue: Queue, tmp_path: Path) -> None:
    d = ("--dir", str(queue.path))
    seen = ""
    for args in (
        ("series", "-v"),
        ("applied",),
        ("top",),
        ("status",),
        ("header",),
        ("files",),
        ("check", "--onto", "main"),
        ("rebase", "--onto", "main", "--dry-run"),
        ("rebase", "--onto", "main"),
        ("report",),
        ("report", "--format", "md"),
    ):
        proc = cli(*d, *args)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        seen += inert(proc)
    assert "\\u202e" in seen and "\\x1b]0;owned\\x07" in seen and "\\xe9" in seen
    md = cli(*d, "report", "--format", "md").stdout.decode()
    row = next(line for line in md.splitlines() if line.startswith("| `evil"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 6  # five cells: no `|` of a subject splits one
    # Outside code spans (inert) there is no tag, link or image from the subject.
    bare = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", md)
    assert "<img" not in bare and "](http" not in bare and "<img" in md


@pytest.mark.parametrize(
    "args",
    [("check", "--onto", "main", "--json"), ("report", "--format", "json"), ("lint", "--json")],
)
def test_json_stays_valid_for_names_that_are_not_utf8(
    hostile: Upstream, queue: Queue, args: tuple[str, ...]
) -> None:
    if args[0] == "report":
        assert cli("--dir", str(queue.path), "rebase", "--onto", "main").returncode == 0
    proc = cli("--dir", str(queue.path), *args)
    assert proc.returncode in (0, 1), proc.stderr
    inert(proc)
    doc = json.loads(proc.stdout.decode("utf-8"))
    if args[0] == "check":
        files = {h["file"] for p in doc["patches"] for h in p["hunks"]}
        assert "caf\udce9.txt" in files  # the byte comes back exactly


def test_report_escapes_what_it_takes_from_series_lock(
    queue: Queue, capsys: pytest.CaptureFixture[str]
) -> None:
    """A review read from series.lock alone (no record on this machine): a `from`, a ref
    or a hint a stranger wrote there is as inert as a patch's text — no code span
    closed, no image, no table cell ended. (The lock's outcomes are checked as it is
    read: an unknown one is bad input.)"""
    from ..conftest import run_inprocess

    evil = "`![](//e.co)"
    lock = {
        "version": 1,
        "base": "a" * 40,
        "result_tree": None,
        "files": {},
        "guards": [],
        "last_rebase": {"from": evil, "onto": "b" * 40, "onto_ref": "main"},
        "patches": [
            {
                "name": "p.patch",
                "sha256": "0" * 64,
                "rebase": "refreshed",
                "drift": [],
                "hints": ["x|y" + evil],
            }
        ],
    }
    (queue.path / "series.lock").write_text(json.dumps(lock))
    queue.add("p.patch", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")
    r = run_inprocess(capsys, "--dir", str(queue.path), "report", "--format", "md")
    assert r.code == 0, r.err
    md = r.out
    # Outside code spans nothing is left that Markdown would act on (a backtick string
    # with no closer of its length is literal text, CommonMark 6.1).
    outside = re.sub(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", md)
    assert "![" not in outside and "](" not in outside
    row = next(line for line in md.splitlines() if "p.patch" in line and line.startswith("|"))
    assert row.count(" | ") == 4  # five cells
