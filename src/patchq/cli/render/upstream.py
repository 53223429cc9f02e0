"""The results of the commands that take the series across an upstream move: `check`
(each patch's and hunk's fate, the trust of each method), a rebase's dry run, the
user's `--exec` runs, `rebase` itself, its abort, and `report`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from patchq.cli.render.edits import moved_lines
from patchq.cli.render.items import (
    Doc,
    Item,
    Raw,
    Rendered,
    coloured,
    data,
    info,
    notes_json,
    notes_lines,
    removed_lock,
    saved_on_the_way,
    tally,
)
from patchq.core import tiers
from patchq.core.records import HunkOutcome
from patchq.core.status import REVIEWABLE, Outcome
from patchq.core.status import Status as Word
from patchq.core.trust import Configured
from patchq.core.words import plural

if TYPE_CHECKING:
    from patchq.commands.report import ReportOutcome
    from patchq.commands.watch import WatchOutcome
    from patchq.core.records import ExecRun
    from patchq.rebase.check import CheckOutcome, DryRunOutcome
    from patchq.rebase.outcome import AbortOutcome, RebaseOutcome
    from patchq.rebase.replay import PatchCheck


_CHECK_COLOUR = {
    "clean": "green",
    "offset": "yellow",
    "fuzz": "yellow",
    "merge": "yellow",
    "upstreamed": "green",
}


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


def _check_doc(out: CheckOutcome) -> dict[str, Any]:
    """The JSON document of one check (docs/json.md)."""
    return {
        "base": out.base,
        "onto": out.onto,
        "patches": [
            {
                "name": p.name,
                "status": p.status,
                "hunks": [h.to_doc() | _tier_doc(h, p.hunks, out.accept) for h in p.hunks],
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


def checked_refs(reports: Sequence[CheckOutcome], as_json: bool = False) -> Rendered:
    """`check` against one ref (its report as ever) or several: each report in turn, or
    one document `{"refs": [...]}`, each report with its `onto_ref`."""
    if len(reports) == 1:
        return checked(reports[0], as_json)
    if as_json:
        return (Doc({"refs": [_check_doc(r) | {"onto_ref": r.onto_ref} for r in reports]}),)
    out: list[Item] = []
    for i, r in enumerate(reports):
        out += ([data("")] if i else []) + list(checked(r))
    return tuple(out)


def watched(w: WatchOutcome, as_json: bool = False) -> Rendered:
    """`check --watch`: what is new, what is fixed, and how many are still as recorded."""
    if as_json:
        return (
            Doc(
                {
                    "refs": list(w.refs),
                    "new": [c.to_doc() for c in w.new],
                    "fixed": [c.to_doc() for c in w.fixed],
                    "still": w.still,
                    "state": w.path,
                }
            ),
        )
    lines: list[Item] = []
    for c in w.new:
        was = f" (was {c.before})" if c.before else ""
        lines.append(
            coloured(
                "new",
                "red" if c.now in ("conflict", "missing", "review") else "yellow",
                f"    {c.ref}  {c.patch}: {c.now}{was}",
                False,
            )
        )
    for c in w.fixed:
        lines.append(coloured("fixed", "green", f"  {c.ref}  {c.patch} (was {c.before})", False))
    still = f"; {plural(w.still, 'finding')} still as the last watch recorded" if w.still else ""
    if not w.new and not w.fixed:
        lines.append(data(f"nothing new on {', '.join(w.refs)}{still}"))
    elif still:
        lines.append(data(still[2:]))
    return tuple(lines)


def checked(out: CheckOutcome, as_json: bool = False) -> Rendered:
    """`check`: the drift report (DESIGN §3's JSON, or a line a patch and a summary)."""
    if as_json:
        return (Doc(_check_doc(out)),)
    lines: list[Item] = [
        data(
            f"checking {plural(len(out.patches), 'patch')}: {out.base[:12]} -> {out.onto[:12]} "
            f"({out.onto_ref})"
        )
    ]
    for p in out.patches:
        lines.append(
            coloured(f"{p.status:>10}", _CHECK_COLOUR.get(p.status, "red"), f" {p.name}", False)
        )
        lines += _check_hunks(p, out.subjects, out.accept)
    review = out.to_review
    lines.append(
        data(
            "summary: "
            + tally([p.status for p in out.patches])
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
            coloured(
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
    behind = (
        (info(f"patchq: {out.behind[0]} is {plural(out.behind[1], 'commit')} behind the base"),)
        if out.behind
        else ()
    )
    if as_json:
        return (
            *behind,
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
                    "written": list(out.written),
                }
            ),
        )
    lines: list[Item] = [
        *behind,
        *removed_lock(out.removed_lock),
        *saved_on_the_way(out.saved),
    ]
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
        lines += moved_lines(
            verb, name, out.top, out.unapplied, between=kept, dropped=name in dropped
        )
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
            coloured(f"{'NOT RUN':>10}", "yellow", f" `{c.command}` ({c.key}: not trusted)", True)
            for c in out.untrusted
        ]
    return tuple(lines)


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
    return (*removed_lock(out.removed_lock), info(last))


def reported(out: ReportOutcome) -> Rendered:
    """`report`: a note on a rebase in progress, then the review or where it was written."""
    note = (info(f"patchq: {out.note}"),) if out.note else ()
    if out.written is not None:
        return (*note, info(f"wrote {out.written}"))
    return (*note, Raw(out.text))


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
