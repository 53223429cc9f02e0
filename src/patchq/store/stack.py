"""The applied stack: the branch `patchq/<queue>` is the base plus one commit per patch.

What is not in commits — which patch each commit is, and the base — is recorded in
`.git/patchq/<queue>.json`. `load` checks the record against the branch, so a branch
moved behind patchq's back is noticed instead of silently rewritten. The record is
versioned JSON with one serialiser (`to_doc`) and one deserialiser (`from_doc`), which
the rebase state also uses for the stack it must restore on `--abort`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patchq.core.records import Stack
from patchq.core.words import plural
from patchq.store import jsonrecord as jr
from patchq.store.files import atomic_write


def to_doc(stack: Stack) -> dict[str, Any]:
    """The JSON form of a stack (the file adds its version; a rebase state nests it)."""
    return {
        "base": stack.base,
        "branch": stack.branch,
        "applied": list(stack.applied),
        "commits": list(stack.commits),
    }


def from_doc(doc: dict[str, Any]) -> Stack:
    """The stack a JSON form describes; `jsonrecord.StateFormatError` if it is not one."""
    stack = Stack(
        jr.text(doc, "base"),
        jr.text(doc, "branch"),
        jr.texts(doc, "applied"),
        jr.texts(doc, "commits"),
    )
    if len(stack.applied) != len(stack.commits):
        raise jr.StateFormatError(
            f"{plural(len(stack.applied), 'patch')} applied "
            f"but {plural(len(stack.commits), 'commit')}"
        )
    return stack


def load(state_dir: Path, queue: str) -> Stack | None:
    """The recorded stack, or None when nothing was ever applied in this target."""
    return jr.read(
        stack_path(state_dir, queue), from_doc, "stack record", "re-create it with `patchq apply`"
    )


def stack_path(state_dir: Path, queue: str) -> Path:
    """Where the stack record of `queue` lives."""
    return state_dir / f"{queue}.json"


def save(state_dir: Path, queue: str, stack: Stack) -> None:
    """Record `stack` as the applied stack of `queue` (atomically)."""
    atomic_write(stack_path(state_dir, queue), jr.dumps({"version": jr.VERSION, **to_doc(stack)}))
