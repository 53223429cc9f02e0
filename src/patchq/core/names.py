"""Which file a section patches, and the normalisations reading a patch may need.

GNU patch (pch.c `intuit_diff_type`, `best_name`) chooses among a section's names —
old, new, `Index:`; in a git diff the `---`/`+++` names over the `diff --git` ones — by
what exists in the tree. The parser (core.patch) collects the names; `resolve_section`
chooses, handed a `TreeView` so that this module stays pure. The normalisation kinds
live here too: the parser's and the resolver's, one vocabulary (docs/patch-formats.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from patchq.core.patch import FilePatch

# The normalisations the parser and the name resolver make (docs/patch-formats.md).
BLANK_CONTEXT = "blank-context"  # an empty line in a hunk read as a blank context line
TAB_CONTEXT = "tab-context"  # a line starting with a tab read as context that lost its space
EOF_CONTEXT = "eof-blank-context"  # blank context lines chopped off the end of the patch
MINUS_ONLY = "minus-only-header"  # a section with a `---` line and no `+++` line
PLUS_ONLY = "plus-only-header"  # a section with a `+++` line and no `---` line
SPACED_STAMP = "timestamp-after-spaces"  # a name followed by spaces and a date, no tab
SHORT_NAME = "short-name"  # a name with fewer components than the strip level, ignored
UNSAFE_NAME = "unsafe-name"  # a name with a `..` component, ignored for the other one
NAME_CHOICE = "name-choice"  # old, new and Index: names differ; one chosen by the tree
CREATED = "created"  # a hunk at line 0 whose file exists nowhere: GNU patch creates it
CRLF = "crlf"  # a patch file with CRLF line ends applied to a file without them
SKIPPED_TEXT = "skipped-text"  # text between or after sections that is no diff
EOF_MID_LINE = "eof-mid-line"  # the patch ends inside a hunk line: that line is dropped
HUNK_OVERRUN = "lines-after-hunk"  # hunk lines after a hunk's counts are done: skipped
SKIPPED_HUNK = "skipped-hunk"  # a hunk after text that ended its section: not applied
INDEX_MODE = "index-mode"  # an `index` line's mode other than the file's: the file's kept
GIT_NAMES = "git-names"  # `---`/`+++` names differ from the `diff --git` line's
OVERLAP = "overlapping-hunks"  # a hunk starting inside the trailing context of the last


@dataclass(frozen=True, slots=True)
class Normalisation:
    """One repair a patch needed to be read as GNU patch reads it: what, and where."""

    kind: str
    line: int
    detail: str

    def message(self) -> str:
        return f"needed normalisation {self.kind} at line {self.line}: {self.detail}"


def best_name(*names: str) -> str:
    """GNU patch's best_name(): fewest directories, then shortest base name, then shortest
    name, then the first (old before new)."""

    def key(name: str) -> tuple[int, int, int]:
        raw = name.encode("utf-8", "surrogateescape")
        parts = raw.split(b"/")
        return len([p for p in parts[:-1] if p]), len(parts[-1]), len(raw)

    return min(names, key=key)


# --- the tree's say: which name a plain diff patches, and its line ends ----------------


class TreeView(Protocol):
    """What `resolve_section` asks of the tree a section is about to be applied to."""

    def exists(self, path: str) -> bool:
        """Whether `path` is a file (not a folder) in the tree."""
        ...

    def is_dir(self, path: str) -> bool:
        """Whether `path` is a folder in the tree."""
        ...

    def has_crlf(self, path: str) -> bool:
        """Whether the file at `path` has a CRLF line end (False when it does not exist)."""
        ...

    def mode(self, path: str) -> str | None:
        """The git mode of the file at `path` (`100644`, …), None when there is none."""
        ...


_REGULAR = ("100644", "100755")


def resolve_section(s: FilePatch, tree: TreeView) -> tuple[FilePatch, tuple[Normalisation, ...]]:
    """The section as GNU patch would apply it to `tree`, and the normalisations that took.

    - Among a plain diff's names (old, new, `Index:`), the file that exists is patched
      (the best by GNU patch's best_name() if several do);
    - a plain hunk at line 0 (`@@ -0,0 …`) whose file exists under none of its names
      creates it, under the name that needs the fewest new folders (pch.c);
    - a patch file whose `---`/`+++` lines end in CRLF (a converted patch file, not a
      patch of CRLF content) has its CRs stripped, as GNU patch does, unless the file it
      changes has CRLF line ends itself (where GNU patch fails, patchq applies as is);
    - a git section that states no mode change (an `index <a>..<b> <mode>` line, or `old
      mode`/`new mode` alike) keeps the file's own mode where the stated one differs
      (`100644` said, `100755` found): GNU patch changes a mode only when the patch's old
      and new modes differ (patch.c `set_mode`), and `git apply` only warns.
    """
    notes: list[Normalisation] = []
    out = s
    if not s.rename and not s.copy and not s.is_new and not s.is_delete and not s.binary:
        names = s.candidates or (s.path,)
        here = [n for n in names if tree.exists(n)]
        first = s.hunks[0] if s.hunks else None
        if here:
            pick = best_name(*here)
            if pick != s.path:
                out = replace(out, old_path=pick, new_path=pick)
            if len(names) > 1:
                listed = ", ".join(repr(n) for n in names)
                notes.append(
                    Normalisation(
                        NAME_CHOICE,
                        s.lineno,
                        f"the names {listed} differ; patched {pick!r}, the one that exists",
                    )
                )
        elif first is not None and first.old_start == 0 and first.old_len == 0:

            def new_dirs(name: str) -> int:
                parts = name.split("/")[:-1]
                have = 0
                while have < len(parts) and tree.is_dir("/".join(parts[: have + 1])):
                    have += 1
                return len(parts) - have

            fewest = min(new_dirs(n) for n in names)
            pick = best_name(*(n for n in names if new_dirs(n) == fewest))
            out = replace(out, old_path=None, new_path=pick)
            notes.append(
                Normalisation(
                    CREATED,
                    s.lineno,
                    f"{pick!r} exists under none of its names and the hunk starts at line 0: "
                    "created, as GNU patch does",
                )
            )
    if not out.is_new and out.new_mode in _REGULAR and out.old_mode == out.new_mode:
        have = tree.mode(out.old_path or out.path)
        if have in _REGULAR and have != out.new_mode:
            notes.append(
                Normalisation(
                    INDEX_MODE,
                    s.lineno,
                    f"the patch states mode {out.new_mode} and no mode change, the file's mode "
                    f"is {have}: kept, as GNU patch keeps it",
                )
            )
            out = replace(out, old_mode=have, new_mode=have)
    if s.crlf and not tree.has_crlf(out.old_path or out.path):
        hunks = tuple(replace(h, lines=tuple((t, _uncr(c)) for t, c in h.lines)) for h in s.hunks)
        if hunks != s.hunks:
            out = replace(out, hunks=hunks)
            notes.append(
                Normalisation(
                    CRLF,
                    s.lineno,
                    "the patch file has CRLF line ends and the file has none: "
                    "CRs stripped, as GNU patch does",
                )
            )
    return out, tuple(notes)


def _uncr(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2] + b"\n"
    return line[:-1] if line.endswith(b"\r") else line
