"""The review report of a rebase: what happened to each patch, and only what changed.

Reviewers drown in diff-of-diffs, so for each patch the report first says whether the
change is *cosmetic* (only positions, context or hunk headers moved: the added and
removed lines are the same) or *substantive*, shows for substantive ones only the added
and removed lines that differ between the old and new patch, and names the upstream
commits behind every moved hunk. Every hunk whose change differs, or that was placed
by anything but an exact or offset match (a merge, fuzz, a person's resolution), is
shown as its new hunk — in the HTML page side by side with the old one, with the
upstream commits that drifted it. Rendered as text, GitHub-flavoured Markdown (for the
pull request), one self-contained HTML page (no scripts, no external assets, every
text escaped) or JSON — all four from one model (`Review`): what each says in words (the
reviewer's-eye line, each patch's `facts`: its moved hunks led by the upstream commits
that touched their lines, the count of those that only shifted them, the hunks dropped
by hand, the methods a person should check, evidence and hints; whether the series
changed since, `stale`) is worded once here and only laid out by each format.
Pure: takes the rebase record (`core/records.LastRebase`, the value the store reads
back), returns strings.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from patchq.core import bounded
from patchq.core.errors import BadInputError
from patchq.core.patch import FilePatch, Hunk, Patch, parse
from patchq.core.records import HunkOutcome, LastRebase
from patchq.core.status import GONE, REVIEWABLE, Method, Outcome, Status
from patchq.core.text import json_text, md_code, md_fence, md_text, shown
from patchq.core.words import plural


@dataclass(frozen=True, slots=True)
class HunkView:
    """A hunk a reviewer should read: its text in the old patch and in the new one (None
    where it has no counterpart), and the upstream commits that drifted it."""

    file: str
    old: str | None
    new: str | None
    status: str  # the recorded placement of the old hunk, or "changed"
    drift: tuple[str, ...]
    method: str = ""  # how it was placed, where a person should read it (zealous, reused, …)
    touched_by: tuple[str, ...] = ()  # the commits that changed its lines or context
    shifted: int = 0  # how many more only shifted it


@dataclass(frozen=True, slots=True)
class PatchReview:
    name: str
    outcome: str
    kind: str  # unchanged | cosmetic | substantive | removed
    moved: int  # hunks not applied exactly
    drift: tuple[str, ...]
    hunks: tuple[HunkOutcome, ...]
    interdiff: tuple[str, ...]  # lines of the change-only interdiff (substantive)
    anchored: int
    views: tuple[HunkView, ...] = ()  # the new hunks to read (substantive or not exact)
    evidence: tuple[tuple[str, str], ...] | None = None  # kind, commit (DESIGN §4)
    hints: tuple[str, ...] = ()  # DESIGN §5
    dropped: int = 0  # hunks of the old patch the new one no longer has
    # What the report says of the patch, one line each, the same in every format.
    facts: tuple[str, ...] = ()
    # The proposed methods `--accept`/`accept` took in it without a stop (DESIGN §4.1).
    accepted: tuple[str, ...] = ()

    @property
    def detailed(self) -> bool:
        """Whether the patch gets its own section (md, html): something to say or show."""
        return bool(self.facts or self.interdiff or self.views)


@dataclass(frozen=True, slots=True)
class Review:
    base: str
    onto: str
    onto_ref: str
    patches: tuple[PatchReview, ...]
    subjects: Mapping[str, str]
    # The `rebase --exec`/`--exec-each` runs: (command, ok, exit code, patch, note).
    execs: tuple[tuple[str, bool, int, str | None, str], ...] = ()
    # Why the review no longer describes the series (it changed since the rebase).
    stale: tuple[str, ...] = ()

    @property
    def needs_review(self) -> tuple[str, ...]:
        """The patches a reviewer must read: their change differs, a hunk was placed by a
        method a person checks, or a person resolved, dropped or cut something."""
        return tuple(
            p.name
            for p in self.patches
            if p.kind == "substantive"
            or p.anchored
            or p.dropped
            or p.outcome in (Outcome.RESOLVED, Outcome.DROPPED)
            or p.accepted
            or any(h.method in REVIEWABLE for h in p.hunks)
        )


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
    old_file, new_file = _files_before(before), _files_before(after)
    for tag, i1, i2, j1, j2 in bounded.opcodes(before, after):
        if tag == "equal":
            continue
        run = [*before[i1:i2], *after[j1:j2]]
        where = new_file[j1] or old_file[i1]
        if not run[0].startswith("=== ") and where is not None and where != shown:
            out.append(" " + where)
        out += ["-" + x for x in before[i1:i2]] + ["+" + x for x in after[j1:j2]]
        shown = new_file[j2] or old_file[i2]
    return tuple(out)


def _files_before(lines: Sequence[str]) -> list[str | None]:
    """For each k in 0..len(lines), the last `=== path` line before line k (one pass,
    so many runs of changes cost no more than one)."""
    out: list[str | None] = [None]
    for line in lines:
        out.append(line if line.startswith("=== ") else out[-1])
    return out


# Placements a reviewer need not read again: the change itself is as it was.
_PLAIN = (Status.CLEAN, Status.OFFSET, Status.UPSTREAMED)


def _hunk_text(h: Hunk) -> str:
    """A hunk as its patch file has it (`@@` line included), one string, LF-ended."""
    if h.raw is not None:
        text = h.raw.decode("utf-8", "replace")
    else:
        head = f"@@ -{h.old_start},{h.old_len} +{h.new_start},{h.new_len} @@"
        body = "".join(t + c.decode("utf-8", "replace") for t, c in h.lines)
        text = head + "\n" + body
    return text if text.endswith("\n") else text + "\n"


def _changed(h: Hunk) -> list[tuple[str, bytes]]:
    return [(t, c) for t, c in h.lines if t != " "]


def _views(old: Patch, new: Patch, hunks: Sequence[HunkOutcome]) -> tuple[HunkView, ...]:
    """The new patch's hunks a reviewer should read, each beside its old hunk: those whose
    added/removed lines differ, and those the rebase placed other than exactly or by an
    offset. Old and new hunks pair up by file and order (by likeness where the count of
    a file's hunks changed)."""
    record = {(h.file, h.index): h for h in hunks}
    old_by: dict[str, FilePatch] = {s.path: s for s in old.sections}
    out: list[HunkView] = []
    for s in new.sections:
        before = old_by.get(s.path) or old_by.get(s.old_path or "")
        olds = list(before.hunks) if before is not None else []
        used: set[int] = set()
        for j, h in enumerate(s.hunks):
            k = j if len(olds) == len(s.hunks) else _likest(olds, h, used)
            if k is not None:
                used.add(k)
            o = olds[k] if k is not None else None
            rec = record.get((before.path if before else s.path, k)) if k is not None else None
            status = rec.status if rec is not None else Status.CLEAN
            if o is not None and _changed(o) == _changed(h) and status in _PLAIN:
                continue
            out.append(
                HunkView(
                    s.path,
                    _hunk_text(o) if o is not None else None,
                    _hunk_text(h),
                    status if o is not None and status not in _PLAIN else "changed",
                    tuple(rec.drift) if rec is not None else (),
                    rec.method if rec is not None and rec.method in REVIEWABLE else "",
                    tuple(rec.touched_by) if rec is not None else (),
                    rec.shifted if rec is not None else 0,
                )
            )
        for k, o in enumerate(olds):
            if k not in used and len(olds) != len(s.hunks):
                rec = record.get((s.path, k))
                drift = tuple(rec.drift) if rec is not None else ()
                touched = tuple(rec.touched_by) if rec is not None else ()
                shifted = rec.shifted if rec is not None else 0
                out.append(
                    HunkView(s.path, _hunk_text(o), None, "changed", drift, "", touched, shifted)
                )
    return tuple(out)


def _likest(olds: Sequence[Hunk], h: Hunk, used: set[int]) -> int | None:
    best, score = None, 0.0
    mine = [t + c.decode("utf-8", "replace") for t, c in h.lines]
    for k, o in enumerate(olds):
        if k in used:
            continue
        theirs = [t + c.decode("utf-8", "replace") for t, c in o.lines]
        ratio = bounded.ratio(theirs, mine) or 0.0  # too long to compare: no pairing
        if ratio > score:
            best, score = k, ratio
    return best


def review(record: LastRebase) -> Review:
    """Build the review from the record `rebase` leaves in .git/patchq/."""
    old, new = dict(record.old), dict(record.new)
    reviews = []
    for p in record.patches:
        name, outcome = p.name, p.outcome
        hunks = tuple(p.hunks)
        moved = sum(1 for h in hunks if h.status != Status.CLEAN)
        anchored = sum(1 for h in hunks if h.anchored)
        kind = "unchanged"
        inter: tuple[str, ...] = ()
        views: tuple[HunkView, ...] = ()
        if outcome in GONE:
            kind = "removed"
        elif name in old and name in new:
            old_patch, new_patch = _parsed(old[name], name), _parsed(new[name], name)
            before, after = _changes(old_patch), _changes(new_patch)
            if before == after:
                kind = "cosmetic"
            else:
                kind = "substantive"
                inter = interdiff(before, after)
            views = _views(old_patch, new_patch, hunks)
        ev = tuple(p.evidence) if p.evidence is not None else None
        dropped = sum(1 for v in views if v.new is None)
        review_ = PatchReview(
            name,
            outcome,
            kind,
            moved,
            tuple(p.drift),
            hunks,
            inter,
            anchored,
            views,
            ev,
            tuple(p.hints),
            dropped,
            accepted=tuple(p.accepted),
        )
        reviews.append(_with_facts(review_, dict(record.subjects)))
    runs = tuple((x.command, x.ok, x.code, x.patch, x.note) for x in record.exec_runs)
    return Review(
        record.base, record.onto, record.onto_ref, tuple(reviews), dict(record.subjects), runs
    )


def _parsed(data: bytes, name: str) -> Patch:
    """A patch of the record, read at -p1 (or -p0, where -p1 would strip a whole name):
    the report compares changes, not paths."""
    try:
        return parse(data, name)
    except BadInputError:
        return parse(data, name, 0)


def _with_facts(p: PatchReview, subjects: Mapping[str, str]) -> PatchReview:
    """The patch's review with what the report says of it in words (`facts`)."""
    facts = (
        [f"accepted proposal ({', '.join(p.accepted)}): taken without a stop — review it"]
        if p.accepted
        else []
    )
    facts += [_hunk_line(h, subjects, p.outcome) for h in p.hunks if h.status != Status.CLEAN]
    facts += [
        f"{v.file}: a hunk of the old patch was dropped"
        + (" by hand" if p.outcome == Outcome.RESOLVED else "")
        for v in p.views
        if v.new is None
    ]
    if p.kind == "removed":
        facts.append(
            f"removed from the active series ({p.outcome}); its line in `series` is kept"
            " as a comment"
        )
    facts += _notes(p, subjects)
    if not p.hunks:  # a summary from series.lock: its upstream commits, without hunks
        facts += [f"drift: {_commit(c, subjects)}" for c in p.drift]
    return replace(p, facts=tuple(facts))


def stale_reasons(
    record: LastRebase, active: Sequence[str], current: Mapping[str, bytes | None]
) -> tuple[str, ...]:
    """Why the review of `record` no longer describes the series: the active patches now
    (`active`, in order) are not those the rebase left, or a patch's file (`current`, by
    name) is not the one it wrote. A `refresh` brings the record up to date itself."""
    left = [p.name for p in record.patches if p.outcome not in GONE]
    out = []
    if list(active) != left:
        added = [n for n in active if n not in left]
        gone = [n for n in left if n not in active]
        what = []
        if added:
            what.append("added " + ", ".join(added))
        if gone:
            what.append("removed " + ", ".join(gone))
        if not what:
            what.append("reordered")
        out.append(
            f"the series changed since this rebase ({'; '.join(what)}): `patchq check` "
            "tells the drift of the series as it is"
        )
    for name, data in record.new:
        if name in current and current[name] != data:
            out.append(f"{name} changed since this rebase (it shows the rebase's version)")
    return tuple(out)


def _run_line(run: tuple[str, bool, int, str | None, str]) -> str:
    """`passed: make check with 0002.patch (exit 0)`: one run of the --exec command."""
    command, ok, code, patch, note = run
    where = f" with {patch}" if patch else " on the series"
    why = f"; {note}" if note else ""
    return f"{'passed' if ok else 'FAILED'}: {command}{where} (exit {code}{why})"


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
        PatchReview(
            p["name"],
            p["rebase"],
            "unknown",
            0,
            tuple(p.get("drift", ())),
            (),
            (),
            0,
            (),
            tuple((str(k), str(v)) for k, v in p["evidence"].items())
            if p.get("evidence")
            else None,
            tuple(str(x) for x in p.get("hints", ())),
        )
        for p in lock_doc.get("patches", ())
    )
    return Review(last["from"], last["onto"], last.get("onto_ref", ""), patches, {})


def _commit(c: str, subjects: Mapping[str, str]) -> str:
    s = subjects.get(c, "")
    return f"{c[:12]} {s}".strip()


def _hunk_line(h: HunkOutcome, subjects: Mapping[str, str], outcome: str = "") -> str:
    status = h.status
    what = {
        "offset": f"moved {plural(h.offset, 'line', signed=True)}",
        "fuzz": f"fuzz {h.fuzz}",
        "merge": "3-way merged"
        + (
            ", placed by its anchor line — check it"
            if h.anchored
            else f", by {h.method} — check it" + (f" ({h.reason})" if h.reason else "")
            if h.method in REVIEWABLE
            else ""
        ),
        "upstreamed": "already upstream, dropped",
        "conflict": "conflict, "
        + ("the patch was skipped" if outcome == Outcome.DROPPED else "resolved by hand"),
        "missing": "file gone upstream",
    }.get(status, status)
    # Led by the commits that changed its own lines or context; those that only shifted
    # it are a count (a record an older patchq wrote has only `drift`: all of them).
    lead = h.touched_by if h.touched_by or h.shifted else h.drift
    by = ", ".join(_commit(c, subjects) for c in lead[:3])
    more = f" and {plural(len(lead) - 3, 'more')}" if len(lead) > 3 else ""
    where = ""
    moved = h.moved_to
    if moved is not None:
        mover = f" by {_commit(moved[2], subjects)}" if moved[2] else ""
        where = f", its block moved to {moved[0]}:{moved[1]}{mover}"
    shifted = (
        f"{'; ' if by else ''}shifted by {plural(h.shifted, 'upstream commit')}"
        if h.shifted
        else ""
    )
    told = f"by {by}{more}" if by else ""
    return f"{h.file} hunk #{h.index + 1}: {what}{where}" + (
        f" ({told}{shifted})" if told or shifted else ""
    )


def _notes(p: PatchReview, subjects: Mapping[str, str]) -> list[str]:
    """A patch's evidence of being upstream and its review hints, one line each."""
    out = []
    if p.evidence is not None:
        ev = dict(p.evidence)
        commit = ev.get("commit", "")
        named = f" {_commit(commit, subjects)}" if commit else ""
        out.append(f"evidence: {ev.get('kind', '')}{named}")
    out += [f"hint: {x}" for x in p.hints]
    return out


def to_text(r: Review) -> str:
    """The report for a terminal or a text file: every name, path, subject and line
    from a patch or an upstream escaped (`core/text.shown`)."""
    ref = f" ({shown(r.onto_ref)})" if r.onto_ref else ""
    lines = [f"rebase {r.base[:12]} -> {r.onto[:12]}{ref}"]
    lines += [f"STALE: {shown(x)}" for x in r.stale]
    if r.needs_review:
        lines.append("needs a reviewer's eye: " + ", ".join(shown(n) for n in r.needs_review))
    lines.append("")
    for p in r.patches:
        lines.append(f"{p.outcome:>10}  {shown(p.name)}  [{_kind_words(p)}]")
        lines += [f"            {shown(x)}" for x in p.facts]
        for line in p.interdiff:
            lines.append(f"            {shown(line)}")
        for v in p.views:
            if v.new is None:
                continue
            lines.append(f"            new hunk in {shown(v.file)} ({_view_word(v)}):")
            # `|` keeps an empty context line (" ") from becoming a blank-looking line.
            lines += [
                f"            | {shown(x)}" if x.strip() else "            |"
                for x in v.new.splitlines()
            ]
    counts = _counts(r)
    lines += ["", "summary: " + ", ".join(f"{n} {k}" for k, n in counts.items())]
    lines += [f"exec {shown(_run_line(x))}" for x in r.execs]
    return "\n".join(lines) + "\n"


def _kind_words(p: PatchReview) -> str:
    """`cosmetic, 2 hunks moved`: the patch's change and how many hunks did not apply
    exactly, as the table's columns say it."""
    moved = p.moved and p.kind != "removed"
    return p.kind + (f", {plural(p.moved, 'hunk')} moved" if moved else "")


def _view_word(v: HunkView) -> str:
    if v.status == Status.MERGE and v.method == Method.REUSED:
        return "resolved as a person did before"
    if v.status == Status.MERGE and v.method == Method.ANCHORED:
        return "placed by its anchor line"
    if v.status == Status.MERGE and v.method:
        return f"3-way merged, by {v.method}"
    return {
        "changed": "its change differs",
        "merge": "3-way merged",
        "conflict": "resolved by hand",
        "fuzz": "placed with fuzz",
        "missing": "its file moved upstream",
    }.get(v.status, v.status)


def _counts(r: Review) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in r.patches:
        counts[p.outcome] = counts.get(p.outcome, 0) + 1
    return counts


def to_markdown(r: Review) -> str:
    """The report for a pull request. What a patch or an upstream wrote (names, paths,
    subjects, interdiff lines) is inert: in code spans and fences nothing in it can
    close (`core/text.md_code`, `md_fence`), so it cannot end a table cell, start a
    heading, embed HTML or make a live link or a remote image."""
    out = [
        f"## patchq rebase: {md_code(r.base[:12])} → {md_code(r.onto[:12])}"
        + (f" ({md_code(r.onto_ref)})" if r.onto_ref else ""),
        "",
    ]
    counts = _counts(r)
    out.append(", ".join(f"**{n}** {md_text(k)}" for k, n in counts.items()))
    for x in r.stale:
        out += ["", f"> **Stale:** {md_code(x)}"]
    if r.needs_review:
        out += ["", "Needs a reviewer's eye: " + ", ".join(md_code(n) for n in r.needs_review)]
    if r.execs:
        out += ["", "Build/test after the rebase (`--exec`):", ""]
        out += [f"- {md_code(_run_line(x))}" for x in r.execs]
    out += [
        "",
        "| patch | outcome | change | hunks moved | upstream commits |",
        "| --- | --- | --- | --- | --- |",
    ]
    for p in r.patches:
        drift = "<br>".join(md_code(_commit(c, r.subjects)) for c in p.drift[:4])
        if len(p.drift) > 4:
            drift += f"<br>… {len(p.drift) - 4} more"
        out.append(
            f"| {md_code(p.name)} | {md_text(p.outcome)} | {md_text(p.kind)} | {p.moved} "
            f"| {drift} |"
        )
    for p in r.patches:
        if not p.detailed:
            continue
        out += ["", f"### {md_code(p.name)} — {md_text(p.outcome)}, {md_text(_kind_words(p))}", ""]
        out += [f"- {md_code(x)}" for x in p.facts]
        if p.interdiff:
            out += [
                "",
                "Only the added/removed lines that changed (old patch → new patch):",
                "",
                *md_fence(list(p.interdiff), "diff"),
            ]
        for v in p.views:
            if v.new is None:
                continue
            out += [
                "",
                f"New hunk in {md_code(v.file)} ({_view_word(v)}):",
                "",
                # An empty context line is written empty, never as a lone space.
                *md_fence([x if x.strip() else "" for x in v.new.splitlines()], "diff"),
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
                "hunks_dropped": p.dropped,
                "accepted": list(p.accepted),
                "facts": list(p.facts),
                "drift": list(p.drift),
                "hunks": [h.to_doc() for h in p.hunks],
                "interdiff": list(p.interdiff),
                "anchored": p.anchored,
                "evidence": None if p.evidence is None else dict(p.evidence),
                "hints": list(p.hints),
                "new_hunks": [
                    {
                        "file": v.file,
                        "status": v.status,
                        "old": v.old,
                        "new": v.new,
                        "drift": list(v.drift),
                        "touched_by": list(v.touched_by),
                        "shifted": v.shifted,
                        "method": v.method,
                    }
                    for v in p.views
                ],
            }
            for p in r.patches
        ],
        "subjects": dict(r.subjects),
        "needs_review": list(r.needs_review),
        "stale": list(r.stale),
        "exec": [
            {"command": c, "ok": ok, "code": code, "patch": patch, "note": note}
            for c, ok, code, patch, note in r.execs
        ],
    }
    return json_text(doc) + "\n"


def _e(text: str) -> str:
    return html.escape(shown(text), quote=True)


_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """A line of the report's words in HTML: escaped, its `code spans` as <code>."""
    return _CODE.sub(r"<code>\1</code>", _e(text))


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:80em;padding:0 1em;color:#1f2328}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #d0d7de;padding:.2em .5em;
text-align:left;vertical-align:top}code,pre,.sbs td{font:12px/1.4 ui-monospace,monospace}
.sbs{width:100%;table-layout:fixed}.sbs td{white-space:pre-wrap;word-break:break-all;border:0;
border-right:1px solid #d0d7de}.sbs .ln{width:1.2em;color:#656d76}.del{background:#ffebe9}
.add{background:#dafbe1}.chg{background:#fff8c5}.none{background:#f6f8fa}
.outcome{font-weight:600}.substantive{color:#9a6700}.removed{color:#656d76}
ul.drift{margin:.3em 0 1em;padding-left:1.4em}
""".strip()


def _side_by_side(v: HunkView) -> list[str]:
    """Old and new hunk in two columns, lines aligned; changed lines marked."""
    old = (v.old or "").splitlines()
    new = (v.new or "").splitlines()
    rows: list[tuple[str, str, str]] = []  # (old line, new line, class)
    for tag, i1, i2, j1, j2 in bounded.opcodes(old, new):  # too long: a plain layout
        if tag == "equal":
            rows += [(a, a, "") for a in old[i1:i2]]
            continue
        left, right = old[i1:i2], new[j1:j2]
        for k in range(max(len(left), len(right))):
            a = left[k] if k < len(left) else None
            b = right[k] if k < len(right) else None
            rows.append(
                (
                    "" if a is None else a,
                    "" if b is None else b,
                    "del" if b is None else "add" if a is None else "chg",
                )
            )
    out = [
        '<table class="sbs"><colgroup><col><col></colgroup>',
        f"<thead><tr><th>old patch{'' if v.old is not None else ' (no such hunk)'}</th>"
        f"<th>new patch{'' if v.new is not None else ' (hunk removed)'}</th></tr></thead><tbody>",
    ]
    for a, b, cls in rows:
        left_cls = "none" if v.old is None else ("del" if cls in ("del", "chg") else "")
        right_cls = "none" if v.new is None else ("add" if cls in ("add", "chg") else "")
        out.append(
            f'<tr class="{cls or "same"}"><td class="{left_cls}">{_e(a)}</td>'
            f'<td class="{right_cls}">{_e(b)}</td></tr>'
        )
    out.append("</tbody></table>")
    return out


def to_html(r: Review) -> str:
    """One self-contained page: inline style, no scripts, no links to fetch, every text
    from a patch, a name or an upstream subject escaped (and a Content-Security-Policy
    that forbids scripts and loads, should any markup ever slip through)."""
    title = f"patchq rebase {r.base[:12]} → {r.onto[:12]}" + (
        f" ({r.onto_ref})" if r.onto_ref else ""
    )
    counts = _counts(r)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p id="summary">{_e(", ".join(f"{n} {k}" for k, n in counts.items()))}</p>',
        *(f'<p class="stale"><strong>Stale:</strong> {_inline(x)}</p>' for x in r.stale),
        *(
            [
                '<p id="review">Needs a reviewer\'s eye: '
                + ", ".join(f"<code>{_e(n)}</code>" for n in r.needs_review)
                + "</p>"
            ]
            if r.needs_review
            else []
        ),
        '<table id="patches"><thead><tr><th>patch</th><th>outcome</th><th>change</th>'
        "<th>hunks moved</th><th>upstream commits</th></tr></thead><tbody>",
    ]
    for p in r.patches:
        drift = "<br>".join(_e(_commit(c, r.subjects)) for c in p.drift)
        out.append(
            f'<tr><td><a href="#{_e(_anchor(p.name))}"><code>{_e(p.name)}</code></a></td>'
            f'<td class="outcome">{_e(p.outcome)}</td><td class="{_e(p.kind)}">{_e(p.kind)}</td>'
            f"<td>{p.moved}</td><td>{drift}</td></tr>"
        )
    out.append("</tbody></table>")
    if r.execs:
        out.append(
            '<ul id="exec">'
            + "".join(f"<li><code>{_e(_run_line(x))}</code></li>" for x in r.execs)
            + "</ul>"
        )
    for p in r.patches:
        if not p.detailed:
            continue
        out.append(
            f'<section class="patch" id="{_e(_anchor(p.name))}">'
            f"<h2><code>{_e(p.name)}</code> — {_e(p.outcome)}, "
            f'<span class="{_e(p.kind)}">{_e(_kind_words(p))}</span></h2>'
        )
        if p.facts:
            out.append(
                '<ul class="facts">' + "".join(f"<li>{_inline(n)}</li>" for n in p.facts) + "</ul>"
            )
        if p.interdiff:
            # Each line escaped alone: `_e` of the joined text would show its newlines
            # as `\n` and the interdiff as one line.
            out.append('<pre class="interdiff">' + "\n".join(map(_e, p.interdiff)) + "</pre>")
        for v in p.views:
            out.append(f'<div class="hunk"><h3><code>{_e(v.file)}</code>: {_e(_view_word(v))}</h3>')
            out += _view_commits(v, r.subjects)
            out += _side_by_side(v)
            out.append("</div>")
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _view_commits(v: HunkView, subjects: Mapping[str, str]) -> list[str]:
    """The upstream commits behind a hunk on the HTML page: those that changed its lines
    or context by name, those that only shifted it as a count."""
    lead = v.touched_by if v.touched_by or v.shifted else v.drift
    out = []
    if lead:
        out.append(
            '<p>upstream commits that changed its lines or context:</p><ul class="drift">'
            + "".join(f"<li>{_e(_commit(c, subjects))}</li>" for c in lead)
            + "</ul>"
        )
    if v.shifted:
        out.append(f"<p>shifted by {_e(plural(v.shifted, 'upstream commit'))}</p>")
    return out


def _anchor(name: str) -> str:
    return "patch-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in name)


def render(r: Review, fmt: str) -> str:
    return {"text": to_text, "md": to_markdown, "json": to_json, "html": to_html}[fmt](r)
