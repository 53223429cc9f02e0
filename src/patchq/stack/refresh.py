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
    created = (s.new_mode or FileMode.REGULAR) if s.is_new else None
    return (s.is_new, s.is_delete, s.rename, s.copy, mode_change, created)


def _hunk_key(h: Hunk) -> tuple[object, ...]:
    return (h.old_start, h.old_len, h.new_start, h.new_len, h.lines)


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


def _git_header(s: FilePatch, strip: int, index: bool) -> bytes:
    """git's header of a section, for the strip level, with or without `index` lines."""
    header = (_unprefixed(s) if strip == 0 else s).render_header()
    if index:
        return header
    return b"".join(ln for ln in split_lines(header) if not ln.startswith(b"index "))


class _Writer:
    """One refresh: the old patch, the style it is written in, the pre-image's files."""

    def __init__(
        self, old: Patch, strip: int, style: str, old_file: OldFile | None, where: str
    ) -> None:
        self.old, self.strip, self.keep = old, strip, style == "keep"
        self.target = patchstyle.forced(style, strip, old) or patchstyle.detect(old, strip)
        self.old_file = old_file
        self.where = where
        self._check_strip(self.target)

    def _check_strip(self, style: Style) -> None:
        if style.kind == GIT:
            ok = self.strip in (0, 1)
        else:
            ok = patchstyle.prefix_depth(style.old_prefix) == self.strip and (
                patchstyle.prefix_depth(style.new_prefix) == self.strip
            )
        if not ok:
            raise BadInputError(
                f"refresh writes -p1 or -p0 patches, and this one is -p{self.strip}",
                self.where,
                "change its series entry to -p1 and its paths to a/ b/",
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
        old_hunks = {_hunk_key(h): h for h in prev.hunks} if prev is not None else {}
        lines = self._old_lines(s) if style.function == patchstyle.FUNC_DIFF else None
        hunks = []
        wanted = patchstyle.headings(style.function, lines, s.hunks)
        for h, want in zip(s.hunks, wanted, strict=True):
            was = old_hunks.get(_hunk_key(h))
            if was is not None and (self.keep or was.heading == want):
                hunks.append(was)
            else:
                hunks.append(replace(h, heading=want, raw=None))
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
            header, tail = _git_header(s, self.strip, style.index), b""
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
    (or the one `style` forces), unchanged hunks and sections kept byte for byte.

    `old_file` reads the files before the change, for GNU diff's `-p` function context;
    without it that context is cut from git's."""
    writer = _Writer(old, strip, style, old_file, where)
    new = parse(diff, where, 1)
    by_path = {(s.old_path, s.new_path): s for s in old.sections}
    sections = tuple(writer.section(s, by_path.get((s.old_path, s.new_path))) for s in new.sections)
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
    diffs = g.diff_trees_many([(b, a) for _, b, a in moved], repo.config.context)
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
