"""The placement ladder's pure algorithms (DESIGN §4): bytes and hunks in, a placement or
a refusal out — no repository, no files. The replay (`rebase/replay.py`) climbs the
ladder per hunk (its table of rungs is `rebase/ladder.py`) and records which rung placed
it; refresh, push --merge and sink/float share it through the replay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from patchq.core import bounded
from patchq.core import hunks as engine
from patchq.core.patch import Hunk, Split, split_lines
from patchq.core.records import HunkOutcome
from patchq.core.resolve import Region, by_hunk
from patchq.core.status import CONFLICT, DELETE_WINS, FUZZ, MERGE, OFFSET


def settle(
    hunks: Sequence[Hunk],
    theirs: engine.FileResult,
    failing: Sequence[int],
    checks: list[HunkOutcome],
    regions: Sequence[Region],
) -> None:
    """Each failing hunk as the merge placed it (`core.resolve.by_hunk` decides): a
    conflict where a region left to a person holds its change, else merged — by the
    finer method or remembered resolution that settled its region, if one did. Only the
    hunks in a conflict region are a person's to resolve; the others merged."""
    at = starts(hunks, theirs)
    spans = [span(hunks[i], at[i]) if i in at else None for i in failing]
    named: list[Region] = []  # the regions whose note a hunk carries
    for i, (conflict, region) in zip(failing, by_hunk(spans, regions), strict=True):
        if region is not None and not conflict:
            named.append(region)
        if conflict:
            checks[i] = replace(checks[i], status=CONFLICT)
        elif region is None:
            checks[i] = replace(checks[i], status=MERGE, reason="", via="")
        else:
            checks[i] = replace(checks[i], status=MERGE, reason=note(region), via=region.method)
    # Every upstream line a delete-wins discarded is named, even where its region was not
    # matched to a hunk (a hunk spanning several regions, or one whose place is unknown):
    # the rest go to the first merged hunk, which then records delete-wins.
    merged = [i for i in failing if checks[i].status == MERGE]
    gone = [
        x
        for r in regions
        if r.method == DELETE_WINS and not any(r is n for n in named)
        for x in r.discarded
    ]
    if merged and gone:
        i = merged[0]
        reason = "; ".join(x for x in (checks[i].reason, discards(gone)) if x)
        checks[i] = replace(checks[i], reason=reason, via=DELETE_WINS)


def span(h: Hunk, start: int) -> tuple[int, int]:
    """The lines a hunk changes in the file it was made on, [start, end), 0-based (an
    insertion: the empty span where it goes)."""
    k = start
    first = last = None
    for tag, _ in h.lines:
        if tag != " " and first is None:
            first = k
        if tag == "-":
            k += 1
            last = k
        elif tag == "+":
            last = k if last is None or last < k else last
        else:
            k += 1
    if first is None or last is None:
        return start, start
    return first, max(first, last)


def note(region: Region) -> str:
    """What a reviewer must know of a settled region: the upstream lines a delete-wins
    discarded, the remembered resolution reused."""
    if region.source:
        return f"resolved as a person did before: {region.source}"
    return discards(region.discarded)


def discards(gone: Sequence[bytes]) -> str:
    """The note naming the upstream lines a delete-wins discarded ("" for none)."""
    if not gone:
        return ""
    shown = "; ".join(x.decode("utf-8", "replace").strip() for x in gone[:10])
    more = f" and {len(gone) - 10} more" if len(gone) > 10 else ""
    return f"discards upstream's {shown}{more}"


def trivial(line: bytes) -> bool:
    """A line too common to anchor on: blank, or only brackets and punctuation."""
    return len(line.strip().strip(b"{}()[];,").strip()) < 3


def upstream_added(hunks: Sequence[Hunk], up: Sequence[bytes], pre: Sequence[bytes]) -> bool:
    """Whether upstream's file holds a telling line the hunks add more often than the
    pinned base did: upstream made (some of) the change itself (DESIGN §4.1 "Trust")."""
    adds = {x for h in hunks for _, _, a, _ in change_blocks(h) for x in ended(a)}
    adds = {x for x in adds if not trivial(x)}
    if not adds:
        return False
    now, was = Counter(ended_file(up)), Counter(ended_file(pre))
    return any(now[x] > was[x] for x in adds)


def anchored(
    content: bytes, hunks: Sequence[Hunk], pre: bytes, split: Split = split_lines
) -> bytes | None:
    """DESIGN §4 step 5: place each change block where its removed lines — or, for a pure
    insertion, the unchanged line it hangs from (where that line is blank or punctuation,
    the hunk's context from the nearest telling line to it) — occur exactly once, both in
    the new file and in the pinned pre-image `pre` (so it is the same line, not a
    look-alike in another block that upstream left alone while editing the real one).
    None if any can't — or if upstream already added a telling line the hunks add (it
    took part of the change: placing the rest by anchor would duplicate that line)."""
    lines = split(content)
    old = split(pre)
    if upstream_added(hunks, lines, old):
        return None
    for h in hunks:
        if h.has_context and count(lines, h.old_lines):
            # The hunk's whole block is in the file, but not where the pinned base puts
            # it (the doubt refused it): a look-alike copy. Anchoring would find it too.
            return None
        blocks = change_blocks(h)
        runs = context_runs(h)
        for (before, removed, added, after), (above, below) in zip(blocks, runs, strict=True):
            if removed:
                if all(trivial(x) for x in removed) or count(old, removed) != 1:
                    return None
                hits = find(lines, removed, 2)
                if len(hits) != 1:
                    return None
                i = hits[0]
                lines[i : i + len(removed)] = added
                continue
            # The line it hangs from; where that is blank or punctuation, the context run
            # from the nearest telling line to it (`#include "x.h"` and a blank line):
            # unique in both files, and whole, so the insertion point is the same point.
            # The nearer telling line first (the line above on a tie).
            anchor_hit = None
            up_run, down_run = anchor_run(above, reverse=True), anchor_run(below, reverse=False)
            sides = [(up_run, 1), (down_run, -1)]
            if up_run is None or (down_run is not None and len(down_run) < len(up_run)):
                sides.reverse()
            for seq, step in sides:
                if seq is None or count(old, seq) != 1:
                    continue
                hits = find(lines, seq, 2)
                if len(hits) != 1:
                    continue
                edge = len(seq) - 1 if step == 1 else 0
                if inserted_at(old, lines, find(old, seq)[0] + edge, hits[0] + edge, step):
                    return None
                anchor_hit = hits[0] + len(seq) if step == 1 else hits[0]
                break
            if (
                anchor_hit is None
                and after is None
                and h.trailing_context == 0
                and before is not None
                and old
                and old[-1] == before
                and lines
                and lines[-1] == before
                # Upstream appended a block ending the same way: insert/insert, refused.
                and count(lines, [before]) == count(old, [before])
            ):
                # An insertion at the end of the file (no trailing context): the end of
                # the file is its anchor, as GNU patch takes it, however common the last
                # line — when the file still ends with the line it hung from.
                anchor_hit = len(lines)
            if anchor_hit is None:
                return None
            lines[anchor_hit:anchor_hit] = added
    return b"".join(lines)


# How far past the anchor a neighbour of the pinned base is looked for.
INSERT_WINDOW = 8


def inserted_at(
    old: Sequence[bytes], lines: Sequence[bytes], at_old: int, at_new: int, step: int
) -> bool:
    """Whether upstream inserted lines right beside the anchor of a pure insertion: the
    anchor's neighbour in the pinned base (the next line for step 1, the previous one for
    step -1) is no longer next to it in the new file but a few lines further on. The patch
    and upstream then both inserted at one point (insert/insert): which goes first is a
    person's call. A neighbour that is gone (upstream edited it) is not an insertion."""
    k = at_old + step
    if not 0 <= k < len(old) or trivial(old[k]):
        return False
    neighbour = old[k]
    j = at_new + step
    if 0 <= j < len(lines) and lines[j] == neighbour:
        return False
    for m in range(2, INSERT_WINDOW + 1):
        j = at_new + step * m
        if not 0 <= j < len(lines):
            return False
        if lines[j] == neighbour:
            return True
    return False


class Alignment:
    """Where the pinned base's lines went in upstream's file (a line diff, made once)."""

    def __init__(self, pre: Sequence[bytes], up: Sequence[bytes]) -> None:
        # difflib's alignment, within a bound of steps, so that a hostile file costs
        # linear time (a file of lines repeated just under difflib's "popular" mark makes
        # it quadratic and worse). Beyond it, the common head and tail and one
        # replacement between, and `whole` False: no line in that replacement is mapped,
        # so nothing is judged by where it maps (not held upstream, not moved, no hint).
        pre_l, up_l = list(pre), list(up)
        ops = bounded.aligned(pre_l, up_l, bounded.WORK)
        self.whole = ops is not None
        self.ops = ops if ops is not None else bounded.linear(pre_l, up_l)

    def at(self, x: int, end: bool = False) -> int:
        """Upstream's line for base line `x` (a changed block maps to its edges)."""
        for tag, i1, i2, j1, j2 in self.ops:
            if i1 <= x < i2 or (x == i2 and end):
                if tag == "equal":
                    return j1 + (x - i1)
                return j2 if end else j1
        return self.ops[-1][4] if self.ops else 0


# Lines around the mapped block that still count as inside it.
SLACK = 3
# Files longer than this get no review hints (the alignment is a line diff); files
# bigger than this are not searched for a moved block.
HINT_LINES = 20000
MOVED_BYTES = 4 << 20


def telling_line(line: bytes) -> bool:
    return len(line.strip().strip(b"{}()[];,").strip()) >= 4


def alike_block(block: Sequence[bytes], lines: Sequence[bytes]) -> bool:
    """Whether `lines` (where the alignment maps a hunk's block) still look like it."""
    if not lines:
        return False
    ratio = bounded.ratio(ended(block), ended(lines))  # too long to compare: not alike
    return ratio is not None and ratio >= 0.6


def held(h: Hunk, pre: Sequence[bytes], up: Sequence[bytes], align: Alignment) -> bool:
    """Whether upstream's file holds the hunk's whole change where the alignment maps the
    hunk's block (DESIGN §4.1 "Trust"): every line it adds (blank ones aside) is there,
    in the patch's order — a closing `endif()` or `}` as much as the telling line it
    closes — none it removes (and does not add back) is, and each telling line it adds is
    there as many more times than in the pinned block as the patch adds it (not an older
    copy standing in, not a copy the patch would duplicate). Judged within that block
    only, never anywhere in the file."""
    if not align.whole:
        return False  # the files were too long to align: nothing is mapped, nothing held
    added = [x for _, _, a, _ in change_blocks(h) for x in ended(a) if x.strip()]
    adds = [x for x in added if not trivial(x)]
    if not adds:
        return False  # a pure deletion proves nothing by absence
    rems = {x for _, removed, _, _ in change_blocks(h) for x in ended(removed)}
    rems = {x for x in rems if not trivial(x)} - set(adds)
    start = engine.locate(list(pre), h)
    start = h.old_pos if start is None else start
    lo = align.at(start)
    hi = align.at(start + len(h.old_lines), end=True)
    reach = SLACK + len(added)
    window = ended(up[max(lo - reach, 0) : hi + reach])
    if any(x in rems for x in window) or not in_order(added, window):
        return False
    # Each telling line the hunk adds is there exactly as many more times than in the
    # pinned block as the hunk adds it: fewer, and an `endif()` or a declaration that was
    # already there stands in for the patch's (the rest is not upstream); more, and the
    # patch's copy would duplicate one upstream put nearby.
    was = Counter(ended(pre[max(start - reach, 0) : start + len(h.old_lines) + reach]))
    block = Counter(window)
    return all(block[x] == n + was[x] for x, n in Counter(adds).items())


def in_order(seq: Sequence[bytes], lines: Sequence[bytes]) -> bool:
    """Whether `seq` occurs in `lines` as a subsequence (in order, gaps allowed)."""
    it = iter(lines)
    return all(any(x == y for y in it) for x in seq)


def lacks_removed(
    hunks: Sequence[Hunk], result: Sequence[bytes], before: Sequence[bytes] | None
) -> bool:
    """Whether `result` lacks what `hunks` remove, rather than holding it elsewhere: each
    run of removed lines occurs in it fewer times than in `before` (not at all, without
    it). Where upstream *moved* a block the patch removes, a clean 3-way merge and the
    reverse-apply test both take the move for the removal (found by the rebase property
    in tests/core/test_properties.py), and the patch would be dropped as upstreamed. A block
    that ended the file without a newline counts with one too: moved up, it gains one
    (lines are compared as if each ended in one, `ended`)."""
    res = ended_file(result)
    was = None if before is None else ended_file(before)
    for h in hunks:
        for _, removed, _, _ in change_blocks(h):
            block = ended(removed)
            now = count(res, block)
            if now and (was is None or now >= count(was, block)):
                return False
    return True


def kept(
    hunks: Sequence[Hunk], result: Sequence[bytes], upstream: Sequence[bytes], pre: Sequence[bytes]
) -> bool:
    """Whether `result` still holds a line the hunks remove that upstream moved rather than
    removed — what `removed`'s whole-block test misses when upstream moved only part of
    a removed block, or edited a line next to it while moving it (found by the rebase
    property). Line by line: each telling line the hunks remove on balance (n more times
    than they add it) that upstream did not already remove itself (fewer copies than in
    the pinned preimage) must be that much rarer in `result` than upstream. Blank and
    brace-only lines tell nothing — upstream removes and adds those all the time."""
    net: Counter[bytes] = Counter()
    for h in hunks:
        for _, removed, added, _ in change_blocks(h):
            net.update(ended(x for x in removed if not trivial(x)))
            net.subtract(ended(x for x in added if not trivial(x)))
    wanted = {k: n for k, n in net.items() if n > 0}
    if not wanted:
        return False
    left, up, was = (Counter(ended_file(x)) for x in (result, upstream, pre))
    for k, n in wanted.items():
        need = max(0, n - max(0, was[k] - up[k]))  # what upstream has not removed itself
        if left[k] > up[k] - need:
            return True
    return False


def ended(lines: Iterable[bytes]) -> list[bytes]:
    """Lines with a newline added where one is missing: a file's last line gains one when
    moved up."""
    return [x if x.endswith(b"\n") else x + b"\n" for x in lines]


def ended_file(lines: Sequence[bytes]) -> list[bytes]:
    """`ended` for a whole file's lines (split_lines): only the last can lack one."""
    out = list(lines)
    if out and not out[-1].endswith(b"\n"):
        out[-1] += b"\n"
    return out


def count(lines: Sequence[bytes], seq: Sequence[bytes]) -> int:
    """How many times `seq` occurs in `lines` (an empty `seq`: never)."""
    return len(find(lines, seq))


def find(lines: Sequence[bytes], seq: Sequence[bytes], most: int | None = None) -> list[int]:
    """Where `seq` starts in `lines` (an empty `seq`: nowhere); the first `most` only."""
    if not seq:
        return []
    n = len(seq)
    first = seq[0]
    want = list(seq)
    out: list[int] = []
    i = -1
    stop = max(len(lines) - n + 1, 0)
    while True:
        try:
            i = lines.index(first, i + 1, stop)
        except ValueError:
            return out
        if n == 1 or list(lines[i : i + n]) == want:
            out.append(i)
            if most is not None and len(out) >= most:
                return out


# How many lines around a moved hunk must look as they did in the pinned base.
SURROUNDINGS = 3


def starts(hunks: Sequence[Hunk], res: engine.FileResult) -> dict[int, int]:
    """Where each placed hunk's old lines start in the file it was applied to (0-based)."""
    out = {}
    shift = 0
    for r in res.hunks:
        if not r.applied:
            continue
        h = hunks[r.index]
        out[r.index] = r.line - 1 - shift
        shift += len(h.new_lines) - len(h.old_lines)
    return out


def doubtful(
    hunks: Sequence[Hunk],
    res: engine.FileResult,
    content: bytes,
    pre: bytes | None,
    then: engine.FileResult | None,
    *,
    split: Split = split_lines,
) -> list[int]:
    """Hunks placed by offset or fuzz whose surrounding lines differ from the pre-image's
    (`then`: the hunks applied to the pre-image)."""
    moved = [r.index for r in res.hunks if r.status in (OFFSET, FUZZ)]
    if not moved or pre is None or then is None or not then.ok:
        return []
    was, now = starts(hunks, then), starts(hunks, res)
    a, b = split(pre), split(content)
    k = SURROUNDINGS
    out = []
    for i in moved:
        q, p, n = was[i], now[i], len(hunks[i].old_lines)
        if p < 0:  # fuzz dropped leading context that is not even in the file
            out.append(i)
            continue
        above = a[max(q - k, 0) : q] == b[max(p - k, 0) : p]
        below = a[q + n : q + n + k] == b[p + n : p + n + k]
        if not (above and below):
            out.append(i)
    return out


def apply_only(
    content: bytes,
    hunks: Sequence[Hunk],
    keep: Sequence[int],
    fuzz: int,
    split: Split = split_lines,
) -> engine.FileResult:
    """Apply only the hunks `keep`; the report keeps the hunks' own indices."""
    res = engine.apply_hunks(content, [hunks[i] for i in keep], fuzz=fuzz, split=split)
    return engine.FileResult(res.content, tuple(replace(r, index=keep[r.index]) for r in res.hunks))


def runs(h: Hunk) -> Iterator[tuple[int, int]]:
    """Where each run of -/+ lines of `h` starts and ends (indices into its lines)."""
    lines = h.lines
    i = 0
    while i < len(lines):
        if lines[i][0] == " ":
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j][0] != " ":
            j += 1
        yield i, j
        i = j


def change_blocks(h: Hunk) -> list[tuple[bytes | None, list[bytes], list[bytes], bytes | None]]:
    """Each run of -/+ lines with the context line before and after it."""
    lines = h.lines
    out = []
    for i, j in runs(h):
        before = lines[i - 1][1] if i > 0 else None
        after = lines[j][1] if j < len(lines) else None
        removed = [c for t, c in lines[i:j] if t == "-"]
        added = [c for t, c in lines[i:j] if t == "+"]
        out.append((before, removed, added, after))
    return out


def context_runs(h: Hunk) -> list[tuple[list[bytes], list[bytes]]]:
    """For each run of -/+ lines (as `change_blocks`), the context lines right above it
    (back to the previous run or the hunk's start) and right below it."""
    lines = h.lines
    out = []
    for i, j in runs(h):
        a = i
        while a > 0 and lines[a - 1][0] == " ":
            a -= 1
        b = j
        while b < len(lines) and lines[b][0] == " ":
            b += 1
        out.append(([c for _, c in lines[a:i]], [c for _, c in lines[j:b]]))
    return out


def anchor_run(run: Sequence[bytes], reverse: bool) -> list[bytes] | None:
    """The context an insertion hangs from: from the line next to it (the run's last line
    if `reverse`, else its first) out to the nearest line that is not trivial; None if the
    run has none."""
    order = range(len(run) - 1, -1, -1) if reverse else range(len(run))
    for k in order:
        if not trivial(run[k]):
            return list(run[k:]) if reverse else list(run[: k + 1])
    return None


def conflict_blocks(
    content: bytes,
    hunks: Sequence[Hunk],
    name: str,
    split: Split = split_lines,
    ours: str = "upstream",
) -> bytes:
    """Without a preimage to merge against: mark each hunk at its stated place, the
    lines there labelled `ours`."""
    lines = split(content)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    for h in sorted(hunks, key=lambda x: -x.old_pos):
        pos = min(h.old_pos, len(lines))
        block = [f"<<<<<<< {ours} (the patch expected the lines below)\n".encode()]
        block += [x if x.endswith(b"\n") else x + b"\n" for x in h.old_lines]
        block += [b"=======\n"] + [x if x.endswith(b"\n") else x + b"\n" for x in h.new_lines]
        block += [f">>>>>>> {name}\n".encode()]
        lines[pos:pos] = block
    return b"".join(lines)
