"""`report --format html` in a real headless browser.

The page must be one self-contained file (no script, no external asset), show each
changed hunk old beside new with the upstream commits that moved it, and keep every text
inert: an upstream subject and a patch line carrying `<script>` and an `onerror`
attribute appear as text, and nothing in them runs. Chromium (Debian's `chromium`) loads
the page and dumps its DOM; without a browser this one test is skipped, saying so.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import Queue, Result, Upstream
from ..rebase.test_check_rebase import BASE, advance, make_patch, pin, resolve, sub

SCRIPT = "<script>document.body.setAttribute('data-pwned','1')</script>"
IMG = '<img src="x" onerror="document.title=\'pwned\'">'


def browser() -> str | None:
    return next(
        (b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None
    )


@pytest.fixture
def hostile_review(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], tmp_path: Path
) -> Path:
    """A rebase whose resolved patch adds a line holding markup, against an upstream
    commit whose subject holds markup; its HTML report, written to a file."""
    upstream.write("f.txt", BASE).write("g.txt", BASE)
    base = upstream.commit("base")
    pin(
        upstream,
        queue,
        patchq,
        [
            (
                "markup.patch",
                make_patch(
                    upstream, "Markup\n\n", {"f.txt": sub(BASE, "line 20\n", f"line 20 {IMG}\n")}
                ),
            ),
            (
                "moved.patch",
                make_patch(upstream, "Moved\n\n", {"g.txt": sub(BASE, "line 9\n", "LINE 9\n")}),
            ),
        ],
        base,
    )
    advance(
        upstream, f"Reword line 20 {SCRIPT}", {"f.txt": sub(BASE, "line 20\n", "line twenty\n")}
    )
    advance(upstream, "Header for g", {"g.txt": "# g\n" + BASE})
    assert patchq("rebase", "--onto", "main").code == 3
    resolve(upstream.path / "f.txt", f"line twenty {IMG}\n")
    assert patchq("rebase", "--continue").code == 0
    out = tmp_path / "review.html"
    r = patchq("report", "--format", "html", "-o", str(out))
    assert r.code == 0, r.err
    return out


def test_html_is_one_inert_file(hostile_review: Path) -> None:
    page = hostile_review.read_text()
    assert page.startswith("<!DOCTYPE html>")
    # Nothing to fetch and nothing to run: no script element, link, src or URL.
    tags = re.findall(r"<[a-zA-Z][^>]*>", page)
    assert not [t for t in tags if re.match(r"<(script|link|img|iframe|object)", t, re.I)]
    assert not [t for t in tags if re.search(r"\s(src|href)=\"(?!#)", t)]
    assert not re.search(r"https?://|@import|url\(", page)
    assert "default-src 'none'" in page  # and a policy forbidding it all the same
    assert "&lt;script&gt;" in page and "onerror=&quot;" in page
    # No whitespace-only line anywhere in the text and Markdown versions either.
    for line in page.splitlines():
        assert line == "" or line.strip(), repr(line)


def test_html_in_a_headless_browser(hostile_review: Path, tmp_path: Path) -> None:
    exe = browser()
    if exe is None:
        pytest.skip("no chromium installed: the HTML report was not checked in a browser")
    proc = subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",  # run as root in containers
            "--disable-gpu",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            hostile_review.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert "<title>patchq rebase " in dom and "pwned" not in dom.split("</title>")[0]
    # The patch table and one side-by-side table per shown hunk.
    assert '<table id="patches">' in dom
    assert dom.count('<table class="sbs">') == 1  # moved.patch is cosmetic: not shown
    hunk = dom[dom.index('<table class="sbs">') :]
    hunk = hunk[: hunk.index("</table>")]
    assert "<th>old patch</th>" in hunk and "<th>new patch</th>" in hunk
    assert '+line 20 &lt;img src="x" onerror="document.title=\'pwned\'"&gt;' in hunk
    assert "+line twenty &lt;img" in hunk
    # The drift commit's subject, as text; the script in it never ran.
    assert "Reword line 20 &lt;script&gt;document.body.setAttribute" in dom
    assert "<script" not in dom and "<img" not in dom
    assert "data-pwned" not in dom.split("<body")[1].split(">")[0]


def test_text_and_markdown_have_no_whitespace_only_lines(
    hostile_review: Path, patchq: Callable[..., Result]
) -> None:
    for fmt in ("text", "md"):
        out = patchq("report", "--format", fmt).out
        assert "new hunk" in out.lower()
        bad = [line for line in out.splitlines() if line and not line.strip()]
        assert bad == [], fmt


def _headless(exe: str, tmp_path: Path, *args: str) -> None:
    proc = subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",  # run as root in containers
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_the_interdiff_reads_as_lines_in_the_browser(
    hostile_review: Path, patchq: Callable[..., Result], tmp_path: Path
) -> None:
    """What a reviewer sees: the page printed by the browser and read back as text holds
    the change-only interdiff one line under another, as the text report has it, never
    as one line with literal `\\n` between its lines; and a screenshot is drawn."""
    exe = browser()
    if exe is None:
        pytest.skip("no chromium installed: the HTML report was not checked in a browser")
    if shutil.which("pdftotext") is None:
        pytest.skip("no pdftotext (Debian's poppler-utils): the printed page was not read")
    doc = json.loads(patchq("report", "--format", "json").out)
    interdiff = next(p["interdiff"] for p in doc["patches"] if p["interdiff"])
    assert len(interdiff) >= 3
    pdf, png = tmp_path / "page.pdf", tmp_path / "page.png"
    _headless(
        exe, tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", hostile_review.as_uri()
    )
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    lines = [line.strip() for line in text.splitlines()]
    for want in interdiff:
        assert want.strip() in lines, (want, text)
    assert "\\n" not in text
    start = lines.index(interdiff[0].strip())
    assert lines[start : start + len(interdiff)] == [x.strip() for x in interdiff]

    _headless(
        exe, tmp_path, f"--screenshot={png}", "--window-size=1000,1400", hostile_review.as_uri()
    )
    head = png.read_bytes()
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert (width, height) == (1000, 1400)
    assert len(head) > 20_000  # a drawn page, not a blank one (a white PNG is ~5 KB)
