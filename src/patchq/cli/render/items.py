"""What a renderer returns, and the words and pieces several results share.

A renderer returns `Item`s, in order: a `Line` for stdout (data for scripts) or stderr
(a diagnostic for people), a `Doc` (a JSON document, stdout), or `Raw` text or bytes
written as they are. Colour is named, not applied: a `Line` may ask for its first `span`
characters in a colour, and `output.show` paints them only when that stream is a
terminal. Besides the items: how an applied patch is worded and put in JSON, the repairs
read from a patch, a failure, and what a run set aside on its way (a stash, a lock).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from patchq.core.status import Status as Word

if TYPE_CHECKING:
    from patchq.stack.apply import Failure, PatchResult


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text: to stdout (`err` False) or stderr, its first `span` characters
    in `colour` where the stream is a terminal."""

    text: str
    err: bool = False
    colour: str | None = None
    span: int = 0


@dataclass(frozen=True, slots=True)
class Doc:
    """A JSON document for stdout."""

    value: Any


@dataclass(frozen=True, slots=True)
class Raw:
    """Text or bytes for stdout, written exactly (a header, a diff, a report)."""

    data: str | bytes


Item = Line | Doc | Raw
Rendered = tuple[Item, ...]


def data(text: str) -> Line:
    return Line(text)


def info(text: str) -> Line:
    return Line(text, err=True)


def coloured(text: str, colour: str, rest: str, err: bool) -> Line:
    """`text` coloured (on a terminal), then `rest` plain."""
    return Line(text + rest, err, colour, len(text))


APPLY_COLOUR = {"exact": "green", "offset": "yellow", "fuzz": "yellow"}


def tally(statuses: Sequence[str]) -> str:
    """`2 exact, 1 offset`: how many of each status, in the order of their names."""
    return ", ".join(f"{n} {s}" for s, n in sorted(Counter(statuses).items()))


def moved(p: PatchResult) -> str:
    """How the hunks that did not apply exactly were placed: ` (a.txt hunk #2 offset -2;
    a.txt hunk #1 fuzz 1 offset +3)`, or nothing when all applied exactly."""
    notes = []
    for s in p.sections:
        for h in s.hunks:
            if h.status == Word.EXACT:
                continue
            how = f"fuzz {h.fuzz}" if h.status == Word.FUZZ else h.status
            if h.offset or h.status == Word.OFFSET:
                how += f" {h.offset:+d}" if h.status == Word.OFFSET else f" offset {h.offset:+d}"
            if h.passed_over:
                how += ", passing over line " + ", ".join(str(n) for n in h.passed_over[:3])
                how += ", …" if len(h.passed_over) > 3 else ""
            notes.append(f"{s.path} hunk #{h.index + 1} {how}")
    return f" ({'; '.join(notes)})" if notes else ""


def applied_line(p: PatchResult) -> Line:
    """`offset 0002.patch (a.txt hunk #1 offset +3)` on stderr, the status word coloured."""
    return coloured(
        f"{p.status:>6}", APPLY_COLOUR.get(p.status, "red"), f" {p.name}{moved(p)}", True
    )


def patch_json(p: PatchResult) -> dict[str, Any]:
    """One applied patch: its status, commit, and how each file's hunks landed."""
    return {
        "name": p.name,
        "status": p.status,
        "commit": p.commit,
        "files": [
            {
                "file": s.path,
                "action": s.action,
                "status": s.status,
                "hunks": [
                    {
                        "status": h.status,
                        "offset": h.offset,
                        "fuzz": h.fuzz,
                        "line": h.line,
                        "passed_over": list(h.passed_over),
                    }
                    for h in s.hunks
                ],
            }
            for s in p.sections
        ],
        "normalisations": notes_json(p.normalisations),
    }


def notes_json(notes: Any) -> list[dict[str, Any]]:
    """A patch's normalisations as JSON: what GNU-patch leniency it needed, and where."""
    return [{"kind": n.kind, "line": n.line, "detail": n.detail} for n in notes]


def notes_lines(notes: Any, err: bool) -> list[Item]:
    """The normalisations a patch needed, one indented line each."""
    return [Line(f"    {n.message()}", err) for n in notes]


def failure_json(f: Failure | None) -> dict[str, Any] | None:
    """The patch a push stopped at: the file, its conflicts, and each hunk's status."""
    if f is None:
        return None
    return {
        "name": f.name,
        "file": f.path,
        "conflicts": f.conflicts,
        "hunks": [{"status": h.status, "reason": h.reason} for h in f.hunks],
    }


def set_aside(stash: str | None) -> Rendered:
    """The stash `--force` put untracked or ignored files in the way into."""
    if not stash:
        return ()
    return (
        info(
            f"saved the untracked or ignored files in the way in stash {stash[:12]} "
            f"(`git stash show --include-untracked {stash[:12]}`)"
        ),
    )


def saved_on_the_way(stash: str | None) -> Rendered:
    return (
        (info(f"saved uncommitted changes found on the way in stash {stash[:12]}"),)
        if stash
        else ()
    )


def removed_lock(path: str | None) -> Rendered:
    return (info(f"removed {path}, left by patchq's git killed with it"),) if path else ()
