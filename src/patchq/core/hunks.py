"""The hunk engine: place hunks in a file's bytes, in memory, and say how each landed.

DESIGN §4 steps 1–3, in order, for every hunk:

1. **exact** — the old lines (context and removed) match at the stated line;
2. **offset** — they match elsewhere; the nearest match to where the previous hunk's
   offset predicts wins, and a tie between two equally near matches is refused — as is
   a nearer match to the stated line than the one the offset predicts (in repeated
   blocks of code, the two predictions point at different copies);
3. **fuzz** (only when asked) — outer context lines are dropped, one more per level, and
   the shortened hunk is taken only if it matches at exactly one place.

Hunks are placed in order, never before the end of the previous hunk's match, so two
hunks can never overlap. A hunk that cannot be placed unambiguously is reported
`failed` or `ambiguous`; nothing ever guesses. Anchors follow `git apply`: a hunk with
context that starts at line 1 must match at the top of the file, one without trailing
context must match at its end (dropping context by fuzz releases that anchor), and so
must one whose last new line has no newline, since only a file's last line can lack it.

Pure: bytes in, bytes and reports out; no git, no terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from patchq.core import bounded
from patchq.core.patch import Hunk, Split, split_lines
from patchq.core.status import AMBIGUOUS, EXACT, FAILED, FUZZ, MERGE, OFFSET, RANK
from patchq.core.words import plural


@dataclass(frozen=True, slots=True)
class HunkResult:
    """How one hunk landed: strategy, offset from the stated line, fuzz, and where."""

    index: int
    status: str
    offset: int = 0
    fuzz: int = 0
    line: int = 0
    candidates: int = 0
    reason: str = ""
    # GNU placement (`apply_hunks(gnu=True)`): the other lines (1-based, in the file
    # before the patch) where the hunk matched as well and that GNU patch's nearest-first
    # order passed over.
    passed_over: tuple[int, ...] = ()

    @property
    def applied(self) -> bool:
        return self.status in (EXACT, OFFSET, FUZZ, MERGE)


# An edit script: how the engine spliced a file, in order — a (start, end) span of the
# file it was given, kept as it is, or bytes inserted (git.pack.delta_from_edit).
Edit = tuple[tuple[int, int] | bytes, ...]


@dataclass(frozen=True, slots=True)
class FileResult:
    """The file after its hunks; `content` holds every hunk that applied even if one failed."""

    content: bytes
    hunks: tuple[HunkResult, ...]
    # How `content` was spliced from the file it was given, where the engine knows it
    # (`Edit`), for a pack delta that needs no search; a by-product, not part of the answer.
    edit: Edit | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return all(h.applied for h in self.hunks)

    @property
    def status(self) -> str:
        """The worst hunk's strategy (`exact` for a file without hunks)."""
        return worst(h.status for h in self.hunks)

    @property
    def failures(self) -> tuple[HunkResult, ...]:
        return tuple(h for h in self.hunks if not h.applied)


def worst(statuses: Iterable[str]) -> str:
    """The worst of some hunk statuses; `exact` when there are none."""
    out: str = EXACT
    for s in statuses:
        if RANK[s] > RANK[out] or (s == FAILED and out == AMBIGUOUS):
            out = s
    return out


class _Index:
    """Finds where a run of lines occurs. Scans with list.index (C speed) from the first
    line of the run, rather than building a line → positions map per file, which cost
    more than the searches it served when a file is searched only a few times."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines

    def matches(self, seq: Sequence[bytes], lo: int, hi: int) -> list[int]:
        """Every start in [lo, hi] where `seq` matches (hi is the last allowed start)."""
        if not seq:
            return list(range(lo, hi + 1))
        n = len(seq)
        out = []
        lines = self.lines
        first = seq[0]
        find = lines.index
        i = max(lo, 0)
        stop = hi + 1
        while i < stop:
            try:
                i = find(first, i, stop)
            except ValueError:
                break
            if lines[i : i + n] == seq:
                out.append(i)
            i += 1
        return out


def apply_hunks(
    content: bytes | None,
    hunks: Sequence[Hunk],
    *,
    fuzz: int = 0,
    reverse: bool = False,
    split: Split = split_lines,
    gnu: bool = False,
) -> FileResult:
    """Apply `hunks` to `content` (None: the file does not exist) in order; `split` is
    the run's line splitter (a `LineCache`'s), where one is at hand.

    `gnu`: place hunks as GNU patch does (`gnu_apply`), where it places them all — a
    series applied on the base it was made for. Where GNU patch needs more fuzz than
    `fuzz` (up to its default, 2), the hunks it would fuzz fail, as `patch -F0` fails
    them; elsewhere the rules above decide."""
    hs = [h.reversed() for h in hunks] if reverse else hunks
    if content:
        fast = _exact_in_place(content, hs, gnu)
        if fast is not None:
            return fast
    if gnu and content:
        lines = split(content)
        placed, _ = _gnu_run(lines, hs, fuzz)
        if placed is not None:
            return placed
        if fuzz < 2:
            more, levels = _gnu_run(lines, hs, 2)
            if more is not None:
                return _needs_fuzz(content, more, levels, fuzz)
    return _apply_lines(content, hs, fuzz, split)


def _needs_fuzz(content: bytes, placed: FileResult, levels: list[int], fuzz: int) -> FileResult:
    """The file unchanged, and the hunks GNU patch places only with more fuzz than
    `fuzz` failed (what `patch -F0` does with them)."""
    out = []
    for h, level in zip(placed.hunks, levels, strict=True):
        if level <= fuzz:
            out.append(h)
            continue
        why = "its context and removed lines are not in the file"
        if h.status != FUZZ:
            why = (
                "its context is longer at one end than the other, which GNU patch reads "
                "as the start or end of the file unless fuzz evens it"
            )
        out.append(HunkResult(h.index, FAILED, reason=why))
    return FileResult(content, tuple(out))


def _apply_lines(
    content: bytes | None, hunks: Sequence[Hunk], fuzz: int, split: Split = split_lines
) -> FileResult:
    """`apply_hunks` line by line: every strategy, every report."""
    lines = split(content or b"")
    index = _Index(lines)
    out: list[bytes] = []
    cursor = 0  # first original line not yet copied to `out`
    last_offset = 0
    results: list[HunkResult] = []
    for i, h in enumerate(hunks):
        res, place = _locate(h, i, lines, index, lo=cursor, last_offset=last_offset, max_fuzz=fuzz)
        if place is None:
            results.append(res)
            continue
        start, drop_lead, drop_trail = place
        old, new = h.old_lines, h.new_lines
        core_start = start + drop_lead
        core_len = len(old) - drop_lead - drop_trail
        out.extend(lines[cursor:core_start])
        landed = len(out) + 1
        out.extend(new[drop_lead : len(new) - drop_trail])
        cursor = core_start + core_len
        last_offset = start - h.old_pos
        results.append(
            HunkResult(
                i, res.status, res.offset, res.fuzz, landed - drop_lead, res.candidates, res.reason
            )
        )
    out.extend(lines[cursor:])
    return FileResult(b"".join(out), tuple(results))


def locate(lines: list[bytes], hunk: Hunk) -> int | None:
    """The 0-based line at which `hunk` alone would apply to `lines`, or None — what
    `apply_hunks` would decide for it, without building the patched file."""
    _, place = _locate(hunk, 0, lines, _Index(lines), lo=0, last_offset=0, max_fuzz=0)
    return None if place is None else place[0]


def _exact_in_place(content: bytes, hunks: Sequence[Hunk], gnu: bool = False) -> FileResult | None:
    """The common case without splitting the file into lines: every hunk has context and
    its old lines stand exactly at its stated line (so no offset ever predicts another
    place). Each hunk's old lines are found as one byte string (a C search from the
    previous hunk's end) and the new ones spliced in. Anything else — a hunk elsewhere,
    missing, without context — returns None and `apply_hunks` decides line by line; where
    this answers, it is what that would have answered (tests compare the two)."""
    n = -1  # lines in `content`, counted only for a hunk anchored to the end
    pieces: list[bytes] = []
    edit: list[tuple[int, int] | bytes] = []
    kept = 0  # where the base span the edit copies next starts
    results: list[HunkResult] = []
    pos = line = shift = 0  # byte offset and line number of the cursor; lines added so far
    for i, h in enumerate(hunks):
        old, new = h.old_lines, h.new_lines
        stated = h.old_pos
        if not h.has_context or stated < line or any(not x.endswith(b"\n") for x in old[:-1]):
            # (A `\ No newline` mid-hunk leaves an old line without one: joined, it would
            # glue onto the next and match a single line of the file. Found by review.)
            return None
        no_eol = bool(new) and not new[-1].endswith(b"\n")
        if h.old_start <= 1 and stated != 0:
            return None  # the anchors `_window` sets
        uneven = gnu and h.trailing_context < h.leading_context  # GNU: the end, unfuzzed
        if h.trailing_context == 0 or no_eol or uneven:
            if n < 0:
                n = content.count(b"\n") + (not content.endswith(b"\n"))
            if stated != n - len(old):
                return None
        block = b"".join(old)
        at = content.find(block, pos)
        while at != -1:
            here = line + content.count(b"\n", pos, at)
            if here > stated:
                return None
            if (
                here == stated
                and (at == 0 or content[at - 1] == 10)
                and (block.endswith(b"\n") or at + len(block) == len(content))
            ):
                break
            at = content.find(block, at + 1)
        if at == -1:
            return None
        pieces.append(content[pos:at])
        pieces.extend(new)
        # The context at both ends is the base's own bytes: copied, not inserted.
        lead, trail = h.leading_context, h.trailing_context
        if old[:lead] != new[:lead] or (trail and old[-trail:] != new[-trail:]):
            lead = trail = 0
        head = sum(map(len, old[:lead]))
        edit.append((kept, at + head))
        edit.append(b"".join(new[lead : len(new) - trail]))
        kept = at + len(block) - (sum(map(len, old[-trail:])) if trail else 0)
        results.append(HunkResult(i, EXACT, 0, 0, stated + shift + 1, 1))
        pos = at + len(block)
        line = stated + len(old)
        shift += len(new) - len(old)
    pieces.append(content[pos:])
    edit.append((kept, len(content)))
    return FileResult(b"".join(pieces), tuple(results), tuple(edit))


def _locate(
    h: Hunk,
    i: int,
    lines: Sequence[bytes],
    index: _Index,
    *,
    lo: int,
    last_offset: int,
    max_fuzz: int,
) -> tuple[HunkResult, tuple[int, int, int] | None]:
    """Find where hunk `h` (number `i`) goes, at line `lo` or after, the hunk before
    having moved `last_offset` lines: (report, (start, dropped leading, dropped trailing))."""
    old = h.old_lines
    n = len(lines)
    stated = h.old_pos
    hi = n - len(old)  # last start at which `old` fits
    new = h.new_lines
    # A line without a newline can only be a file's last: put anywhere else, it would
    # run into the next line (found by the apply/reverse property, tests/core/test_properties).
    no_eol = bool(new) and not new[-1].endswith(b"\n")
    if not h.has_context:
        # Zero-context hunks (diff -U0) carry no anchor but their removed lines: a pure
        # insertion goes exactly where stated or nowhere.
        if not old:
            if no_eol and stated != n:
                return HunkResult(
                    i,
                    FAILED,
                    reason="its last line has no newline, so it "
                    f"must go at the end of the file, not at line {stated + 1}",
                ), None
            if lo <= stated <= n:
                return HunkResult(i, EXACT, 0, 0, candidates=1), (stated, 0, 0)
            return HunkResult(
                i, FAILED, reason=f"line {stated} is past the end of the file ({plural(n, 'line')})"
            ), None
        begin, end = False, no_eol
    else:
        begin = h.old_start <= 1
        end = h.trailing_context == 0 or no_eol
    allowed = _window(lo, hi, begin=begin, end=end, n=n, size=len(old))
    # 1. exact, unless the previous hunk's offset predicts a different, equally good place.
    if stated in allowed and lines[stated : stated + len(old)] == old:
        guess = stated + last_offset
        if last_offset and guess in allowed and lines[guess : guess + len(old)] == old:
            return HunkResult(
                i,
                AMBIGUOUS,
                reason=(
                    f"matches both at line {stated + 1} as stated and at line {guess + 1} "
                    "where the previous hunk's offset puts it"
                ),
            ), None
        return HunkResult(i, EXACT, 0, 0, candidates=1), (stated, 0, 0)
    # 2. offset: the nearest match to the predicted place.
    found = index.matches(old, allowed.start, allowed.stop - 1) if allowed else []
    if found:
        guess = stated + last_offset
        best = min(abs(p - guess) for p in found)
        nearest = [p for p in found if abs(p - guess) == best]
        if len(nearest) > 1:
            return HunkResult(
                i,
                AMBIGUOUS,
                candidates=len(found),
                reason=(f"matches equally well at lines {nearest[0] + 1} and {nearest[1] + 1}"),
            ), None
        p = nearest[0]
        if last_offset:
            # The stated line predicts too (it is what git apply goes by): if it points
            # at another match, the two predictions disagree and neither is a fact.
            # Found by bench/differential.py on repeated blocks of code.
            near = min(found, key=lambda q: (abs(q - stated), q))
            if near != p and abs(near - stated) < abs(p - stated):
                return HunkResult(
                    i,
                    AMBIGUOUS,
                    candidates=len(found),
                    reason=(
                        f"matches at line {p + 1}, where the previous hunk's offset puts it, "
                        f"and at line {near + 1}, nearer the stated line"
                    ),
                ), None
        return HunkResult(i, OFFSET, p - stated, 0, candidates=len(found)), (p, 0, 0)
    # 3. fuzz: drop outer context, one more line per level; take only a unique match.
    fuzzed = _fuzzed(h, i, lines, index, lo=lo, anchors=(begin, end), max_fuzz=max_fuzz)
    if fuzzed is not None:
        return fuzzed
    why = "its context and removed lines are not in the file"
    if h.old_start <= 1 and h.has_context and lines[: len(old)] != old and found == []:
        why = "it must match at the top of the file, and does not"
    return HunkResult(i, FAILED, reason=why), None


def _fuzzed(
    h: Hunk,
    i: int,
    lines: Sequence[bytes],
    index: _Index,
    *,
    lo: int,
    anchors: tuple[bool, bool],
    max_fuzz: int,
) -> tuple[HunkResult, tuple[int, int, int] | None] | None:
    """`_locate`'s last step: the hunk less one more line of outer context per fuzz level
    up to `max_fuzz`, still held to the file's start or end as `anchors` say; a unique
    match places it, several refuse it; None when no level matches."""
    old, n, stated = h.old_lines, len(lines), h.old_pos
    begin, end = anchors
    lead, trail = h.leading_context, h.trailing_context
    for f in range(1, max_fuzz + 1):
        dl, dt = min(f, lead), min(f, trail)
        if (dl, dt) == (min(f - 1, lead), min(f - 1, trail)):
            continue  # this level drops nothing more than the last
        core = old[dl : len(old) - dt]
        if not core:
            return HunkResult(
                i,
                AMBIGUOUS,
                fuzz=f,
                reason=(f"with fuzz {f} no context is left to anchor the hunk"),
            ), None
        c_begin = begin and dl == 0
        c_end = end and dt == 0
        c_hi = n - len(core)
        c_allowed = _window(lo, c_hi, begin=c_begin, end=c_end, n=n, size=len(core))
        # The core sits `dl` lines below the start of the full hunk.
        found = index.matches(core, c_allowed.start, c_allowed.stop - 1) if c_allowed else []
        if len(found) == 1:
            start = found[0] - dl
            return HunkResult(i, FUZZ, start - stated, f, candidates=1), (start, dl, dt)
        if len(found) > 1:
            return HunkResult(
                i,
                AMBIGUOUS,
                fuzz=f,
                candidates=len(found),
                reason=(
                    f"with fuzz {f} it matches at {len(found)} places (lines "
                    + ", ".join(str(p - dl + 1) for p in found[:4])
                    + (", …" if len(found) > 4 else "")
                    + ")"
                ),
            ), None
    return None


# --- GNU patch's placement ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _GnuPlace:
    """Where GNU patch puts a hunk: the start of its whole pattern, the fuzz level that
    found it, and the other starts that matched at that level, in the order passed over."""

    start: int
    fuzz: int
    full: bool  # the whole pattern matches there (no context line actually differs)
    others: tuple[int, ...]


def gnu_apply(lines: list[bytes], hunks: Sequence[Hunk], max_fuzz: int) -> FileResult | None:
    """The file after `hunks` placed as GNU patch places them, or None (`_gnu_run`)."""
    return _gnu_run(lines, hunks, max_fuzz)[0]


def _gnu_run(
    lines: list[bytes], hunks: Sequence[Hunk], max_fuzz: int
) -> tuple[FileResult | None, list[int]]:
    """The file after `hunks` placed as GNU patch 2.7 places them (patch.c `locate_hunk`,
    `apply_hunk`), or None where GNU patch fails a hunk; and the fuzz level that found
    each hunk placed.

    For each hunk GNU patch tries fuzz 0, then 1, up to `max_fuzz` (never more than the
    hunk's context): at each level every offset from the place the previous hunk's offset
    predicts, nearest first (after before, at equal distance), and takes the first match.
    Fuzz F drops context lines from the ends of the hunk's pattern so that both ends keep
    `max(prefix, suffix) - F` lines at most: a hunk with less trailing than leading
    context (and a hunk at line 1 with less leading context) stays anchored to the end
    (start) of the file until fuzz evens them out. A hunk may overlap the trailing
    context of the one before (GNU patch only freezes lines up to a hunk's last change);
    the lines dropped by fuzz are kept as the file has them."""
    out: list[bytes] = []
    index = _Index(lines)
    frozen = 0  # lines of the file consumed so far (GNU's last_frozen_line)
    in_offset = 0
    results: list[HunkResult] = []
    seams: list[int] = []  # where copied and patched lines meet in `out`
    levels: list[int] = []
    for i, h in enumerate(hunks):
        place = _gnu_locate(h, lines, index, frozen=frozen, in_offset=in_offset, max_fuzz=max_fuzz)
        lead, trail = h.leading_context, h.trailing_context
        if lead == len(h.lines):
            lead = trail = 0  # no change in it: GNU patch refuses such a hunk anyway
        if place is None or place.start + lead < frozen:
            return None, levels  # not found, or "misordered hunks": GNU patch fails it
        start = place.start
        levels.append(place.fuzz)
        old, new = h.old_lines, h.new_lines
        out.extend(lines[frozen : start + lead])
        seams.append(len(out))
        landed = len(out) + 1 - lead
        out.extend(new[lead : len(new) - trail])
        seams.append(len(out))
        frozen = start + len(old) - trail
        in_offset = start - h.old_pos
        if place.full:
            status = EXACT if start == h.old_pos else OFFSET
            fuzz = 0
        else:
            status, fuzz = FUZZ, place.fuzz
        results.append(
            HunkResult(
                i,
                status,
                start - h.old_pos,
                fuzz,
                landed,
                1 + len(place.others),
                passed_over=tuple(p + 1 for p in place.others),
            )
        )
    out.extend(lines[frozen:])
    if any(0 < k < len(out) and not out[k - 1].endswith(b"\n") for k in seams):
        return None, levels  # a line without its newline put before another: refused
    return FileResult(b"".join(out), tuple(results)), levels


def _gnu_locate(
    h: Hunk, lines: list[bytes], index: _Index, *, frozen: int, in_offset: int, max_fuzz: int
) -> _GnuPlace | None:
    """GNU patch's `locate_hunk` for every fuzz level in turn (0-based lines), after the
    `frozen` lines, the hunk before having moved `in_offset` lines."""
    old = h.old_lines
    size, n = len(old), len(lines)
    guess = h.old_pos + in_offset
    if not size:
        # "null range matches always", where the offset puts it.
        return _GnuPlace(guess, 0, True, ()) if frozen <= guess <= n else None
    prefix, suffix = h.leading_context, h.trailing_context
    context = max(prefix, suffix)
    first = h.old_start + (h.old_len == 0)  # GNU's pch_first()
    for fuzz in range(min(max_fuzz, context) + 1):
        pf, sf = fuzz + prefix - context, fuzz + suffix - context
        max_start = n - (size - sf)
        max_pos, max_neg = max_start - guess, guess - frozen
        if guess + 1 <= max_neg:
            max_neg = guess
        if pf < 0 and first <= 1:
            # Can only match the start of the file (and, with sf < 0 too, all of it).
            if sf < 0 and (size != n or prefix < frozen):
                continue
            if frozen <= prefix and -guess <= max_pos and _gnu_match(lines, old, 0, 0, sf):
                return _GnuPlace(0, fuzz, _gnu_match(lines, old, 0, 0, 0), ())
            continue
        pf = max(pf, 0)
        if sf < 0:
            # Can only match the end of the file.
            start = n - size
            if guess - start <= max_neg and _gnu_match(lines, old, start, pf, 0):
                return _GnuPlace(start, fuzz, _gnu_match(lines, old, start, 0, 0), ())
            continue
        min_off = guess - max_start if max_pos < 0 else guess - frozen if max_neg < 0 else 0
        max_off = max(max_pos, max_neg)
        if max_off < min_off:
            continue
        # Every start GNU's loop tries, ranked by when it tries it.
        rank: dict[int, tuple[int, int]] = {}
        lo = min(guess + min_off, guess - min(max_off, max_neg))
        hi = max(guess + min(max_off, max_pos), guess - min_off)
        core = old[pf : size - sf]
        c_lo, c_hi = max(lo + pf, 0), min(hi + pf, n - len(core))
        for c in index.matches(core, c_lo, c_hi) if c_lo <= c_hi else ():
            start = c - pf
            off = start - guess
            if min_off <= off <= min(max_off, max_pos):
                rank[start] = min(rank.get(start, (off, 0)), (off, 0))
            if min_off <= -off <= min(max_off, max_neg):
                rank[start] = min(rank.get(start, (-off, 1)), (-off, 1))
        if rank:
            order = sorted(rank, key=rank.__getitem__)
            start = order[0]
            return _GnuPlace(start, fuzz, _gnu_match(lines, old, start, 0, 0), tuple(order[1:]))
    return None


def _gnu_match(lines: list[bytes], old: list[bytes], start: int, pf: int, sf: int) -> bool:
    """GNU's `patch_match`: the pattern less `pf` leading and `sf` trailing lines matches
    the file at `start` (lines outside the file match nothing)."""
    lo, hi = start + pf, start + len(old) - sf
    if lo < 0 or hi > len(lines):
        return hi <= lo and lo >= 0
    return lines[lo:hi] == old[pf : len(old) - sf]


def _window(lo: int, hi: int, *, begin: bool, end: bool, n: int, size: int) -> range:
    """The starts a match of `size` lines in `n` may take (`hi` inclusive), given the
    lower bound and the anchors (to the file's `begin`, to its `end`)."""
    start, stop = lo, hi
    if begin:
        stop = min(stop, 0)
    if end:
        start, stop = max(start, n - size), min(stop, n - size)
    return range(start, stop + 1) if start <= stop else range(0)


def diff(old: bytes, new: bytes, context: int = 3) -> list[Hunk]:
    """Unified-diff hunks turning `old` into `new` (difflib within core/bounded.py's
    bound, a linear answer beyond it; git's diff is used for refresh)."""
    a, b = split_lines(old), split_lines(new)
    hunks: list[Hunk] = []
    for group in bounded.grouped_opcodes(a, b, context):
        lines: list[tuple[str, bytes]] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend((" ", x) for x in a[i1:i2])
                continue
            lines.extend(("-", x) for x in a[i1:i2])
            lines.extend(("+", x) for x in b[j1:j2])
        i1, j1 = group[0][1], group[0][3]
        old_len = sum(1 for t, _ in lines if t != "+")
        new_len = sum(1 for t, _ in lines if t != "-")
        hunks.append(
            Hunk(
                i1 + 1 if old_len else i1, old_len, j1 + 1 if new_len else j1, new_len, tuple(lines)
            )
        )
    return hunks
