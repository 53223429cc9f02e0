"""The stack verbs called directly, not through the CLI: each returns a result
object, and the exit code the CLI ends with is the result's `exit_code`.

Every test works on real git repositories in temporary folders, with a `Context` built as
`cli/main.py` builds one (`--dir` the queue; the target from its patchq.toml).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from patchq.commands.apply import apply
from patchq.commands.delete import delete
from patchq.commands.fold import fold
from patchq.commands.goto import goto
from patchq.commands.header import header
from patchq.commands.new import new
from patchq.commands.pop import pop
from patchq.commands.push import push
from patchq.commands.rename import rename
from patchq.commands.verify import verify
from patchq.core.errors import ApplyError, BadInputError, ConflictError
from patchq.stack.context import Context

from ..conftest import Queue, Upstream, git
from ..stack.test_stack import P1, P2, P3, A, B, udiff


@pytest.fixture
def ctx(upstream: Upstream, queue: Queue) -> Iterator[Context]:
    """A Context on the queue whose target is `upstream`, with p1, p2, p3 in the series."""
    upstream.write("a.txt", A).write("b.txt", B)
    upstream.commit("base")
    queue.add("p1.patch", P1).add("p2.patch", P2).add("p3.patch", P3)
    c = Context(dir=queue.path)
    yield c
    c.close()


def fresh(c: Context) -> Context:
    """A new Context on the same folders: the series file is read once per Context."""
    c.close()
    return Context(dir=c.dir)


def test_push_returns_the_patches_pushed_and_exit_code_0(ctx: Context) -> None:
    out = push(ctx, None, all_=False, fuzz=None, merge=False, force=False)
    assert [p.name for p in out.pushed] == ["p1.patch"]
    assert [p.status for p in out.pushed] == ["exact"]
    assert out.stack.applied == ("p1.patch",) and out.stack.top == "p1.patch"
    assert (out.failure, out.problem, out.saved, out.exit_code) == (None, None, None, 0)
    out = push(ctx, None, all_=True, fuzz=None, merge=False, force=False)
    assert [p.name for p in out.pushed] == ["p2.patch", "p3.patch"]
    assert out.stack.applied == ("p1.patch", "p2.patch", "p3.patch")
    assert out.exit_code == 0
    # Nothing left: a plain push holds, as `push -a` does.
    out = push(ctx, None, all_=False, fuzz=None, merge=False, force=False)
    assert (out.pushed, out.stack.top, out.exit_code) == ((), "p3.patch", 0)


def test_push_of_a_patch_that_does_not_apply_returns_exit_code_3(
    ctx: Context, queue: Queue, upstream: Upstream
) -> None:
    (queue.path / "series").write_text("p1.patch\nbad.patch\np3.patch\n")
    (queue.path / "patches" / "bad.patch").write_text(
        udiff("b.txt", B.replace("b 5\n", "b five\n"), B.replace("b 5\n", "B 5\n"))
    )
    out = push(ctx, None, all_=True, fuzz=None, merge=False, force=False)
    assert [p.name for p in out.pushed] == ["p1.patch"]
    assert out.stack.applied == ("p1.patch",)
    assert out.failure is not None and out.failure.name == "bad.patch"
    assert out.failure.tree is None  # no 3-way merge was asked for
    assert isinstance(out.problem, ApplyError)
    assert out.problem.line().startswith("patches/bad.patch: patch does not apply: b.txt: ")
    assert out.exit_code == 3
    assert upstream.read("b.txt") == B.encode()


def test_push_merge_conflict_returns_exit_code_3_with_the_merge_left(
    upstream: Upstream, queue: Queue
) -> None:
    upstream.write("a.txt", A)
    base = upstream.commit("base")
    upstream.write("a.txt", A.replace("line 20\n", "line 20 patched\n"))
    upstream.commit("patch line 20")
    # Full blob ids on the `index` line: the 3-way merge finds the pre-image in the target.
    queue.add("m.patch", git(upstream.path, "diff", "--full-index", f"{base}..HEAD"))
    git(upstream.path, "reset", "-q", "--hard", base)
    upstream.write("a.txt", A.replace("line 20\n", "line 20 upstream\n"))
    upstream.commit("upstream moves")
    c = Context(dir=queue.path)
    try:
        out = push(c, None, all_=False, fuzz=None, merge=True, force=False)
    finally:
        c.close()
    assert out.pushed == () and out.stack.applied == ("m.patch",)
    assert out.failure is not None and out.failure.tree is not None
    assert isinstance(out.problem, ConflictError)
    assert out.problem.line() == (
        "patches/m.patch: 1 conflict in a.txt left in the working "
        "tree — resolve them, then `patchq push --continue` takes them and pushes on; "
        "or `patchq push --abort` puts everything back"
    )
    assert out.exit_code == 3
    assert b"<<<<<<< upstream\n" in upstream.read("a.txt")


def test_pop_returns_the_patches_popped_top_first(ctx: Context) -> None:
    push(ctx, None, all_=True, fuzz=None, merge=False, force=False)
    out = pop(ctx, None, False, False)
    assert (out.popped, out.stack.applied, out.exit_code) == (
        ("p3.patch",),
        ("p1.patch", "p2.patch"),
        0,
    )
    assert out.pushed == () and out.problem is None
    out = pop(ctx, None, True, False)
    assert (out.popped, out.stack.applied, out.stack.top) == (("p2.patch", "p1.patch"), (), None)
    with pytest.raises(BadInputError, match="no patch is applied"):
        pop(ctx, None, False, False)


def test_goto_pushes_or_pops_to_the_patch_named(ctx: Context) -> None:
    out = goto(ctx, "p2.patch", False)
    assert [p.name for p in out.pushed] == ["p1.patch", "p2.patch"] and out.popped == ()
    assert out.stack.top == "p2.patch" and out.exit_code == 0
    push(ctx, None, all_=False, fuzz=None, merge=False, force=False)
    out = goto(ctx, "p1.patch", False)
    assert (out.pushed, out.popped, out.stack.top) == ((), ("p3.patch", "p2.patch"), "p1.patch")


def test_the_queue_edits_return_what_they_did(ctx: Context, queue: Queue) -> None:
    push(ctx, None, all_=False, fuzz=None, merge=False, force=False)
    made = new(ctx, "n.patch", "a new patch")
    assert made.name == "n.patch"
    assert queue.series() == "p1.patch\nn.patch\np2.patch\np3.patch\n"
    ctx = fresh(ctx)
    assert header(ctx, None, None).text == "a new patch\n"
    edited = header(ctx, "n.patch", lambda t: "the new patch\n")
    assert (edited.name, edited.text, edited.changed) == ("n.patch", "the new patch\n", True)
    ctx = fresh(ctx)
    gone = delete(ctx, "n.patch", True)
    assert (gone.name, gone.popped, gone.removed_file) == ("n.patch", True, True)
    assert not (queue.path / "patches" / "n.patch").exists()
    ctx = fresh(ctx)
    moved = rename(ctx, "p3.patch", "third.patch")
    assert (moved.old, moved.new) == ("p3.patch", "third.patch")
    ctx = fresh(ctx)
    folded = fold(ctx, "third.patch")
    assert (folded.name, folded.into) == ("third.patch", "p1.patch")
    assert queue.series() == "p1.patch\np2.patch\n"
    ctx.close()


def test_verify_exit_code_is_0_when_the_lock_holds_and_1_when_not(
    ctx: Context, queue: Queue
) -> None:
    applied = apply(ctx, None, None, None, None)
    assert [p.name for p in applied.result.patches] == ["p1.patch", "p2.patch", "p3.patch"]
    ok = verify(ctx)
    assert (ok.ok, ok.problems, ok.exit_code) == (True, (), 0)
    (queue.path / "patches" / "p2.patch").write_text(P2.replace("upper-case", "Upper-case"))
    ctx = fresh(ctx)
    bad = verify(ctx)
    ctx.close()
    assert (bad.ok, bad.exit_code) == (False, 1)
    assert bad.problems == ("patches/p2.patch: changed since series.lock was written",)
