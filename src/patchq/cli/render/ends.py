"""How a run ends other than with its own result: an error, an interrupt, a bug, the
evidence it went without, and a run finished or undone later by `--continue`/`--abort`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchq.cli.render.items import Item, Rendered, info, removed_lock, saved_on_the_way
from patchq.core.errors import PatchqError
from patchq.core.text import bounded

if TYPE_CHECKING:
    from patchq.commands.recover import RecoverOutcome


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


def recovered(out: RecoverOutcome) -> Rendered:
    lines: list[Item] = []
    lines.extend(removed_lock(out.removed_lock))
    lines.extend(saved_on_the_way(out.saved))
    if out.runs:
        lines.append(info(f"interrupted `patchq {out.op}`: {out.runs}"))
        return tuple(lines)
    if out.finished and out.mode == "abort":
        # An undo or an abort is itself the way back: finishing it is what --abort does.
        lines.append(
            info(
                f"finished the interrupted `patchq {out.op}`: it was going back already, "
                "so going on is the way back"
            )
        )
        return tuple(lines)
    done = "finished" if out.finished else "undid"
    lines.append(info(f"{done} the interrupted `patchq {out.op}`"))
    return tuple(lines)
