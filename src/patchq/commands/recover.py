"""`--continue` / `--abort` for a command that was killed while changing things."""

from __future__ import annotations

from dataclasses import dataclass

from patchq.core.errors import BadInputError
from patchq.git.repo import GitRepo
from patchq.ops import journal
from patchq.ops.session import Context
from patchq.store.statedir import repo_lock, run_lock


@dataclass(frozen=True, slots=True)
class RecoverOutcome:
    """Which interrupted command was finished (`continue`) or undone (`abort`), and the
    stash holding uncommitted work found on the way, if any."""

    op: str
    mode: str
    saved: str | None = None


def recover(ctx: Context, mode: str) -> RecoverOutcome:
    """Finish or undo the interrupted command.

    A command with no target (`import`) keeps its journal in the patch repo, so this
    works without a target too."""
    repo = ctx.repo()
    g: GitRepo | None
    try:
        g = ctx.git()
    except BadInputError:
        g = None
    if g is None or journal.pending(None, repo.root) is not None:
        with repo_lock(repo.root, recovering=True):
            op, saved = journal.recover(None, repo.root, mode)
    else:
        with run_lock(g.state_dir(), repo.root, recovering=True):
            op, saved = journal.recover(g, repo.root, mode)
    return RecoverOutcome(op, mode, saved)
