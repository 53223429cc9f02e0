"""The results of the commands that edit the series and its patches: `new`,
`refresh`, `delete`, `rename`, `fold`, `header`, `diff`, `guard`, and the reorders
(`sink`, `float`, `move`) with the words that say where a moved patch went.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from patchq.cli.render.items import Item, Raw, Rendered, data, info
from patchq.core.words import plural

if TYPE_CHECKING:
    from patchq.commands.delete import DeleteOutcome
    from patchq.commands.fold import FoldOutcome
    from patchq.commands.guard import GuardOutcome
    from patchq.commands.header import HeaderOutcome
    from patchq.commands.new import NewOutcome
    from patchq.commands.refresh import RefreshOutcome
    from patchq.commands.rename import RenameOutcome
    from patchq.rebase.reorder import ReorderOutcome


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
        *moved_lines(
            out.verb, out.name, out.stack.top, out.unapplied, between=refreshed, anchor=anchor
        ),
        *note,
    )


def moved_lines(
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


def folded(out: FoldOutcome) -> Rendered:
    return (info(f"folded {out.name} into {out.into}"),)


def header(out: HeaderOutcome, edited: bool) -> Rendered:
    """The header as it is (nothing after an edit: the editor showed it)."""
    return () if edited else (Raw(out.text),)


def diff(patch: bytes) -> Rendered:
    return (Raw(patch),)
