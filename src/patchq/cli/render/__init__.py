"""Every user message and every JSON document, built from the results commands return.

One function a result kind. Each returns what to show as `Item`s, in order: a `Line`
for stdout (data for scripts) or stderr (a diagnostic for people), a `Doc` (a JSON
document, stdout), or `Raw` text or bytes written as they are. Nothing here prints,
reads the terminal or decides an exit code: `cli/output.show` prints, and each result
carries its own `exit_code` (and `problem`, where a run can stop short).

Colour is named, not applied: a `Line` may ask for its first `span` characters in a
colour, and `output.show` paints them only when that stream is a terminal.

The renderers live by what they render — `items` (the items and the pieces results
share), `ends` (errors, interrupts), `stack`, `edits`, `state` (`status`), `upstream`
(check, rebase, report) and `patchrepo` (set-up, import, export) — and this package
holds them all by name, so a caller says `render.checked(out)`.
"""

from __future__ import annotations

from patchq.cli.render.edits import (
    deleted,
    diff,
    folded,
    guarded,
    header,
    new,
    refreshed,
    renamed,
    reordered,
)
from patchq.cli.render.ends import error, internal_error, interrupted, recovered, unavailable
from patchq.cli.render.items import (
    Doc,
    Item,
    Line,
    Raw,
    Rendered,
    applied_line,
    data,
    failure_json,
    info,
    moved,
    notes_json,
    notes_lines,
    patch_json,
)
from patchq.cli.render.patchrepo import exported, imported, init, linted, script_written, trusted
from patchq.cli.render.stack import (
    applied,
    moved_stack,
    names,
    push_aborted,
    series_marks,
    series_view,
    undone,
    verified,
)
from patchq.cli.render.state import rebase_json, status
from patchq.cli.render.upstream import (
    checked,
    checked_refs,
    command_lines,
    dry_run,
    exec_lines,
    exec_starting,
    rebase_aborted,
    rebased,
    reported,
    watched,
)

__all__ = [
    "Doc",
    "Item",
    "Line",
    "Raw",
    "Rendered",
    "applied",
    "applied_line",
    "checked",
    "checked_refs",
    "command_lines",
    "data",
    "deleted",
    "diff",
    "dry_run",
    "error",
    "exec_lines",
    "exec_starting",
    "exported",
    "failure_json",
    "folded",
    "guarded",
    "header",
    "imported",
    "info",
    "init",
    "internal_error",
    "interrupted",
    "linted",
    "moved",
    "moved_stack",
    "names",
    "new",
    "notes_json",
    "notes_lines",
    "patch_json",
    "push_aborted",
    "rebase_aborted",
    "rebase_json",
    "rebased",
    "recovered",
    "refreshed",
    "renamed",
    "reordered",
    "reported",
    "watched",
    "script_written",
    "series_marks",
    "series_view",
    "status",
    "trusted",
    "unavailable",
    "undone",
    "verified",
]
