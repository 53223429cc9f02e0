"""Crash safety for the commands that change a target: a journal under `.git/patchq/`.

A mutating command computes its whole result in memory and writes its git objects first
(unreferenced objects change nothing). Before it touches anything a person can see, it
records in `.git/patchq/op/` the before and after of all it will change — the stack
branch and HEAD, the stack record, how the working tree follows, and the patch-repo files
(old bytes backed up, new bytes staged) — and only then changes them, removing the
journal last. A command killed in between leaves the journal behind: every later command
refuses (exit 5) and says how out — `--continue` replays the after state (each step is
idempotent), `--abort` restores the before state. Ctrl-C during the change rolls back on
the spot. Uncommitted changes found while recovering are stashed, never discarded.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchq.core.errors import BadInputError
from patchq.git.repo import GitRepo
from patchq.store.files import atomic_write
from patchq.store.patchrepo import own_paths
from patchq.store.stack import Stack, save, stack_path
from patchq.store.statedir import crashpoint

JOURNAL = "op.json"
CHECKOUT, INDEX, REF = "checkout", "index", "ref"


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything a command is about to change, in its after state."""

    op: str
    branch: str
    head: str | None  # None: the target is not touched (only patch-repo files change)
    stack: Stack | None
    queue: str
    # CHECKOUT: files follow the branch; INDEX: only the ref and the index (refresh: the
    # files are the person's edits); REF: only the ref (same trees, new messages).
    worktree: str = CHECKOUT
    files: dict[str, bytes | None] = field(default_factory=dict)  # patch repo: new bytes
    overlay: str | None = None  # a tree laid over the working tree afterwards (conflicts)
    intent_to_add: tuple[str, ...] = ()
    reason: str = ""


def journal_dir(g: GitRepo) -> Path:
    return g.state_dir() / "op"


def pending(g: GitRepo) -> dict[str, Any] | None:
    """The journal of an interrupted command, if one is there."""
    path = g.state_dir() / JOURNAL
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except ValueError:
        # Torn while being written: the command had not changed anything yet.
        path.unlink(missing_ok=True)
        return None
    return doc if isinstance(doc, dict) else None


def run(g: GitRepo, patch_root: Path, plan: Plan) -> str | None:
    """Record, then carry out `plan`. On Ctrl-C or any failure (git refusing a checkout,
    a full disk) everything is rolled back and the error raised: all or nothing. Only a
    kill, or a rollback that fails too, leaves the journal for --continue/--abort."""
    doc = _record(g, patch_root, plan)
    try:
        crashpoint("journal:recorded")
        saved = _forward(g, patch_root, doc, recovering=False)
        crashpoint("journal:done")
    except BaseException:
        try:
            _backward(g, patch_root, doc, recovering=False)
        except Exception:  # noqa: BLE001 - the journal stays for --continue/--abort
            pass
        else:
            _clear(g)
        raise  # the first error is the story
    _clear(g)
    return saved


def recover(g: GitRepo, patch_root: Path, mode: str) -> tuple[str, str | None]:
    """Finish (`continue`) or undo (`abort`) an interrupted command; (its name, stash id)."""
    doc = pending(g)
    if doc is None:
        raise BadInputError("nothing to recover: no interrupted command", str(g.state_dir()))
    # Recovering: whatever the working tree holds now is not known to be ours, so it is
    # stashed before anything is forced. (Not decided by pid: in a container patchq is
    # often pid 1 every time.)
    saved = (
        _forward(g, patch_root, doc, recovering=True)
        if mode == "continue"
        else _backward(g, patch_root, doc, recovering=True)
    )
    _clear(g)
    return str(doc.get("op")), saved


def _record(g: GitRepo, patch_root: Path, plan: Plan) -> dict[str, Any]:
    d = journal_dir(g)
    shutil.rmtree(d, ignore_errors=True)
    files: dict[str, dict[str, bool]] = {}
    for rel, new in plan.files.items():
        old = patch_root / rel
        before = old.is_file()
        if before:
            dest = d / "before" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(old, dest)
        if new is not None:
            dest = d / "after" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(new)
        files[rel] = {"before": before, "after": new is not None}
    sp = stack_path(g.state_dir(), plan.queue)
    doc = {
        "op": plan.op,
        "pid": os.getpid(),
        "queue": plan.queue,
        "reason": plan.reason,
        "branch": plan.branch,
        "before": {
            "branch_ref": g.try_resolve(f"refs/heads/{plan.branch}"),
            "head_branch": g.current_branch(),
            "head": g.head(),
            "stack": json.loads(sp.read_text()) if sp.exists() else None,
        },
        "after": {
            "head": plan.head,
            "stack": None if plan.stack is None else _stack_doc(plan.stack),
            "worktree": plan.worktree,
            "overlay": plan.overlay,
            "intent_to_add": list(plan.intent_to_add),
        },
        "files": files,
    }
    atomic_write(
        g.state_dir() / JOURNAL, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    )
    return doc


def _stack_doc(s: Stack) -> dict[str, Any]:
    return {
        "base": s.base,
        "branch": s.branch,
        "applied": list(s.applied),
        "commits": list(s.commits),
    }


def _stash_if_dirty(g: GitRepo, patch_root: Path, why: str) -> str | None:
    own = own_paths(patch_root, g.root)
    if g.dirty_paths(own):
        return g.stash_save(f"patchq: saved while recovering {why}")
    return None


def _forward(g: GitRepo, patch_root: Path, doc: dict[str, Any], recovering: bool) -> str | None:
    after, branch = doc["after"], doc["branch"]
    why = f"{doc['op']} {doc.get('reason', '')}".strip()
    reason = f"patchq: {why}"
    saved = None
    head = after["head"]
    if head is None:
        pass
    elif after["worktree"] == CHECKOUT:
        if recovering:
            # A killed checkout may have left some files half-moved; keep anything that
            # is not what either side holds in a stash, then force.
            saved = _stash_if_dirty(g, patch_root, doc["op"])
            g.checkout_branch(branch, head, why, force=True)
        elif g.current_branch() != branch or g.head() != head:
            g.checkout_branch(branch, head, why)
        if after.get("overlay"):
            g.overlay(head, after["overlay"])
            g.intend_to_add(after.get("intent_to_add") or [])
    elif after["worktree"] == INDEX and g.current_branch() == branch:
        # The working tree holds the person's edits: move only the branch and the index.
        g.reset_to(head, why)
    else:
        g.update_ref(f"refs/heads/{branch}", head, None, reason)
    crashpoint("journal:target-moved")
    _put_files(g, patch_root, doc, "after")
    if after["stack"] is not None:
        save(g.state_dir(), doc["queue"], _stack_of(after["stack"]))
    return saved


def _backward(g: GitRepo, patch_root: Path, doc: dict[str, Any], recovering: bool) -> str | None:
    before, after, branch = doc["before"], doc["after"], doc["branch"]
    why = f"undo {doc['op']}"
    reason = f"patchq: {why}"
    saved = None
    _put_files(g, patch_root, doc, "before")
    old_ref = before["branch_ref"]
    if after["head"] is None:
        pass
    elif after["worktree"] == CHECKOUT:
        if recovering:
            saved = _stash_if_dirty(g, patch_root, doc["op"])
        if before["head_branch"] == branch and old_ref:
            g.checkout_branch(branch, old_ref, why, force=True)
        else:
            g.restore_head(before["head_branch"], before["head"])
            if old_ref:
                g.update_ref(f"refs/heads/{branch}", old_ref, None, reason)
            elif g.try_resolve(f"refs/heads/{branch}"):
                g.delete_branch(branch)
    elif old_ref:
        if after["worktree"] == INDEX and g.current_branch() == branch:
            g.reset_to(old_ref, why)
        else:
            g.update_ref(f"refs/heads/{branch}", old_ref, None, reason)
    sp = stack_path(g.state_dir(), doc["queue"])
    if after["stack"] is None:
        pass
    elif before["stack"] is None:
        sp.unlink(missing_ok=True)
    else:
        save(g.state_dir(), doc["queue"], _stack_of(before["stack"]))
    return saved


def _put_files(g: GitRepo, patch_root: Path, doc: dict[str, Any], side: str) -> None:
    """Give the patch repo's journaled files their `before` or `after` bytes."""
    d = journal_dir(g) / side
    for rel, f in doc["files"].items():
        dest = patch_root / rel
        if f[side]:
            atomic_write(dest, (d / rel).read_bytes())
        else:
            dest.unlink(missing_ok=True)
        if side == "after":
            crashpoint("journal:file-written")


def _stack_of(s: dict[str, Any]) -> Stack:
    return Stack(s["base"], s["branch"], tuple(s["applied"]), tuple(s["commits"]))


def _clear(g: GitRepo) -> None:
    (g.state_dir() / JOURNAL).unlink(missing_ok=True)
    shutil.rmtree(journal_dir(g), ignore_errors=True)
