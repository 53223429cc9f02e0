"""A patch's style — how its file sections and hunk headers are spelled — read from the
patch itself, and the plain (`diff -u`, quilt) spelling of a section in that style.

A refresh rewrites only what changed, and what it writes must look like the rest of the
patch (DESIGN §2): a git-style patch keeps `diff --git`/`index` lines;
a quilt or `diff -u` patch keeps its `---`/`+++` names (`a/`/`b/`, quilt's `dir.orig/`
and `dir/`, or none at `-p0`, with quilt's `f.orig`), its timestamps, its `Index:` or
`diff -ruN` lines, and its hunk headers' function context: git's, GNU diff's `-p`
(quilt's `--show-c-function`) or none. Pure: bytes and values in, values out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from patchq.core.names import MINUS_ONLY, PLUS_ONLY, SHORT_NAME, SPACED_STAMP, UNSAFE_NAME
from patchq.core.patch import (
    FilePatch,
    Hunk,
    Patch,
    split_lines,
    split_name,
)
from patchq.core.quoting import quote_path

STYLES = ("keep", "git", "quilt")  # the values of `style` in patchq.toml

GIT, PLAIN = "git", "plain"  # section kinds
# Hunk-header function context: git's (as `git diff` writes it), GNU diff's `-p` (what
# quilt writes with its default QUILT_DIFF_OPTS="--show-c-function"), or none.
FUNC_GIT, FUNC_DIFF, FUNC_NONE = "git", "diff", "none"

QUILT_RULE = b"=" * 67 + b"\n"  # the line quilt (and CVS, svn) write under `Index:`
_DIFF_P_WIDTH = 40  # GNU diff (context.c print_context_function) keeps 40 bytes
_FUNCTION_LINE = re.compile(rb"[A-Za-z_$]")  # diff -p: `^[[:alpha:]$_]`, C locale
_NEW_FILE = re.compile(rb" (-[a-zA-Z]*N|--new-file|--unidirectional-new-file)")
_SPACED = re.compile(rb"(\S+) +(\d{4}-\d\d-\d\d[ T]\d\d:\d\d\S* ?\S*)$")
_ISO_STAMP = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?( [+-]\d{4})?$")

# Parser repairs of a section's `---`/`+++` lines: such a header is rewritten, not kept.
_HEADER_REPAIRS = (MINUS_ONLY, PLUS_ONLY, SPACED_STAMP, SHORT_NAME, UNSAFE_NAME)


@dataclass(frozen=True, slots=True)
class Style:
    """How a patch spells its sections. For `kind == GIT`, only `index` and `function`
    matter (git's prefixes follow the strip level); the rest describe a plain section."""

    kind: str = GIT
    function: str = FUNC_GIT
    index: bool = True  # git: `index` lines
    old_prefix: str = "a/"
    new_prefix: str = "b/"
    old_suffix: str = ""  # quilt -p0 names the old side of a changed file `f.orig`
    old_stamp: bytes = b""  # what follows the old name: b"\t2010-05-13 04:57:46 +0100"
    new_stamp: bytes = b""
    null_stamp: bytes = b""  # what follows a missing side's name (the epoch)
    null_named: bool = False  # diff -N names a missing side by its name, not /dev/null
    index_prefix: str | None = None  # quilt's `Index: pkg/f.c` line, with this prefix
    index_rule: bytes = QUILT_RULE
    diff_command: bytes | None = None  # `diff -ruN` before the names, as diff -r writes


def forced(name: str, strip: int, patch: Patch) -> Style | None:
    """The style `style = NAME` in patchq.toml asks for; None for `keep`.

    `quilt` is what `quilt refresh -p ab --no-timestamps --no-index` writes (at `-p0`:
    `--- f`/`+++ f`); its function context is GNU diff's where the patch had any, since
    that depends on the user's QUILT_DIFF_OPTS, not on anything patchq can see."""
    if name == "git":
        return Style()
    if name == "quilt":
        had = any(h.heading.strip() for s in patch.sections for h in s.hunks)
        prefixes = ("", "") if strip == 0 else ("a/", "b/")
        return Style(PLAIN, FUNC_DIFF if had else FUNC_NONE, False, *prefixes)
    return None


def detect(patch: Patch, strip: int) -> Style:
    """The patch's own style, from the sections it has (the first readable plain section
    for its names, stamps and preamble lines); a patch with no section is git-style."""
    gits = [s for s in patch.sections if s.git and not s.binary]
    plains = [s for s in patch.sections if not s.git and not s.binary]
    if len(plains) <= len(gits):
        # git's own refresh tools (`git diff`, `format-patch`) write `index` lines and
        # git's function context; Mercurial's git-style diffs (`hg export --git`) neither.
        if not patch.header.startswith(b"# HG changeset patch") or any(
            s.old_id or s.new_id for s in gits
        ):
            return Style()
        return Style(GIT, _function(patch, plain=False), index=False)
    function = _function(patch, plain=True)
    out = Style(PLAIN, function, False, *default_prefixes(strip))
    # A timestamp after spaces is read as one, and written after a tab.
    clean = [s for s in plains if clean_header(patch, s, but=(SPACED_STAMP,))]
    for s in clean:
        if not s.is_new and not s.is_delete:
            got = _names(s)
            if got is not None:
                out = _with_names(out, s, got)
                break
    for s in clean:
        if s.is_new or s.is_delete:
            got = _names(s)
            if got is not None:
                out = _with_missing(out, s, got)
                break
    if not any(s.is_new or s.is_delete for s in clean) and out.diff_command is not None:
        # `diff -N` (-ruN, -Naur, --new-file) names a missing file, with the epoch.
        out = replace(out, null_named=_NEW_FILE.search(out.diff_command) is not None)
    if out.null_stamp == b"" and out.old_stamp:
        out = replace(out, null_stamp=_epoch(out.old_stamp))
    return out


def default_prefixes(strip: int) -> tuple[str, str]:
    return ("", "") if strip == 0 else ("a/", "b/")


def prefix_depth(prefix: str) -> int:
    """How many leading components a name's prefix holds: the strip level it needs."""
    return len([p for p in prefix.split("/")[:-1] if p])


def clean_header(patch: Patch, s: FilePatch, but: tuple[str, ...] = ()) -> bool:
    """Whether the parser read the section's header without repairing it (repairs of
    the kinds in `but` aside)."""
    first = s.hunks[0].lineno if s.hunks else s.lineno + 1
    return not any(
        n.kind in _HEADER_REPAIRS and n.kind not in but and s.lineno <= n.line < first
        for n in patch.normalisations
    )


def _function(patch: Patch, plain: bool) -> str:
    named = [h.heading.strip() for s in patch.sections for h in s.hunks if h.heading.strip()]
    if not named:
        return FUNC_NONE
    if not plain or any(len(h) > _DIFF_P_WIDTH for h in named):
        return FUNC_GIT
    return FUNC_DIFF


def _header_lines(s: FilePatch) -> list[bytes]:
    return split_lines(s.raw_header or b"")


# A plain section's raw `---` name and what follows it, the same of `+++`, and the
# header lines before them.
_Names = tuple[bytes, bytes, bytes, bytes, list[bytes]]


def _names(s: FilePatch) -> _Names | None:
    """The raw `---` and `+++` names and what follows each, and the lines before them."""
    lines = _header_lines(s)
    minus = next((ln for ln in lines if ln.startswith(b"--- ")), None)
    plus = next((ln for ln in lines if ln.startswith(b"+++ ")), None)
    if minus is None or plus is None or minus.endswith(b"\r\n") or plus.endswith(b"\r\n"):
        return None
    (a, a_rest), (b, b_rest) = _split_stamp(minus[4:]), _split_stamp(plus[4:])
    if a.startswith(b'"') or b.startswith(b'"'):
        return None
    before = lines[: lines.index(minus)]
    return a, _stamp(a_rest), b, _stamp(b_rest), before


def _split_stamp(raw: bytes) -> tuple[bytes, bytes]:
    """A `---`/`+++` name and its timestamp, after a tab or (GNU patch reads it) spaces."""
    name, rest = split_name(raw)
    if not rest and (m := _SPACED.match(raw.rstrip(b"\n"))) is not None:
        return m.group(1), m.group(2)
    return name, rest


def _stamp(rest: bytes) -> bytes:
    return b"\t" + rest if rest else b""


def _split_around(raw: bytes, path: str) -> tuple[str, str] | None:
    """`raw` as prefix + path + suffix, the prefix empty or ending in `/`."""
    name = raw.decode("utf-8", "surrogateescape")
    if name.endswith(path) and (name == path or name[: -len(path)].endswith("/")):
        return name[: -len(path)], ""
    at = name.rfind(path)
    while at >= 0:
        if at == 0 or name[at - 1] == "/":
            return name[:at], name[at + len(path) :]
        at = name.rfind(path, 0, at)
    return None


def _with_names(out: Style, s: FilePatch, got: _Names) -> Style:
    a, a_stamp, b, b_stamp, before = got
    old = _split_around(a, s.old_path or s.path)
    new = _split_around(b, s.new_path or s.path)
    if old is None or new is None or new[1] or old[1] not in ("", ".orig"):
        return out
    out = replace(
        out,
        old_prefix=old[0],
        new_prefix=new[0],
        old_suffix=old[1],
        old_stamp=a_stamp,
        new_stamp=b_stamp,
    )
    return _with_preamble(out, s, before, a, b)


def _with_missing(out: Style, s: FilePatch, got: _Names) -> Style:
    a, a_stamp, b, b_stamp, before = got
    missing, stamp = (a, a_stamp) if s.is_new else (b, b_stamp)
    out = replace(out, null_stamp=stamp, null_named=missing != b"/dev/null")
    if out.index_prefix is None and out.diff_command is None:
        # Only a created or deleted file to learn the preamble from.
        out = _with_preamble(out, s, before, a, b)
    return out


def _with_preamble(out: Style, s: FilePatch, before: list[bytes], a: bytes, b: bytes) -> Style:
    for i, line in enumerate(before):
        if line.startswith(b"Index: "):
            where = _split_around(line[7:].rstrip(b"\n"), s.path)
            if where is not None and not where[1]:
                rule = before[i + 1] if i + 1 < len(before) else b""
                out = replace(out, index_prefix=where[0], index_rule=rule)
        elif line.startswith(b"diff ") and not line.startswith(b"diff --git "):
            tail = b" " + a + b" " + b + b"\n"
            if line.endswith(tail):
                out = replace(out, diff_command=line[: -len(tail)])
    return out


def _epoch(stamp: bytes) -> bytes:
    """The epoch in the spelling of `stamp` (b"\\t2024-01-02 03:04:05.123 +0100")."""
    m = _ISO_STAMP.match(stamp[1:])
    if m is None:
        return stamp
    frac = b"." + b"0" * (len(m.group(1)) - 1) if m.group(1) else b""
    return b"\t1970-01-01 00:00:00" + frac + (b" +0000" if m.group(2) else b"")


def expressible(s: FilePatch) -> bool:
    """Whether a plain diff can say all the section does: no rename, copy, mode change,
    binary content, empty file, or created file other than a regular one (GNU patch
    creates 0644 files)."""
    if s.rename or s.copy or s.binary or not s.hunks:
        return False
    if s.old_mode and s.new_mode and s.old_mode != s.new_mode:
        return False
    if s.is_new:
        return (s.new_mode or "100644") == "100644"
    if s.is_delete:
        return (s.old_mode or "100644") in ("100644", "100755")
    return (s.new_mode or "100644") in ("100644", "100755")


def plain_header(s: FilePatch, style: Style) -> bytes:
    """A plain section's header lines for `s` in `style`: what quilt or diff -u writes."""
    path = s.path
    if s.is_new and not style.null_named:
        old, old_stamp = b"/dev/null", style.null_stamp
    else:
        suffix = style.old_suffix if not (s.is_new or s.is_delete) else ""
        old = _name(style.old_prefix + (s.old_path or path) + suffix)
        old_stamp = style.null_stamp if s.is_new else style.old_stamp
    if s.is_delete and not style.null_named:
        new, new_stamp = b"/dev/null", style.null_stamp
    else:
        new = _name(style.new_prefix + (s.new_path or path))
        new_stamp = style.null_stamp if s.is_delete else style.new_stamp
    out = []
    if style.index_prefix is not None:
        out.append(b"Index: " + _name(style.index_prefix + path) + b"\n")
        if style.index_rule:
            out.append(style.index_rule)
    if style.diff_command is not None:
        a = old if old != b"/dev/null" else _name(style.old_prefix + path)
        b = new if new != b"/dev/null" else _name(style.new_prefix + path)
        out.append(style.diff_command + b" " + a + b" " + b + b"\n")
    out.append(b"--- " + old + _tail(old, old_stamp) + b"\n")
    out.append(b"+++ " + new + _tail(new, new_stamp) + b"\n")
    return b"".join(out)


def _name(path: str) -> bytes:
    return quote_path(path)


def _tail(name: bytes, stamp: bytes) -> bytes:
    # git ends a name holding a space with a tab, so GNU patch keeps a trailing space.
    return stamp if stamp else (b"\t" if b" " in name else b"")


def headings(
    function: str, old_lines: Sequence[bytes] | None, hunks: Sequence[Hunk]
) -> list[bytes]:
    """Each hunk header's function context (with its leading space) in the given style.

    Each hunk's `heading` is what git wrote; `old_lines` the file before the change, from
    which GNU diff's `-p` context is found (None: derived from git's, which uses the same
    rule where no diff driver is configured) — in one walk down the file for all hunks."""
    if function == FUNC_NONE:
        return [b"" for _ in hunks]
    if function == FUNC_GIT:
        return [h.heading for h in hunks]
    if old_lines is None:
        return [_clip(h.heading[1:] if h.heading.startswith(b" ") else h.heading) for h in hunks]
    return diff_p_headings(old_lines, [h.old_pos for h in hunks])


def diff_p_heading(old_lines: Sequence[bytes], first: int) -> bytes:
    """GNU diff `-p` for one hunk starting at index `first` (see `diff_p_headings`)."""
    return diff_p_headings(old_lines, [first])[0]


def diff_p_headings(old_lines: Sequence[bytes], firsts: Sequence[int]) -> list[bytes]:
    """GNU diff `-p` for each index of `firsts`: the nearest line before it that starts
    with a letter, `_` or `$`, cut to 40 bytes, trailing blanks dropped (b"" when there is
    none). One walk down the file whatever the number of hunks (a walk back from each
    hunk costs the file's length per hunk)."""
    found: dict[int, bytes] = {}
    last, i = b"", 0
    for first in sorted(set(firsts)):
        stop = min(first, len(old_lines))
        while i < stop:
            if _FUNCTION_LINE.match(old_lines[i]):
                last = old_lines[i]
            i += 1
        found[first] = _clip(last) if last else b""
    return [found[f] for f in firsts]


def _clip(text: bytes) -> bytes:
    text = text.split(b"\n", 1)[0][:_DIFF_P_WIDTH].rstrip(b" \t\r\v\f")
    return b" " + text if text else b""
