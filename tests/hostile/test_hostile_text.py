"""Issue 27, classes 3c and 3d: `refresh` and `fold` never lose text they did not make.

`fold` keeps the folded patch's description in the top patch's header (as `stg squash`
keeps both messages), before a mail's `---` line so `git am` keeps it too. `refresh`
keeps every mail of a patch file that holds several, and never regenerates a patch file
that changed since it was applied (a pull, an edit) from the applied commit unless told
which side wins.
"""

from __future__ import annotations

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
