"""The placement ladder's pure units (core/placement.py) on bytes.

The units the replay's rungs (rebase/ladder.py) climb with are tested here without a
repository: where a hunk's change is, whether
upstream already holds it, whether a merge lost what the patch removes, which placed
hunks are doubtful, and the conflict blocks shown to a person.
"""

from __future__ import annotations

from patchq.core import hunks as engine
from patchq.core.patch import Hunk, parse
from patchq.core.placement import (
    Alignment,
    anchored,
    apply_only,
    conflict_blocks,
    count,
    doubtful,
    find,
    held,
    lacks_removed,
    span,
    starts,
)


def hunk(text: bytes) -> Hunk:
    (h,) = parse(b"--- a/f\n+++ b/f\n" + text, "p.patch").sections[0].hunks
    return h


def lines(*xs: str) -> list[bytes]:
    return [f"{x}\n".encode() for x in xs]


# A hunk changing `int b;` into `long b;` between `int a;` and `int c;`, at line 3.
CHANGE = b"@@ -3,3 +3,3 @@\n int a;\n-int b;\n+long b;\n int c;\n"
TOP = b"/* one */\n/* two */\n"
FILE = TOP + b"int a;\nint b;\nint c;\n/* end */\n"


def test_count_and_find_see_whole_runs_only() -> None:
    text = lines("x", "a", "b", "x", "a", "b", "a")
    assert count(text, lines("a", "b")) == 2
    assert find(text, lines("a", "b")) == [1, 4]
    assert find(text, lines("a", "b"), 1) == [1]
    assert find(text, []) == []


def test_a_hunks_span_is_the_lines_it_changes() -> None:
    assert span(hunk(CHANGE), 10) == (11, 12)  # `int b;`, one line below `int a;`
    insertion = hunk(b"@@ -1,2 +1,3 @@\n a\n+new\n c\n")
    assert span(insertion, 0) == (1, 1)  # the empty span where it goes


def test_starts_are_where_each_hunk_landed() -> None:
    h = hunk(CHANGE)
    res = engine.apply_hunks(b"/* zero */\n" + FILE, [h])
    assert res.ok and starts([h], res) == {0: 3}  # one line lower than its header says


def test_upstream_holding_the_change_is_seen_in_the_mapped_block_only() -> None:
    h = hunk(CHANGE)
    pre = FILE.splitlines(keepends=True)
    done = FILE.replace(b"int b;", b"long b;").splitlines(keepends=True)
    assert held(h, pre, done, Alignment(pre, done))
    # The new line far away, the old one still in the block: not held.
    far = pre + lines(*(f"/* filler {i} */" for i in range(40))) + lines("long b;")
    assert not held(h, pre, far, Alignment(pre, far))
    # A pure deletion proves nothing by absence.
    deletion = hunk(b"@@ -3,3 +3,2 @@\n int a;\n-int b;\n int c;\n")
    gone = [x for x in pre if x != b"int b;\n"]
    assert not held(deletion, pre, gone, Alignment(pre, gone))


def test_a_merge_that_kept_what_the_patch_removes_is_caught() -> None:
    h = hunk(b"@@ -1,4 +1,2 @@\n a\n-gone one\n-gone two\n c\n")
    before = lines("a", "gone one", "gone two", "c")
    assert lacks_removed([h], lines("a", "c"), before)
    # Upstream moved the block down: the merge still holds it, the patch did not remove it.
    moved = lines("a", "c", "gone one", "gone two")
    assert not lacks_removed([h], moved, before)


def test_an_offset_whose_surroundings_changed_is_doubtful() -> None:
    h = hunk(CHANGE)
    pre = b"/* p1 */\n/* p2 */\n/* p3 */\n" + FILE + b"/* tail one */\n/* tail two */\n"
    then = engine.apply_hunks(pre, [h])  # the pinned base: three lines above, three below
    same = b"/* new */\n" + pre  # moved down, the same three lines around it
    other = b"/* new */\n" + pre.replace(b"/* two */", b"/* 2 */")  # a neighbour edited
    for content, want in ((same, []), (other, [0])):
        res = engine.apply_hunks(content, [h])
        assert res.hunks[0].status == "offset"
        assert doubtful([h], res, content, pre, then) == want


def test_applying_only_some_hunks_keeps_their_indices() -> None:
    a = hunk(CHANGE)
    b = hunk(b"@@ -5,2 +5,2 @@\n int c;\n-/* end */\n+/* the end */\n")
    res = apply_only(FILE, [a, b], [1], 0)
    assert res.ok and res.content == FILE.replace(b"/* end */", b"/* the end */")
    assert [r.index for r in res.hunks] == [1]


def test_anchored_places_a_unique_removed_line_and_refuses_a_repeated_one() -> None:
    h = hunk(CHANGE)
    now = FILE.replace(b"int a;", b"short a;").replace(b"int c;", b"char c;")  # context edited
    assert anchored(now, [h], FILE) == now.replace(b"int b;", b"long b;")
    assert anchored(now + b"int b;\n", [h], FILE) is None  # twice now: no unique anchor
    assert anchored(b"int b;\n" * 2, [h], b"int b;\n" * 2) is None  # twice in the pre-image


def test_conflict_blocks_mark_the_patchs_side_for_a_person() -> None:
    out = conflict_blocks(b"x\ny\n", [hunk(CHANGE)], "p.patch")
    assert out == (
        b"x\ny\n<<<<<<< upstream (the patch expected the lines below)\n"
        b"int a;\nint b;\nint c;\n=======\nint a;\nlong b;\nint c;\n>>>>>>> p.patch\n"
    )
