"""`--continue` / `--abort` for a command that was killed while changing things."""

from __future__ import annotations

from patchq.core.errors import BadInputError
from patchq.git.repo import GitRepo
from patchq.ops import journal
from patchq.ops.session import Context
from patchq.ops.stack import rebase_in_progress
from patchq.store.statedir import repo_lock, run_lock


def recover(ctx: Context, mode: str) -> tuple[str, str | None]:
    """Finish or undo the interrupted command; (its name, a stash id if work was saved).

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
            return journal.recover(None, repo.root, mode)
    with run_lock(g.state_dir(), repo.root, recovering=True):
        if journal.pending(g, repo.root) is None and rebase_in_progress(ctx):
            # What `status` calls "in progress: rebase" is a rebase's own state, not a
            # killed command's journal: say which command owns it.
            raise BadInputError(
                "nothing to recover: no command was interrupted, but a rebase is in progress",
                str(g.state_dir()),
                f"`patchq rebase --{mode}` to {'go on with' if mode == 'continue' else 'undo'} it",
            )
        return journal.recover(g, repo.root, mode)
