"""The patch model: parse unified diffs into values and render them back, on bytes.

A patch is a free-text or mail header, then file sections (git extended headers,
`---`/`+++`, hunks). Everything parsed keeps its exact source bytes, so rendering a
parsed patch reproduces it byte for byte; values built anew (refreshed hunks) render in
git's canonical spelling. This package knows nothing of git processes or the terminal.

Malformed input raises `BadInputError` naming `file:line` and what is wrong.
Which of a section's names is the file is core.names' to say, against the tree.

The parser reads what GNU patch reads (docs/patch-formats.md): whitespace-damaged
hunks, a `+++` line without `---`, timestamps after spaces, `Index:`/`RCS file:`/`Only in`
lines and other text between sections, mbox files of several messages, CRLF patch
files. Every repair it makes is recorded on the parsed patch as a `Normalisation`;
which of a plain diff's names to patch (old, new or `Index:`) is decided later, against
the tree, by `resolve_section`, which is handed an `exists(path)` callable so that this
package stays pure.

The values live in `model`; the parser reads with a `cursor`, takes a section's names
from `filenames`, its header from `sections`, its hunks with `hunkparse`, and the whole
file in `reader.parse`. This package holds the names callers use.
"""

from __future__ import annotations

from patchq.core.patch.filenames import split_name, strip_path
from patchq.core.patch.model import NO_EOL, FilePatch, Hunk, LineCache, Patch, Split, split_lines
from patchq.core.patch.reader import parse

__all__ = [
    "NO_EOL",
    "FilePatch",
    "Hunk",
    "LineCache",
    "Patch",
    "Split",
    "parse",
    "split_lines",
    "split_name",
    "strip_path",
]
