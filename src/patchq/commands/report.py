"""`report`: the review of the last rebase, from the record it left in .git/patchq/."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.core.records import LastRebase
from patchq.formats import report
from patchq.stack.context import Context
from patchq.store import outputs
from patchq.store.rebasestate import read_last
from patchq.store.statedir import last_rebase_path, rebase_state_path


def build(ctx: Context) -> report.Review:
    """The last rebase's review; summary-only from series.lock if the record is absent."""
    repo = ctx.repo()
    try:
        record_path = last_rebase_path(ctx.git().state_dir(), repo.config.queue)
    except BadInputError:  # no target here: the lock is all there is
        record_path = None
    # A damaged record is exit 5 naming it (read_last), not a report from the lock.
    record = read_last(record_path) if record_path is not None else None
    if record is not None:
        return replace(report.review(record), stale=_stale(ctx, record))
    lock = repo.read_lock()  # a malformed lock is bad input (exit 4), said in one line
    if lock is None:
        raise BadInputError(
            "no rebase to report on", str(repo.lock_path), "run `patchq rebase --onto REF` first"
        )
    return report.from_lock(json.loads(lock.to_json()))


def _stale(ctx: Context, record: LastRebase) -> tuple[str, ...]:
    """Why the record no longer tells the series as it is (sink, float, move, new,
    delete or a hand edit since; `refresh` keeps the record true itself)."""
    repo = ctx.repo()
    lock = repo.read_lock()
    guards = lock.guards if lock is not None else repo.config.guards
    active = [e.name or "" for e in repo.series.active(guards)]
    current: dict[str, bytes | None] = {}
    for name, _ in record.new:
        if repo.series.find(name) is None:
            continue  # gone from the series: the series' change says so
        try:
            current[name] = repo.read_patch(name)
        except (BadInputError, OSError):
            current[name] = None
    return report.stale_reasons(record, active, current)


def pending_note(ctx: Context) -> str | None:
    """A warning when a rebase is stopped at a conflict: the report is of the last one
    that finished, not of the one in progress."""
    try:
        if rebase_state_path(ctx.git().state_dir(), ctx.repo().config.queue).exists():
            return (
                "a rebase is in progress (stopped at a conflict): this report is of the "
                "last rebase that finished"
            )
    except BadInputError:
        return None
    return None


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """The review in the format asked for, a note on a rebase in progress, and the file
    it was written to (None: it goes to stdout)."""

    text: str
    note: str | None
    written: Path | None


def run(ctx: Context, fmt: str, out: Path | None) -> ReportOutcome:
    """Build the review of the last rebase in `fmt` (text, md, json); write it to `out`."""
    if out is not None:
        outputs.target(out)  # a folder or a socket is refused before any work
    text = report.render(build(ctx), fmt)
    note = pending_note(ctx)
    if out is not None:
        outputs.write(out, text.encode())
    return ReportOutcome(text, note, out)
