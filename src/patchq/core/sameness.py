"""When two patches make the same change, however they are written.

A distribution's series grows by imports from many places — a mailing list, an upstream
commit, a colleague's gist — and the same fix arrives twice under two names. Applied in
order, the second then fails (or, fuzzed, lands somewhere else). `import` refuses such a
patch and `lint` flags the pair; both ask `change_key`.

Two patches make the same change when, file by file, they remove and add the same lines
in the same order: the header, the context, line numbers, hunk boundaries, the `a/`/`b/`
prefixes and `index` lines do not count; line endings do (a CRLF fix is not an LF one).
A file created, deleted or renamed, or a mode change, is part of the change. A patch that
changes nothing (a header-only patch, which records a decision) has no key: no two of
those are "the same change".
"""

from __future__ import annotations

from patchq.core.patch import FilePatch, Patch

Key = tuple[tuple[object, ...], ...]


def _section_key(s: FilePatch) -> tuple[object, ...]:
    changed = tuple((tag, line) for h in s.hunks for tag, line in h.lines if tag in "-+")
    return (
        s.old_path,
        s.new_path,
        s.rename,
        s.copy,
        s.old_mode if s.old_mode != s.new_mode else None,
        s.new_mode if s.old_mode != s.new_mode else None,
        s.binary and (s.old_id, s.new_id),
        changed,
    )


def change_key(patch: Patch) -> Key | None:
    """What `patch` changes, as a value equal for patches that make the same change; None
    when it changes nothing."""
    keys = [_section_key(s) for s in patch.sections]
    if not keys:
        return None
    return tuple(sorted(keys, key=repr))
