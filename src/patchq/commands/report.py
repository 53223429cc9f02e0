"""`report`: the review of the last rebase, from the record it left in .git/patchq/."""

from __future__ import annotations

import json
from pathlib import Path

from patchq.core.errors import BadInputError, UnsafeStateError
from patchq.formats import report
from patchq.ops.session import Context
from patchq.store.files import atomic_write
from patchq.store.statedir import rebase_state_path


def build(ctx: Context) -> report.Review:
    """The last rebase's review; summary-only from series.lock if the record is absent."""
    repo = ctx.repo()
    try:
        record_path = ctx.git().state_dir() / f"{repo.config.queue}.last-rebase.json"
    except BadInputError:  # no target here: the lock is all there is
        record_path = None
    if record_path is not None and record_path.exists():
        try:
            return report.review(json.loads(record_path.read_text()))
        except (ValueError, KeyError, TypeError):
            raise UnsafeStateError("the record of the last rebase is damaged",
                                   str(record_path), "delete it to report from "
                                   "series.lock alone, or rebase again") from None
    lock = repo.read_lock()  # a malformed lock is bad input (exit 4), said in one line
    if lock is None:
        raise BadInputError("no rebase to report on", str(repo.lock_path),
                            "run `patchq rebase --onto REF` first")
    return report.from_lock(json.loads(lock.to_json()))


def pending_note(ctx: Context) -> str | None:
    """A warning when a rebase is stopped at a conflict: the report is of the last one
    that finished, not of the one in progress."""
    try:
        if rebase_state_path(ctx.git().state_dir(), ctx.repo().config.queue).exists():
            return ("a rebase is in progress (stopped at a conflict): this report is of the "
                    "last rebase that finished")
    except BadInputError:
        return None
    return None


def write(text: str, out: Path) -> None:
    atomic_write(out, text.encode())
