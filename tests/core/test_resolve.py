"""The finer merge methods (core/resolve.py): zealous, word, delete-wins, and their refusals.

Pure tests on lines, then properties: a resolution never drops what either side wrote,
and does not depend on which side is called which; and, through merge3, a file whose
conflicts all resolve holds both sides' changes.
"""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from patchq.core import merge3
from patchq.core.patch import split_lines
from patchq.core.resolve import _ratio, _Ratios, compose, edits, ended, resolve


def L(*xs: str) -> list[bytes]:
    return [f"{x}\n".encode() for x in xs]


def lines_of(r: object) -> list[bytes]:
    assert r is not None
    return list(r.lines)  # type: ignore[attr-defined]


# --- zealous ---------------------------------------------------------------------------


def test_touching_edits_compose_zealously() -> None:
    base = L("if(CUDA)", '  set(ARCHS "90a")', '  message(STATUS "cuda")')
    up = L("if(CUDA)", '  set(ARCHS "90a;100a")', '  message(STATUS "cuda")')
    mine = L("if(CUDA)", '  set(ARCHS "90a")', '  message(STATUS "CUDA on")')
    r = resolve(base, up, mine)
    assert r is not None and r.method == "zealous"
    assert list(r.lines) == L("if(CUDA)", '  set(ARCHS "90a;100a")', '  message(STATUS "CUDA on")')


def test_insert_insert_at_one_point_is_refused() -> None:
    base = L("a", "b")
    assert resolve(base, L("a", "up", "b"), L("a", "mine", "b")) is None


def test_the_same_edit_on_both_sides_is_taken_once() -> None:
    base = L("a", "b", "c")
    both = L("a", "B", "c")
    assert compose(base, edits(base, both), edits(base, both)) == both


# --- word ------------------------------------------------------------------------------


def test_different_words_of_one_line_merge_token_by_token() -> None:
    base = L("  add_flags(-O2 -g)")
    up = L("  add_flags(-O2 -g -fPIC)")  # upstream appends a flag
    mine = L("  add_flags(-O3 -g)")  # the patch changes another word
    r = resolve(base, up, mine)
    assert r is not None and r.method == "word"
    assert list(r.lines) == L("  add_flags(-O3 -g -fPIC)")


def test_a_renamed_argument_and_an_extended_call() -> None:
    base = L("    run(ctx, old_name);", "    done();")
    up = L("    run(ctx, new_name);", "    done();")
    mine = L("    run(ctx, old_name, SM120);", "    done(1);")
    r = resolve(base, up, mine)
    assert r is not None and r.method == "word"
    assert list(r.lines) == L("    run(ctx, new_name, SM120);", "    done(1);")


def test_overlapping_token_edits_stay_a_conflict() -> None:
    base = L("value = 10")
    assert resolve(base, L("value = 20"), L("value = 30")) is None
    assert resolve(L("line 20"), L("Line twenty"), L("LINE 20")) is None


def test_two_rewrites_of_one_string_literal_stay_a_conflict() -> None:
    # Upstream moved the name out of a path into a macro; the patch prefixes the path and
    # widens the buffer. Word by word the edits do not overlap, but they are two rewrites
    # of one value (a path): which holds is a person's call, either way round.
    base = L('\tchar buf[32] = "/var/run/demo-XXXXXX";')
    up = L('\tchar buf[32] = "/var/run/" DEMO_NAME;')
    mine = L('\tchar buf[96] = "@PREFIX@/var/run/demo-XXXXXX";')
    assert resolve(base, up, mine) is None
    assert resolve(base, mine, up) is None
    # An escaped quote does not end the literal.
    base = L('  log("say \\"hi\\" to %s", who);')
    assert (
        resolve(
            base, L('  log("say \\"hi\\" to %s!", who);'), L('  log("Say \\"hi\\" to %s", who);')
        )
        is None
    )


def test_a_string_literal_edited_by_one_side_still_merges_by_words() -> None:
    base = L('    printf("count %d\\n", n);')
    up = L('    printf("count %d\\n", total);')  # upstream renames the argument
    mine = L('    printf("items: %d\\n", n);')  # the patch rewords the message
    for a, b in ((up, mine), (mine, up)):
        r = resolve(base, a, b)
        assert r is not None and r.method == "word"
        assert list(r.lines) == L('    printf("items: %d\\n", total);')
    # Both sides making the same edit inside the literal is one edit, not two.
    r = resolve(L('f("a b", 1)'), L('f("a c", 1)'), L('f("a c", 2)'))
    assert r is not None and list(r.lines) == L('f("a c", 2)')


# --- delete-wins -----------------------------------------------------------------------


def test_a_deleted_block_wins_over_an_edit_inside_it_and_says_what_it_discards() -> None:
    base = L("keep", "old_api(1);", "old_api(2);", "end")
    up = L("keep", "old_api(1);", "old_api(2, flags);", "end")
    mine = L("keep", "end")
    r = resolve(base, up, mine)
    assert r is not None and r.method == "delete-wins"
    assert list(r.lines) == L("keep", "end")
    assert r.discarded == tuple(L("old_api(2, flags);"))


def test_delete_wins_is_refused_when_the_patch_rewrites_the_edited_line() -> None:
    base = L("line 6")
    assert resolve(base, L("upstream 6"), L("LINE 6")) is None


def test_delete_wins_never_discards_a_line_upstream_moved_in() -> None:
    # The region is the block the patch deletes; upstream rewrote its last line into `a`,
    # which the base has elsewhere: a move, not an edit, and discarding it would lose it.
    taken = resolve(L("b", "c"), L("b", "a"), [])
    assert taken is not None and taken.method == "delete-wins" and taken.discarded == (b"a\n",)
    assert resolve(L("b", "c"), L("b", "a"), [], elsewhere=frozenset(L("a"))) is None


def test_delete_wins_never_discards_lines_upstream_inserted_or_a_rewrite() -> None:
    # New lines upstream put into the deleted block (a new include, a new flag) are kept
    # for a person to judge; so is a block the patch rewrites rather than deletes.
    assert resolve(L("b", "c"), L("b", "new", "c"), []) is None
    assert resolve(L("x y z w"), L("x y Z w"), L("totally different")) is None


def test_an_insertion_next_to_a_line_upstream_rewrote_is_a_conflict() -> None:
    base = L("free(name);", "break;")
    up = L("if (parse(m) != 0) goto out;", "break;")
    mine = L("free(name);", "name = NULL;", "break;")
    assert resolve(base, up, mine) is None


def test_a_new_word_upstream_also_wrote_elsewhere_stops_the_finer_methods() -> None:
    # The patch adds `-no-undefined` to a line upstream also edited; upstream added that
    # flag elsewhere in the file: maybe the same fix, its own way.
    base = L("LDFLAGS = -module $(LIBS)")
    up = L("LDFLAGS = -module $(LIBS) -shared")
    mine = L("LDFLAGS = -module -no-undefined $(LIBS)")
    assert resolve(base, up, mine) is not None
    base_words = {b"LDFLAGS", b"module", b"LIBS"}
    wrote = {b"shared", b"undefined", b"WIN32"}
    assert (
        resolve(base, up, mine, known=base_words.__contains__, upstream_wrote=wrote.__contains__)
        is None
    )


# --- properties ------------------------------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "gamma", "x", "42", "(", ")", ",", "-O2", "flag"])


@st.composite
def line_triples(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """A base line and two sides, each replacing some of its tokens."""
    toks = draw(st.lists(WORDS, min_size=2, max_size=8))
    base = list(toks)

    def side() -> list[str]:
        out = list(base)
        for i in draw(st.lists(st.integers(0, len(base) - 1), max_size=3, unique=True)):
            out[i] = draw(WORDS)
        if draw(st.booleans()):
            out.insert(draw(st.integers(0, len(out))), draw(WORDS))
        return out

    def join(ts: list[str]) -> bytes:
        return (" ".join(ts) + "\n").encode()

    return join(base), join(side()), join(side())


@given(line_triples())
def test_word_merge_never_drops_a_token_and_is_symmetric(t: tuple[bytes, bytes, bytes]) -> None:
    base, up, mine = t
    r = resolve([base], [up], [mine])
    other = resolve([base], [mine], [up])
    if r is None or r.method == "delete-wins":
        return
    assert other is not None and other.method != "delete-wins"
    assert r.lines == other.lines
    got = b"".join(r.lines).split()
    b, u, m = base.split(), up.split(), mine.split()
    # Every token a side wrote that the base did not have is in the result, as many
    # times as that side has it beyond the base.
    for side in (u, m):
        for tok in set(side):
            assert got.count(tok) >= side.count(tok) - b.count(tok), (tok, got)


@given(st.lists(st.sampled_from(["p", "q", "r", "s", "t"]), min_size=1, max_size=6), st.data())
def test_resolved_merge_holds_both_sides(base_words: list[str], data: st.DataObject) -> None:
    """Upstream and the patch each prefix one line: different lines always merge (apart,
    or touching: zealous) with both changes in; the same line is an insert/insert at one
    point, always a conflict."""
    base = [f"{w}{i}\n".encode() for i, w in enumerate(base_words)]
    up, mine = list(base), list(base)
    i = data.draw(st.integers(0, len(base) - 1))
    j = data.draw(st.integers(0, len(base) - 1))
    up[i] = b"UP " + up[i]
    mine[j] = b"MINE " + mine[j]
    out = merge3.merge(
        b"".join(up), b"".join(base), b"".join(mine), ("u", "b", "t"), far=None, resolved=[]
    )
    assert out is not None
    merged, conflicts = out
    if i == j:
        assert conflicts == 1
        return
    assert conflicts == 0
    want = list(base)
    want[i], want[j] = up[i], mine[j]
    assert merged == b"".join(want)


# --- anchored placement at the end of a file -------------------------------------------


def test_an_insertion_at_the_end_of_a_file_anchors_on_the_end() -> None:
    """A hunk with no trailing context hangs from the file's end, however common its last
    context line (`}`), as long as the file still ends with it; appended-to, it refuses."""
    from patchq.core.patch import parse
    from patchq.core.placement import anchored

    pre = b"int a;\nint b;\n}\n"
    patch = parse(
        b"--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,4 @@\n int a;\n int b;\n }\n+/* added */\n",
        "p.patch",
    )
    (h,) = patch.sections[0].hunks
    now = b"long a;\nlong b;\n}\n"
    assert anchored(now, [h], pre) == now + b"/* added */\n"
    assert anchored(now + b"int c;\n}\n", [h], pre) is None  # upstream appended too


def test_an_anchored_insertion_refuses_where_upstream_inserted_at_the_same_point() -> None:
    """insert/insert at the anchor: the patch adds a field after `char *banner;`, upstream
    added two fields there too. Which goes first is a person's call, so anchored placement
    refuses; an upstream edit of the neighbouring line (no insertion) is still placed."""
    from patchq.core.patch import parse
    from patchq.core.placement import anchored

    pre = b"struct s {\n\tint port;\n\tchar *banner;\n\tint keepalive;\n\tint last;\n};\n"
    patch = parse(
        b"--- a/s.h\n+++ b/s.h\n@@ -2,3 +2,4 @@\n \tint port;\n \tchar *banner;\n"
        b"+\tint debian_banner;\n \tint keepalive;\n",
        "p.patch",
    )
    (h,) = patch.sections[0].hunks
    inserted = pre.replace(b"\tchar *banner;\n", b"\tchar *banner;\n\tint a_new;\n\tint b_new;\n")
    assert anchored(inserted.replace(b"int port", b"long port"), [h], pre) is None
    edited = pre.replace(b"\tint keepalive;\n", b"\tlong keepalive_secs;\n").replace(
        b"int port", b"long port"
    )
    assert anchored(edited, [h], pre) == edited.replace(
        b"\tchar *banner;\n", b"\tchar *banner;\n\tint debian_banner;\n"
    )


def test_an_insertion_below_a_blank_line_anchors_on_the_context_run_above_it() -> None:
    """The patch adds a block after `#include "local.h"` and a blank line; upstream edited
    the line below (`MAGIC` got a suffix), so git's merge conflicts. The blank line alone
    anchors nothing, but the run from the include down to it is unique in both files:
    placed there. Refused where that run now occurs twice, and where upstream inserted
    its own line at the same point (insert/insert)."""
    from patchq.core.patch import parse
    from patchq.core.placement import anchored

    head = b'#include <stdint.h>\n#include <wchar.h>\n\n#include "local.h"\n\n'
    pre = head + b"#define MAGIC 0x51\n"
    patch = parse(
        b"--- a/x.c\n+++ b/x.c\n@@ -1,6 +1,11 @@\n #include <stdint.h>\n-#include <wchar.h>\n"
        b' \n #include "local.h"\n \n+#ifdef TINY_LIBC\n+typedef int16_t wchar16;\n+#else\n'
        b"+#include <wchar.h>\n+#endif\n+\n #define MAGIC 0x51\n",
        "p.patch",
    )
    (h,) = patch.sections[0].hunks
    block = b"#ifdef TINY_LIBC\ntypedef int16_t wchar16;\n#else\n#include <wchar.h>\n#endif\n\n"
    now = b"/* SPDX */\n" + head + b"#define MAGIC 0x51u\n"
    assert anchored(now, [h], pre) == (
        b'/* SPDX */\n#include <stdint.h>\n\n#include "local.h"\n\n'
        + block
        + b"#define MAGIC 0x51u\n"
    )
    twice = now + b'\n#include "local.h"\n\nint x;\n'
    assert anchored(twice, [h], pre) is None
    # MAGIC is kept, but now twice (so it anchors nothing); upstream put a line between
    # the run and it: both inserted at one point.
    inserted = (
        head + b"#define SEED 7\n#define MAGIC 0x51\n#ifdef BIG\n#define MAGIC 0x51\n#endif\n"
    )
    assert anchored(inserted, [h], pre) is None


def test_an_insertion_hangs_from_its_nearest_telling_line() -> None:
    """The patch adds an include right above `#include <net/util.h>` (below the header
    comment and a blank line). Upstream moved that include group down, below new lines:
    the nearer telling line, the include, is what the new line belongs with."""
    from patchq.core.patch import parse
    from patchq.core.placement import anchored

    pre = b"/*\n * Copyright (c) 2009 Someone Example\n */\n\n#include <net/util.h>\nint a;\n"
    patch = parse(
        b"--- a/m.c\n+++ b/m.c\n@@ -2,5 +2,6 @@\n  * Copyright (c) 2009 Someone Example\n  */\n"
        b" \n+#include <sys/select.h>\n #include <net/util.h>\n int a;\n",
        "p.patch",
    )
    (h,) = patch.sections[0].hunks
    now = (
        b'/*\n * Copyright (c) 2009 Someone Example\n */\n\n#include "defaults.h"\n\n'
        b"#include <net/util.h>\nint a;\n"
    )
    assert anchored(now, [h], pre) == now.replace(
        b"#include <net/util.h>", b"#include <sys/select.h>\n#include <net/util.h>"
    )


def test_a_word_merge_refuses_a_patch_that_adds_uses_of_a_name_upstream_renamed() -> None:
    """Upstream renamed `n` to `len` on the line the patch extends with `s[n - 1]`:
    token by token the edits compose, but the merged line would use a name that is
    gone. A person decides; an unrelated edit still merges by words."""
    base = [b"\twhile (n > 0 && s[n - 1] == ' ')\n"]
    up = [b"\twhile (len > 0 && s[len - 1] == ' ')\n"]
    mine = [b"\twhile (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\\t'))\n"]
    assert resolve(base, up, mine) is None
    up_flag = [b"\twhile (n > 0 && s[n - 1] == ' ') /* blanks */\n"]
    r = resolve(base, up_flag, mine)
    assert r is not None and r.method == "word"
    assert r.lines == (b"\twhile (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\\t')) /* blanks */\n",)


def test_a_hunk_that_meets_an_open_region_is_its_conflict() -> None:
    """Found by the rebase property: the hunk inserts a line right after the region
    upstream moved (its span [19, 21) starts where the region [15, 19) ends) and deletes
    the file's last line. The region left to a person is that hunk's conflict — never
    markers dropped with every hunk called merged."""
    from patchq.core.resolve import Region, by_hunk

    region = Region((b"l15\n",) * 4, (), (b"l15\n",) * 4 + (b"ours\n",), 15, 0, 0)
    assert by_hunk([(0, 1), (19, 21)], [region]) == [(False, None), (True, None)]
    far = Region(region.base, region.ours, region.theirs, 40, 0, 0)
    assert by_hunk([(0, 1), (19, 21)], [far]) == [(True, None), (True, None)]


_TOKENS = st.sampled_from(["alpha", "beta", "(", ")", " ", "x1", "=", "gamma;"])
_WORDY = st.lists(
    st.lists(_TOKENS, max_size=9).map(lambda ws: ("".join(ws) + "\n").encode()), max_size=6
)


@given(_WORDY, _WORDY)
def test_the_pairing_matrix_gives_each_pair_the_ratio_of_the_pair_alone(
    base: list[bytes], side: list[bytes]
) -> None:
    # _pairs asks each pair twice and each line against all others: its table keeps one
    # matcher per side line and each line's words; the answers must be _ratio's own.
    ratios = _Ratios(base, side)
    for i, a in enumerate(base):
        for j, b in enumerate(side):
            assert ratios.get(i, j) == _ratio(a, b)
            assert ratios.get(i, j) == _ratio(a, b)  # asked again: the same


# --- what the finer methods ask of the whole files (merge3._Whole) ---------------------

# Bytes that make words and break them: ASCII word bytes, separators, and a byte past
# ASCII (not a word byte for `re.ASCII`).
_TEXT = st.lists(
    st.sampled_from([b"abcd", b"ab", b"_x1", b"Z", b" ", b"\n", b"(", b"\xe9", b"abcde", b"9"]),
    max_size=40,
).map(b"".join)


def _words(text: bytes) -> set[bytes]:
    """The words the merge listed before (every run of four or more word bytes)."""
    return set(re.findall(rb"\w{4,}", text, re.ASCII))


@given(_TEXT, _TEXT)
def test_has_word_is_membership_in_the_files_word_list(text: bytes, other: bytes) -> None:
    # Every word of either text, asked of `text`: a word of `other` may stand inside a
    # longer word of `text`, or at its edge, and then it is not one of `text`'s words.
    for word in _words(text) | _words(other) | {b"abcd", b"abcdabcd", b"cdab"}:
        assert merge3.has_word(text, word) == (word in _words(text)), (text, word)


@given(_TEXT, _TEXT, _TEXT)
def test_whole_answers_as_the_eager_word_sets_and_line_counts(
    base: bytes, ours: bytes, theirs: bytes
) -> None:
    base_lines = split_lines(base)
    whole = merge3._Whole(base_lines, base, ours)
    base_words = _words(base)
    up_words = _words(ours) - base_words
    for word in _words(base) | _words(ours) | _words(theirs):
        assert whole.known(word) == (word in base_words)
        assert whole.upstream_wrote(word) == (word in up_words)
    counts = Counter(ended(x) for x in base_lines)
    for line in {ended(x) for x in base_lines + split_lines(theirs)}:
        assert whole[line] == counts[line]


@given(_TEXT, st.lists(_TEXT, max_size=6))
def test_a_files_words_answer_the_same_searched_or_listed(text: bytes, others: list[bytes]) -> None:
    # Past merge3._SEARCHES words (or a search that does not settle), the word list
    # answers: the same answers either way, whichever word comes first.
    asked = sorted(_words(text) | {w for o in others for w in _words(o)}) * 2
    asked += [b"w%03d" % k for k in range(merge3._SEARCHES + 2)]
    words = merge3._Words(text)
    for word in asked:
        assert (word in words) == (word in _words(text)), (text, word)


def test_a_file_of_one_long_run_is_listed_not_walked_once_per_word() -> None:
    """The word search is bounded, so a hostile file costs linear time: `aaaa`, `aaaaa`,
    … are each found at every place of a long run of `a`s, and each place fails (the run
    goes on). A search gives up after a few places, and the file's word list answers
    from then on."""
    text = b"a" * 100_000 + b" tail\n"
    assert merge3.has_word(text, b"aaaa", 8) is None
    assert merge3.has_word(text, b"aaaa") is False
    assert merge3.has_word(text, b"tail", 8) is True
    words = merge3._Words(text)
    assert all(b"a" * k not in words for k in range(4, 400))
    assert words._words == {b"a" * 100_000, b"tail"}  # listed once, after the first search
