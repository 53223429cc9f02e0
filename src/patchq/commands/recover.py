"""`--continue` / `--abort` for a command that was killed while changing things."""

from __future__ import annotations

from dataclasses import dataclass

from patchq.core.errors import BadInputError
from patchq.git.repo import GitRepo
from patchq.rebase import execute
from patchq.rebase.keep import release_rebase_objects
from patchq.stack import journal
from patchq.stack.context import Context
from patchq.stack.moves import rebase_in_progress
from patchq.store.statedir import repo_lock, run_lock


@dataclass(frozen=True, slots=True)
class RecoverOutcome:
    """Which interrupted command was finished (`continue`) or undone (`abort`), and the
    stash holding uncommitted work found on the way, if any."""

    op: str
    mode: str
    saved: str | None = None
    removed_lock: str | None = None  # the stale index.lock of patchq's killed git
    runs: str | None = None  # killed `--exec-each` runs given up: what was done, in words
    # Carried to its end (not undone): `--continue`, or an interrupted command that was
    # itself going back (an undo, an abort), whatever the mode asked.
    finished: bool = False


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
            done = journal.recover(None, repo.root, mode)
    else:
        with run_lock(g.state_dir(), repo.root, recovering=True):
            g.clear_stale_index_lock()
            if journal.pending(g, repo.root) is None and rebase_in_progress(ctx):
                # What `status` calls "in progress: rebase" is a rebase's own state, not
                # a killed command's journal: say which command owns it.
                raise BadInputError(
                    "nothing to recover: no command was interrupted, but a rebase is in progress",
                    str(g.state_dir()),
                    f"`patchq rebase --{mode}` to "
                    f"{'go on with' if mode == 'continue' else 'undo'} it",
                )
            left = execute.pending_runs(ctx)
            if journal.pending(g, repo.root) is None and left is not None:
                # Killed while an `--exec-each` command ran: the stack is at that patch.
                execute.give_up_runs(ctx, left)
                return RecoverOutcome(
                    "rebase --exec-each", mode, None, g.removed_lock, runs=execute.given_up(left)
                )
            done = journal.recover(g, repo.root, mode)
            if str(done.op).startswith("rebase") and not rebase_in_progress(ctx):
                release_rebase_objects(g, repo.config.queue)
            left = execute.pending_runs(ctx)
            if left is not None:
                execute.give_up_runs(ctx, left)  # the journal was the move to a patch
    return RecoverOutcome(done.op, mode, done.saved, done.removed_lock, finished=done.finished)
