"""The objects a stopped rebase still needs, kept reachable by a ref under `refs/patchq/`.

While a rebase is stopped at a conflict, its conflict tree, the trees of the patch being
resolved and the commits of the starting snapshot are referenced by nothing but patchq's
state file; a `git gc --prune=now` during the stop would delete them and leave a rebase
that can neither go on nor be undone. The keeper ref is set at each stop and removed when
the rebase finishes or is aborted.
"""

from __future__ import annotations

from patchq.core.records import RebaseState
from patchq.git.repo import GitRepo


def keeper_ref(queue: str) -> str:
    """The ref that keeps `queue`'s stopped rebase's objects."""
    return f"refs/patchq/{queue}/rebase"


def hold_rebase_objects(g: GitRepo, queue: str, st: RebaseState) -> None:
    """Make every object `st` names reachable from the keeper ref."""
    commits = [st.head, st.onto, st.old_base, st.orig_head or "", st.branch_before or ""]
    if st.stack_before is not None:
        commits += [st.stack_before.base, *st.stack_before.commits]
    commits += [d.patch.commit or "" for d in st.done]
    trees = [t for d in st.done for t in (d.tree_before, d.tree_after) if t]
    cur = st.current
    if cur is not None:
        trees += [t for t in (cur.tree_before, cur.tree_after, cur.conflict_tree) if t]
    g.keep_reachable(keeper_ref(queue), commits, trees, "keep a stopped rebase's objects")


def release_rebase_objects(g: GitRepo, queue: str) -> None:
    """Remove the keeper ref: the rebase finished or was undone."""
    g.drop_ref(keeper_ref(queue))
