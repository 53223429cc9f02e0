"""The applied stack: the branch `patchq/<queue>` is the base plus one commit per patch.

What is not in commits — which patch each commit is, and the base — is recorded in
`.git/patchq/<queue>.json`. `load` checks the record against the branch, so a branch
moved behind patchq's back is noticed instead of silently rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from patchq.core.errors import UnsafeStateError
from patchq.git.repo import GitRepo
from patchq.store.statedir import read_state, write_state


@dataclass(frozen=True, slots=True)
class Stack:
    """Base commit, branch, and the applied patches with their commits, bottom first."""

    base: str
    branch: str
    applied: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()

    @property
    def head(self) -> str:
        return self.commits[-1] if self.commits else self.base

    @property
    def top(self) -> str | None:
        return self.applied[-1] if self.applied else None

    def commit_below(self, index: int) -> str:
        """The commit a patch at `index` sits on (the base for the first)."""
        return self.commits[index - 1] if index > 0 else self.base

    def truncated(self, n: int) -> Stack:
        """The stack with only its first `n` patches applied."""
        return replace(self, applied=self.applied[:n], commits=self.commits[:n])

    def extended(self, names: tuple[str, ...], commits: tuple[str, ...]) -> Stack:
        return replace(self, applied=self.applied + names, commits=self.commits + commits)


def load(g: GitRepo, queue: str) -> Stack | None:
    """The recorded stack, or None when nothing was ever applied in this target."""
    doc = read_state(g.state_dir(), queue)
    if doc is None:
        return None
    try:
        stack = Stack(str(doc["base"]), str(doc["branch"]),
                      tuple(str(x) for x in doc.get("applied", [])),
                      tuple(str(x) for x in doc.get("commits", [])))
    except (KeyError, TypeError):
        raise UnsafeStateError("the stack record is damaged", str(g.state_dir()),
                               "re-create it with `patchq apply`") from None
    if len(stack.applied) != len(stack.commits):
        raise UnsafeStateError("the stack record is damaged", str(g.state_dir()),
                               "re-create it with `patchq apply`")
    return stack


def check_branch(g: GitRepo, stack: Stack) -> None:
    """The target must be on the stack's branch, at the recorded top."""
    current = g.current_branch()
    if current != stack.branch:
        raise UnsafeStateError(f"the target is on {current or 'a detached HEAD'}, not on the "
                               f"stack branch {stack.branch}", str(g.root),
                               f"`git checkout {stack.branch}` first")
    head = g.head()
    if head != stack.head:
        raise UnsafeStateError(f"{stack.branch} moved outside patchq (now {str(head)[:12]}, "
                               f"expected {stack.head[:12]})", str(g.root),
                               "reset it, or re-apply with `patchq apply`")


def stack_path(g: GitRepo, queue: str) -> Path:
    """Where the stack record of `queue` lives."""
    return g.state_dir() / f"{queue}.json"


def save(g: GitRepo, queue: str, stack: Stack) -> None:
    write_state(g.state_dir(), queue, {"base": stack.base, "branch": stack.branch,
                                       "applied": list(stack.applied),
                                       "commits": list(stack.commits)})
