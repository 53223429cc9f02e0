"""The results of the commands that list and move the applied stack: the series,
`apply`, `verify`, `push`/`pop`/`goto`, an aborted push and `undo`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from patchq.cli.render.items import (
    Doc,
    Item,
    Rendered,
    applied_line,
    data,
    failure_json,
    info,
    notes_lines,
    patch_json,
    set_aside,
    tally,
)
from patchq.cli.render.state import rebase_json
from patchq.core.series import Entry
from patchq.core.status import Status as Word
from patchq.core.words import plural

if TYPE_CHECKING:
    from patchq.commands.apply import ApplyOutcome
    from patchq.commands.push import PushAbortOutcome
    from patchq.commands.queries import SeriesView
    from patchq.commands.undo import UndoOutcome
    from patchq.commands.verify import VerifyOutcome
    from patchq.stack.moves import Laddered, MoveOutcome


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


_UNPINNED = {
    "edited": "differs from its hash in series.lock",
    "added": "is not in series.lock",
    "gone": "is in series.lock but no longer applied",
}


def unpinned_lines(out: ApplyOutcome) -> list[Item]:
    """One line a patch that differs from series.lock, which was left as it was."""
    lines: list[Item] = []
    for n, how in out.unpinned:
        what = _UNPINNED.get(how, "the result differs from series.lock")
        where = f"patches/{n}: " if n else ""
        lines.append(info(f"patchq: {where}{what}; applied, series.lock left as reviewed"))
    if out.unpinned:
        lines.append(
            info(
                "patchq: `patchq verify` says what differs; "
                "`patchq apply --pin` pins the series as it is"
            )
        )
    return lines


def applied(out: ApplyOutcome, as_json: bool = False, verbose: bool = False) -> Rendered:
    """`apply`: the patches that did not apply exactly (all with `verbose`) and a summary."""
    res = out.result
    if as_json:
        return (
            *set_aside(out.saved),
            *unpinned_lines(out),
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
    summary = tally([p.status for p in res.patches])
    return (
        *set_aside(out.saved),
        *shown,
        *unpinned_lines(out),
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
    lines.extend(set_aside(out.aside))
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


def undone(out: UndoOutcome) -> Rendered:
    """`undo`: what was undone, and where the stack is now."""
    what = f"`patchq {out.op}`" + (f" ({out.reason})" if out.reason else "")
    top = out.stack.top if out.stack else None
    return (
        info(f"undid {what}"),
        info(f"now at {top}" if top else "no patches applied"),
    )
