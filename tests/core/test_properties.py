"""Properties over generated files, downstream edits and upstream drift.

- parse/render: a patch built from any generated edit, under any generated name, renders
  to bytes that parse back to the same patch and render to the same bytes;
- apply/reverse: a patch applies to its own base giving exactly its result, and reverses
  from the result to the base; with unique lines, also on a drifted upstream;
- a rebase never changes a line the patch did not touch — stated exactly on unique-line
  files and checked at the replay level (the code `check` and `rebase` run), real git
  objects and 3-way merge included; see `test_rebase_changes_only_the_patch_lines`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from patchq.core import hunks as engine
from patchq.core.patch import FilePatch, Patch, parse
from patchq.core.status import CONFLICT, EXACT, MISSING
from patchq.git.memtree import MemTree
from patchq.git.objects import Ident, ObjectWriter, render_tree
from patchq.git.repo import GitRepo
from patchq.rebase.replay import Replay, for_review
from patchq.stack.apply import preimages
from patchq.store.patchrepo import PatchRepo

from ..strategies import Case, cases, paths


def budget(examples: int) -> settings:
    """CI's example count; PATCHQ_PROPERTY_SCALE=20 runs twenty times as many."""
    scale = float(os.environ.get("PATCHQ_PROPERTY_SCALE", "1"))
    return settings(
        max_examples=max(1, int(examples * scale)),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def make_patch(case: Case, context: int, path: str = "f.txt") -> Patch:
    base, ours, _ = case.data
    return Patch(b"", (FilePatch(path, path, tuple(engine.diff(base, ours, context))),))


# --- parse / render ---------------------------------------------------------------------


@budget(150)
@given(cases(drift=False), st.sampled_from([0, 1, 3]), paths())
def test_generated_patches_round_trip(case: Case, context: int, path: str) -> None:
    p = make_patch(case, context, path)
    assume(p.sections[0].hunks)
    data = p.render()
    parsed = parse(data, "gen.patch")
    assert parsed == p
    assert parsed.render() == data


# --- apply / reverse ----------------------------------------------------------------------


@budget(200)
@given(cases(), st.sampled_from([0, 1, 3]))
def test_apply_and_reverse_are_inverse(case: Case, context: int) -> None:
    base, ours, theirs = case.data
    hunks = engine.diff(base, ours, context)
    forward = engine.apply_hunks(base, hunks)
    assert forward.ok and forward.content == ours
    assert all(h.status == EXACT for h in forward.hunks)
    back = engine.apply_hunks(ours, hunks, reverse=True)
    assert back.ok and back.content == base
    if not case.unique or any(not h.has_context for h in hunks):
        # A hunk without context (-U0, or one spanning the whole file) has no anchor: an
        # insertion goes exactly where stated (as with `git apply --unidiff-zero`), so
        # on drifted upstream only its line number holds.
        return
    # On drifted upstream: where the patch applies (exactly or by offset), reversing it
    # gives upstream back. (Fuzz forgets context, so a fuzzed hunk need not reverse.)
    moved = engine.apply_hunks(theirs, hunks)
    event(f"on drift: {engine.worst(h.status for h in moved.hunks)}")
    if moved.ok:
        undone = engine.apply_hunks(moved.content, hunks, reverse=True)
        assert undone.ok and undone.content == theirs


# --- a rebase never changes a line the patch did not touch -----------------------------


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def only_the_patch_changed(case: Case, result: bytes, discarded: str = "") -> None:
    """The statement, for unique-line files. B = base, O = ours (B with the patch),
    T = theirs (B after upstream drift), R = the patch replayed onto T; A = the lines the
    patch adds (in O, not in B), D = the lines it removes (in B, not in O). Then

    1. R without A is T without D: no line of upstream is lost, duplicated, altered or
       reordered except the ones the patch removes, and nothing else appears;
    2. every line of A is in R once (the patch's change is all there);
    3. where upstream kept B's lines in their order (it moved none), every line of A lies
       in R between the nearest lines around it in O that B and T both still hold: the
       change is where the patch put it, not in a look-alike spot. (Where upstream moved
       lines, "where the patch put it" has no single answer; 1 and 2 still hold.)

    A delete-wins merge (DESIGN §4) may also drop lines upstream wrote inside the block
    the patch removes, visibly: `discarded` is the note that names them, and each line
    dropped so must be one upstream wrote (not in B) and be named there.
    """
    b, o, t = case.base, case.ours, case.theirs
    added = [x for x in o if x not in b]
    removed = {x for x in b if x not in o}
    r = lines_of(result)
    if discarded:
        gone = [x for x in t if x not in removed and x not in r]
        for x in gone:
            assert x not in b and x.decode().strip() in discarded, (x, discarded)
        removed |= set(gone)
    assert [x for x in r if x not in added] == [x for x in t if x not in removed]
    for x in added:
        assert r.count(x) == 1, x
    if [x for x in t if x in b] != [x for x in b if x in t]:
        return
    kept = {x for x in b if x in o and x in t}
    for i, x in enumerate(o):
        if x not in added:
            continue
        before = next((y for y in reversed(o[:i]) if y in kept), None)
        after = next((y for y in o[i + 1 :] if y in kept), None)
        at = r.index(x)
        assert before is None or r.index(before) < at, (x, before)
        assert after is None or at < r.index(after), (x, after)


class Lab:
    """One target repo and one patch repo, reused by every example."""

    WHO = Ident("Up Stream", "up@example.org", 1700000000)

    def __init__(self, root: Path) -> None:
        self.target = root / "target"
        self.queue = root / "queue"
        (self.queue / "patches").mkdir(parents=True)
        (self.queue / "series").write_text("p.patch\n")
        (self.queue / "patchq.toml").write_text('target = "../target"\n')
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.target)], check=True)
        self.g = GitRepo(self.target)

    def commit(self, w: ObjectWriter, data: bytes, parent: str | None) -> str:
        blob = w.add("blob", data)
        tree = w.add("tree", render_tree([("100644", b"f.txt", blob)]))
        return self.g.commit_object(tree, [parent] if parent else [], "m\n", self.WHO, self.WHO)

    def replay(self, case: Case, fuzz: int) -> tuple[str, bytes | None]:
        status, data, _ = self.replay_noting(case, fuzz)
        return status, data

    def replay_noting(
        self, case: Case, fuzz: int, review_stops: bool = False
    ) -> tuple[str, bytes | None, str]:
        """`replay`, with the note of a delete-wins merge ("" if none was made)."""
        """The patch B→O replayed onto T as `check`/`rebase` do: (status, file or None)."""
        base, ours, theirs = case.data
        w = self.g.writer()
        old = self.commit(w, base, None)
        onto = self.commit(w, theirs, old)
        w.flush()
        patch = make_patch(case, 3)
        (self.queue / "patches" / "p.patch").write_bytes(patch.render())
        repo = PatchRepo.open(self.queue)
        entries = repo.series.patches
        self.g.writer(dry_run=True)
        rp = Replay.start(
            self.g, repo, old, onto, fuzz=fuzz, preimage=preimages(self.g, repo, old, entries)
        )
        check = rp.step(entries[0])
        if check.status in (CONFLICT, MISSING):
            return check.status, None, ""
        if review_stops and for_review(check):
            # A proposal (DESIGN §4.1): the rebase stops for a person's review, as at a
            # conflict; only what patchq does alone must keep the patch's lines only.
            return "review", None, ""
        tree = MemTree(self.g.read_tree, rp.tree())
        got = tree.get("f.txt")
        assert got is not None
        note = " ".join(h.reason for h in check.hunks if h.method == "delete-wins")
        return check.status, self.g.read_blob(got[1]), note


def test_rebase_changes_only_the_patch_lines(tmp_path: Path) -> None:
    """Replay-level: the patch rebased onto drifted upstream changes only its own lines."""
    lab = Lab(tmp_path)

    @budget(200)
    @given(cases(unique=True), st.sampled_from([0, 0, 1, 2]))
    # Found by hypothesis before the tiers: upstream replaced the line the patch edits, and
    # the word merge made "line 4 ours" of "line 2 ours" alone; now a proposal, it stops.
    @example(
        Case(
            base=[b"line 0\n", b"line 1\n", b"line 2\n", b"line 3\n", b"line 4"],
            ours=[
                *(b"ours 2.0\n", b"ours 0.0\n", b"line 0\n", b"line 1\n"),
                *(b"line 2 ours\n", b"line 3\n", b"line 4"),
            ],
            theirs=[b"line 0\n", b"line 1\n", b"line 4\n", b"line 3\n"],
            unique=True,
        ),
        0,
    )
    def prop(case: Case, fuzz: int) -> None:
        assume(case.ours != case.base and not set(case.ours) - set(case.base) & set(case.theirs))
        status, result, discarded = lab.replay_noting(case, fuzz, review_stops=True)
        event(f"replay: {status}")
        if result is not None:
            only_the_patch_changed(case, result, discarded)

    prop()


@budget(300)
@given(cases(unique=True), st.integers(0, 2))
def test_engine_changes_only_the_patch_lines(case: Case, fuzz: int) -> None:
    """The same statement one level down, cheaply: the hunk engine alone, with fuzz."""
    assume(case.ours != case.base and not set(case.ours) - set(case.base) & set(case.theirs))
    base, ours, theirs = case.data
    res = engine.apply_hunks(theirs, engine.diff(base, ours, 3), fuzz=fuzz)
    event(f"engine: {res.status}")
    if res.ok:
        only_the_patch_changed(case, res.content)


@budget(400)
@given(cases(), st.sampled_from([0, 1, 3]), st.booleans())
def test_exact_fast_path_answers_as_the_line_engine(
    case: Case, context: int, reverse: bool
) -> None:
    """apply_hunks splices bytes when every hunk stands exactly at its stated line; where
    it does, the answer (content, every report) is the line-by-line engine's. Files
    without a final newline, repeated lines and drift included."""
    base, ours, theirs = case.data
    hunks = engine.diff(base, ours, context)
    hs = [h.reversed() for h in hunks] if reverse else hunks
    for content in (ours if reverse else base, theirs):
        if not content:
            continue
        fast = engine._exact_in_place(content, hs)
        event(f"fast path: {'taken' if fast is not None else 'declined'}")
        if fast is not None:
            assert fast == engine._apply_lines(content, hs, 0)


# --- what these properties found, pinned -------------------------------------------------


def test_a_line_without_newline_never_runs_into_the_next() -> None:
    """Found by apply/reverse: a hunk without context adding a file's last line (no
    newline) was put at its stated line 0, ahead of other lines, giving `line 2theirs`.
    Such a line can only go at the end of the file."""
    hunk = engine.diff(b"line 0\nline 1\nline 2", b"")[0].reversed()
    res = engine.apply_hunks(b"theirs\n", [hunk])
    assert not res.ok and "must go at the end of the file" in res.hunks[0].reason
    assert engine.apply_hunks(b"", [hunk]).content == b"line 0\nline 1\nline 2"


def test_a_removed_line_upstream_moved_is_not_upstreamed(tmp_path: Path) -> None:
    """Found by the rebase property: the patch deletes `line 0`, upstream moved it below
    `line 1`. The 3-way merge is clean and equals upstream, so the patch was reported
    `upstreamed` — and a rebase would have dropped it with `line 0` still there. Now the
    deletion is placed where the line went (anchored placement) and recorded `merge`."""
    lab = Lab(tmp_path)
    case = Case(
        [b"line 0\n", b"line 1\n", b"line 2\n"],
        [b"line 1\n", b"line 2\n"],
        [b"line 1\n", b"line 0\n", b"line 2\n"],
        True,
    )
    assert lab.replay(case, 0) == ("merge", b"line 1\nline 2\n")
    # The reverse-apply test was fooled the same way when the context closes up.
    case = Case(
        [b"line %d\n" % i for i in range(5)],
        [b"line %d\n" % i for i in (0, 1, 3, 4)],
        [b"line %d\n" % i for i in (0, 1, 3, 4, 2)],
        True,
    )
    assert lab.replay(case, 0) == ("merge", b"line 0\nline 1\nline 3\nline 4\n")


def test_a_moved_last_line_that_gained_a_newline_is_still_the_same_block(tmp_path: Path) -> None:
    """Found by the rebase property (2026-11-29): the patch deletes the file's last two
    lines, the last without a newline; upstream moved both to the top, where the last one
    gained a newline. The 3-way merge (git's and ours) is clean and keeps the moved
    lines, and the move check compared `line 7` with `line 7\n` and saw no copy: the patch
    was `merge` with its deletion lost. Now a missing newline does not hide the block."""
    lab = Lab(tmp_path)
    base = [b"line %d\n" % i for i in range(7)] + [b"line 7"]
    case = Case(
        base, [b"ours 0.0\n", *base[:6]], [base[0], b"line 6\n", b"line 7\n", *base[1:6]], True
    )
    status, result = lab.replay(case, 0)
    assert status == "conflict" and result is None
    # The same with upstream editing the moved line 6 ("line 6 theirs"): the block is
    # nowhere whole, but line 7 still is, once, where upstream put it.
    base[7] = b"line 7\n"
    case = Case(
        base,
        [b"ours 0.0\n", *base[:6]],
        [base[0], b"line 6 theirs\n", b"line 7\n", *base[1:6]],
        True,
    )
    status, result = lab.replay(case, 0)
    assert status == "conflict" and result is None


def test_upstreamed_removals_stay_upstreamed_when_lines_repeat(tmp_path: Path) -> None:
    """Found by review of the move check above: counting removed lines one by one
    against upstream's file called these upstreamed patches conflicts, because a blank
    line the patch removes is everywhere. Upstream took each patch (and added a blank
    line elsewhere, or edited a line two above); both are upstreamed."""
    lab = Lab(tmp_path)
    base = [b"line %d\n" % i for i in range(30)]
    base[10] = b"\n"
    ours = base[:9] + base[11:]
    theirs = ours[:25] + [b"\n"] + ours[25:]
    assert lab.replay(Case(base, ours, theirs, False), 0)[0] == "upstreamed"
    base = [
        b"int f() {\n",
        b"  one();\n",
        b"\n",
        b"  two();\n",
        b"  three();\n",
        b"  four();\n",
        b"  gone();\n",
        b"\n",
        b"  five();\n",
        b"  six();\n",
        b"}\n",
    ]
    ours = base[:6] + base[8:]
    theirs = list(ours)
    theirs[4] = b"  THREE();\n"
    assert lab.replay(Case(base, ours, theirs, False), 0)[0] == "upstreamed"


def test_offset_and_stated_line_pointing_at_different_copies_is_ambiguous() -> None:
    """Found by bench/differential.py (seed 1001347): five copies of one block; upstream
    changed the `}` the first hunk removes, so that hunk moved by offset into copy 1, and
    the second hunk then matched both in copy 4 (where that offset predicts) and in copy 5
    (nearer its stated line, where git apply put it). Neither is right; patchq took copy
    4 and git copy 5. Now two predictions that disagree make the hunk ambiguous."""
    block = "{\nint a;\nx++;\nint b;\n}\n"
    target = (
        (block * 2).replace(
            "}\n{\nint a;\nx++;\nint b;\n}\n", "}\n{\nint a;\nx++;\nint b;\n} theirs\n"
        )
        + "{\nint a;\nint b;\n}\n"
        + block * 2
    )
    patch = (
        "--- a/f\n+++ b/f\n@@ -7,7 +7,6 @@\n int a;\n x++;\n int b;\n-}\n {\n int a;\n"
        " x++;\n@@ -20,6 +19,8 @@\n }\n {\n int a;\n+ours 2\n x++;\n+return 0;\n int b;\n"
        " }\n"
    )
    hunks = parse(patch.encode(), "p.diff").sections[0].hunks
    res = engine.apply_hunks(target.encode(), hunks)
    assert [h.status for h in res.hunks] == ["offset", "ambiguous"]
    assert "nearer the stated line" in res.hunks[1].reason
