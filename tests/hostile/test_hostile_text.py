"""`refresh` and `fold` never lose text they did not make.

`fold` keeps the folded patch's description in the top patch's header (as `stg squash`
keeps both messages), before a mail's `---` line so `git am` keeps it too. `refresh`
keeps every mail of a patch file that holds several, and never regenerates a patch file
that changed since it was applied (a pull, an edit) from the applied commit unless told
which side wins.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..conftest import Queue, Result, Upstream
from ..stack.test_stack import A, B, udiff

Run = Callable[..., Result]

TOP = (
    "From: Top Author <top@example.org>\n"
    "Subject: [PATCH] upper-case line 3\n\n"
    "The top patch's own reasons.\n"
    "---\n"
    " a.txt | 2 +-\n\n"
)
FOLDED = (
    "Description: upper-case b 9\n"
    " Needed by the frobnicator, which reads b 9 in capitals.\n"
    "Author: Folded Author <fold@example.org>\n"
    "---\n"
)


def test_fold_keeps_the_folded_patchs_description(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    upstream.write("a.txt", A).write("b.txt", B)
    upstream.commit("base")
    queue.add("top.patch", udiff("a.txt", A, A.replace("line 3\n", "LINE 3\n"), TOP))
    queue.add("more.patch", udiff("b.txt", B, B.replace("b 9\n", "B 9\n"), FOLDED))
    assert patchq("push").code == 0
    r = patchq("fold", "more.patch")
    assert r.code == 0, r.err
    text = (queue.path / "patches" / "top.patch").read_text()
    head = text[: text.index("\n---\n")]
    # Both descriptions, the folded one before the `---` git am stops reading at.
    assert "The top patch's own reasons." in head
    assert "upper-case b 9" in head and "Needed by the frobnicator" in head
    assert text.startswith("From: Top Author <top@example.org>\nSubject: [PATCH] upper-case")
    # The commit says what pushing the new file says: both descriptions.
    message = upstream.git("log", "-1", "--format=%B")
    assert "The top patch's own reasons." in message and "Needed by the frobnicator" in message
    assert patchq("pop").code == 0 and patchq("push").code == 0
    assert upstream.git("log", "-1", "--format=%B") == message
    assert upstream.read("b.txt") == B.replace("b 9\n", "B 9\n").encode()


def test_fold_of_a_patch_without_a_description_changes_no_header(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    upstream.write("a.txt", A).write("b.txt", B)
    upstream.commit("base")
    queue.add("top.patch", udiff("a.txt", A, A.replace("line 3\n", "LINE 3\n"), TOP))
    queue.add("bare.patch", udiff("b.txt", B, B.replace("b 9\n", "B 9\n")))
    assert patchq("push").code == 0
    assert patchq("fold", "bare.patch").code == 0
    assert (queue.path / "patches" / "top.patch").read_text().startswith(TOP)


def two_mails(upstream: Upstream) -> tuple[str, bytes]:
    """A base and `git format-patch --stdout` of two commits after it, in one file."""
    upstream.write("a.txt", A).write("b.txt", B)
    base = upstream.commit("base")
    upstream.write("a.txt", A.replace("line 3\n", "LINE 3\n"))
    upstream.commit("first change\n\nWhy the first.")
    upstream.write("b.txt", B.replace("b 9\n", "B 9\n"))
    upstream.commit("second change\n\nWhy the second.")
    mbox = upstream.git("format-patch", "--stdout", f"{base}..HEAD").encode()
    upstream.git("checkout", "-q", "--detach", base)
    return base, mbox


def test_refresh_refuses_a_file_of_several_mails_naming_them(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    base, mbox = two_mails(upstream)
    queue.add("both.patch", mbox)
    (queue.path / "patchq.toml").write_text(f'target = "../upstream"\npin = "{base}"\n')
    assert patchq("push").code == 0
    upstream.write("b.txt", upstream.read("b.txt") + b"my edit\n")
    r = patchq("refresh")
    assert r.code == 5, r.err
    assert "holds 2 mails ('first change', 'second change')" in r.err
    assert len(r.err.splitlines()) == 1
    # Nothing was written: both mails, their messages, and the person's edit remain.
    assert (queue.path / "patches" / "both.patch").read_bytes() == mbox
    assert upstream.read("b.txt").endswith(b"my edit\n")


def edited_after_push(upstream: Upstream, queue: Queue, patchq: Run) -> bytes:
    """p.patch applied, then its file changed on disk (as a pull or an editor would)."""
    upstream.write("a.txt", A).write("b.txt", B)
    base = upstream.commit("base")
    (queue.path / "patchq.toml").write_text(f'target = "../upstream"\npin = "{base}"\n')
    queue.add("p.patch", udiff("a.txt", A, A.replace("line 3\n", "LINE 3\n"), "p\n\n"))
    assert patchq("apply", "--onto", base).code == 0
    pulled = udiff("a.txt", A, A.replace("line 3\n", "LINE THREE (pulled)\n"), "p, v2\n\n")
    (queue.path / "patches" / "p.patch").write_text(pulled)
    return pulled.encode()


def test_refresh_never_regenerates_a_file_changed_since_it_was_applied(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    pulled = edited_after_push(upstream, queue, patchq)
    st = patchq("status")
    assert "p.patch: the file differs from series.lock and its commit" in st.out
    doc = json.loads(patchq("status", "--json").out)
    assert doc["changed"] == [{"patch": "p.patch", "lock": True, "commit": True}]
    upstream.write("b.txt", B.replace("b 1\n", "b one\n"))  # an unrefreshed edit
    r = patchq("refresh")
    assert r.code == 5, r.err
    assert "changed since the patch was applied" in r.err
    assert "--from-file" in r.err and "--from-commit" in r.err
    assert (queue.path / "patches" / "p.patch").read_bytes() == pulled
    # Told the commit wins: today's refresh, the pulled text replaced by the commit's.
    r = patchq("refresh", "--from-commit")
    assert r.code == 0, r.err
    text = (queue.path / "patches" / "p.patch").read_text()
    assert "+LINE 3\n" in text and "pulled" not in text and "+b one\n" in text
    assert "differs" not in patchq("status").out


def test_refresh_from_file_takes_the_pulled_patch(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    pulled = edited_after_push(upstream, queue, patchq)
    upstream.write("b.txt", B.replace("b 1\n", "b one\n"))
    r = patchq("refresh", "--from-file")
    assert r.code == 5 and "unrefreshed changes in b.txt" in r.err  # they would be lost
    upstream.git("checkout", "-q", "--", "b.txt")
    r = patchq("refresh", "--from-file")
    assert r.code == 0, r.err
    assert (queue.path / "patches" / "p.patch").read_bytes() == pulled
    assert "LINE THREE (pulled)" in upstream.read("a.txt").decode()
    assert "its commit" not in patchq("status").out
    # The file and the commit agree again: a plain refresh goes through, changing nothing.
    r = patchq("refresh")
    assert r.code == 0, r.err
    assert (queue.path / "patches" / "p.patch").read_bytes() == pulled


def test_a_header_edit_is_no_change_to_the_commit(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    """Only what the commit holds counts: a reworded description is kept by refresh."""
    upstream.write("a.txt", A).write("b.txt", B)
    base = upstream.commit("base")
    (queue.path / "patchq.toml").write_text(f'target = "../upstream"\npin = "{base}"\n')
    queue.add("p.patch", udiff("a.txt", A, A.replace("line 3\n", "LINE 3\n"), "p\n\n"))
    assert patchq("apply", "--onto", base).code == 0
    path = queue.path / "patches" / "p.patch"
    path.write_text(path.read_text().replace("p\n\n", "p, reworded\n\n", 1))
    upstream.write("b.txt", B.replace("b 1\n", "b one\n"))
    r = patchq("refresh")
    assert r.code == 0, r.err
    assert path.read_text().startswith("p, reworded\n\n") and "+b one\n" in path.read_text()
