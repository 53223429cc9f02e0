"""`--continue` / `--abort` for a command that was killed while changing the target."""

from __future__ import annotations

from patchq.ops import journal
from patchq.ops.session import Context
from patchq.store.statedir import run_lock


def recover(ctx: Context, mode: str) -> tuple[str, str | None]:
    """Finish or undo the interrupted command; (its name, a stash id if work was saved)."""
    g, repo = ctx.git(), ctx.repo()
    with run_lock(g.state_dir(), ctx.repo().root, recovering=True):
        return journal.recover(g, repo.root, mode)
