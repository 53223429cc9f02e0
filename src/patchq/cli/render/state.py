"""`status`: the stack, and a run stopped half-way — a rebase (its progress and
proposals) or a push at a conflict — as lines and as JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from patchq.cli.render.items import Doc, Item, Rendered, data, tally
from patchq.cli.render.upstream import exec_lines
from patchq.core.lock import placement_text
from patchq.core.words import plural
from patchq.store.statedir import recovery_verb

if TYPE_CHECKING:
    from patchq.commands.queries import RebaseView, Status
    from patchq.stack.moves import PushStop


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


def _going_on_lines(going: PushStop | None) -> list[Item]:
    """`status`'s line for a `push --continue` killed between its refresh and its push."""
    if going is None:
        return []
    return [
        data(
            f"push --continue unfinished: it took the tree into {going.patch}, then "
            f"stopped before pushing on to {going.target}: `patchq push --continue` pushes on"
        )
    ]


def _rebase_lines(v: RebaseView) -> list[Item]:
    """The lines of `status` for a rebase in progress: onto what, how far, what is left."""
    counts = tally([o for _, o in v.replayed])
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
                    "push_continue": None
                    if st.going_on is None
                    else {"patch": st.going_on.patch, "target": st.going_on.target},
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
        lines += _going_on_lines(st.going_on)
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
    elif st.operation and st.operation.startswith("unusable journal "):
        lines.append(data(st.operation))
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
