"""Every user message and every JSON document, built from the results commands return.

One function a result kind. Each returns what to show as `Item`s, in order: a `Line`
for stdout (data for scripts) or stderr (a diagnostic for people), a `Doc` (a JSON
document, stdout), or `Raw` text or bytes written as they are. Nothing here prints,
reads the terminal or decides an exit code: `cli/output.show` prints, and each result
carries its own `exit_code` (and `problem`, where a run can stop short).

Colour is named, not applied: a `Line` may ask for its first `span` characters in a
colour, and `output.show` paints them only when that stream is a terminal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patchq.core import tiers
from patchq.core.errors import PatchqError
from patchq.core.lock import placement_text
from patchq.core.records import HunkOutcome
from patchq.core.series import Entry
from patchq.core.status import REVIEWABLE, Outcome
from patchq.core.status import Status as Word
from patchq.core.text import bounded
from patchq.core.trust import Configured
from patchq.core.words import plural
from patchq.store.statedir import recovery_verb

if TYPE_CHECKING:
    from patchq.commands.apply import ApplyOutcome
    from patchq.commands.delete import DeleteOutcome
    from patchq.commands.fold import FoldOutcome
    from patchq.commands.guard import GuardOutcome
    from patchq.commands.header import HeaderOutcome
    from patchq.commands.importing import ImportOutcome
    from patchq.commands.init import InitOutcome
    from patchq.commands.lint import LintOutcome
    from patchq.commands.new import NewOutcome
    from patchq.commands.push import PushAbortOutcome
    from patchq.commands.queries import RebaseView, SeriesView, Status
    from patchq.commands.recover import RecoverOutcome
    from patchq.commands.refresh import RefreshOutcome
    from patchq.commands.rename import RenameOutcome
    from patchq.commands.report import ReportOutcome
    from patchq.commands.trust import TrustOutcome
    from patchq.commands.undo import UndoOutcome
    from patchq.commands.verify import VerifyOutcome
    from patchq.core.records import ExecRun
    from patchq.rebase.check import CheckOutcome, DryRunOutcome
    from patchq.rebase.outcome import AbortOutcome, RebaseOutcome
    from patchq.rebase.reorder import ReorderOutcome
    from patchq.rebase.replay import PatchCheck
    from patchq.stack.apply import Failure, PatchResult
    from patchq.stack.moves import Laddered, MoveOutcome, PushStop


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


def _word(text: str, colour: str, rest: str, err: bool) -> Line:
    return Line(text + rest, err, colour, len(text))


# --- words and pieces shared by several results -------------------------------------

_APPLY_COLOUR = {"exact": "green", "offset": "yellow", "fuzz": "yellow"}
_CHECK_COLOUR = {
    "clean": "green",
    "offset": "yellow",
    "fuzz": "yellow",
    "merge": "yellow",
    "upstreamed": "green",
}


def _counts(statuses: Sequence[str]) -> str:
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
    return _word(f"{p.status:>6}", _APPLY_COLOUR.get(p.status, "red"), f" {p.name}{moved(p)}", True)


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


# --- the results, one function each --------------------------------------------------


def error(e: PatchqError) -> Rendered:
    """An expected failure: its one stderr line."""
    return (info(bounded(f"patchq: {e.line()}")),)


def unavailable(went_without: dict[str, str]) -> Rendered:
    """The evidence a command went without, git missing an object of the upstream range."""
    objects = ", ".join(dict.fromkeys(o for o in went_without.values() if o))
    return (
        info(
            "patchq: warning: git could not read "
            + (f"object {objects}" if objects else "an object")
            + " of the upstream range (a partial or shallow clone?), so this run went "
            "without " + "; ".join(went_without) + " — `git fetch --unshallow` (or a full "
            "clone) brings it back"
        ),
    )


def interrupted() -> Rendered:
    return (info("patchq: interrupted"),)


def internal_error(e: Exception, where: str) -> Rendered:
    """A failure patchq did not expect: one line naming it and where, asking for a report."""
    return (
        info(f"patchq: internal error: {type(e).__name__}: {e} (at {where}) — please report it"),
    )


def names(items: Sequence[str]) -> Rendered:
    """A list for scripts, one a line: patches (`series`, `applied`, …) or files."""
    return tuple(data(n) for n in items)


def series_marks(marks: Sequence[tuple[str, Entry]]) -> Rendered:
    """`series -v`: `= 0002.patch #sm120` — the mark, the name, its guards."""
    out = []
    for mark, e in marks:
        guard_text = (" " + " ".join(f"#{g}" for g in e.guards)) if e.guards else ""
        out.append(data(f"{mark} {e.name}{guard_text}"))
    return tuple(out)


def rebase_json(v: RebaseView | None) -> dict[str, Any] | None:
    """A rebase in progress: where from and onto, what was replayed, where it stopped."""
    if v is None:
        return None
    return {
        "branch": v.branch,
        "from": v.old_base,
        "onto": v.onto,
        "onto_ref": v.onto_ref,
        "replayed": [{"name": n, "outcome": o} for n, o in v.replayed],
        "stopped": None
        if v.stopped is None
        else {
            "name": v.stopped,
            "files": list(v.files),
            "proposals": [
                {"file": f, "line": line, "hunk": i + 1, "method": m, "evidence": why}
                for f, line, i, m, why in v.proposals
            ],
            "rewritten": None
            if v.rewritten is None
            else {
                "commits": list(v.rewritten[0]),
                "added_present": v.rewritten[1],
                "drop": "patchq rebase --skip",
            },
        },
        "todo": list(v.todo),
        "reorder": None if v.reorder is None else {"verb": v.reorder[0], "name": v.reorder[1]},
    }


def series_view(out: SeriesView, as_json: bool = False, verbose: bool = False) -> Rendered:
    """`series -v` (marks; during a rebase, a note on stderr saying what they mean) and
    `series --json` (each patch's state and guards, and the rebase in progress)."""
    from patchq.commands.queries import MARK_STATES, REBASE_STATES

    if as_json:
        outcomes = dict(out.rebase.replayed) if out.rebase else {}
        states = REBASE_STATES if out.rebase else MARK_STATES
        patches = []
        for mark, e in out.marks:
            doc: dict[str, Any] = {"name": e.name, "state": states[mark], "guards": list(e.guards)}
            if e.name in outcomes:
                doc["outcome"] = outcomes[e.name or ""]
            patches.append(doc)
        return (Doc({"patches": patches, "rebase": rebase_json(out.rebase)}),)
    if not verbose:
        return names(tuple(e.name or "" for _, e in out.marks))
    note: tuple[Item, ...] = ()
    if out.rebase is not None:
        note = (
            info(
                f"rebase in progress onto {out.rebase.onto[:12]} ({out.rebase.onto_ref}): "
                "+ replayed, - upstreamed or dropped, ! stopped at, blank still to come"
            ),
        )
    return note + series_marks(out.marks)


def _proposal_lines(proposals: Sequence[tuple[str, int, int, str, str]]) -> list[Item]:
    """`proposed: FILE:LINE (hunk #N) by METHOD (evidence)`, one a proposed hunk."""
    return [
        data(
            f"proposed: {f}{f':{line}' if line else ''} (hunk #{i + 1}) by {m}"
            + (f" ({why})" if why else "")
        )
        for f, line, i, m, why in proposals
    ]


def _push_stop_json(stop: PushStop | None, dirty: Sequence[str]) -> dict[str, Any] | None:
    """`status --json`'s `push_stop`: where a `push --merge` stopped, whether the working
    tree still holds its merge, and for a patch fixed differently upstream the commits
    and the command that drops it."""
    if stop is None:
        return None
    return {
        "patch": stop.patch,
        "kind": stop.kind,
        "files": list(stop.files),
        "target": stop.target,
        "merge_in_tree": bool(dirty),
        "rewritten": None
        if not stop.rewritten
        else {
            "commits": [c for c, _ in stop.fixed],
            "added_present": stop.added_present,
            "drop": f"patchq delete {stop.patch}",
        },
    }


def _push_stop_lines(stop: PushStop, dirty: Sequence[str]) -> list[Item]:
    """The lines of `status` for a `push --merge` stopped at a patch: what is in the
    working tree, the way on and the way back, and each proposed hunk. The stop's commit
    holds none of the patch: a working tree with nothing beyond it lost the merge (a
    `delete` or `pop --force` saved it in a stash, and was undone since)."""
    if not dirty:
        return [
            data(
                f"stopped at {stop.patch} (push --merge), but the working tree no longer "
                "holds its merge: `git stash list` shows it if a command saved it (`git "
                "stash pop` puts it back), `patchq push --abort` gives the push up"
            )
        ]
    then = (
        "then `patchq push --continue` (takes the tree into the patch and pushes on"
        + (f" to {stop.target}" if stop.target != stop.patch else "")
        + "), or `patchq push --abort` (puts back everything as before the push)"
    )
    if stop.kind == "review":
        applied = "proposals applied" if stop.proposals else "its merge applied"
        what = f"stopped for review at {stop.patch} (push --merge): {applied}, no markers"
        lines = [data(f"{what}; check them, {then}")]
    else:
        files = ", ".join(stop.files) or "the working tree"
        what = f"stopped at {stop.patch} (push --merge): conflict markers in {files}"
        lines = [data(f"{what}; resolve them, {then}")]
    if stop.rewritten:
        from patchq.stack.moves import fixed_differently

        lines.append(data(fixed_differently(stop.patch, stop.fixed, stop.added_present)))
    return lines + _proposal_lines(stop.proposals)


def push_aborted(out: PushAbortOutcome) -> Rendered:
    """`push --abort`: the stop given up, edits saved, where the stack is now."""
    lines: list[Item] = []
    if out.saved:
        lines.append(
            info(
                f"saved your edits in stash {out.saved[:12]} (`git stash show -p {out.saved[:12]}`)"
            )
        )
    top = out.stack.top if out.stack else None
    lines.append(info(f"push aborted at {out.patch}: everything is as before the push"))
    lines.append(info(f"now at {top}" if top else "no patches applied"))
    return tuple(lines)


def _rebase_lines(v: RebaseView) -> list[Item]:
    """The lines of `status` for a rebase in progress: onto what, how far, what is left."""
    counts = _counts([o for _, o in v.replayed])
    what = (
        f"{v.reorder[0]} {v.reorder[1]} on {v.branch} (replayed in the new order): "
        if v.reorder is not None
        else f"rebase of {v.branch} onto {v.onto[:12]} ({v.onto_ref}) from {v.old_base[:12]}: "
    )
    lines: list[Item] = [
        data(
            what
            + f"{len(v.replayed)} replayed, "
            + (f"stopped at {v.stopped}, " if v.stopped else "")
            + f"{len(v.todo)} to come"
        )
    ]
    if v.replayed:
        lines.append(data(f"replayed: {counts}; last {v.replayed[-1][0]}"))
    if v.stopped and (v.files or not (v.proposals or v.rewritten)):
        files = ", ".join(v.files) or "its files"
        lines.append(data(f"stopped at: {v.stopped} (conflict in {files})"))
    elif v.stopped and v.proposals:
        lines.append(data(f"stopped at: {v.stopped} (for review: proposals applied, no markers)"))
    elif v.stopped:
        lines.append(data(f"stopped at: {v.stopped} (for review: its merge applied, no markers)"))
    lines += _proposal_lines(v.proposals)
    if v.rewritten is not None and v.reorder is not None:
        lines.append(data(v.shifted or "every line it changes reads differently in the new order"))
    elif v.rewritten is not None:
        commits, present = v.rewritten
        who = ", ".join(x[:12] for x in commits[:3]) + (" …" if len(commits) > 3 else "")
        lines.append(
            data(
                "fixed differently upstream? upstream changed every line it changes"
                + (f" ({who})" if who else "")
                + ("; its added lines are already there near the spot" if present else "")
                + ": `patchq rebase --skip` drops it"
            )
        )
    if v.todo:
        lines.append(
            data(
                f"to come: {v.todo[0]}"
                + (f" and {len(v.todo) - 1} more" if len(v.todo) > 1 else "")
            )
        )
    return lines


def init(out: InitOutcome) -> Rendered:
    if out.adopted:
        skipped = tuple(info(f"skipped {s.source}: {s.reason}") for s in out.skipped)
        return (
            *skipped,
            info(
                f"initialised a patch queue in {out.root} around the "
                f"{plural(len(out.adopted), 'patch')} already in patches/, in name order "
                "(as a build of that folder applies them; edit series to change it)"
            ),
        )
    if out.kept is None:
        return (info(f"initialised an empty patch queue in {out.root}"),)
    return (
        info(
            f"initialised a patch queue in {out.root} around its series "
            f"({plural(out.kept, 'patch')}, kept as it is)"
        ),
    )


def recovered(out: RecoverOutcome) -> Rendered:
    lines: list[Item] = []
    lines.extend(_removed_lock(out.removed_lock))
    lines.extend(_saved_on_the_way(out.saved))
    if out.runs:
        lines.append(info(f"interrupted `patchq {out.op}`: {out.runs}"))
        return tuple(lines)
    done = "finished" if out.mode == "continue" else "undid"
    lines.append(info(f"{done} the interrupted `patchq {out.op}`"))
    return tuple(lines)


def imported(out: ImportOutcome, as_json: bool = False) -> Rendered:
    if as_json:
        return (
            Doc(
                {
                    "imported": [i.name for i in out.imported],
                    "skipped": [
                        {"source": s.source, "subject": s.subject, "reason": s.reason}
                        for s in out.skipped
                    ],
                }
            ),
        )
    n = len(out.imported)
    return (
        *(data(i.name) for i in out.imported),
        *(
            info(f"skipped {s.source}: {s.subject} ({s.reason})")
            if s.subject
            else info(f"skipped {s.source}: {s.reason}")
            for s in out.skipped
        ),
        info(f"imported {plural(n, 'patch')}"),
    )


def _set_aside(stash: str | None) -> Rendered:
    """The stash `--force` put untracked or ignored files in the way into."""
    if not stash:
        return ()
    return (
        info(
            f"saved the untracked or ignored files in the way in stash {stash[:12]} "
            f"(`git stash show --include-untracked {stash[:12]}`)"
        ),
    )


def applied(out: ApplyOutcome, as_json: bool = False, verbose: bool = False) -> Rendered:
    """`apply`: the patches that did not apply exactly (all with `verbose`) and a summary."""
    res = out.result
    if as_json:
        return (
            *_set_aside(out.saved),
            Doc(
                {
                    "base": res.base,
                    "head": res.head,
                    "tree": res.tree,
                    "branch": out.branch,
                    "patches": [patch_json(p) for p in res.patches],
                }
            ),
        )
    shown: list[Item] = []
    for p in res.patches:
        if verbose or p.status != Word.EXACT:
            shown.append(applied_line(p))
        if verbose:
            shown += notes_lines(p.normalisations, True)
    summary = _counts([p.status for p in res.patches])
    return (
        *_set_aside(out.saved),
        *shown,
        info(
            f"applied {plural(len(res.patches), 'patch')} onto {res.base[:12]} "
            f"({summary or 'none'}); "
            f"{out.branch} is at {res.head[:12]}"
        ),
    )


def verified(out: VerifyOutcome, as_json: bool = False) -> Rendered:
    if as_json:
        return (
            Doc(
                {
                    "ok": out.ok,
                    "expected_tree": out.expected_tree,
                    "tree": out.tree,
                    "mode": out.mode,
                    "problems": list(out.problems),
                }
            ),
        )
    what = "the locked files" if out.mode == "files" else "series.lock"
    return (
        *(info(p) for p in out.problems),
        info(f"verified: the series reproduces {what}" if out.ok else "differs from series.lock"),
        *((info(out.hint),) if out.hint else ()),
    )


def moved_stack(out: MoveOutcome, as_json: bool = False) -> Rendered:
    """`push`, `pop`, `goto`: the stash that saved work, each patch pushed (how it
    applied) or popped, and where the stack is now — unless the move stopped short, when
    its `problem` is the last word (the CLI raises it)."""
    lines: list[Item] = []
    if out.saved:
        lines.append(
            info(
                f"saved your uncommitted changes in stash {out.saved[:12]} "
                f"(`git stash show -p {out.saved[:12]}`)"
            )
        )
    lines.extend(_set_aside(out.aside))
    if as_json:
        lines.append(
            Doc(
                {
                    "applied": list(out.stack.applied),
                    "pushed": [patch_json(p) for p in out.pushed],
                    "failure": failure_json(out.failure),
                    "laddered": [
                        {
                            "name": x.name,
                            "methods": list(x.methods),
                            "accepted": list(x.accepted),
                            "proposals": [
                                {"file": f, "line": line, "hunk": i + 1, "method": m}
                                | {"evidence": why}
                                for f, line, i, m, why in x.proposals
                            ],
                            "review": x.review,
                        }
                        for x in out.laddered
                    ],
                }
            )
        )
        return tuple(lines)
    # Each patch pushed in stack order: as it applied, or the ladder's methods.
    shown: dict[str, Item] = {p.name: applied_line(p) for p in out.pushed}
    shown |= {x.name: _laddered_line(x) for x in out.laddered if not x.review}
    lines += [shown[n] for n in out.stack.applied if n in shown]
    lines += [info(f"popped {name}") for name in out.popped]
    if out.problem is None:
        lines.append(info(f"now at {out.stack.top}" if out.stack.top else "no patches applied"))
    return tuple(lines)


def _laddered_line(x: Laddered) -> Item:
    """`merged p.patch (word; accepted proposal: word)`: a patch `push --merge` placed
    with the rebase's ladder."""
    methods = ", ".join(dict.fromkeys(x.methods))
    taken = f"; accepted proposal: {', '.join(x.accepted)}" if x.accepted else ""
    return info(f"{'merged':>6} {x.name} ({methods}{taken})")


def new(out: NewOutcome) -> Rendered:
    return (info(f"now at {out.name} (empty); edit files and run `patchq refresh`"),)


def refreshed(out: RefreshOutcome) -> Rendered:
    if out.from_file:
        return (info(f"re-applied {out.name} from its file; the working tree follows"),)
    lines = [info(f"refreshed {out.name}" if out.changed else f"{out.name} is unchanged")]
    if out.untracked:
        lines.append(
            info(
                f"not included: {plural(len(out.untracked), 'untracked file')}, "
                + (
                    f"{out.untracked[0]} (`git add` it to include)"
                    if len(out.untracked) == 1
                    else f"e.g. {out.untracked[0]} (`git add` them to include)"
                )
            )
        )
    if out.relocked:
        lines.append(info("series.lock (and the last rebase's review) brought up to date"))
    if out.lock_note:
        lines.append(info(out.lock_note))
    return tuple(lines)


def deleted(out: DeleteOutcome) -> Rendered:
    kept = "" if out.removed_file else " (file kept)"
    saved = (
        (
            info(
                f"saved the working tree (the stopped push's merge of {out.name}, and any edit "
                f"since) in stash {out.saved[:12]} (`git stash show -p {out.saved[:12]}`)"
            ),
        )
        if out.saved
        else ()
    )
    popped = (info(f"popped {out.name}"),) if out.popped else ()
    note = (info(f"patchq: {out.note}"),) if out.note else ()
    return (*saved, *popped, info(f"deleted {out.name} from the series{kept}"), *note)


def renamed(out: RenameOutcome) -> Rendered:
    return (info(f"renamed {out.old} to {out.new}"),)


def reordered(out: ReorderOutcome) -> Rendered:
    """`sink`/`float`: where the patch went, the patches refreshed, the stack now."""
    if out.stopped is not None:
        return ()  # stopped at a conflict: its `problem` is what the CLI reports
    place = out.place
    if not out.moved:
        if place is not None and place.anchor is not None:
            where = f"{'after' if place.after else 'before'} {place.anchor}"
            return (info(f"{out.name} is already {where}"),)
        end = "bottom" if out.verb == "sink" else "top"
        return (info(f"{out.name} is already at the {end} of the series"),)
    refreshed = [info(f" refreshed {n}") for n in out.refreshed]
    anchor = (
        ("after " if place.after else "before ") + place.anchor
        if place is not None and place.anchor is not None
        else ""
    )
    note = (info(out.lock_note),) if out.lock_note else ()
    return (
        *_moved(out.verb, out.name, out.stack.top, out.unapplied, between=refreshed, anchor=anchor),
        *note,
    )


def _moved(
    verb: str,
    name: str,
    top: str | None,
    unapplied: bool,
    *,
    between: Sequence[Item] = (),
    dropped: bool = False,
    anchor: str = "",
) -> list[Item]:
    """The last word of a sink, float or move (done at once, or after a stop): where the
    patch went (or that it was dropped), then `between`, then where the stack is now."""
    end = "bottom" if verb == "sink" else "top"
    first = (
        f"{name} was dropped, not moved"
        if dropped
        else f"moved {name}" + (f" {anchor}" if anchor else "")
        if verb == "move"
        else f"{'sank' if verb == 'sink' else 'floated'} {name} to the {end} of the series"
    )
    lines = [info(first), *between]
    if unapplied:
        lines.append(
            info(f"{name} is unapplied now: patches before it are not applied (`patchq push -a`)")
        )
    lines.append(info(f"now at {top}" if top else "no patches applied"))
    return lines


def guarded(out: GuardOutcome) -> Rendered:
    """`guard`: the patch's guards (on stdout, for scripts), what changed, and whether it
    is in the active series now."""
    shown = " ".join(f"#{g}" for g in out.after) or "(no guards)"
    lines: list[Item] = [data(f"{out.name} {shown}")]
    if out.changed:
        was = " ".join(f"#{g}" for g in out.before) or "no guards"
        state = "active" if out.active else "guarded out"
        lines.append(info(f"set {out.name}'s guards (was {was}); it is {state} now"))
    if out.lock_note:
        lines.append(info(out.lock_note))
    return tuple(lines)


def undone(out: UndoOutcome) -> Rendered:
    """`undo`: what was undone, and where the stack is now."""
    what = f"`patchq {out.op}`" + (f" ({out.reason})" if out.reason else "")
    top = out.stack.top if out.stack else None
    return (
        info(f"undid {what}"),
        info(f"now at {top}" if top else "no patches applied"),
    )


def folded(out: FoldOutcome) -> Rendered:
    return (info(f"folded {out.name} into {out.into}"),)


def header(out: HeaderOutcome, edited: bool) -> Rendered:
    """The header as it is (nothing after an edit: the editor showed it)."""
    return () if edited else (Raw(out.text),)


def diff(patch: bytes) -> Rendered:
    return (Raw(patch),)


def status(st: Status, as_json: bool = False) -> Rendered:
    from patchq.store import rebasestate

    if as_json:
        return (
            Doc(
                {
                    "branch": st.branch,
                    "base": st.base,
                    "applied": list(st.applied),
                    "unapplied": list(st.unapplied),
                    "guards": list(st.guards),
                    "dirty": list(st.dirty),
                    "on_branch": st.on_branch,
                    "operation": st.operation,
                    "rebase": rebase_json(st.rebase),
                    "exec": [rebasestate.exec_doc(x) for x in st.execs],
                    "placed": [{"patch": name, **x} for name, x in st.placed],
                    "changed": [
                        {"patch": name, "lock": lock, "commit": commit}
                        for name, lock, commit in st.changed
                    ],
                    "review": None
                    if st.stop is None or st.stop.kind != "review"
                    else {
                        "patch": st.stop.patch,
                        "proposals": [
                            {"file": f, "line": line, "hunk": i + 1, "method": m, "evidence": why}
                            for f, line, i, m, why in st.stop.proposals
                        ],
                    },
                    "push_stop": _push_stop_json(st.stop, st.dirty),
                    "unwritten": [
                        {"patch": name, "methods": list(p.methods), "accepted": list(p.accepted)}
                        for name, p in st.unwritten
                    ],
                }
            ),
        )
    lines = []
    if st.rebase is not None:
        lines += _rebase_lines(st.rebase)
    elif st.branch is None:
        lines.append(data("no patches applied in this target"))
    else:
        where = "" if st.on_branch else " (not checked out)"
        lines.append(
            data(
                f"stack {st.branch}{where} on {str(st.base)[:12]}: "
                f"{len(st.applied)} applied, {len(st.unapplied)} unapplied"
            )
        )
        if st.applied:
            lines.append(data(f"top: {st.applied[-1]}"))
        if st.stop is not None:
            lines += _push_stop_lines(st.stop, st.dirty)
    lines.append(data(f"guards: {' '.join(st.guards) or '(none)'}"))
    if st.dirty:
        more = f" and {len(st.dirty) - 5} more" if len(st.dirty) > 5 else ""
        what = "changes in the working tree" if st.rebase else "unrefreshed changes"
        lines.append(data(f"{what}: {', '.join(st.dirty[:5])}{more}"))
    if st.execs:
        failed = [x for x in st.execs if not x.ok]
        verdict = (
            f"{plural(len(failed), 'run')} of {len(st.execs)} failed"
            if failed
            else f"{plural(len(st.execs), 'run')} passed"
        )
        lines.append(data(f"last rebase --exec: {verdict} (series.lock)"))
        lines += exec_lines(failed[:5], err=False)
    for name, x in st.placed:
        lines.append(data(f"{name}: {placement_text(x)}"))
    for name, p in st.unwritten:
        what = (
            f"an accepted proposal ({', '.join(p.accepted)})"
            if p.accepted
            else f"a placement ({', '.join(dict.fromkeys(p.methods))})"
        )
        lines.append(
            data(
                f"{name}: its commit holds {what} that push --merge made and its file does "
                f"not yet: `patchq refresh {name}` writes it"
            )
        )
    for name, lock, commit in st.changed:
        sides = " and ".join(w for w, d in (("series.lock", lock), ("its commit", commit)) if d)
        hint = (
            "; `patchq refresh` refuses until told `--from-file` or `--from-commit`"
            if commit
            else ""
        )
        lines.append(data(f"{name}: the file differs from {sides}{hint}"))
    if st.operation and st.operation.startswith("running "):
        lines.append(
            data(f"{st.operation}: another patchq is changing the target now; wait for it")
        )
    elif st.operation and st.operation.startswith("interrupted "):
        verb = recovery_verb(st.operation.split(" ", 1)[1])
        lines.append(
            data(
                f"{st.operation}: patchq was stopped while changing the target "
                f"(`patchq {verb} --continue` to finish, `patchq {verb} --abort` to undo)"
            )
        )
    elif st.operation:
        lines.append(
            data(f"in progress: {st.operation} (`patchq {st.operation} --continue` or `--abort`)")
        )
    return tuple(lines)


def exported(n: int, where: Path) -> Rendered:
    """`export --mbox` / `--quilt`: how many patches went where."""
    return (info(f"exported {plural(n, 'patch')} to {where}"),)


def script_written(n: int, where: Path) -> Rendered:
    return (info(f"wrote {where}: applies the series to {plural(n, 'file')} of a plain folder"),)


def _check_hunks(
    p: PatchCheck, subjects: dict[str, str], accept: tuple[str, ...] = ()
) -> list[Item]:
    """The lines under one patch of `check`: upstream renames, then each hunk that is not
    clean with how it moved and the (first five) upstream commits behind it."""
    lines: list[Item] = notes_lines(p.normalisations, False)
    lines += [data(f"    {old}: renamed upstream to {new}") for old, new in p.renames]
    if p.evidence is not None:
        lines.append(data(f"    evidence: {p.evidence.said()}"))
    if p.rewritten:
        lines.append(
            data(
                "    upstream changed the lines it changes in every hunk: fixed differently "
                "upstream? (`rebase --skip` drops it)"
                + (
                    "; its added lines (or near-identical ones) are already there"
                    if p.added_present
                    else ""
                )
            )
        )
    lines += [data(f"    hint: {x}") for x in p.hints]
    for h in p.hunks:
        if h.status == Word.CLEAN:
            continue
        if h.status == Word.OFFSET:
            detail = plural(h.offset, "line", signed=True)
        elif h.status == Word.FUZZ:
            detail = f"fuzz {h.fuzz}"
        elif h.anchored:
            detail = "placed by its anchor line; review it"
        else:
            detail = h.reason
        if h.moved_to is not None and h.moved_to[2]:
            detail += f"; moved by {h.moved_to[2][:12]} {subjects.get(h.moved_to[2], '')}".rstrip()
        # (anchored says so in its detail)
        how = f" by {h.method}" if h.method in REVIEWABLE and not h.anchored else ""
        t = tiers.tier(h, p.hunks, accept)
        proposed = tiers.proposal(h, p.hunks)
        where = f" at line {h.line}" if h.line else ""
        shown = f"; {t}: {proposed}{where}" if proposed and t is not None else ""
        lines.append(
            data(
                f"    {h.file} hunk #{h.index + 1}: {h.status}{how}"
                + (f" ({detail})" if detail else "")
                + shown
            )
        )
        lines += [data(f"        {c[:12]} {subjects.get(c, '')}") for c in h.drift[:5]]
        if len(h.drift) > 5:
            lines.append(data(f"        … and {plural(len(h.drift) - 5, 'more commit')}"))
    return lines


def checked(out: CheckOutcome, as_json: bool = False) -> Rendered:
    """`check`: the drift report (DESIGN §3's JSON, or a line a patch and a summary)."""
    if as_json:
        return (
            Doc(
                {
                    "base": out.base,
                    "onto": out.onto,
                    "patches": [
                        {
                            "name": p.name,
                            "status": p.status,
                            "hunks": [
                                h.to_doc() | _tier_doc(h, p.hunks, out.accept) for h in p.hunks
                            ],
                            "normalisations": notes_json(p.normalisations),
                            "evidence": None if p.evidence is None else p.evidence.doc(),
                            "hints": list(p.hints),
                            "rewritten": {
                                "commits": list(p.drift),
                                "added_present": p.added_present,
                            }
                            if p.rewritten
                            else None,
                        }
                        for p in out.patches
                    ],
                    "commands": [c.to_doc() for c in out.commands],
                    "target": out.target,
                    "accept": list(out.accept),
                }
            ),
        )
    lines: list[Item] = [
        data(
            f"checking {plural(len(out.patches), 'patch')}: {out.base[:12]} -> {out.onto[:12]} "
            f"({out.onto_ref})"
        )
    ]
    for p in out.patches:
        lines.append(
            _word(f"{p.status:>10}", _CHECK_COLOUR.get(p.status, "red"), f" {p.name}", False)
        )
        lines += _check_hunks(p, out.subjects, out.accept)
    review = out.to_review
    lines.append(
        data(
            "summary: "
            + _counts([p.status for p in out.patches])
            # A merge that stops for review is no merge rebase makes alone: said here.
            + (
                "; for review (rebase stops there): "
                + ", ".join(review[:5])
                + (f" and {len(review) - 5} more" if len(review) > 5 else "")
                if review
                else ""
            )
        )
    )
    lines += command_lines(out.commands)
    if out.target is not None:
        lines.append(data(f"target: {out.target} (chosen by `target` in patchq.toml)"))
    return tuple(lines)


def command_lines(commands: Sequence[Configured]) -> list[Item]:
    """Each command patchq.toml names, and whether `rebase` will run it (trusted)."""
    return [
        data(
            f"command: {c.key} = `{c.command}` "
            + (
                "(trusted: rebase runs it)"
                if c.trusted
                else "(NOT trusted: rebase will not run it; `patchq trust` allows it)"
            )
        )
        for c in commands
    ]


def dry_run(out: DryRunOutcome, as_json: bool = False) -> Rendered:
    """`rebase --dry-run`: each patch's would-be outcome."""
    if as_json:
        return (
            Doc(
                {
                    "base": out.report.base,
                    "onto": out.report.onto,
                    "patches": [
                        {
                            "name": p.name,
                            "outcome": outcome,
                            "status": p.status,
                            "drift": list(p.drift),
                        }
                        for p, outcome in out.outcomes
                    ],
                }
            ),
        )
    return tuple(data(f"{outcome:>10} {p.name}") for p, outcome in out.outcomes)


def exec_starting(command: str, patch: str | None) -> Rendered:
    """The line before a run of the user's --exec command (its output goes to stderr)."""
    where = f"with {patch} applied" if patch else "on the rebased series"
    return (info(f"patchq: running `{command}` {where}"),)


def exec_lines(runs: Sequence[ExecRun], err: bool = True) -> list[Item]:
    """One line a run of the --exec command: passed or failed, the patch, the exit code."""

    lines: list[Item] = []
    for x in runs:
        word = "passed" if x.ok else "FAILED"
        where = f" with {x.patch}" if x.patch else " on the series"
        why = f"; {x.note}" if x.note else ""
        lines.append(
            _word(
                f"{word:>10}",
                "green" if x.ok else "red",
                f" `{x.command}`{where} (exit {x.code}{why})",
                err,
            )
        )
    return lines


def rebased(out: RebaseOutcome, as_json: bool = False) -> Rendered:
    """`rebase` (start, --continue, --skip): each patch's outcome, then the last word —
    unless it stopped at a conflict, whose `problem` the CLI raises."""
    from patchq.store import rebasestate

    if out.aborted:
        # --continue finished an interrupted --abort (or undo)
        from patchq.rebase.outcome import AbortOutcome

        return rebase_aborted(AbortOutcome(out.removed_lock, finished=out.aborted_op))
    if as_json:
        return (
            Doc(
                {
                    "finished": out.finished,
                    "base": out.base,
                    "onto": out.onto,
                    "patches": [rebasestate.outcome_doc(r.patch) for r in out.records],
                    "conflict": None if out.conflict is None else out.conflict.name,
                    "exec": [rebasestate.exec_doc(x) for x in out.exec_runs],
                    "untrusted": [c.to_doc() for c in out.untrusted],
                    "reorder": None
                    if out.reorder is None
                    else {"verb": out.reorder[0], "name": out.reorder[1]},
                }
            ),
        )
    lines: list[Item] = [*_removed_lock(out.removed_lock), *_saved_on_the_way(out.saved)]
    lines += [
        info(
            f"{r.patch.outcome:>10} {r.patch.name}"
            + (f" (accepted proposal: {', '.join(r.patch.accepted)})" if r.patch.accepted else "")
        )
        for r in out.records
    ]
    if out.nothing_to_do:
        lines.append(
            info(
                f"nothing changed: the series already applies exactly on {out.onto[:12]}; "
                "`patchq report` still shows the last rebase"
            )
        )
    elif out.reorder is not None and out.conflict is None:
        verb, name = out.reorder
        dropped = [r.patch.name for r in out.records if r.patch.outcome == Outcome.DROPPED]
        kept = (
            [
                info(
                    f"{plural(len(dropped), 'dropped patch', 'dropped patches')} "
                    "kept in patches/.dropped/"
                )
            ]
            if dropped
            else []
        )
        lines += _moved(verb, name, out.top, out.unapplied, between=kept, dropped=name in dropped)
        if out.note:
            lines.append(info(out.note))
    elif out.conflict is None:
        lines.append(
            info(
                f"rebased {plural(len(out.records), 'patch')} onto {out.onto[:12]}; "
                "see `patchq report`"
            )
        )
    lines += exec_lines(out.exec_runs)
    if out.conflict is None:
        lines += [
            _word(f"{'NOT RUN':>10}", "yellow", f" `{c.command}` ({c.key}: not trusted)", True)
            for c in out.untrusted
        ]
    return tuple(lines)


def _saved_on_the_way(stash: str | None) -> Rendered:
    return (
        (info(f"saved uncommitted changes found on the way in stash {stash[:12]}"),)
        if stash
        else ()
    )


def _removed_lock(path: str | None) -> Rendered:
    return (info(f"removed {path}, left by patchq's git killed with it"),) if path else ()


def rebase_aborted(out: AbortOutcome) -> Rendered:
    """`rebase --abort`, saying what it finished."""
    before = "target, series, patches and lock are as before the rebase"
    if out.runs:
        last = f"the rebase stays done; killed `rebase --exec-each`: {out.runs}"
    elif out.held:
        last = (
            f"dropped the rebase's result, held back because {out.held}; "
            "the target is as you left it"
        )
    elif out.finished and out.finished != "rebase --abort":
        last = f"finished the interrupted `patchq {out.finished}`"
    elif out.finished:
        last = f"finished the interrupted `patchq rebase --abort`: {before}"
    elif out.undid:
        last = f"undid the interrupted `patchq {out.undid}`, then aborted the rebase: {before}"
    else:
        last = "rebase aborted; target, series, patches and lock are as before"
    return (*_removed_lock(out.removed_lock), info(last))


def reported(out: ReportOutcome) -> Rendered:
    """`report`: a note on a rebase in progress, then the review or where it was written."""
    note = (info(f"patchq: {out.note}"),) if out.note else ()
    if out.written is not None:
        return (*note, info(f"wrote {out.written}"))
    return (*note, Raw(out.text))


def trusted(out: TrustOutcome, as_json: bool = False) -> Rendered:
    """`trust`: the commands marked, every mark (`--list`), or the marks removed."""
    if as_json:
        return (
            Doc(
                {
                    "action": out.action,
                    "file": out.file,
                    "root": out.root,
                    "marks": [m.to_doc() for m in out.marks],
                    "configured": [c.to_doc() for c in out.configured],
                }
            ),
        )
    if out.action == "trusted":
        if not out.configured:
            return (info("patchq.toml names no command (exec, exec-each): nothing to trust"),)
        return (
            *(data(f"trusted {c.key} = `{c.command}`") for c in out.configured),
            info(
                f"marked for {out.root} in {out.file}; a change to the text needs "
                "`patchq trust` again"
            ),
        )
    if out.action == "revoked":
        if not out.marks:
            return (info(f"no trusted commands for {out.root}"),)
        return (
            *(data(f"revoked {m.key} = `{m.command}`") for m in out.marks),
            info(f"{plural(len(out.marks), 'mark')} removed for {out.root} from {out.file}"),
        )
    now = {(c.key, c.command) for c in out.configured if c.trusted}
    lines: list[Item] = []
    for m in out.marks:
        stale = m.root == out.root and (m.key, m.command) not in now
        lines.append(
            data(
                f"{m.root}: {m.key} = `{m.command}`"
                + (" (stale: patchq.toml names another command now)" if stale else "")
            )
        )
    lines += [
        data(f"{out.root}: {c.key} = `{c.command}` (NOT trusted: `patchq trust` allows it)")
        for c in out.configured
        if not c.trusted
    ]
    return tuple(lines) if lines else (info(f"no trusted commands ({out.file})"),)


def linted(out: LintOutcome, as_json: bool = False) -> Rendered:
    if as_json:
        return (
            Doc(
                {
                    "findings": [
                        {"level": f.level, "where": f.where, "what": f.what} for f in out.findings
                    ]
                }
            ),
        )
    if not out.findings:
        return (info("lint: no findings"),)
    return tuple(data(f.line()) for f in out.findings)


def _tier_doc(
    h: HunkOutcome, hunks: Sequence[HunkOutcome], accept: Sequence[str]
) -> dict[str, object]:
    """A hunk's `tier`, and for a proposal its method, that method's measured precision
    and its evidence, as the stop says it (`proposal`; null for a hunk no proposed
    method placed)."""
    method = tiers.proposal(h, hunks)
    proposal = (
        {
            "method": method,
            "precision": tiers.measured(method),
            "evidence": tiers.evidence(h, method),
        }
        if method
        else None
    )
    return {"tier": tiers.tier(h, hunks, accept), "proposal": proposal}
