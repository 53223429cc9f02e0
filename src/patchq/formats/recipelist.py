"""The engine under formats.recipes: a recipe's patch list as spans of its text, and the
edits that turn it into another list, in the file's own formatting.

An `Item` is one entry: the text that moves with it (a token such as `file://x.patch`,
or a whole line), where its name stands in that text, and its line. `place` maps the
items, in the order the build applies them, onto the wanted names (kept entries keep
their slots, filled in the new order; gone ones are dropped; new ones follow the last);
`edits` turns that into replacements of spans, and `apply` makes them. Every byte outside
the entries' spans stays.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from patchq.core.errors import BadInputError

PATCH_ENDS = (".patch", ".diff")


class Kind(StrEnum):
    """A recipe's format, by the file's name."""

    RPM = "rpm"
    BITBAKE = "bitbake"
    VCPKG = "vcpkg"
    CONDA = "conda"
    PKGBUILD = "pkgbuild"
    SERIES = "series"


@dataclass(frozen=True, slots=True)
class Item:
    """One patch entry: its name (as `series` spells it), the span of the text that moves
    with it (a token, or a whole line with its newline), where its name stands (`at`, -1
    where the text does not spell it), and its line."""

    name: str
    start: int
    end: int
    at: int
    line: int
    line_start: int
    line_end: int
    alone: bool  # nothing else of substance on its line (a `\` continuation aside)
    first: bool  # the first thing on its line


@dataclass(frozen=True, slots=True)
class Problem:
    """Why the list cannot be rewritten safely, at a line."""

    line: int
    what: str


@dataclass(frozen=True, slots=True)
class Listing:
    """What a recipe applies, in order, and what stands in the way of rewriting it."""

    kind: Kind
    names: tuple[str, ...]
    lines: tuple[int, ...]  # each name's line
    problems: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class Change:
    """The list a rewrite must leave: `names` in order, `renames` old → new, `prefix` the
    path from the recipe's folder to `patches/` (spelled before a new entry when the
    existing ones are), and `read` a patch's bytes (a PKGBUILD's checksums)."""

    names: tuple[str, ...]
    renames: dict[str, str]
    prefix: str = ""
    read: Callable[[str], bytes | None] = lambda _name: None


def renames_between(old: Sequence[str], new: Sequence[str]) -> dict[str, str]:
    """The renames that turn list `old` into `new`: names replaced one for one in place."""
    out: dict[str, str] = {}
    sm = difflib.SequenceMatcher(a=list(old), b=list(new), autojunk=False)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "replace" and a1 - a0 == b1 - b0:
            for a, b in zip(old[a0:a1], new[b0:b1], strict=True):
                if a not in new and b not in old:
                    out[a] = b
    return out


# --- lines and spans ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    no: int
    start: int
    end: int  # after its newline
    text: str  # without the newline


def lines_of(text: str) -> list[Line]:
    out, pos = [], 0
    for no, raw in enumerate(text.splitlines(keepends=True), 1):
        out.append(Line(no, pos, pos + len(raw), raw.rstrip("\r\n")))
        pos += len(raw)
    return out


def line_at(lines: Sequence[Line], pos: int) -> Line:
    lo, hi = 0, len(lines) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if lines[mid].start <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lines[lo]


def token(text: str, lines: Sequence[Line], span: tuple[int, int], name: tuple[str, int]) -> Item:
    """An item whose moving text is the token at `span`, its name `name[0]` at `name[1]`."""
    start, end = span
    ln = line_at(lines, start)
    before = text[ln.start : start].strip()
    after = text[end : ln.start + len(ln.text)].strip()
    alone = not before and (after in ("", "\\") or after.startswith("#"))
    return Item(name[0], start, end, name[1], ln.no, ln.start, ln.end, alone, not before)


def whole_line(ln: Line, name: str, at: int) -> Item:
    return Item(name, ln.start, ln.end, at, ln.no, ln.start, ln.end, True, True)


def strip_prefix(entry: str, prefix: str) -> tuple[str, int]:
    """A recipe entry as `series` names it, and the offset of that name in the entry."""
    if "://" in entry:
        cut = entry.rstrip("/").rfind("/") + 1
        return entry[cut:], cut
    if prefix and entry.startswith(prefix):
        return entry[len(prefix) :], len(prefix)
    return entry, 0


# --- the engine: a list of items to a new order -----------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    """Which name each kept slot shows, the slots dropped, the names added after `anchor`."""

    slots: tuple[tuple[Item, str], ...]
    drop: tuple[Item, ...]
    tail: tuple[str, ...]
    anchor: Item | None
    origin: dict[str, Item]  # a name already listed: the item that lists it


def place(items: Sequence[Item], want: Sequence[str], renames: dict[str, str]) -> Placement:
    """Map the items (in application order) onto `want`: items whose name stays keep
    their slots, filled in `want`'s order; the rest are dropped; names beyond the slots
    come after the last one."""
    named = [renames.get(i.name, i.name) for i in items]
    origin = {n: i for n, i in zip(named, items, strict=True) if n in want}
    kept = [i for n, i in zip(named, items, strict=True) if n in want]
    if not kept and want:
        kept = list(items)  # nothing stays: the old entries' places take the new ones
    drop = tuple(i for i in items if i not in kept)
    slots = tuple(zip(kept, want, strict=False))
    tail = tuple(want[len(kept) :])
    drop += tuple(kept[len(want) :])
    anchor = kept[min(len(kept), len(want)) - 1] if kept and want else None
    return Placement(slots, drop, tail, anchor, origin)


def renamed(text: str, item: Item, name: str) -> str:
    """The moving text of `item` naming `name` instead."""
    body = text[item.start : item.end]
    if item.at < 0:
        return body
    at = item.at - item.start
    return body[:at] + name + body[at + len(item.name) :]


Unit = Callable[[str, Item], str]  # the text for a name, given the slot it goes to


def edits(text: str, p: Placement, unit: Unit, joiner: str = "\n") -> list[tuple[int, int, str]]:
    """The edits (start, end, new text) that carry out a placement."""
    out: list[tuple[int, int, str]] = []
    for slot, name in p.slots:
        new = unit(name, slot)
        if new != text[slot.start : slot.end]:
            out.append((slot.start, slot.end, new))
    gone = {i.line_start for i in p.drop if i.alone}
    for item in p.drop:
        out.append(_removal(text, item, gone))
    a = p.anchor
    if p.tail and a is not None:
        if a.alone:
            head, tail = text[a.line_start : a.start], text[a.end : a.line_end]
            added = "".join(head + unit(n, a) + tail for n in p.tail)
            if not text[a.line_start : a.line_end].endswith("\n"):
                added = "\n" + added.rstrip("\n")
            out.append((a.line_end, a.line_end, added))
        elif a.first:
            indent = text[a.line_start : a.start]
            out.append((a.end, a.end, "".join(joiner + indent + unit(n, a) for n in p.tail)))
        else:
            out.append((a.end, a.end, "".join(" " + unit(n, a) for n in p.tail)))
    return out


def _removal(text: str, item: Item, gone: set[int]) -> tuple[int, int, str]:
    """The deletion of a dropped item: its line where it stands alone, else the token
    (and the line break before it, where it opened its line: `'c.patch')` under the
    last entry kept joins that entry's line, past the lines in `gone`)."""
    if item.alone:
        return (item.line_start, item.line_end, "")
    if item.first:
        prev = item.line_start
        while prev > 0 and text[prev - 1] in " \t\r\n\\":
            prev -= 1
            start = text.rfind("\n", 0, prev) + 1
            if start in gone and text[prev - 1] not in " \t\r\n\\":
                prev = start
        above = text[text.rfind("\n", 0, prev) + 1 : prev].lstrip()
        if prev > 0 and not above.startswith("#"):
            return (prev, item.end, "")
    start = item.start
    while start > item.line_start and text[start - 1] in " \t":
        start -= 1
    if start < item.start:
        return (start, item.end, "")
    end = item.end
    while end < item.line_end and text[end] in " \t":
        end += 1
    return (item.start, end, "")


def apply(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """`text` with the edits made; deletions that overlap (a dropped line, and the
    line break before a dropped last entry) are made as one."""
    merged: list[tuple[int, int, str]] = []
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        if merged and not new and not merged[-1][2] and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), "")
        else:
            merged.append((start, end, new))
    for start, end, new in reversed(merged):
        text = text[:start] + new + text[end:]
    return text


def moving(text: str, p: Placement) -> Unit:
    """The unit function of a list whose entries' text moves with them: a name keeps
    its own text (renamed); a new one is spelled as the last entry is."""

    def unit(name: str, slot: Item) -> str:
        src = p.origin.get(name)
        if src is not None:
            return renamed(text, src, name)
        return fresh(text, p.anchor if p.anchor is not None else slot, name)

    return unit


def fresh(text: str, tpl: Item, name: str) -> str:
    """A new entry spelled as `tpl` is, without what was its own: a trailing comment,
    BitBake's `;parameters`."""
    body = renamed(text, tpl, name)
    if tpl.at < 0:
        return body
    cut = tpl.at - tpl.start + len(name)
    rest = re.sub(r"^;[^\s\"']*", "", body[cut:])
    rest = re.sub(r"[ \t]+#[^\n]*", "", rest)
    return body[:cut] + rest


def _refuse(where: str, listing: Listing, change: Change) -> None:
    """Refuse a rewrite that needs changing a list patchq cannot rewrite safely."""
    if listing.problems and tuple(listing.names) != change.names:
        first = listing.problems[0]
        raise BadInputError(
            f"cannot keep this recipe in step: {first.what}",
            f"{where}:{first.line}",
            "edit the recipe's patch list by hand, or take the construct out of it",
        )


def check_items(where: str, listing: Listing, items: Sequence[Item], change: Change) -> None:
    _refuse(where, listing, change)
    if not items and change.names:
        raise BadInputError(
            "cannot keep this recipe in step: it lists no patch to add the new ones after",
            f"{where}:1",
            "add the first patch entry by hand",
        )


# --- shared readers ---------------------------------------------------------------------


def listing(kind: Kind, items: Sequence[Item], problems: Sequence[Problem]) -> Listing:
    return Listing(
        kind,
        tuple(i.name for i in items),
        tuple(i.line for i in items),
        tuple(sorted(set(problems), key=lambda p: p.line)),
    )


def is_patch_name(name: str) -> bool:
    return name.endswith(PATCH_ENDS)


def moved_list(
    text: str, items: Sequence[Item], change: Change, joiner: str = "\n"
) -> tuple[Placement, list[tuple[int, int, str]]]:
    """The placement and edits of a list whose entries' text moves with them."""
    if items and all(i.alone for i in items):  # one entry a line: lines move whole
        items = [replace(i, start=i.line_start, end=i.line_end) for i in items]
    p = place(items, change.names, change.renames)
    return p, edits(text, p, moving(text, p), joiner)


def disagreements(found: Listing, names: Sequence[str]) -> list[Problem]:
    """Where a recipe's list disagrees with the series' active `names`: a patch it
    applies that the series does not, one it misses, or the order."""
    out = []
    first = found.lines[0] if found.lines else 1
    for name, line in zip(found.names, found.lines, strict=True):
        if name not in names:
            out.append(Problem(line, f"applies {name}, which the series does not"))
    missing = [n for n in names if n not in found.names]
    for name in missing:
        out.append(Problem(first, f"does not apply {name}, which the series does"))
    common = [n for n in found.names if n in names]
    if common != [n for n in names if n in found.names]:
        for name, line, want in zip(
            common,
            [ln for n, ln in zip(found.names, found.lines, strict=True) if n in names],
            [n for n in names if n in found.names],
            strict=True,
        ):
            if name != want:
                out.append(Problem(line, f"applies {name} where the series' order has {want}"))
                break
    return out
