"""One report: text, Markdown, HTML and JSON rendered from one record
say the same things — the reviewer's-eye line, each patch's facts (moved hunks led by the
upstream commits that touched their own lines, those that only shifted them as a count,
a hunk dropped by hand), the moved-hunk counts — and all four say when the series changed
since the rebase. Through the real CLI (`python -m patchq`) on a small repo.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from ..conftest import Queue, Result, Upstream, run_patchq

F = "".join(f"line {i}\n" for i in range(1, 41))
G = "".join(f"g {i}\n" for i in range(1, 31))


def pq(queue: Queue, *args: str) -> Result:
    return run_patchq("--dir", str(queue.path), *args)


def _diff(up: Upstream, path: str, old: str, new: str) -> str:
    up.write(path, new)
    out = up.diff("--", path).decode()
    up.write(path, old)
    return out


@pytest.fixture
def rebased(upstream: Upstream, queue: Queue) -> dict[str, str]:
    """shift.patch only shifted by upstream; touch.patch placed over a context line an
    upstream commit changed; cut.patch resolved by hand, its first hunk dropped."""
    upstream.write("f.txt", F).write("g.txt", G)
    base = upstream.commit("base")
    queue.add("shift.patch", _diff(upstream, "f.txt", F, F.replace("line 30\n", "LINE 30\n")))
    queue.add("touch.patch", _diff(upstream, "g.txt", G, G.replace("g 20\n", "G 20\n")))
    cut = G.replace("g 5\n", "CUT 5\n").replace("g 27\n", "CUT 27\n")
    queue.add("cut.patch", _diff(upstream, "g.txt", G, cut).replace("\n", "\n", 1))
    assert pq(queue, "apply", "--onto", base).code == 0
    upstream.git("checkout", "-q", "main")
    commits = {}
    upstream.write("f.txt", "top 1\ntop 2\n" + F)
    commits["shift"] = upstream.commit("Two lines on top of f")
    g1 = G.replace("g 18\n", "g eighteen\n").replace("g 5\n", "gee 5\n")
    upstream.write("g.txt", g1)
    commits["touch"] = upstream.commit("Reword `g 18` and g 5")
    return commits


def _finish(upstream: Upstream, queue: Queue) -> None:
    r = pq(queue, "rebase", "--onto", "main")
    assert r.code == 3, r.err  # cut.patch's first hunk meets upstream's g 5
    # Resolved by dropping that hunk: upstream's line stays, the second hunk is kept.
    text = upstream.read("g.txt").decode()
    kept = re.sub(
        r"<<<<<<< [^\n]*\n(.*?)\|\|\|\|\|\|\| .*?>>>>>>> [^\n]*\n", r"\1", text, flags=re.S
    )
    upstream.write("g.txt", kept)
    r = pq(queue, "rebase", "--continue")
    assert r.code == 0, r.err


class _Text(HTMLParser):
    """The text of each <li> and <p> of a page, tags dropped, entities read."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[str] = []
        self._open = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("li", "p"):
            self.items.append("")
            self._open += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("li", "p"):
            self._open -= 1

    def handle_data(self, data: str) -> None:
        if self._open:
            self.items[-1] += data


def _reports(queue: Queue) -> tuple[dict[str, Any], str, str, str]:
    doc = json.loads(pq(queue, "report", "--format", "json").out)
    return (
        doc,
        pq(queue, "report").out,
        pq(queue, "report", "--format", "md").out,
        pq(queue, "report", "--format", "html").out,
    )


def test_check_json_names_the_commits_that_touched_a_hunk_apart(
    upstream: Upstream, queue: Queue, rebased: dict[str, str]
) -> None:
    doc = json.loads(pq(queue, "check", "--onto", "main", "--json").out)
    hunks = {p["name"]: p["hunks"] for p in doc["patches"]}
    (shift,) = hunks["shift.patch"]
    assert (shift["status"], shift["drift"]) == ("offset", [rebased["shift"]])
    assert (shift["touched_by"], shift["shifted"]) == ([], 1)
    (touch,) = hunks["touch.patch"]
    # Placed with fuzz (or merged): it still names the commit that changed its context.
    assert touch["status"] in ("fuzz", "merge")
    assert touch["drift"] == touch["touched_by"] == [rebased["touch"]]


def test_the_four_formats_say_the_same_things(
    upstream: Upstream, queue: Queue, rebased: dict[str, str]
) -> None:
    _finish(upstream, queue)
    doc, text, md, page = _reports(queue)
    by = {p["name"]: p for p in doc["patches"]}
    assert doc["needs_review"] == ["cut.patch"] and doc["stale"] == []
    assert by["cut.patch"]["hunks_dropped"] == 1
    assert "g.txt: a hunk of the old patch was dropped by hand" in by["cut.patch"]["facts"]
    assert (
        "f.txt hunk #1: moved +2 lines (shifted by 1 upstream commit)"
        in (by["shift.patch"]["facts"])
    )
    touch = rebased["touch"][:12]
    assert any(f"(by {touch} Reword `g 18` and g 5)" in f for f in by["touch.patch"]["facts"])
    # Every fact in every format.
    parser = _Text()
    parser.feed(page)
    html_items = parser.items
    for p in doc["patches"]:
        for fact in p["facts"]:
            assert fact in text, fact
            assert fact in md, fact  # in a code span
            assert fact.replace("`", "") in html_items, fact
    # The reviewer's-eye line and the moved counts.
    assert "needs a reviewer's eye: cut.patch" in text
    assert "Needs a reviewer's eye: `cut.patch`" in md
    assert "Needs a reviewer's eye: cut.patch" in html_items
    for p in doc["patches"]:
        moved = p["hunks_moved"]
        words = f"{moved} hunk{'s' if moved != 1 else ''} moved"
        assert (f"{p['name']}  [{p['change']}, {words}]" in text) == bool(moved)
        assert f"| `{p['name']}` | {p['outcome']} | {p['change']} | {moved} |" in md
        assert re.search(rf"<code>{re.escape(p['name'])}</code>.*?<td>{moved}</td>", page)
    # Inline code is code on the page: the commit subject's `g 18`.
    assert "Reword <code>g 18</code> and g 5" in page


def test_the_report_says_it_is_stale_after_the_series_changed(
    upstream: Upstream, queue: Queue, rebased: dict[str, str]
) -> None:
    _finish(upstream, queue)
    assert _reports(queue)[0]["stale"] == []
    assert pq(queue, "refresh").code in (0, 4)  # a refresh keeps the record true
    assert _reports(queue)[0]["stale"] == []
    r = pq(queue, "sink", "cut.patch")
    assert r.code == 0, r.err
    doc, text, md, page = _reports(queue)
    assert doc["stale"] and doc["stale"][0].startswith(
        "the series changed since this rebase (reordered)"
    )
    assert f"STALE: {doc['stale'][0]}" in text
    assert "> **Stale:** `" in md
    assert '<p class="stale"><strong>Stale:</strong>' in page
    assert "<code>patchq check</code>" in page
    r = pq(queue, "new", "later.patch")
    assert r.code == 0, r.err
    assert "added later.patch" in _reports(queue)[0]["stale"][0]
