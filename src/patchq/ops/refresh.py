"""The patch file a refresh writes: git's diff of the change, in the patch's own form.

The header and trailer stay byte for byte, every hunk (and section header) that did not
change keeps its old bytes, and a `-p0` patch stays a `-p0` patch.
"""

from __future__ import annotations

from dataclasses import replace

from patchq.core.errors import BadInputError
from patchq.core.patch import FilePatch, Hunk, Patch, parse, quote_path, split_lines


def _shape(s: FilePatch) -> tuple[object, ...]:
    """What a section does besides its hunks: create/delete (with mode), rename, mode change."""
    mode_change = (
        (s.old_mode, s.new_mode) if s.old_mode and s.new_mode and s.old_mode != s.new_mode else None
    )
    created = (s.new_mode or "100644") if s.is_new else None
    return (s.is_new, s.is_delete, s.rename, s.copy, mode_change, created)


def _hunk_key(h: Hunk) -> tuple[object, ...]:
    return (h.old_start, h.old_len, h.new_start, h.new_len, h.lines)


def _reuse_unchanged(old: Patch, new: Patch) -> Patch:
    """Keep the old bytes of every hunk (and section header) that did not change."""
    by_path = {(s.old_path, s.new_path): s for s in old.sections}
    sections = []
    for s in new.sections:
        prev = by_path.get((s.old_path, s.new_path))
        if prev is None:
            sections.append(s)
            continue
        # The `@@` heading is git's guess at the enclosing function; quilt and diff -u write
        # none, so a hunk that differs only there is unchanged and keeps its old bytes.
        old_hunks = {_hunk_key(h): h for h in prev.hunks}
        hunks = tuple(old_hunks.get(_hunk_key(h), h) for h in s.hunks)
        same = len(hunks) == len(prev.hunks) and all(
            a is b for a, b in zip(hunks, prev.hunks, strict=True)
        )
        sections.append(prev if same and _shape(s) == _shape(prev) else replace(s, hunks=hunks))
    return Patch(old.header, tuple(sections), old.trailer)


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


def render_refreshed(old: Patch, diff: bytes, where: str, strip: int = 1) -> bytes:
    """The patch file after refresh: old header and trailer, git's diff, unchanged hunks kept.

    New sections are written for the patch's strip level, so a `-p0` entry of a quilt
    series stays a `-p0` patch.
    """
    if strip not in (0, 1):
        raise BadInputError(
            f"refresh writes -p1 or -p0 patches, and this one is -p{strip}",
            where,
            "change its series entry to -p1 and its paths to a/ b/",
        )
    new = parse(diff, where, 1)
    if strip == 0:
        new = Patch(new.header, tuple(_unprefixed(s) for s in new.sections), new.trailer)
    out = _reuse_unchanged(old, new)
    header = out.header
    if out.sections and header and not header.endswith(b"\n"):
        header += b"\n"
    return Patch(header, out.sections, out.trailer if out.sections else b"").render()
