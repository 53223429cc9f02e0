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

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from patchq.core.errors import BadInputError
from patchq.formats.recipelist import (
    Change,
    Item,
    Kind,
    Line,
    Listing,
    Placement,
    Problem,
    Unit,
    apply,
    check_items,
    disagreements,
    edits,
    is_patch_name,
    line_at,
    lines_of,
    listing,
    moved_list,
    place,
    renamed,
    renames_between,
    strip_prefix,
    token,
    whole_line,
)

__all__ = [
    "Change",
    "Kind",
    "disagreements",
    "Listing",
    "Problem",
    "renames_between",
    "read",
    "rewrite",
]


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


# --- RPM spec ---------------------------------------------------------------------------

_RPM_TAG = re.compile(r"(?i)^(patch)(\d*)(\s*:\s*)(\S+)")
_RPM_APPLY = re.compile(r"^\s*%patch(\d*)(?![\w{])(.*)$")
_RPM_RANGE = re.compile(r"^\s*%autopatch\b.*(-m|-M|\s\d)")
_RPM_SECTION = re.compile(
    r"^%(package|description|prep|build|install|check|clean|files|changelog|pre|post|"
    r"preun|postun|pretrans|posttrans|trigger\w*|filetrigger\w*|verifyscript|sourcelist|"
    r"patchlist|generate_buildrequires|conf)\b"
)
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
    depth, last, listed = 0, -1, False
    for ln in lines_of(text):
        s = ln.text
        if _RPM_IF.match(s):
            depth += 1
        elif _RPM_ENDIF.match(s):
            depth = max(0, depth - 1)
        if _RPM_RANGE.match(s):
            problems.append(Problem(ln.no, "an %autopatch that applies part of the list"))
        if _RPM_SECTION.match(s):
            listed = s.strip() == "%patchlist"
            continue
        entry = s.strip()
        if listed and entry and not entry.startswith("#"):  # `%patchlist`: numbered in turn
            last += 1
            name, cut = strip_prefix(entry, prefix)
            tags.append((last, whole_line(ln, name, ln.start + s.index(entry) + cut)))
            if "%" in entry or "$" in entry or depth:
                problems.append(Problem(ln.no, f"a macro or %if around a patch ({entry})"))
            continue
        m = _RPM_TAG.match(s)
        if m:
            number = int(m.group(2)) if m.group(2) else last + 1
            last = number
            entry = m.group(4)
            name, cut = strip_prefix(entry, prefix)
            tags.append((number, whole_line(ln, name, ln.start + m.start(4) + cut)))
            if "%" in entry or "$" in entry:
                problems.append(Problem(ln.no, f"a macro in a patch's name ({entry})"))
            if depth:
                problems.append(Problem(ln.no, "a conditional (%if) around a Patch line"))
            continue
        m = _RPM_APPLY.match(s)
        if m:
            number = int(m.group(1)) if m.group(1) else _rpm_number(m.group(2))
            applies.append((number, whole_line(ln, "", -1)))
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
    """The span of `i`'s whole line."""
    return i.line_start, i.line_end


def read_rpm(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """An RPM spec's list, in the order `%patch` lines (else the tags' numbers) apply."""
    r = _rpm(text, prefix)
    items, problems = _rpm_order(r)
    return listing(Kind.RPM, items, [*r.problems, *problems]), items


def rewrite_rpm(text: str, change: Change, where: str) -> str:
    r = _rpm(text, change.prefix)
    current, items = read_rpm(text, change.prefix)
    if current.names == change.names:
        return text
    tags = [i for _n, i in r.tags]
    check_items(where, current, tags, change)
    numbers = {i.name: n for n, i in r.tags}
    fresh = max((n for n, _i in r.tags), default=-1) + 1
    want = change.names
    if not r.applies:  # %autosetup/%autopatch: the numbers' order is the order
        ordered = [i for _n, i in sorted(r.tags, key=lambda t: t[0])]
        p = place(ordered, want, change.renames)
        counter = iter(range(fresh, fresh + len(p.tail)))

        def tag_unit(name: str, slot: Item) -> str:
            if slot is p.anchor and name in p.tail:
                return _rpm_retag(renamed(text, slot, name), next(counter))
            return renamed(text, slot, name)

        return apply(text, edits(text, p, tag_unit))
    # %patch lines give the order; the tags are a set (kept, renamed, dropped, added).
    olds = {change.renames.get(n, n) for n in numbers}
    new_numbers = {n: fresh + k for k, n in enumerate(x for x in want if x not in olds)}
    tag_p = _set_placement(tags, change, new_numbers)
    numbered = {change.renames.get(k, k): v for k, v in numbers.items()} | new_numbers
    apply_p = place(items, want, change.renames)

    def tag_unit2(name: str, slot: Item) -> str:
        if name in new_numbers:
            return _rpm_retag(renamed(text, tags[-1], name), new_numbers[name])
        return renamed(text, slot, name)

    def apply_unit(name: str, slot: Item) -> str:
        src = apply_p.origin.get(name)
        if src is not None:
            return text[src.start : src.end]
        tpl = apply_p.anchor if apply_p.anchor is not None else slot
        return _rpm_renumber(text[tpl.start : tpl.end], numbered[name])

    out = edits(text, tag_p, tag_unit2) + edits(text, apply_p, apply_unit)
    return apply(text, out)


def _set_placement(tags: Sequence[Item], change: Change, new: dict[str, int]) -> Placement:
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
    return Placement(tuple(slots), tuple(drop), tuple(new), anchor, origin)


def _rpm_retag(line: str, number: int) -> str:
    m = _RPM_TAG.match(line)
    if m is None:
        return line  # a `%patchlist` line: numbered by its place
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
    lines = lines_of(text)
    front: list[Item] = []
    middle: list[Item] = []
    back: list[Item] = []
    problems: list[Problem] = []
    for m, start, end in _bb_values(text):
        value, ov, line = text[start:end], m.group("ov"), line_at(lines, m.start()).no
        if ov.startswith("["):
            continue
        for a, b in _opaque(value):
            if any(w in value[a:b] for w in ("file://", ".patch", ".diff")):
                problems.append(Problem(line_at(lines, start + a).no, "inline Python"))
        found = _bb_tokens(text, lines, (start, end), prefix, problems=problems)
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
    return listing(Kind.BITBAKE, items, problems), items


def _bb_tokens(
    text: str,
    lines: Sequence[Line],
    span: tuple[int, int],
    prefix: str,
    *,
    problems: list[Problem],
) -> list[Item]:
    """The patch entries of the value at `span`, past its inline Python."""
    start, value = span[0], text[span[0] : span[1]]
    skip = _opaque(value)
    out = []
    for t in re.finditer(r"[^\s\\]+", value):
        if any(a <= t.start() < b for a, b in skip) or not _bb_patch(t.group()):
            continue
        path = t.group().partition(";")[0][len("file://") :]
        name, cut = strip_prefix(path, prefix)
        at = start + t.start() + len("file://") + cut
        item = token(text, lines, (start + t.start(), start + t.end()), (name, at))
        if "${" in path or "$" in path:
            problems.append(Problem(item.line, f"a variable in a patch's name ({path})"))
        out.append(item)
    return out


def rewrite_bitbake(text: str, change: Change, where: str) -> str:
    current, items = read_bitbake(text, change.prefix)
    if current.names == change.names:
        return text
    check_items(where, current, items, change)
    return apply(text, moved_list(text, items, change, " \\\n")[1])


# --- vcpkg portfile ---------------------------------------------------------------------

_CMAKE = re.compile(r"#\[(=*)\[.*?\]\1\]|#[^\n]*|\"(?:[^\"\\]|\\.)*\"|[()]|[^\s()#\"]+", re.S)
_KEYWORD = re.compile(r"^[A-Z][A-Z0-9_]+$")


def read_vcpkg(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A vcpkg portfile's patches: the `PATCHES` arguments of a `vcpkg_*` call."""
    lines = lines_of(text)
    items: list[Item] = []
    problems: list[Problem] = []
    depth, call, parens, lists, collecting = 0, "", 0, 0, False
    prev = ""
    for t in _CMAKE.finditer(text):
        tok = t.group()
        if tok.startswith("#"):
            continue
        line = line_at(lines, t.start()).no
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
            name, cut = strip_prefix(entry, prefix)
            at = t.start() + quoted + cut
            items.append(token(text, lines, (t.start(), t.end()), (name, at)))
            if "$" in entry:
                problems.append(Problem(line, f"a variable in the PATCHES list ({entry})"))
        prev = tok
    return listing(Kind.VCPKG, items, problems), items


def rewrite_vcpkg(text: str, change: Change, where: str) -> str:
    current, items = read_vcpkg(text, change.prefix)
    if current.names == change.names:
        return text
    check_items(where, current, items, change)
    return apply(text, moved_list(text, items, change)[1])


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
    for ln in lines_of(text):
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
    return listing(Kind.CONDA, items, problems), items


def _conda_item(
    ln: Line, m: re.Match[str], prefix: str, problems: list[Problem], depth: int
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
    name, cut = strip_prefix(entry, prefix)
    return whole_line(ln, name, ln.start + entry_at + cut)


def rewrite_conda(text: str, change: Change, where: str) -> str:
    current, items = read_conda(text, change.prefix)
    if current.names == change.names:
        return text
    check_items(where, current, items, change)
    return apply(text, moved_list(text, items, change)[1])


# --- Debian (or any quilt) series -------------------------------------------------------


def read_series(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A quilt `series` used as a recipe: each patch line's name, in order."""
    del prefix
    items = []
    for ln in lines_of(text):
        name = ln.text.split("#", 1)[0].split()
        if name:
            items.append(whole_line(ln, name[0], ln.start + ln.text.index(name[0])))
    return listing(Kind.SERIES, items, ()), items


def rewrite_series(text: str, change: Change, where: str) -> str:
    current, items = read_series(text)
    if current.names == change.names:
        return text
    check_items(where, current, items, change)
    return apply(text, moved_list(text, items, change)[1])


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
# The commands a prepare() applies a patch with, besides `patch`: git's own appliers.
_APPLIERS = ("git apply", "git am")
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
    lines = lines_of(text)
    problems: list[Problem] = []
    source: list[Item] = []
    indices: list[int] = []
    arrays: list[tuple[str, list[tuple[int, int]]]] = []
    for m in _PKG_ARRAY.finditer(text):
        words, line = _bash_array(text, m.end()), line_at(lines, m.start()).no
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
    text: str, lines: Sequence[Line], span: tuple[int, int], prefix: str
) -> Item | None:
    word = text[span[0] : span[1]]
    quoted = word[:1] in ("'", '"') and word[-1:] == word[:1]
    entry = word[1:-1] if quoted else word
    local, sep, _url = entry.partition("::")
    if sep:
        name, cut = local, 0
    else:
        name, cut = strip_prefix(entry, prefix)
    if not is_patch_name(name):
        return None
    return token(text, lines, span, (name, span[0] + quoted + cut))


def _sum_item(text: str, lines: Sequence[Line], span: tuple[int, int], name: str) -> Item:
    item = token(text, lines, span, (name, span[0]))
    return Item(name, item.start, item.end, -1, item.line, *_span(item), item.alone, item.first)


def _pkg_prepare(text: str, lines: Sequence[Line], problems: list[Problem]) -> list[Item]:
    """The lines of `prepare()` that apply a patch, in order."""
    m = _PREPARE.search(text)
    if m is None:
        return []
    out: list[Item] = []
    depth, loops = 0, 0  # open `if`/`case`, open `for`/`while`/`until`
    for ln in lines:
        if ln.start <= m.start():
            continue
        if ln.text.startswith("}"):
            break
        segs = re.split(r";|&&|\|\||\|", ln.text.split(" #", 1)[0])
        count = 0
        for seg in segs:
            words = seg.split()
            while words and words[0] in ("then", "do", "else", "{", "}"):
                words = words[1:]
            if not words:
                continue
            head = words[0]
            if head in ("for", "while", "until") and ("patch" in ln.text or ".diff" in ln.text):
                problems.append(Problem(ln.no, "a shell loop over patches"))
            depth += (head in ("if", "case")) - (head in ("fi", "esac"))
            loops += (head in ("for", "while", "until")) - (head == "done")
            if head == "patch" or " ".join(words[:2]) in _APPLIERS:
                count += 1
                item = _pkg_patch(ln, seg, problems, count)
                if loops > 0:
                    problems.append(Problem(ln.no, "a shell loop applying patches"))
                elif depth > 0:
                    problems.append(Problem(ln.no, "a conditional around a patch command"))
                if item is not None:
                    out.append(item)
    return out


def _pkg_patch(ln: Line, seg: str, problems: list[Problem], count: int) -> Item | None:
    """The patch a `patch`/`git apply` command of `prepare()` applies, as a line item."""
    files = _PKG_FILE.findall(seg)
    if not files or count > 1:
        problems.append(Problem(ln.no, "a patch command patchq cannot read the file of"))
        return None
    at = ln.start + ln.text.index(seg) + seg.rindex(files[-1])
    cut = files[-1].rfind("/") + 1
    name = files[-1][cut:]
    if "$" in name:
        problems.append(Problem(ln.no, f"a variable in a patch's name ({name})"))
    return whole_line(ln, name, at + cut)


def read_pkgbuild(text: str, prefix: str = "") -> tuple[Listing, list[Item]]:
    """A PKGBUILD's patches in the order `prepare()` applies them (else `source=()`'s)."""
    p = _pkg(text, prefix)
    items = list(p.prepare or p.source)
    problems = list(p.problems)
    if (
        not problems
        and p.prepare
        and sorted(i.name for i in p.source) != sorted(i.name for i in p.prepare)
    ):
        line = p.source[0].line if p.source else p.prepare[0].line
        problems.append(Problem(line, "source=() and prepare() list different patches"))
    return listing(Kind.PKGBUILD, items, problems), items


def rewrite_pkgbuild(text: str, change: Change, where: str) -> str:
    p = _pkg(text, change.prefix)
    current, _items = read_pkgbuild(text, change.prefix)
    if current.names == change.names and [i.name for i in p.source] == list(change.names):
        return text
    check_items(where, current, p.source, change)
    out = moved_list(text, p.source, change)[1]
    for algo, items in p.sums:
        sp = place(items, change.names, change.renames)
        out += edits(text, sp, _summing(text, sp, _SUMS.get(algo), change))
    if p.prepare:
        out += moved_list(text, p.prepare, change)[1]
    return apply(text, out)


def _summing(text: str, p: Placement, algo: str | None, change: Change) -> Unit:
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
    kind = kind_of(where)
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
