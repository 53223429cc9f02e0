"""The applied stack: the branch `patchq/<queue>` is the base plus one commit per patch.

What is not in commits — which patch each commit is, and the base — is recorded in
`.git/patchq/<queue>.json`. `load` checks the record against the branch, so a branch
moved behind patchq's back is noticed instead of silently rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from patchq.core.errors import UnsafeStateError
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


def load(state_dir: Path, queue: str) -> Stack | None:
    """The recorded stack, or None when nothing was ever applied in this target."""
    doc = read_state(state_dir, queue)
    if doc is None:
        return None
    try:
        stack = Stack(str(doc["base"]), str(doc["branch"]),
                      tuple(str(x) for x in doc.get("applied", [])),
                      tuple(str(x) for x in doc.get("commits", [])))
    except (KeyError, TypeError):
        raise UnsafeStateError("the stack record is damaged", str(state_dir),
                               "re-create it with `patchq apply`") from None
    if len(stack.applied) != len(stack.commits):
        raise UnsafeStateError("the stack record is damaged", str(state_dir),
                               "re-create it with `patchq apply`")
    return stack


def stack_path(state_dir: Path, queue: str) -> Path:
    """Where the stack record of `queue` lives."""
    return state_dir / f"{queue}.json"


def save(state_dir: Path, queue: str, stack: Stack) -> None:
    write_state(state_dir, queue, {"base": stack.base, "branch": stack.branch,
                                       "applied": list(stack.applied),
                                       "commits": list(stack.commits)})
