"""`report`: the review of the last rebase, from the record it left in .git/patchq/."""

from __future__ import annotations

import json
from pathlib import Path

from .. import report
from ..context import Context
from ..errors import BadInputError
from ..fsutil import atomic_write


def build(ctx: Context) -> report.Review:
    """The last rebase's review; summary-only from series.lock if the record is absent."""
    repo = ctx.repo()
    record_path = None
    try:
        record_path = ctx.git().state_dir() / f"{repo.config.queue}.last-rebase.json"
    except BadInputError:
        record_path = None
    if record_path is not None and record_path.exists():
        return report.review(json.loads(record_path.read_text()))
    try:
        doc = json.loads(repo.lock_path.read_bytes())
    except FileNotFoundError:
        raise BadInputError("no rebase to report on", str(repo.lock_path),
                            "run `patchq rebase --onto REF` first") from None
    return report.from_lock(doc)


def write(text: str, out: Path | None) -> None:
    if out is not None:
        atomic_write(out, text.encode())
