"""The repository: the one object that runs git — reads, object writes, refs, merges
and the final checkout — put together from one class a concept: `process.py` (the place
git runs, its config and the index lock), `store.py` (objects read and the overlay of
new ones), `refs.py` (branches and checkouts), `history.py` (tree comparisons and
upstream's log), `merging.py` (three-way merges) and `worktree.py` (the working tree and
the index). Their neighbours hold what they are built from: `environment.py` (each git
child's scrubbed environment and pinned config), `objects.py` (ids, identities, trees and
the pending-object writer) and `pack.py` (the pack writer).

Reads go through one long-lived `git cat-file --batch` per repository (`catfile.py`), so
a whole-series run reads every object it needs without starting a process per object.
Objects patchq creates (blobs, trees, commits) are hashed here and written in one batch
as loose objects by `ObjectWriter.flush`, so applying a thousand patches starts no git
process at all until the final ref update and checkout. Inherited `GIT_*` variables that
would point git elsewhere are scrubbed first.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from patchq.core.errors import GitError
from patchq.git.environment import PINNED_CONFIG, child_environment
from patchq.git.history import History
from patchq.git.merging import Merging
from patchq.git.objects import Ident
from patchq.git.refs import Refs
from patchq.git.worktree import WorkTree


class GitRepo(WorkTree, Refs, History, Merging):
    """A target checkout, spoken to in intentions: read, resolve, commit, move refs, check out.

    Each base class is one concept of it (see the module's docstring); they share the
    object store and the process layer beneath, and each adds its own state in
    `__init__` and ends its own children in `close`."""


def init_repository(path: Path, branch: str = "main") -> GitRepo:
    """Create a new repository (used by `demo` to build its upstream)."""
    path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["git", "init", "-q", "--template=", "-b", branch, str(path)],
        capture_output=True,
        env=child_environment(PINNED_CONFIG),
    )
    if proc.returncode != 0:
        raise GitError(
            f"git init failed: {proc.stderr.decode(errors='replace').strip()}", str(path)
        )
    return GitRepo(path)


def commit_all(g: GitRepo, message: str, who: Ident) -> str:
    """Commit every change in the working tree as `who` (demo upstreams only)."""
    env = {
        "GIT_AUTHOR_NAME": who.name,
        "GIT_AUTHOR_EMAIL": who.email,
        "GIT_AUTHOR_DATE": f"{who.when} {who.tz}",
        "GIT_COMMITTER_NAME": who.name,
        "GIT_COMMITTER_EMAIL": who.email,
        "GIT_COMMITTER_DATE": f"{who.when} {who.tz}",
    }
    g._run("add", "-A")
    g._run("-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", message, env=env)
    return g.resolve("HEAD")
