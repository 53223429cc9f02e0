"""The review report of a rebase: what happened to each patch, and only what changed.

Reviewers drown in diff-of-diffs, so for each patch the report first says whether the
change is *cosmetic* (only positions, context or hunk headers moved: the added and
removed lines are the same) or *substantive*, shows for substantive ones only the added
and removed lines that differ between the old and new patch, and names the upstream
commits behind every moved hunk. Rendered as text, GitHub-flavoured Markdown or JSON.
Pure: takes the rebase record, returns strings. The record's type lives in the store
(`store/rebasestate.LastRebase`), a peer this layer does not import, so what the report
reads of it is spelled here as protocols that the record's values satisfy.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from patchq.core.errors import BadInputError
from patchq.core.patch import Patch, parse
from patchq.core.words import plural


class RecordedHunk(Protocol):
    """A hunk as the rebase record keeps it (`rebasestate.HunkRecord`)."""

    @property
    def file(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def offset(self) -> int: ...
    @property
    def fuzz(self) -> int: ...
    @property
    def anchored(self) -> bool: ...
    @property
    def drift(self) -> Sequence[str]: ...
    @property
    def reason(self) -> str: ...


class RecordedPatch(Protocol):
    """A patch's outcome as the rebase record keeps it (`rebasestate.PatchOutcome`)."""

    @property
    def name(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def drift(self) -> Sequence[str]: ...
    @property
    def hunks(self) -> Sequence[RecordedHunk]: ...


class RebaseRecord(Protocol):
    """The record a finished rebase leaves (`rebasestate.LastRebase`)."""

    @property
    def base(self) -> str: ...
    @property
    def onto(self) -> str: ...
    @property
    def onto_ref(self) -> str: ...
    @property
    def patches(self) -> Sequence[RecordedPatch]: ...
    @property
    def subjects(self) -> Sequence[tuple[str, str]]: ...
    @property
    def old(self) -> Sequence[tuple[str, bytes]]: ...
    @property
    def new(self) -> Sequence[tuple[str, bytes]]: ...


@dataclass(frozen=True, slots=True)
class PatchReview:
    name: str
    outcome: str
    kind: str  # unchanged | cosmetic | substantive | removed
    moved: int  # hunks not applied exactly
    drift: tuple[str, ...]
    hunks: tuple[RecordedHunk, ...]
    interdiff: tuple[str, ...]  # lines of the change-only interdiff (substantive)
    anchored: int


@dataclass(frozen=True, slots=True)
class Review:
    base: str
    onto: str
    onto_ref: str
    patches: tuple[PatchReview, ...]
    subjects: Mapping[str, str]


def _changes(p: Patch) -> list[str]:
    """What a patch does, without where: file names and its added/removed lines."""
    out = []
    for s in p.sections:
        out.append(
            f"=== {s.path}"
            + (
                " (new)"
                if s.is_new
                else " (deleted)"
                if s.is_delete
                else f" (from {s.old_path})"
                if s.rename
                else ""
            )
        )
        for h in s.hunks:
            for tag, content in h.changes:
                out.append(tag + content.decode("utf-8", "replace").rstrip("\r\n"))
    return out


def interdiff(before: Sequence[str], after: Sequence[str]) -> tuple[str, ...]:
    """Only the added/removed lines that differ between two patches' `_changes`, each run
    led by the name of its file (` === path`): `-` for the old patch, `+` for the new."""
    out: list[str] = []
    shown = None
    sm = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        run = [*before[i1:i2], *after[j1:j2]]
        where = _file_before(after, j1) or _file_before(before, i1)
        if not run[0].startswith("=== ") and where is not None and where != shown:
            out.append(" " + where)
        out += ["-" + x for x in before[i1:i2]] + ["+" + x for x in after[j1:j2]]
        shown = _file_before(after, j2) or _file_before(before, i2)
    return tuple(out)


def _file_before(lines: Sequence[str], k: int) -> str | None:
    for line in reversed(lines[:k]):
        if line.startswith("=== "):
            return line
    return None


def review(record: RebaseRecord) -> Review:
    """Build the review from the record `rebase` leaves in .git/patchq/."""
    old, new = dict(record.old), dict(record.new)
    reviews = []
    for p in record.patches:
        name, outcome = p.name, p.outcome
        hunks = tuple(p.hunks)
        moved = sum(1 for h in hunks if h.status != "clean")
        anchored = sum(1 for h in hunks if h.anchored)
        kind = "unchanged"
        inter: tuple[str, ...] = ()
        if outcome in ("upstreamed", "dropped"):
            kind = "removed"
        elif name in old and name in new:
            before = _changes(parse(old[name], name))
            after = _changes(parse(new[name], name))
            if before == after:
                kind = "cosmetic"
            else:
                kind = "substantive"
                inter = interdiff(before, after)
        reviews.append(
            PatchReview(name, outcome, kind, moved, tuple(p.drift), hunks, inter, anchored)
        )
    return Review(record.base, record.onto, record.onto_ref, tuple(reviews), dict(record.subjects))


def from_lock(lock_doc: Mapping[str, Any]) -> Review:
    """A summary-only review when the rebase record is not on this machine."""
    last = lock_doc.get("last_rebase")
    if not last:
        raise BadInputError(
            "no rebase recorded in series.lock",
            "series.lock",
            "run `patchq rebase --onto REF` first",
        )
    patches = tuple(
        PatchReview(p["name"], p["rebase"], "unknown", 0, tuple(p.get("drift", ())), (), (), 0)
        for p in lock_doc.get("patches", ())
    )
    return Review(last["from"], last["onto"], last.get("onto_ref", ""), patches, {})


def _commit(c: str, subjects: Mapping[str, str]) -> str:
    s = subjects.get(c, "")
    return f"{c[:12]} {s}".strip()


def _hunk_line(h: RecordedHunk, subjects: Mapping[str, str], outcome: str = "") -> str:
    status = h.status
    what = {
        "offset": f"moved {plural(h.offset, 'line', signed=True)}",
        "fuzz": f"fuzz {h.fuzz}",
        "merge": "3-way merged" + (", placed by its anchor line — check it" if h.anchored else ""),
        "upstreamed": "already upstream, dropped",
        "conflict": "conflict, "
        + ("the patch was skipped" if outcome == "dropped" else "resolved by hand"),
        "missing": "file gone upstream",
    }.get(status, status)
    by = ", ".join(_commit(c, subjects) for c in h.drift[:3])
    return f"{h.file} hunk #{h.index + 1}: {what}" + (f" (by {by})" if by else "")


def to_text(r: Review) -> str:
    lines = [
        f"rebase {r.base[:12]} -> {r.onto[:12]}" + (f" ({r.onto_ref})" if r.onto_ref else ""),
        "",
    ]
    for p in r.patches:
        lines.append(f"{p.outcome:>10}  {p.name}  [{p.kind}]")
        for h in p.hunks:
            if h.status != "clean":
                lines.append(f"            {_hunk_line(h, r.subjects, p.outcome)}")
        for c in p.drift if not p.hunks else ():
            lines.append(f"            drift: {_commit(c, r.subjects)}")
        for line in p.interdiff:
            lines.append(f"            {line}")
    counts = _counts(r)
    lines += ["", "summary: " + ", ".join(f"{n} {k}" for k, n in counts.items())]
    return "\n".join(lines) + "\n"


def _counts(r: Review) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in r.patches:
        counts[p.outcome] = counts.get(p.outcome, 0) + 1
    return counts


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def to_markdown(r: Review) -> str:
    out = [
        f"## patchq rebase: `{r.base[:12]}` → `{r.onto[:12]}`"
        + (f" ({_md_escape(r.onto_ref)})" if r.onto_ref else ""),
        "",
    ]
    counts = _counts(r)
    out.append(", ".join(f"**{n}** {k}" for k, n in counts.items()))
    review_needed = [
        p
        for p in r.patches
        if p.kind == "substantive" or p.anchored or p.outcome in ("resolved", "dropped")
    ]
    if review_needed:
        out.append("  \nNeeds a reviewer's eye: " + ", ".join(f"`{p.name}`" for p in review_needed))
    out += [
        "",
        "| patch | outcome | change | hunks moved | upstream commits |",
        "| --- | --- | --- | --- | --- |",
    ]
    for p in r.patches:
        drift = "<br>".join(_md_escape(_commit(c, r.subjects)) for c in p.drift[:4])
        if len(p.drift) > 4:
            drift += f"<br>… {len(p.drift) - 4} more"
        out.append(f"| `{p.name}` | {p.outcome} | {p.kind} | {p.moved} | {drift} |")
    for p in r.patches:
        if p.kind in ("unchanged", "unknown"):
            continue
        out += ["", f"### `{p.name}` — {p.outcome}, {p.kind}", ""]
        for h in p.hunks:
            if h.status != "clean":
                out.append(f"- {_md_escape(_hunk_line(h, r.subjects, p.outcome))}")
        if p.kind == "removed":
            out.append(
                f"- removed from the active series ({p.outcome}); its line in `series`"
                " is kept as a comment"
            )
        if p.interdiff:
            out += [
                "",
                "Only the added/removed lines that changed (old patch → new patch):",
                "",
                "```diff",
                *p.interdiff,
                "```",
            ]
    return "\n".join(out) + "\n"


def to_json(r: Review) -> str:
    doc = {
        "base": r.base,
        "onto": r.onto,
        "onto_ref": r.onto_ref,
        "patches": [
            {
                "name": p.name,
                "outcome": p.outcome,
                "change": p.kind,
                "hunks_moved": p.moved,
                "drift": list(p.drift),
                "hunks": [_hunk_doc(h) for h in p.hunks],
                "interdiff": list(p.interdiff),
                "anchored": p.anchored,
            }
            for p in r.patches
        ],
        "subjects": dict(r.subjects),
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _hunk_doc(h: RecordedHunk) -> dict[str, Any]:
    """A hunk in the report's JSON: the fields the record keeps, by the same names."""
    return {
        "file": h.file,
        "index": h.index,
        "status": h.status,
        "offset": h.offset,
        "fuzz": h.fuzz,
        "anchored": h.anchored,
        "drift": list(h.drift),
        "reason": h.reason,
    }


def render(r: Review, fmt: str) -> str:
    return {"text": to_text, "md": to_markdown, "json": to_json}[fmt](r)
