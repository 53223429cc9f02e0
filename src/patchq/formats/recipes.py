"""Recipes: the file a build reads its list of patches from, kept in step with `series`.

A package's build rarely reads `series`: an RPM spec names its patches in `PatchN:` tags
and applies them with `%patchN`, `%patch -P N`, `%autosetup` or `%autopatch`; a BitBake
recipe lists `file://x.patch` in `SRC_URI`; a vcpkg portfile passes `PATCHES` to
`vcpkg_from_github` (or another `vcpkg_*` fetcher); a conda-build `meta.yaml` lists them
under `source: patches:`; an Arch PKGBUILD has them in `source=()` (with the parallel
checksum arrays) and applies them in `prepare()`. `series` stays the source of truth;
this module reads such a file's list (`read`) and rewrites it to a given list
(`rewrite`), in the file's own formatting: only the patch entries are added, removed,
renamed or moved, every other byte stays.

What cannot be rewritten without guessing — a conditional around an entry (`%if`, a
BitBake override or inline Python, a conda selector or Jinja `{% if %}`, a CMake `if()`,
a shell `if`), a variable in a patch's name, a shell loop over patches — is a `Problem`
naming its line; `rewrite` refuses (exit 4) where the list must change and one stands.
Pure: text in, text out. The formats' layouts are each a small reader, sharing one
engine (`_place`, `_edits`) that turns "this list, in this order" into edits of spans.
"""

from __future__ import annotations

import difflib
import hashlib
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


def kind_of(filename: str) -> Kind | None:
    """The recipe format a file's name says, or None."""
    leaf = filename.rsplit("/", 1)[-1]
    if leaf.endswith(".spec"):
        return Kind.RPM
    if leaf.endswith((".bb", ".bbappend")):
        return Kind.BITBAKE
    if leaf == "portfile.cmake":
        return Kind.VCPKG
    if leaf in ("meta.yaml", "meta.yml"):
        return Kind.CONDA
    if leaf == "PKGBUILD":
        return Kind.PKGBUILD
    if leaf == "series":
        return Kind.SERIES
    return None


def detect(names: Sequence[str]) -> str | None:
    """The one recipe among a folder's file names (a quilt `series` is not one: it is the
    series itself), or None where there is none or more than one."""
    found = [n for n in names if kind_of(n) not in (None, Kind.SERIES)]
    return found[0] if len(found) == 1 else None


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
class _Line:
    no: int
    start: int
    end: int  # after its newline
    text: str  # without the newline


def _lines(text: str) -> list[_Line]:
    out, pos = [], 0
    for no, raw in enumerate(text.splitlines(keepends=True), 1):
        out.append(_Line(no, pos, pos + len(raw), raw.rstrip("\r\n")))
        pos += len(raw)
    return out


def _line_at(lines: Sequence[_Line], pos: int) -> _Line:
    lo, hi = 0, len(lines) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if lines[mid].start <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lines[lo]


def _token(text: str, lines: Sequence[_Line], span: tuple[int, int], name: tuple[str, int]) -> Item:
    """An item whose moving text is the token at `span`, its name `name[0]` at `name[1]`."""
    start, end = span
    ln = _line_at(lines, start)
    before = text[ln.start : start].strip()
    after = text[end : ln.start + len(ln.text)].strip()
    alone = not before and (after in ("", "\\") or after.startswith("#"))
    return Item(name[0], start, end, name[1], ln.no, ln.start, ln.end, alone, not before)


def _whole_line(ln: _Line, name: str, at: int) -> Item:
    return Item(name, ln.start, ln.end, at, ln.no, ln.start, ln.end, True, True)


def _strip_prefix(entry: str, prefix: str) -> tuple[str, int]:
    """A recipe entry as `series` names it, and the offset of that name in the entry."""
    if "://" in entry:
        cut = entry.rstrip("/").rfind("/") + 1
        return entry[cut:], cut
    if prefix and entry.startswith(prefix):
        return entry[len(prefix) :], len(prefix)
    return entry, 0


# --- the engine: a list of items to a new order -----------------------------------------


@dataclass(frozen=True, slots=True)
class _Placement:
    """Which name each kept slot shows, the slots dropped, the names added after `anchor`."""

    slots: tuple[tuple[Item, str], ...]
    drop: tuple[Item, ...]
    tail: tuple[str, ...]
    anchor: Item | None
    origin: dict[str, Item]  # a name already listed: the item that lists it


def _place(items: Sequence[Item], want: Sequence[str], renames: dict[str, str]) -> _Placement:
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
    return _Placement(slots, drop, tail, anchor, origin)


def _renamed(text: str, item: Item, name: str) -> str:
    """The moving text of `item` naming `name` instead."""
    body = text[item.start : item.end]
    if item.at < 0:
        return body
    at = item.at - item.start
    return body[:at] + name + body[at + len(item.name) :]


Unit = Callable[[str, Item], str]  # the text for a name, given the slot it goes to


def _edits(text: str, p: _Placement, unit: Unit, joiner: str = "\n") -> list[tuple[int, int, str]]:
    """The edits (start, end, new text) that carry out a placement."""
    out: list[tuple[int, int, str]] = []
    for slot, name in p.slots:
        new = unit(name, slot)
        if new != text[slot.start : slot.end]:
            out.append((slot.start, slot.end, new))
    for item in p.drop:
        out.append(_removal(text, item))
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


def _removal(text: str, item: Item) -> tuple[int, int, str]:
    if item.alone:
        return (item.line_start, item.line_end, "")
    start = item.start
    while start > item.line_start and text[start - 1] in " \t":
        start -= 1
    if start < item.start:
        return (start, item.end, "")
    end = item.end
    while end < item.line_end and text[end] in " \t":
        end += 1
    return (item.start, end, "")


def _apply(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _moving(text: str, p: _Placement) -> Unit:
    """The unit function of a list whose entries' text moves with them: a name keeps
    its own text (renamed); a new one is spelled as the last entry is."""

    def unit(name: str, slot: Item) -> str:
        src = p.origin.get(name)
        if src is not None:
            return _renamed(text, src, name)
        return _fresh(text, p.anchor if p.anchor is not None else slot, name)

    return unit


def _fresh(text: str, tpl: Item, name: str) -> str:
    """A new entry spelled as `tpl` is, without what was its own: a trailing comment,
    BitBake's `;parameters`."""
    body = _renamed(text, tpl, name)
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


def _check_items(where: str, listing: Listing, items: Sequence[Item], change: Change) -> None:
    _refuse(where, listing, change)
    if not items and change.names:
        raise BadInputError(
            "cannot keep this recipe in step: it lists no patch to add the new ones after",
            f"{where}:1",
            "add the first patch entry by hand",
        )


# --- RPM spec ---------------------------------------------------------------------------

_RPM_TAG = re.compile(r"(?i)^(patch)(\d*)(\s*:\s*)(\S+)")
_RPM_APPLY = re.compile(r"^\s*%patch(\d*)(?![\w{])(.*)$")
_RPM_AUTO = re.compile(r"^\s*%(autosetup|autopatch)\b")
_RPM_IF = re.compile(r"^\s*%(if|ifarch|ifnarch|ifos|ifnos)\b")
_RPM_ENDIF = re.compile(r"^\s*%endif\b")
_RPM_P = re.compile(r"-P\s*(\d+)|(?<![\w-])(\d+)(?![\w.])")


@dataclass(frozen=True, slots=True)
class _Rpm:
    tags: tuple[tuple[int, Item], ...]  # (number, item) in file order
    applies: tuple[tuple[int, Item], ...]  # each %patch line: (number, line item)
    problems: tuple[Problem, ...]


def _rpm(text: str, prefix: str) -> _Rpm:
    tags, applies, problems = [], [], []
    depth, auto, last = 0, 0, -1
    for ln in _lines(text):
        s = ln.text
        if _RPM_IF.match(s):
            depth += 1
        elif _RPM_ENDIF.match(s):
            depth = max(0, depth - 1)
        if _RPM_AUTO.match(s):
            auto += 1
        m = _RPM_TAG.match(s)
        if m:
            number = int(m.group(2)) if m.group(2) else last + 1
            last = number
            entry = m.group(4)
            name, cut = _strip_prefix(entry, prefix)
            tags.append((number, _whole_line(ln, name, ln.start + m.start(4) + cut)))
            if "%" in entry or "$" in entry:
                problems.append(Problem(ln.no, f"a macro in a patch's name ({entry})"))
            if depth:
                problems.append(Problem(ln.no, "a conditional (%if) around a Patch line"))
            continue
        m = _RPM_APPLY.match(s)
        if m:
            number = int(m.group(1)) if m.group(1) else _rpm_number(m.group(2))
            applies.append((number, _whole_line(ln, "", -1)))
            if depth:
                problems.append(Problem(ln.no, "a conditional (%if) around a %patch line"))
    return _Rpm(tuple(tags), tuple(applies), tuple(problems))


def _rpm_number(args: str) -> int:
    m = _RPM_P.search(args.split("#", 1)[0])
    if m is None:
        return 0  # a bare `%patch` is Patch0
    return int(m.group(1) or m.group(2))


def _rpm_order(r: _Rpm) -> tuple[list[Item], list[Problem]]:
    """The patch items in the order the spec applies them."""
    by_number = {n: i for n, i in r.tags}
    if not r.applies:
        return [i for _n, i in sorted(r.tags, key=lambda t: t[0])], []
    out, problems = [], []
    for n, line in r.applies:
        tag = by_number.get(n)
        if tag is None:
            problems.append(Problem(line.line, f"%patch {n} names no Patch{n} tag"))
            continue
        out.append(Item(tag.name, line.start, line.end, -1, line.line, *_span(line), True, True))
    return out, problems


def _span(i: Item) -> tuple[int, int]:
    return i.line_start, i.line_end


def read_rpm(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """An RPM spec's list, in the order `%patch` lines (else the tags' numbers) apply."""
    r = _rpm(text, prefix)
    items, problems = _rpm_order(r)
    return _listing(Kind.RPM, items, [*r.problems, *problems]), items


def rewrite_rpm(text: str, change: Change, where: str) -> str:
    r = _rpm(text, change.prefix)
    listing, items = read_rpm(text, change.prefix)
    if listing.names == change.names:
        return text
    tags = [i for _n, i in r.tags]
    _check_items(where, listing, tags, change)
    numbers = {i.name: n for n, i in r.tags}
    fresh = max((n for n, _i in r.tags), default=-1) + 1
    want = change.names
    if not r.applies:  # %autosetup/%autopatch: the numbers' order is the order
        ordered = [i for _n, i in sorted(r.tags, key=lambda t: t[0])]
        p = _place(ordered, want, change.renames)
        counter = iter(range(fresh, fresh + len(p.tail)))

        def tag_unit(name: str, slot: Item) -> str:
            if slot is p.anchor and name in p.tail:
                return _rpm_retag(_renamed(text, slot, name), next(counter))
            return _renamed(text, slot, name)

        return _apply(text, _edits(text, p, tag_unit))
    # %patch lines give the order; the tags are a set (kept, renamed, dropped, added).
    olds = {change.renames.get(n, n) for n in numbers}
    new_numbers = {n: fresh + k for k, n in enumerate(x for x in want if x not in olds)}
    tag_p = _set_placement(tags, change, new_numbers)
    numbered = {change.renames.get(k, k): v for k, v in numbers.items()} | new_numbers
    apply_p = _place(items, want, change.renames)

    def tag_unit2(name: str, slot: Item) -> str:
        if name in new_numbers:
            return _rpm_retag(_renamed(text, tags[-1], name), new_numbers[name])
        return _renamed(text, slot, name)

    def apply_unit(name: str, slot: Item) -> str:
        src = apply_p.origin.get(name)
        if src is not None:
            return text[src.start : src.end]
        tpl = apply_p.anchor if apply_p.anchor is not None else slot
        return _rpm_renumber(text[tpl.start : tpl.end], numbered[name])

    edits = _edits(text, tag_p, tag_unit2) + _edits(text, apply_p, apply_unit)
    return _apply(text, edits)


def _set_placement(tags: Sequence[Item], change: Change, new: dict[str, int]) -> _Placement:
    """Tags as a set: each kept in its place (renamed), the gone ones dropped, the new
    ones after the last."""
    slots, drop, origin = [], [], {}
    for i in tags:
        name = change.renames.get(i.name, i.name)
        if name in change.names:
            slots.append((i, name))
            origin[name] = i
        else:
            drop.append(i)
    anchor = slots[-1][0] if slots else tags[-1]
    return _Placement(tuple(slots), tuple(drop), tuple(new), anchor, origin)


def _rpm_retag(line: str, number: int) -> str:
    m = _RPM_TAG.match(line)
    assert m is not None
    word = m.group(1)
    return f"{word}{number}{m.group(3)}" + line[m.end(3) :]


def _rpm_renumber(line: str, number: int) -> str:
    m = _RPM_APPLY.match(line.rstrip("\r\n"))
    assert m is not None
    if m.group(1):
        return line[: m.start(1)] + str(number) + line[m.end(1) :]
    args_at = m.start(2)
    p = _RPM_P.search(line, args_at)
    if p is None:
        return line[:args_at] + f" -P {number}" + line[args_at:]
    g = 1 if p.group(1) else 2
    return line[: p.start(g)] + str(number) + line[p.end(g) :]


# --- shared readers ---------------------------------------------------------------------


def _listing(kind: Kind, items: Sequence[Item], problems: Sequence[Problem]) -> Listing:
    return Listing(
        kind,
        tuple(i.name for i in items),
        tuple(i.line for i in items),
        tuple(sorted(set(problems), key=lambda p: p.line)),
    )


def is_patch_name(name: str) -> bool:
    return name.endswith(PATCH_ENDS)


def _moved_list(
    text: str, items: Sequence[Item], change: Change, joiner: str = "\n"
) -> tuple[_Placement, list[tuple[int, int, str]]]:
    """The placement and edits of a list whose entries' text moves with them."""
    if items and all(i.alone for i in items):  # one entry a line: lines move whole
        items = [replace(i, start=i.line_start, end=i.line_end) for i in items]
    p = _place(items, change.names, change.renames)
    return p, _edits(text, p, _moving(text, p), joiner)


# --- BitBake ----------------------------------------------------------------------------

_BB_ASSIGN = re.compile(
    r"^[ \t]*(?:export[ \t]+)?SRC_URI(?P<ov>(?:[:_][\w${}.-]+)*)[ \t]*"
    r"(?P<op>\?\?=|\?=|:=|\+=|=\+|\.=|=\.|=)[ \t]*(?P<q>[\"'])",
    re.M,
)
_UNCONDITIONAL = {"", ":append", "_append", ":prepend", "_prepend"}


def _bb_values(text: str) -> list[tuple[re.Match[str], int, int]]:
    """Each `SRC_URI` assignment and the span of its quoted value."""
    out = []
    for m in _BB_ASSIGN.finditer(text):
        start, q = m.end(), m.group("q")
        end = text.find(q, start)
        out.append((m, start, len(text) if end < 0 else end))
    return out


def _opaque(value: str) -> list[tuple[int, int]]:
    """The spans of inline Python (`${@...}`) in a value, braces matched."""
    out, at = [], value.find("${@")
    while at >= 0:
        depth, k = 0, at + 1
        while k < len(value):
            depth += {"{": 1, "}": -1}.get(value[k], 0)
            if depth == 0:
                break
            k += 1
        out.append((at, k + 1))
        at = value.find("${@", k + 1)
    return out


def _bb_patch(token: str) -> bool:
    path, _s, params = token.partition(";")
    fields = dict(f.partition("=")[::2] for f in params.split(";") if f)
    if fields.get("apply") == "no":
        return False
    return path.startswith("file://") and (is_patch_name(path) or fields.get("apply") == "yes")


def read_bitbake(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A BitBake recipe's patches: `file://` entries of `SRC_URI` (assignments, `+=`,
    then `:append`s), as BitBake's patch task applies them."""
    lines = _lines(text)
    front: list[Item] = []
    middle: list[Item] = []
    back: list[Item] = []
    problems: list[Problem] = []
    for m, start, end in _bb_values(text):
        value, ov, line = text[start:end], m.group("ov"), _line_at(lines, m.start()).no
        if ov.startswith("["):
            continue
        for a, b in _opaque(value):
            if any(w in value[a:b] for w in ("file://", ".patch", ".diff")):
                problems.append(Problem(_line_at(lines, start + a).no, "inline Python"))
        found = _bb_tokens(text, lines, start, value, prefix, problems)
        if ov not in _UNCONDITIONAL or ov.startswith((":remove", "_remove")):
            if found:
                problems.append(Problem(line, f"a conditional override (SRC_URI{ov})"))
            continue
        if "prepend" in ov or m.group("op") in ("=+", "=."):
            front = found + front
        elif "append" in ov:
            back += found
        else:
            middle += found
    items = front + middle + back
    return _listing(Kind.BITBAKE, items, problems), items


def _bb_tokens(
    text: str,
    lines: Sequence[_Line],
    start: int,
    value: str,
    prefix: str,
    problems: list[Problem],
) -> list[Item]:
    skip = _opaque(value)
    out = []
    for t in re.finditer(r"[^\s\\]+", value):
        if any(a <= t.start() < b for a, b in skip) or not _bb_patch(t.group()):
            continue
        path = t.group().partition(";")[0][len("file://") :]
        name, cut = _strip_prefix(path, prefix)
        at = start + t.start() + len("file://") + cut
        item = _token(text, lines, (start + t.start(), start + t.end()), (name, at))
        if "${" in path or "$" in path:
            problems.append(Problem(item.line, f"a variable in a patch's name ({path})"))
        out.append(item)
    return out


def rewrite_bitbake(text: str, change: Change, where: str) -> str:
    listing, items = read_bitbake(text, change.prefix)
    if listing.names == change.names:
        return text
    _check_items(where, listing, items, change)
    return _apply(text, _moved_list(text, items, change, " \\\n")[1])


# --- vcpkg portfile ---------------------------------------------------------------------

_CMAKE = re.compile(r"#\[(=*)\[.*?\]\1\]|#[^\n]*|\"(?:[^\"\\]|\\.)*\"|[()]|[^\s()#\"]+", re.S)
_KEYWORD = re.compile(r"^[A-Z][A-Z0-9_]+$")


def read_vcpkg(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A vcpkg portfile's patches: the `PATCHES` arguments of a `vcpkg_*` call."""
    lines = _lines(text)
    items: list[Item] = []
    problems: list[Problem] = []
    depth, call, parens, lists, collecting = 0, "", 0, 0, False
    prev = ""
    for t in _CMAKE.finditer(text):
        tok = t.group()
        if tok.startswith("#"):
            continue
        line = _line_at(lines, t.start()).no
        if tok == "(":
            if parens == 0:
                call = prev.lower()
                depth += call == "if"
                depth -= call == "endif"
            parens += 1
        elif tok == ")":
            parens -= 1
            collecting = collecting and parens > 0
        elif parens == 1 and call.startswith("vcpkg_") and tok == "PATCHES":
            collecting, lists = True, lists + 1
            if depth:
                problems.append(Problem(line, "a conditional (if()) around the PATCHES list"))
            if lists == 2:
                problems.append(Problem(line, "a second PATCHES list"))
        elif collecting and _KEYWORD.match(tok):
            collecting = False
        elif collecting:
            quoted = tok.startswith('"')
            entry = tok[1:-1] if quoted else tok
            name, cut = _strip_prefix(entry, prefix)
            at = t.start() + quoted + cut
            items.append(_token(text, lines, (t.start(), t.end()), (name, at)))
            if "$" in entry:
                problems.append(Problem(line, f"a variable in the PATCHES list ({entry})"))
        prev = tok
    return _listing(Kind.VCPKG, items, problems), items


def rewrite_vcpkg(text: str, change: Change, where: str) -> str:
    listing, items = read_vcpkg(text, change.prefix)
    if listing.names == change.names:
        return text
    _check_items(where, listing, items, change)
    return _apply(text, _moved_list(text, items, change)[1])


# --- conda-build meta.yaml --------------------------------------------------------------

_CONDA_KEY = re.compile(r"^(\s*)(-\s+)?patches\s*:\s*(.*)$")
_CONDA_ITEM = re.compile(r"^(\s*)-\s+(.*?)\s*$")
_SELECTOR = re.compile(r"#\s*\[.*\]\s*$")
_JINJA_OPEN = re.compile(r"\{%-?\s*(if|for)\b")
_JINJA_CLOSE = re.compile(r"\{%-?\s*end(if|for)\b")


def read_conda(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A conda-build recipe's patches: the block list under `source:`'s `patches:`."""
    items: list[Item] = []
    problems: list[Problem] = []
    depth, lists, indent = 0, 0, -1
    for ln in _lines(text):
        s = ln.text
        opened, closed = len(_JINJA_OPEN.findall(s)), len(_JINJA_CLOSE.findall(s))
        stripped = s.strip()
        if indent >= 0:
            m = _CONDA_ITEM.match(s)
            here = len(s) - len(s.lstrip())
            if m and here >= indent:
                items.append(_conda_item(ln, m, prefix, problems, depth))
            elif stripped and not stripped.startswith(("#", "{%")):
                indent = -1
        key = _CONDA_KEY.match(s)
        if key and indent < 0:
            lists += 1
            rest = key.group(3)
            indent = len(key.group(1)) + len(key.group(2) or "")
            if rest and not rest.startswith("#"):
                problems.append(Problem(ln.no, "a patches list written inline"))
                indent = -1
            if lists == 2:
                problems.append(Problem(ln.no, "a second patches list"))
            if _SELECTOR.search(s) or depth:
                problems.append(Problem(ln.no, "a conditional around the patches list"))
        depth = max(0, depth + opened - closed)
    return _listing(Kind.CONDA, items, problems), items


def _conda_item(
    ln: _Line, m: re.Match[str], prefix: str, problems: list[Problem], depth: int
) -> Item:
    value = m.group(2)
    if _SELECTOR.search(value) or depth:
        problems.append(Problem(ln.no, "a conditional (a selector or {% if %}) on a patch"))
    entry_at = m.start(2)
    entry = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    if entry[:1] in ("'", '"') and entry[-1:] == entry[:1]:
        entry, entry_at = entry[1:-1], entry_at + 1
    if "{{" in entry or "$" in entry:
        problems.append(Problem(ln.no, f"a variable in a patch's name ({entry})"))
    name, cut = _strip_prefix(entry, prefix)
    return _whole_line(ln, name, ln.start + entry_at + cut)


def rewrite_conda(text: str, change: Change, where: str) -> str:
    listing, items = read_conda(text, change.prefix)
    if listing.names == change.names:
        return text
    _check_items(where, listing, items, change)
    return _apply(text, _moved_list(text, items, change)[1])


# --- Debian (or any quilt) series -------------------------------------------------------


def read_series(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A quilt `series` used as a recipe: each patch line's name, in order."""
    del prefix
    items = []
    for ln in _lines(text):
        name = ln.text.split("#", 1)[0].split()
        if name:
            items.append(_whole_line(ln, name[0], ln.start + ln.text.index(name[0])))
    return _listing(Kind.SERIES, items, ()), items


def rewrite_series(text: str, change: Change, where: str) -> str:
    listing, items = read_series(text)
    if listing.names == change.names:
        return text
    _check_items(where, listing, items, change)
    return _apply(text, _moved_list(text, items, change)[1])


# --- Arch PKGBUILD ----------------------------------------------------------------------

_PKG_ARRAY = re.compile(
    r"^[ \t]*(?P<name>source|(?:md5|sha1|sha224|sha256|sha384|sha512|b2|ck)sums)"
    r"(?P<arch>_\w+)?(?P<op>\+?=)\(",
    re.M,
)
_BASH_WORD = r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s()'"])"""
_BASH = re.compile(rf"#[^\n]*|\)|{_BASH_WORD}+")
_SUMS = {
    "md5sums": "md5",
    "sha1sums": "sha1",
    "sha224sums": "sha224",
    "sha256sums": "sha256",
    "sha384sums": "sha384",
    "sha512sums": "sha512",
    "b2sums": "blake2b",
}
_PREPARE = re.compile(r"^[ \t]*(?:function[ \t]+)?prepare[ \t]*\(\)[ \t]*\{?[ \t]*$", re.M)
_OPENS, _CLOSES = {"if", "case", "for", "while", "until"}, {"fi", "esac", "done"}
_PKG_FILE = re.compile(r"""[^\s<>'"]*\.(?:patch|diff)\b""")


@dataclass(frozen=True, slots=True)
class _Pkg:
    source: tuple[Item, ...]  # the patch entries of `source=()`
    sums: tuple[tuple[str, tuple[Item, ...]], ...]  # each checksum array's tokens for them
    prepare: tuple[Item, ...]
    problems: tuple[Problem, ...]


def _bash_array(text: str, at: int) -> list[tuple[int, int]]:
    """The spans of the words of the bash array whose `(` ends at `at`."""
    out = []
    for t in _BASH.finditer(text, at):
        if t.group() == ")":
            break
        if not t.group().startswith("#"):
            out.append(t.span())
    return out


def _pkg(text: str, prefix: str) -> _Pkg:
    lines = _lines(text)
    problems: list[Problem] = []
    source: list[Item] = []
    indices: list[int] = []
    arrays: list[tuple[str, list[tuple[int, int]]]] = []
    for m in _PKG_ARRAY.finditer(text):
        words, line = _bash_array(text, m.end()), _line_at(lines, m.start()).no
        if m.group("name") != "source":
            if not m.group("arch") and m.group("op") == "=":
                arrays.append((m.group("name"), words))
            continue
        found = []
        for k, (a, b) in enumerate(words):
            item = _pkg_source(text, lines, (a, b), prefix)
            if item is not None:
                found.append((k, item))
                if "$" in item.name:
                    problems.append(
                        Problem(item.line, f"a variable in a patch's name ({item.name})")
                    )
        if found and (m.group("arch") or m.group("op") != "="):
            problems.append(Problem(line, f"a conditional source array ({m.group()[:-1]})"))
        elif m.group("op") == "=" and not m.group("arch"):
            source, indices = [i for _k, i in found], [k for k, _i in found]
    sums = []
    for name, words in arrays:
        if len(words) <= max(indices, default=-1):
            continue
        sums.append(
            (
                name,
                tuple(
                    _sum_item(text, lines, words[k], source[n].name) for n, k in enumerate(indices)
                ),
            )
        )
    prepare = _pkg_prepare(text, lines, problems)
    return _Pkg(tuple(source), tuple(sums), tuple(prepare), tuple(problems))


def _pkg_source(
    text: str, lines: Sequence[_Line], span: tuple[int, int], prefix: str
) -> Item | None:
    word = text[span[0] : span[1]]
    quoted = word[:1] in ("'", '"') and word[-1:] == word[:1]
    entry = word[1:-1] if quoted else word
    local, sep, _url = entry.partition("::")
    if sep:
        name, cut = local, 0
    else:
        name, cut = _strip_prefix(entry, prefix)
    if not is_patch_name(name):
        return None
    return _token(text, lines, span, (name, span[0] + quoted + cut))


def _sum_item(text: str, lines: Sequence[_Line], span: tuple[int, int], name: str) -> Item:
    item = _token(text, lines, span, (name, span[0]))
    return Item(name, item.start, item.end, -1, item.line, *_span(item), item.alone, item.first)


def _pkg_prepare(text: str, lines: Sequence[_Line], problems: list[Problem]) -> list[Item]:
    """The lines of `prepare()` that apply a patch, in order."""
    m = _PREPARE.search(text)
    if m is None:
        return []
    out, depth = [], 0
    for ln in lines:
        if ln.start <= m.start():
            continue
        if ln.text.startswith("}"):
            break
        patched = []
        for seg in re.split(r";|&&|\|\||\|", ln.text.split(" #", 1)[0]):
            words = seg.split()
            while words and words[0] in ("then", "do", "else", "{", "}"):
                words = words[1:]
            if not words:
                continue
            head = words[0]
            if head in ("for", "while", "until") and ("patch" in ln.text or ".diff" in ln.text):
                problems.append(Problem(ln.no, "a shell loop over patches"))
            depth += (head in _OPENS) - (head in _CLOSES)
            if head == "patch" or words[:2] in (["git", "apply"], ["git", "am"]):
                patched.append(seg)
        for seg in patched:
            files = _PKG_FILE.findall(seg)
            if not files or len(patched) > 1:
                problems.append(Problem(ln.no, "a patch command patchq cannot read the file of"))
                continue
            at = ln.start + ln.text.index(seg) + seg.rindex(files[-1])
            cut = files[-1].rfind("/") + 1
            name = files[-1][cut:]
            if "$" in name:
                problems.append(Problem(ln.no, f"a variable in a patch's name ({name})"))
            if depth > 0:
                problems.append(Problem(ln.no, "a conditional around a patch command"))
            out.append(_whole_line(ln, name, at + cut))
    return out


def read_pkgbuild(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A PKGBUILD's patches in the order `prepare()` applies them (else `source=()`'s)."""
    p = _pkg(text, prefix)
    items = list(p.prepare or p.source)
    problems = list(p.problems)
    if p.prepare and sorted(i.name for i in p.source) != sorted(i.name for i in p.prepare):
        line = p.source[0].line if p.source else p.prepare[0].line
        problems.append(Problem(line, "source=() and prepare() list different patches"))
    return _listing(Kind.PKGBUILD, items, problems), items


def rewrite_pkgbuild(text: str, change: Change, where: str) -> str:
    p = _pkg(text, change.prefix)
    listing, _items = read_pkgbuild(text, change.prefix)
    if listing.names == change.names and [i.name for i in p.source] == list(change.names):
        return text
    _check_items(where, listing, p.source, change)
    placed, edits = _moved_list(text, p.source, change)
    for algo, items in p.sums:
        sp = _place(items, change.names, change.renames)
        edits += _edits(text, sp, _summing(text, sp, _SUMS.get(algo), change))
    if p.prepare:
        edits += _moved_list(text, p.prepare, change)[1]
    del placed
    return _apply(text, edits)


def _summing(text: str, p: _Placement, algo: str | None, change: Change) -> Unit:
    """A checksum array's unit: a patch keeps its sum; a new one gets its file's, in the
    quotes of the last, or 'SKIP' where the file is not at hand."""

    def unit(name: str, slot: Item) -> str:
        src = p.origin.get(name)
        if src is not None:
            return text[src.start : src.end]
        tpl = text[(p.anchor or slot).start : (p.anchor or slot).end]
        q = tpl[0] if tpl[:1] in ("'", '"') else ""
        data = change.read(name)
        digest = "SKIP" if data is None or algo is None else hashlib.new(algo, data).hexdigest()
        return f"{q}{digest}{q}"

    return unit


# --- any recipe -------------------------------------------------------------------------

_READ = {
    Kind.RPM: read_rpm,
    Kind.BITBAKE: read_bitbake,
    Kind.VCPKG: read_vcpkg,
    Kind.CONDA: read_conda,
    Kind.PKGBUILD: read_pkgbuild,
    Kind.SERIES: read_series,
}
_WRITE = {
    Kind.RPM: rewrite_rpm,
    Kind.BITBAKE: rewrite_bitbake,
    Kind.VCPKG: rewrite_vcpkg,
    Kind.CONDA: rewrite_conda,
    Kind.PKGBUILD: rewrite_pkgbuild,
    Kind.SERIES: rewrite_series,
}


def _kind(where: str) -> Kind:
    kind = kind_of(where.rsplit(":", 1)[0] if where.endswith(tuple("0123456789")) else where)
    if kind is None:
        raise BadInputError(
            "not a recipe patchq knows (a .spec, .bb, portfile.cmake, meta.yaml, PKGBUILD "
            "or series)",
            where,
        )
    return kind


def read(where: str, text: str, prefix: str = "") -> Listing:
    """The list of patches the recipe `where` (its file name) applies, in order."""
    return _READ[_kind(where)](text, prefix)[0]


def rewrite(where: str, text: str, change: Change) -> str:
    """The recipe `where` (its file name) rewritten to apply `change.names`, in order;
    refused (exit 4, naming its line) where the list cannot be rewritten safely."""
    return _WRITE[_kind(where)](text, change, where)
