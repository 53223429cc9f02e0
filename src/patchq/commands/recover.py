"""`--continue` / `--abort` for a command that was killed while changing the target."""

from __future__ import annotations

from .. import journal
from ..context import Context
from ..state import run_lock


def recover(ctx: Context, mode: str) -> tuple[str, str | None]:
    """Finish or undo the interrupted command; (its name, a stash id if work was saved)."""
    g, repo = ctx.git(), ctx.repo()
    with run_lock(g.state_dir(), ctx.repo().root, recovering=True):
        return journal.recover(g, repo.root, mode)
