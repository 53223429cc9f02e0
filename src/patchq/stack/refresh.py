"""The patch file a refresh writes: git's diff of the change, in the patch's own style.

The header and trailer stay byte for byte, every hunk (and section header) that did not
change keeps its old bytes, and what changed is written as the rest of the patch is
(`core/patchstyle.py`): a git-style patch with git's `diff --git` and `index` lines, a
quilt or `diff -u` patch with its own `---`/`+++` names, timestamps, `Index:` lines and
strip level, and hunk headers with the function context the patch had — unless
`style` in patchq.toml asks for one style everywhere. refresh, fold and rebase all write
through `render_refreshed`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from patchq.core import patchstyle
from patchq.core.errors import BadInputError
from patchq.core.patch import FilePatch, Hunk, Patch, parse, split_lines
from patchq.core.patchstyle import GIT, PLAIN, Style
from patchq.core.paths import FileMode
from patchq.core.quoting import quote_path
from patchq.git.memtree import MemTree
from patchq.git.repo import GitRepo
from patchq.store.patchrepo import PatchRepo

OldFile = Callable[[str], bytes | None]  # a path's bytes before the change, None if absent


def files_of(g: GitRepo, tree: str) -> OldFile:
    """The files of `tree`, read on demand: where GNU diff's `-p` context is looked up."""
    view = MemTree(lambda oid: g.read_tree(oid), tree)

    def read(path: str) -> bytes | None:
        got = view.peek(path)
        if got is None or got[1] is None or not got[0].startswith("100"):
            return None
        return g.read_blob(got[1])

    return read


def _shape(s: FilePatch) -> tuple[object, ...]:
    """What a section does besides its hunks: create/delete (with mode), rename, mode change."""
    mode_change = (
        (s.old_mode, s.new_mode) if s.old_mode and s.new_mode and s.old_mode != s.new_mode else None
    )
    created = (s.new_mode or FileMode.REGULAR) if _created(s) else None
    return (_created(s), s.is_delete, s.rename, s.copy, mode_change, created)


def _hunk_key(h: Hunk) -> tuple[object, ...]:
    return (h.old_start, h.old_len, h.new_start, h.new_len, h.lines)


def _kept_hunks(
    prev: FilePatch | None, new: Sequence[Hunk], wanted: Sequence[bytes], keep: bool
) -> list[Hunk]:
    """git's hunks of a section, each written as the old patch had it where it makes the
    same change: byte for byte where it stayed put, with only its `@@` numbers changed
    where it shifted (git may interleave a hunk's added and removed lines otherwise, a
    blank line on the other side of an insertion: that would be churn, not a change)."""
    old = list(prev.hunks) if prev is not None else []
    exact = {_hunk_key(h): k for k, h in enumerate(old)}
    by_sides: dict[object, list[int]] = {}
    for k, h in enumerate(old):
        by_sides.setdefault(h.sides, []).append(k)
    used: set[int] = set()
    out = []
    for h, want in zip(new, wanted, strict=True):
        at = exact.get(_hunk_key(h))
        if at is None or at in used:
            at = next((j for j in by_sides.get(h.sides, ()) if j not in used), None)
        was = old[at] if at is not None else None
        if at is None or was is None or not (keep or was.heading == want):
            out.append(replace(h, heading=want, raw=None))
            continue
        used.add(at)
        if (was.old_start, was.new_start) == (h.old_start, h.new_start):
            out.append(was)
        else:
            out.append(was.shifted(h.old_start, h.new_start))
    return out


def _applied(pre: Sequence[bytes], hunks: Sequence[tuple[int, Hunk]]) -> list[bytes] | None:
    """`pre` with each hunk's old side, found at its 0-based line, replaced by its new
    side; None where a hunk's old side is not there or the hunks overlap."""
    out: list[bytes] = []
    at = 0
    for pos, h in hunks:
        old = h.old_lines
        if pos < at or list(pre[pos : pos + len(old)]) != old:
            return None
        out += pre[at:pos]
        out += h.new_lines
        at = pos + len(old)
    return out + list(pre[at:])


def _nearest(
    pre: Sequence[bytes], at: dict[bytes, list[int]], h: Hunk, start: int, want: int
) -> int | None:
    """The line at or after `start` nearest to `want` where the hunk's old side is (`at`:
    where each line of `pre` is)."""
    old = h.old_lines
    if not old:
        return max(start, min(want, len(pre)))
    found = [
        k
        for k in at.get(old[0], ())
        if k >= start and k + len(old) <= len(pre) and list(pre[k : k + len(old)]) == old
    ]
    return min(found, key=lambda k: (abs(k - want), k)) if found else None


def shifted_hunks(
    old: Sequence[Hunk], new: Sequence[Hunk], pre: Sequence[bytes] | None
) -> list[Hunk] | None:
    """The old section's hunks moved to where they apply in `pre`, when together they make
    exactly the change git's `new` hunks make there (however git cut or interleaved it):
    each keeps its bytes but for its `@@` numbers. None where they do not."""
    if pre is None or not old or [h.sides for h in old] == [h.sides for h in new]:
        return None
    placed: list[tuple[int, Hunk]] = []
    start, delta = 0, 0
    at: dict[bytes, list[int]] = {}
    for k, line in enumerate(pre):
        at.setdefault(line, []).append(k)
    for h in old:
        pos = _nearest(pre, at, h, start, h.old_pos + delta)
        if pos is None:
            return None
        placed.append((pos, h))
        delta = pos - h.old_pos
        start = pos + len(h.old_lines)
    git_placed = [(h.old_pos, h) for h in new]
    if _applied(pre, placed) != _applied(pre, git_placed):
        return None
    out, grew = [], 0
    for pos, h in placed:
        old_start = pos + 1 if h.old_len else pos
        new_pos = pos + grew
        new_start = new_pos + 1 if h.new_len else new_pos
        grew += h.new_len - h.old_len
        out.append(
            h
            if (old_start, new_start) == (h.old_start, h.new_start)
            else h.shifted(old_start, new_start)
        )
    return out


def _created(s: FilePatch) -> bool:
    """Whether a section creates its file: by its header, or as GNU patch reads a lone
    `@@ -0,0` hunk under an old name that is not /dev/null (quilt's `a.orig/new`)."""
    return s.is_new or (len(s.hunks) == 1 and (s.hunks[0].old_start, s.hunks[0].old_len) == (0, 0))


def _unprefixed(s: FilePatch) -> FilePatch:
    """A section of git's diff (a/ b/ prefixes) rewritten for a -p0 patch (no prefixes)."""

    def name(path: str | None) -> bytes:
        raw = quote_path(path or s.path)
        return raw + b"\t" if b" " in raw else raw  # as git ends a name holding a space

    out = []
    for line in split_lines(s.render_header()):  # LF only: a name may hold a CR
        if line.startswith(b"diff --git "):
            line = b"diff --git %s %s\n" % (
                quote_path(s.old_path or s.path),
                quote_path(s.new_path or s.path),
            )
        elif line.startswith(b"--- ") and s.old_path is not None:
            line = b"--- " + name(s.old_path) + b"\n"
        elif line.startswith(b"+++ ") and s.new_path is not None:
            line = b"+++ " + name(s.new_path) + b"\n"
        out.append(line)
    return replace(s, raw_header=b"".join(out))


_INDEX = re.compile(rb"index ([0-9a-f]+)\.\.([0-9a-f]+)")
ABBREV = 12  # the length of an `index` line's ids where the patch had none to follow


def abbreviated(diff: bytes, length: int = ABBREV) -> bytes:
    """A diff whose `index` lines' ids are cut to `length` hex digits (git's whole ids,
    written as the patch wrote its own)."""
    out = []
    for line in split_lines(diff):
        m = _INDEX.match(line) if line.startswith(b"index ") else None
        if m is not None:
            line = b"index %s..%s%s" % (m[1][:length], m[2][:length], line[m.end() :])
        out.append(line)
    return b"".join(out)


def _git_header(s: FilePatch, strip: int, index: bool, length: int) -> bytes:
    """git's header of a section, for the strip level, with its `index` lines' ids
    `length` digits long, or without them."""
    header = (_unprefixed(s) if strip == 0 else s).render_header()
    if index:
        return abbreviated(header, length)
    return b"".join(ln for ln in split_lines(header) if not ln.startswith(b"index "))


def _prefixes_fit(style: Style, strip: int) -> bool:
    """Whether `style`'s name prefixes are what the strip level takes off."""
    return (
        patchstyle.prefix_depth(style.old_prefix)
        == strip
        == patchstyle.prefix_depth(style.new_prefix)
    )


class _Writer:
    """One refresh: the old patch, the style it is written in, the pre-image's files."""

    def __init__(
        self, old: Patch, strip: int, style: str, old_file: OldFile | None, where: str
    ) -> None:
        self.old, self.strip, self.keep = old, strip, style == "keep"
        target = patchstyle.forced(style, strip, old) or patchstyle.detect(old, strip)
        if target.kind == PLAIN and strip in (0, 1) and not _prefixes_fit(target, strip):
            # Names whose prefixes are not the strip level's (Termux's `--- ../pkg-1.0/x.c`
            # and `+++ ./x.c` under -p1, which GNU patch reads by the name that exists):
            # a header written anew gets the strip level's own (a/ b/ for -p1); a section
            # whose header is kept keeps the maintainer's bytes.
            prefixes = patchstyle.default_prefixes(strip)
            target = replace(target, old_prefix=prefixes[0], new_prefix=prefixes[1])
        self.target = target
        self.old_file = old_file
        self.where = where
        # The length of the patch's `index` ids, for a section that had none.
        self.abbrev = next((len(s.old_id) for s in old.sections if s.old_id), ABBREV)
        self._check_strip(self.target)

    def _check_strip(self, style: Style) -> None:
        """Refresh writes names for -p0 and -p1 only (what the strip level takes off
        is the prefix it writes)."""
        if style.kind == GIT:
            ok = self.strip in (0, 1)
        else:
            ok = _prefixes_fit(style, self.strip)
        if not ok:
            raise BadInputError(
                f"refresh writes -p1 or -p0 patches, and this one is -p{self.strip}",
                self.where,
                "make its series entry -p1 and its paths a/ b/",
            )

    def own_style(self, prev: FilePatch | None) -> Style:
        """The style a section is written in: under `keep`, the one it had (a patch may
        mix styles); a section the patch did not have takes the patch's."""
        t = self.target
        if not self.keep or prev is None or prev.binary:
            return t
        if prev.git:
            return t if t.kind == GIT else replace(Style(), function=t.function)
        if t.kind == PLAIN:
            return t
        alone = Patch(b"", (prev,), b"", self.old.normalisations)
        own = replace(patchstyle.detect(alone, self.strip), function=t.function)
        return own if own.kind == PLAIN else t

    def _old_lines(self, s: FilePatch) -> list[bytes] | None:
        """The lines of the file a section changes, before; None where they cannot be read."""
        if s.old_path is None:
            return []  # a created file: nothing before its first hunk
        data = self.old_file(s.old_path) if self.old_file is not None else None
        return split_lines(data) if data is not None else None

    def section(self, s: FilePatch, prev: FilePatch | None) -> FilePatch:
        style = self.own_style(prev)
        plain = style.kind == PLAIN and patchstyle.expressible(s)
        if not plain and style.kind == PLAIN:
            style = replace(Style(), function=style.function)  # a rename, a mode: git's
            self._check_strip(style)
        pre = (
            self._old_lines(s)
            if prev is not None or style.function == patchstyle.FUNC_DIFF
            else None
        )
        lines = pre if style.function == patchstyle.FUNC_DIFF else None
        moved = shifted_hunks(prev.hunks, s.hunks, pre) if prev is not None and self.keep else None
        if moved is not None:
            hunks = moved
        else:
            wanted = patchstyle.headings(style.function, lines, s.hunks)
            hunks = _kept_hunks(prev, s.hunks, wanted, self.keep)
        if plain:
            header, tail = patchstyle.plain_header(s, style), b""
            if (
                self.keep
                and prev is not None
                and not prev.git
                and not prev.binary
                and _shape(prev) == _shape(s)
                and patchstyle.clean_header(self.old, prev)
            ):
                header, tail = prev.raw_header or header, prev.raw_tail
            in_style = prev is not None and not prev.git and prev.raw_header == header
        else:
            length = len(prev.old_id) if prev is not None and prev.old_id else self.abbrev
            header, tail = _git_header(s, self.strip, style.index, length), b""
            in_style = prev is not None and prev.git and bool(prev.old_id) == style.index
        if (
            prev is not None
            and (self.keep or in_style)
            and _shape(s) == _shape(prev)
            and len(hunks) == len(prev.hunks)
            and all(a is b for a, b in zip(hunks, prev.hunks, strict=True))
        ):
            return prev
        return replace(s, hunks=tuple(hunks), raw_header=header, raw_tail=tail)


def _paired(old: Patch, new: Patch) -> list[tuple[FilePatch, FilePatch | None]]:
    """git's sections of the new patch, each with the old patch's section of the same
    file (None for a file the patch did not touch), in the old patch's order: the files
    it had first, as it had them, then the new ones in git's (path) order."""
    exact = {(s.old_path, s.new_path): k for k, s in enumerate(old.sections)}
    named = {s.new_path: k for k, s in enumerate(old.sections) if _created(s)}
    keyed: list[tuple[int, int, FilePatch, FilePatch | None]] = []
    for j, s in enumerate(new.sections):
        k = exact.get((s.old_path, s.new_path))
        if k is None and s.is_new:
            k = named.get(s.new_path)  # created under an old name GNU patch ignores
        prev = old.sections[k] if k is not None else None
        keyed.append((k if k is not None else len(old.sections), j, s, prev))
    keyed.sort(key=lambda x: (x[0], x[1]))
    return [(s, prev) for _, _, s, prev in keyed]


def refreshed(
    old: Patch,
    diff: bytes,
    where: str,
    strip: int = 1,
    *,
    style: str = "keep",
    old_file: OldFile | None = None,
) -> Patch:
    """The patch after refresh: old header and trailer, git's diff in the patch's style
    (or the one `style` forces), unchanged hunks and sections kept byte for byte, hunks
    that only shifted kept but for their `@@` numbers, the old sections in their order
    and `index` ids as long as the patch had them (`diff` best with git's whole ids).

    `old_file` reads the files before the change, for GNU diff's `-p` function context;
    without it that context is cut from git's."""
    writer = _Writer(old, strip, style, old_file, where)
    new = parse(diff, where, 1)
    sections = tuple(writer.section(s, prev) for s, prev in _paired(old, new))
    header = old.header
    if sections and header and not header.endswith(b"\n"):
        header += b"\n"
    return Patch(header, sections, old.trailer if sections else b"")


def refreshed_files(
    g: GitRepo, repo: PatchRepo, moved: Sequence[tuple[str, str, str]]
) -> dict[str, bytes]:
    """The new file of each patch a replay placed anew, from its (name, tree before, tree
    after): git's diffs of all of them in one `diff-tree --stdin`, each written as
    `render_refreshed` writes it (the patch's style, its function context). The trees
    must be in the repository."""
    if not moved:
        return {}
    diffs = g.diff_trees_many([(b, a) for _, b, a in moved], repo.config.context, full_index=True)
    out: dict[str, bytes] = {}
    for (name, before, _), diff in zip(moved, diffs, strict=True):
        entry = repo.series.find(name)
        assert entry is not None
        strip = entry.strip_level(repo.config.strip)
        out[name] = render_refreshed(
            parse(repo.read_patch(name), repo.display(name), strip),
            diff,
            repo.display(name),
            strip,
            style=repo.config.style,
            old_file=files_of(g, before),
        )
    return out


def render_refreshed(
    old: Patch,
    diff: bytes,
    where: str,
    strip: int = 1,
    *,
    style: str = "keep",
    old_file: OldFile | None = None,
) -> bytes:
    """The patch file after refresh (`refreshed`, rendered)."""
    return refreshed(old, diff, where, strip, style=style, old_file=old_file).render()
