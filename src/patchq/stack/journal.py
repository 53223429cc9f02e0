"""Crash safety for every command that changes things: one transaction journal.

A mutating command computes its whole result in memory and writes its git objects first
(unreferenced objects change nothing). Before it touches anything a person can see, it
records the before and after of all it will change — the stack branch and HEAD, the
stack record, how the working tree follows, the patch-repo files and patchq's own state
files (old bytes backed up, new bytes staged) — and only then changes them, removing the
journal last. A command killed in between leaves the journal behind: every later command
refuses (exit 5) and says how out — `--continue` replays the after state (each step is
idempotent), `--abort` restores the before state. Ctrl-C during the change rolls back on
the spot. Uncommitted changes found while recovering are stashed, never discarded.

The journal lives in the target's `.git/patchq/`; a command that has no target (`import`)
keeps it in the patch repo's `.patchq/`. Each journal has its own id, and its copies live
in a folder named by it: a leftover of one run is never read by another.

A long-lived snapshot (a rebase's starting point, kept while it is stopped) is rolled back
by the same code: `restore` records it as a journal whose only way out is back.

The journal of the last completed stack operation (`UNDOABLE`) is kept, with its copies,
in `last-op/` beside it: `undo` checks that nothing changed since (the target, the stack
record, every file the operation wrote, the patch repo's files, no uncommitted edits) and
then rolls it back exactly as an interrupted run is undone — a back-only journal of its
own, so a kill during `undo` is finished by `recover`. Any other change through the
journal (a rebase, a recovery) leaves a record that says there is nothing to undo.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn

from patchq.core.errors import BadInputError, FaultError, GitError, UnsafeStateError
from patchq.core.records import Stack
from patchq.core.resolutions import FOLDER as RESOLUTIONS
from patchq.git.repo import GitRepo
from patchq.stack import recipe
from patchq.store import stack as stackfile
from patchq.store.files import atomic_write, confine, inside, remove
from patchq.store.patchrepo import (
    CONFIG,
    LOCK,
    PATCHES,
    SERIES,
    check_writable,
    own_paths,
    series_changed,
    series_written,
)
from patchq.store.stack import save, stack_path
from patchq.store.statedir import (
    JOURNAL,
    PATCH_REPO_HOME,
    checked_home,
    crashpoint,
    foreign,
    home_identity,
    read_journal,
    recovery_verb,
)

CHECKOUT, INDEX, REF = "checkout", "index", "ref"
# The operations `undo` can roll back; the record of the last one lives in LAST.
UNDOABLE = (
    "apply",
    "push",
    "pop",
    "goto",
    "refresh",
    "new",
    "delete",
    "rename",
    "fold",
    "header",
    "sink",
    "float",
    "move",
    "guard",
)
LAST = "last-op"
# The two sets of files a journal can change: the patch repo's, and patchq's own state.
FILES, STATE = "files", "state"


class Kind(StrEnum):
    """What a transaction is, beyond the command that ran it: what a later `--continue`
    after a kill must know about the one it finished (never read from `reason`, which is
    for people)."""

    CHANGE = "change"  # any other transaction
    CONFLICT_SHOWN = "conflict-shown"  # a rebase (or reorder) stopping: state and markers
    REORDER_FINISHED = "reorder-finished"  # a stopped sink/float's finishing writes


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything a command is about to change, in its after state."""

    op: str
    branch: str
    head: str | None  # None: the target is not touched (only files change)
    stack: Stack | None
    queue: str
    # CHECKOUT: files follow the branch; INDEX: only the ref and the index (refresh: the
    # files are the person's edits); REF: only the ref (same trees, new messages).
    worktree: str = CHECKOUT
    files: dict[str, bytes | None] = field(default_factory=dict)  # patch repo: new bytes
    # patchq's state files in the target's `.git/patchq/`, by name: new bytes or None.
    state: dict[str, bytes | None] = field(default_factory=dict)
    overlay: str | None = None  # a tree laid over the working tree afterwards (conflicts)
    intent_to_add: tuple[str, ...] = ()
    reason: str = ""
    kind: Kind = Kind.CHANGE
    # A reorder's finishing writes: the verb and the patch moved (`Kind.REORDER_FINISHED`).
    reorder: tuple[str, str] | None = None
    # Untracked or ignored files the checkout would write over: None — the command has no
    # --force and refuses; False — it refuses and names --force; True — they are saved in
    # a stash first (`run` returns its id).
    force: bool | None = None
    # The command as the person typed it, where it is not `op` (a `sink` that stops
    # goes on as a rebase): what messages name.
    typed: str = ""
    # What the target was when the command began its work in memory: a change since (a
    # commit, a saved file) holds the result back instead of checking it out over it.
    expect: Expect | None = None
    # `undo` may roll it back though `op` is not in UNDOABLE: a rebase that ran from its
    # start to its end in one go (its before is the state the person started it in).
    undoable: bool = False


@dataclass(frozen=True, slots=True)
class Expect:
    """The target as a command found it before working in memory: HEAD, the stack branch,
    and the working tree's tracked files as a tree, so a change made meanwhile is found
    and never written over."""

    head_branch: str | None
    head: str | None
    branch_ref: str | None
    tree: str


def expect(g: GitRepo, branch: str) -> Expect:
    """The target now, as `Plan.expect` compares it at the end."""
    ref = g.try_resolve(f"refs/heads/{branch}") if branch else None
    return Expect(g.current_branch(), g.head(), ref, g.worktree_tree())


def held_ref(queue: str) -> str:
    """The ref keeping a held-back result's commits reachable until --continue/--abort."""
    return f"refs/patchq/{queue}/held"


def kept_ref(queue: str) -> str:
    """Where a commit the person made on the stack branch while patchq worked is kept."""
    return f"refs/patchq/{queue}/kept"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Where the target stood when a long-lived operation began: what `restore` puts back."""

    branch: str  # the stack branch the operation rebuilds
    branch_ref: str | None  # its commit then (None: it did not exist)
    head_branch: str | None  # what HEAD was on (None: detached)
    head: str
    stack: Stack | None


def home(g: GitRepo | None, patch_root: Path) -> Path:
    """The folder a journal lives in: the target's state, or the patch repo's `.patchq/`;
    refused (exit 4) when it is a symlink or not a folder (`statedir.checked_home`), so
    nothing is written or removed through it."""
    h = g.state_dir() if g is not None else patch_root / PATCH_REPO_HOME
    checked_home(h)
    return h


def pending(g: GitRepo | None, patch_root: Path) -> dict[str, Any] | None:
    """The journal of an interrupted command, if one is there (target's first)."""
    homes = [home(g, patch_root)] + ([home(None, patch_root)] if g is not None else [])
    for h in homes:
        doc = _read(h)
        if doc is not None:
            return doc
    return None


def tidy(g: GitRepo | None, patch_root: Path) -> None:
    """Remove the copies a journal left behind when a kill cut its clearing short (the
    journal itself already gone). Never read again (each journal's copies are in a folder
    named by its id), but left, they are clutter in `.git/patchq/`. Only with the run lock
    held and no journal pending: a running transaction writes its copies first."""
    h = home(g, patch_root)
    if not (h / JOURNAL).exists():
        shutil.rmtree(h / "op", ignore_errors=True)


def _read(h: Path) -> dict[str, Any] | None:
    """The journal in `h`, if there is one; a foreign one (not written in this folder on
    this machine: it came with a clone or a tarball) is refused (exit 5), never replayed."""
    found = read_journal(h)
    if found is None:
        return None
    doc, alien = found
    if alien:
        raise foreign(h)
    return doc


def run(g: GitRepo | None, patch_root: Path, plan: Plan) -> str | None:
    """Record, then carry out `plan`. On Ctrl-C or any failure (git refusing a checkout,
    a full disk) everything is rolled back and the error raised: all or nothing. Only a
    kill, or a rollback that fails too, leaves the journal for --continue/--abort."""
    if g is None and (plan.head is not None or plan.state):
        raise ValueError("a plan that changes the target needs the target")
    check_writable(patch_root)
    if SERIES in plan.files and series_changed(patch_root):
        raise UnsafeStateError(
            "series changed since this command read it (another patchq, or an editor, "
            "wrote it meanwhile); nothing was written",
            str(patch_root / SERIES),
            "run the command again",
        )
    plan = recipe.in_step(patch_root, plan)
    for rel in plan.files:
        confine(patch_root, patch_root / rel)
        _can_write(patch_root / rel)
    if g is not None:
        crashpoint("journal:checking")
        changed = _changed_meanwhile(g, patch_root, plan)
        if changed is not None:
            _hold(g, patch_root, plan, changed)
    aside = _protect_target(g, plan) if g is not None else None
    try:
        doc = _record(g, patch_root, plan)
    except BaseException:
        _clear(g, patch_root, {})  # nothing was changed yet: no half-written journal either
        raise
    try:
        crashpoint("journal:recorded")
        saved = _forward(g, patch_root, doc, recovering=False)
        crashpoint("journal:done")
        _keep_last(g, patch_root, doc)
    except _Raced as raced:
        # The guarded move found the person's change at the last moment and moved
        # nothing: hold the result back as above, no forced rollback over their work.
        assert g is not None
        _clear(g, patch_root, doc)
        changed = _changed_meanwhile(g, patch_root, plan)
        if changed is None:
            raise raced.error from None
        _hold(g, patch_root, plan, changed)
    except BaseException:
        try:
            _backward(g, patch_root, doc, recovering=False)
        except Exception:  # noqa: BLE001 - the journal stays for --continue/--abort
            pass
        else:
            _clear(g, patch_root, doc)
        raise  # the first error is the story
    _clear(g, patch_root, doc)
    written = plan.files.get(SERIES)
    if written is not None:
        series_written(patch_root, written)
    return aside or saved


class _Raced(Exception):
    """The guarded move of the target failed; nothing of the target moved."""

    def __init__(self, error: GitError) -> None:
        super().__init__(str(error))
        self.error = error


def _changed_meanwhile(g: GitRepo, patch_root: Path, plan: Plan) -> str | None:
    """What changed in the target since `plan.expect` was taken, in words; None if nothing."""
    e = plan.expect
    if e is None or plan.head is None:
        return None
    now = g.try_resolve(f"refs/heads/{plan.branch}") if plan.branch else None
    if now != e.branch_ref:
        made = f"to {now[:12]}" if now else "away"
        return f"{plan.branch} moved {made} (a commit made meanwhile)"
    if (g.current_branch(), g.head()) != (e.head_branch, e.head):
        return f"HEAD moved to {g.current_branch() or (g.head() or '')[:12]}"
    tree = g.worktree_tree()
    if tree == e.tree:
        return None
    own = own_paths(patch_root, g.root)
    paths = [
        p
        for p in g.changed_paths(e.tree, tree)
        if not any(p == o or p.startswith(o.rstrip("/") + "/") for o in own)
    ]
    if not paths:
        return None
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return f"{paths[0]}{more} changed"


def _hold(g: GitRepo, patch_root: Path, plan: Plan, changed: str) -> NoReturn:
    """The target changed while the command worked in memory: change nothing of the
    person's, keep the result (the journal, its commits on `held_ref`, a commit they made
    on `kept_ref`) for `--continue` to put in place or `--abort` to drop, and stop (exit 5)."""
    e = plan.expect
    assert e is not None and plan.head is not None
    doc = _record(g, patch_root, plan, held=changed)
    g.update_ref(held_ref(plan.queue), plan.head, None, "patchq: keep a held-back result")
    now = doc["before"]["branch_ref"]
    kept = ""
    if now is not None and now != e.branch_ref:
        g.update_ref(kept_ref(plan.queue), now, None, "patchq: keep a commit made meanwhile")
        kept = f", your commit stays on {kept_ref(plan.queue)}"
    verb = recovery_verb(plan.op)
    raise UnsafeStateError(
        f"{changed} while `patchq {plan.typed or plan.op}` worked: nothing was overwritten",
        str(g.root),
        f"`patchq {verb} --continue` puts patchq's result in place (your changes saved in a "
        f"stash{kept}), `patchq {verb} --abort` drops it",
    )


def _can_write(path: Path) -> None:
    """Refuse (exit 5) before anything moves a file whose folder cannot be written (a
    read-only file system, a folder the person may not write): the target must not be
    moved by a transaction whose patch-repo writes are bound to fail."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if os.access(folder, os.W_OK):
        return
    try:
        readonly = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        readonly = False
    code = errno.EROFS if readonly else errno.EACCES
    raise FaultError.from_os(OSError(code, os.strerror(code)), "write", str(path))


def _protect_target(g: GitRepo, plan: Plan) -> str | None:
    """Refuse (exit 5) to move a branch another worktree has checked out, or to write over
    a file git does not track (the person's work); with `plan.force`, save those files in
    a stash first and return its id."""
    if plan.head is None:
        return None
    exists = plan.branch and g.try_resolve(f"refs/heads/{plan.branch}") is not None
    other = g.worktree_holding(plan.branch) if exists else None
    if other is not None:
        raise UnsafeStateError(
            f"{plan.branch} is checked out in another worktree, {other}",
            str(g.root),
            f"check out another branch there first (`git -C {other} switch --detach`)",
        )
    if plan.worktree != CHECKOUT:
        return None
    head = g.head()
    found = g.in_the_way(head, plan.head)
    if plan.overlay:
        found += [p for p in g.in_the_way(head, plan.overlay) if p not in found]
    if not found:
        return None
    if plan.force:
        return g.stash_paths(found, f"patchq: files in the way of {plan.op}")
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    hint = "move it aside and run the command again"
    if plan.force is False:
        hint += f", or `patchq {plan.op.split()[0]} --force` to save it in a stash first"
    raise UnsafeStateError(
        f"{plan.typed or plan.op} would write over {found[0]}{more}, which git does not track "
        "(an untracked or ignored file)",
        str(g.root / found[0]),
        hint,
    )


def restore(
    g: GitRepo, patch_root: Path, op: str, snap: Snapshot, *, queue: str, state: tuple[str, ...]
) -> None:
    """Put the target back where `snap` found it, and remove the `state` files (the
    operation's own). Recorded first as a journal that can only go back, so a kill halfway
    is finished by `--continue` and `--abort` alike."""
    doc: dict[str, Any] = {
        "op": op,
        "id": secrets.token_hex(8),
        "back_only": True,
        "queue": queue,
        "reason": "",
        "branch": snap.branch,
        "before": {
            "branch_ref": snap.branch_ref,
            "head_branch": snap.head_branch,
            "head": snap.head,
            "stack": None if snap.stack is None else stackfile.to_doc(snap.stack),
        },
        # The after side is only what `_backward` reads: the target moved, the stack too.
        "after": {"head": snap.head, "stack": {}, "worktree": CHECKOUT},
        FILES: {},
        STATE: {name: {"before": False, "after": True} for name in state},
    }
    _forget_last(g)
    _write_doc(g, patch_root, doc)
    crashpoint("journal:recorded")
    _backward(g, patch_root, doc, recovering=False)
    _clear(g, patch_root, doc)


# --- the last operation, for `undo` ------------------------------------------------------


def _fingerprint(patch_root: Path) -> dict[str, list[int]]:
    """The patch repo's own files by (mtime, size): an edit since shows as a difference."""
    out: dict[str, list[int]] = {}
    own_recipe = recipe.named(patch_root)
    names = (CONFIG, SERIES, LOCK) + ((own_recipe,) if own_recipe else ())
    paths = [patch_root / n for n in names]
    paths += sorted(p for p in (patch_root / PATCHES).rglob("*") if not p.is_dir())
    for p in paths:
        try:
            st = p.stat()  # through a symlink inside (`series -> debian/patches/series`)
        except OSError:
            try:
                st = p.lstat()
            except OSError:
                continue
        out[p.relative_to(patch_root).as_posix()] = [st.st_mtime_ns, st.st_size]
    return out


def _forget_last(g: GitRepo | None) -> None:
    if g is not None:
        shutil.rmtree(g.state_dir() / LAST, ignore_errors=True)


def _noop(doc: dict[str, Any]) -> bool:
    """Whether the journal `doc` changed nothing (a push that stopped at its first patch):
    then the record of the last real operation stays what `undo` undoes."""
    before, after = doc["before"], doc["after"]
    moved = after["head"] is not None and (
        before["branch_ref"] != after["head"] or before["head"] != after["head"]
    )
    same_stack = after["stack"] is None or (
        before["stack"] is not None
        and stackfile.from_doc(before["stack"]) == stackfile.from_doc(after["stack"])
    )
    return not (moved or not same_stack or doc.get(FILES) or doc.get(STATE) or after["overlay"])


def _keep_last(g: GitRepo | None, patch_root: Path, doc: dict[str, Any]) -> None:
    """Keep the journal being carried out (and a copy of its copies) as the last
    operation. Part of the transaction: a failure here rolls the operation back."""
    if g is None or _noop(doc):
        return  # a patch-repo journal (`import`) changed no target: nothing of it is kept
    new = g.state_dir() / f"{LAST}.new"
    shutil.rmtree(new, ignore_errors=True)
    undoable = doc["op"] in UNDOABLE or bool(doc.get("undoable_run"))
    try:
        new.mkdir(parents=True)
        if undoable and _copies(g, patch_root, doc).is_dir():
            shutil.copytree(_copies(g, patch_root, doc), new / "copies")
        # The folder keeps its identity through the rename below: `undo` replays only
        # the record this machine kept.
        kept = dict(
            doc,
            undoable=undoable,
            fingerprint=_fingerprint(patch_root),
            home_id=home_identity(new),
        )
        atomic_write(new / JOURNAL, (json.dumps(kept, indent=2, sort_keys=True) + "\n").encode())
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    _forget_last(g)
    new.rename(g.state_dir() / LAST)


def last_op(g: GitRepo) -> dict[str, Any] | None:
    """The record of the last operation that went through the journal, if one is kept."""
    doc = _read(g.state_dir() / LAST)
    return doc


def edits_since(g: GitRepo, doc: dict[str, Any], own: list[str]) -> list[str]:
    """The working tree's files edited since the operation `doc` records."""
    dirty = g.dirty_paths(own)
    overlay = doc["after"].get("overlay")
    if dirty and overlay:
        # A push that stopped left its merge (or its proposal) in the working tree: that
        # is the state it left, not a change since, while the working tree still holds it.
        wt = g.worktree_tree(dirty)
        dirty = [p for p in g.changed_paths(overlay, wt) if p in set(dirty)]
    return dirty


def _changed_since(
    g: GitRepo, patch_root: Path, doc: dict[str, Any], own: list[str]
) -> tuple[str, str] | None:
    """What changed since the operation `doc` records, and where; None if nothing."""
    after, branch = doc["after"], doc["branch"]
    dirty = edits_since(g, doc, own)
    if dirty:
        return f"uncommitted changes in {dirty[0]}", str(g.root)
    if after["head"] is not None:
        if g.try_resolve(f"refs/heads/{branch}") != after["head"]:
            return f"{branch} moved", str(g.root)
        if after["worktree"] != REF and (g.current_branch(), g.head()) != (branch, after["head"]):
            return f"the target is no longer on {branch}", str(g.root)
    if after["stack"] is not None:
        sp = stack_path(g.state_dir(), doc["queue"])
        now = json.loads(sp.read_text()) if sp.exists() else None
        if now is None or stackfile.from_doc(now) != stackfile.from_doc(after["stack"]):
            return "the stack record changed", str(sp)
    d = g.state_dir() / LAST / "copies"
    for kind, root in _roots(g, patch_root).items():
        for rel, f in doc.get(kind, {}).items():
            path = root / rel
            now_bytes = path.read_bytes() if path.is_file() else None
            then = (d / kind / "after" / rel).read_bytes() if f["after"] else None
            if now_bytes != then:
                return f"{rel} changed", str(path)
    if _fingerprint(patch_root) != doc.get("fingerprint"):
        return "the patch repo changed", str(patch_root)
    return None


def undo_last(g: GitRepo, patch_root: Path, own: list[str]) -> dict[str, Any]:
    """Roll the last operation back, as a back-only journal; the record of what it was.
    Refuses (exit 5) when anything changed since it, and (exit 4) when there is nothing
    that can be undone."""
    doc = last_op(g)
    if doc is None:
        raise BadInputError("nothing to undo", str(g.state_dir() / LAST))
    if not doc.get("undoable"):
        raise BadInputError(
            f"the last change, `patchq {doc.get('op')}`"
            + (f" ({doc['reason']})" if doc.get("reason") else "")
            + ", cannot be undone",
            str(g.root),
            "`git reflog` shows where the stack branch was",
        )
    changed = _changed_since(g, patch_root, doc, own)
    if changed is not None:
        what, where = changed
        raise UnsafeStateError(
            f"{what} since `patchq {doc['op']}`: undo would lose it",
            where,
            "undo works right after a stack operation; `git reflog` shows older states",
        )
    undo = dict(doc, op=f"undo {doc['op']}", id=secrets.token_hex(8), back_only=True)
    for key in ("undoable", "undoable_run", "fingerprint", "pid", "expect"):
        undo.pop(key, None)
    shutil.rmtree(home(g, patch_root) / "op", ignore_errors=True)
    copies = g.state_dir() / LAST / "copies"
    if copies.is_dir():
        # Copied, not moved: a kill before the journal below is written leaves the record
        # whole, and one after it leaves a journal with every copy it needs.
        shutil.copytree(copies, _copies(g, patch_root, undo))
    _write_doc(g, patch_root, undo)
    try:
        crashpoint("journal:recorded")
        _backward(g, patch_root, undo, recovering=False)
    except BaseException:
        # Ctrl-C or a failure: back to the operation's after state, its record kept, as
        # `run` rolls a transaction back; only a kill leaves the journal for `recover`.
        try:
            _forward(g, patch_root, undo, recovering=False)
        except Exception:  # noqa: BLE001 - the journal stays for `recover`
            pass
        else:
            _clear(g, patch_root, undo)
        raise
    _forget_last(g)
    _clear(g, patch_root, undo)
    return doc


@dataclass(frozen=True, slots=True)
class Record:
    """A journal as a later command reads it: the command, what kind of transaction it
    was, and whether it could only go back (`restore`, an undo)."""

    op: str
    kind: Kind
    back_only: bool = False
    reason: str = ""  # for people: messages, the reflog
    reorder: tuple[str, str] | None = None  # `Kind.REORDER_FINISHED`: (verb, patch)
    held: str = ""  # a result held back because the target changed: what changed

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Record:
        """The record of a journal document (one written before journals had a kind is
        a plain change, or, by the words it was written with, one of the two kinds a
        rebase resumes by)."""
        reason = str(doc.get("reason", ""))
        reorder = doc.get("reorder")
        kind = doc.get("kind")
        if kind is None:  # a journal of a patchq before kinds
            verb, _, name = reason.partition(" ")
            if verb in ("sink", "float") and name:
                kind, reorder = Kind.REORDER_FINISHED, [verb, name]
            else:
                kind = Kind.CONFLICT_SHOWN if reason.startswith("stopped") else Kind.CHANGE
        return cls(
            str(doc.get("op", "")),
            Kind(kind),
            bool(doc.get("back_only")),
            reason,
            (str(reorder[0]), str(reorder[1])) if reorder else None,
            str(doc.get("held") or ""),
        )


@dataclass(frozen=True, slots=True)
class Recovered:
    """What `recover` finished or undid: the command, the stash holding work found on the
    way, the stale `index.lock` of patchq's own killed git that it removed, and the
    journal's record."""

    op: str
    saved: str | None
    removed_lock: str | None
    record: Record
    # Whether the interrupted command was carried to its end: `--continue`, or any
    # recovery of one that itself went back (an undo, an abort), which has no other way.
    finished: bool = False


def recover(g: GitRepo | None, patch_root: Path, mode: str) -> Recovered:
    """Finish (`continue`) or undo (`abort`) an interrupted command."""
    doc = pending(g, patch_root)
    if doc is None:
        where = home(g, patch_root)
        tidy(g, patch_root)
        raise BadInputError("nothing to recover: no interrupted command", str(where))
    if doc.get("home") == "patch-repo":
        g = None
    elif g is None:
        raise BadInputError("the interrupted command changed a target", str(patch_root))
    forward = mode == "continue" and not doc.get("back_only")
    _check_journal(g, patch_root, doc, "after" if forward else "before")
    if g is not None:
        g.clear_stale_index_lock()
    if doc.get("held") and not forward:
        # Held back: nothing was carried out, so undoing it is forgetting it.
        _clear(g, patch_root, doc)
        return Recovered(str(doc.get("op")), None, None, Record.of(doc), finished=False)
    # Recovering: whatever the working tree holds now is not known to be ours, so it is
    # stashed before anything is forced. (Not decided by pid: in a container patchq is
    # often pid 1 every time.)
    saved = (
        _forward(g, patch_root, doc, recovering=True)
        if forward
        else _backward(g, patch_root, doc, recovering=True)
    )
    _forget_last(g)  # a recovered state is not the one the last record describes
    _clear(g, patch_root, doc)
    removed = g.removed_lock if g is not None else None
    finished = forward or bool(doc.get("back_only"))
    return Recovered(str(doc.get("op")), saved, removed, Record.of(doc), finished=finished)


def _check_journal(g: GitRepo | None, patch_root: Path, doc: dict[str, Any], side: str) -> None:
    """Refuse (exit 5) a journal that is not one patchq wrote, before it moves anything:
    a patch repo's `.patchq/` can come with a clone, and its journal must not make
    `recover` write outside the files patchq owns (`../../.bashrc`, `.git/hooks/…`) or
    copy a file from elsewhere into the patch repo (a copy reached through a symlink).
    `side`: the copies recovering reads (a back-only journal has no `after` copies)."""
    # A linked journal folder never gets here: `home` refuses it (exit 4).
    where = str(home(g, patch_root) / JOURNAL)
    ident = doc.get("id")
    if not (isinstance(ident, str) and ident and all(c in "0123456789abcdef" for c in ident)):
        raise UnsafeStateError("the journal's id is not patchq's", where, _NOT_OURS)
    own_recipe = recipe.named(patch_root)
    for kind in (FILES, STATE):
        entries = doc.get(kind, {})
        if not isinstance(entries, dict):
            raise UnsafeStateError(f"the journal's {kind} are damaged", where, _NOT_OURS)
        for rel, sides in entries.items():
            ok = (_owned_file(rel) or rel == own_recipe) if kind == FILES else _state_name(rel)
            if not ok or not isinstance(sides, dict):
                raise UnsafeStateError(
                    f"the journal names {rel!r}, which is no file patchq writes there",
                    where,
                    _NOT_OURS,
                )
            copy = f"op/{ident}/{kind}/{side}/{rel}"
            if sides.get(side) and not _plain_copy(home(g, patch_root), copy):
                raise UnsafeStateError(
                    f"the journal's copy of {rel!r} is not a file in its folder",
                    where,
                    _NOT_OURS,
                )


_NOT_OURS = "remove that journal (and its `op/` folder) if it is not from a patchq you ran"
_OWNED = (CONFIG, SERIES, LOCK, PATCHES, RESOLUTIONS)


def _owned_file(rel: object) -> bool:
    """Whether `rel` names a file patchq writes in a patch repo: its own names, no `..`,
    no `.git` in any spelling, nothing absolute."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\0" in rel:
        return False
    parts = rel.split("/")
    if any(p in ("", ".", "..") or p.lower().rstrip(". ") == ".git" for p in parts):
        return False
    return parts[0] in _OWNED and (len(parts) == 1) == (parts[0] not in (PATCHES, RESOLUTIONS))


def _state_name(rel: object) -> bool:
    """Whether `rel` is a plain file name in the state folder."""
    return (
        isinstance(rel, str) and bool(rel) and "/" not in rel and rel not in (".", "..")
    ) and "\0" not in rel


def _plain_copy(folder: Path, rel: str) -> bool:
    """Whether `folder/rel` is a regular file reached through no symlink."""
    path = folder / rel
    return inside(folder, rel) and not path.is_symlink() and path.is_file()


def _copies(g: GitRepo | None, patch_root: Path, doc: dict[str, Any]) -> Path:
    """The folder of this journal's copies, named by its id."""
    return home(g, patch_root) / "op" / str(doc["id"])


def _roots(g: GitRepo | None, patch_root: Path) -> dict[str, Path]:
    roots = {FILES: patch_root}
    if g is not None:
        roots[STATE] = g.state_dir()
    return roots


def _record(
    g: GitRepo | None, patch_root: Path, plan: Plan, held: str | None = None
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "op": plan.op,
        "id": secrets.token_hex(8),
        "home": "target" if g is not None else "patch-repo",
        "pid": os.getpid(),
        "queue": plan.queue,
        "reason": plan.reason,
        "kind": plan.kind,
        "reorder": None if plan.reorder is None else list(plan.reorder),
        "branch": plan.branch,
        "undoable_run": plan.undoable,
    }
    if held is not None:
        doc["held"] = held  # recorded, never carried out: the target changed meanwhile
    if plan.expect is not None:
        doc["expect"] = {"branch_ref": plan.expect.branch_ref}
    # Whatever an earlier journal left in the copies folder is not this run's.
    shutil.rmtree(home(g, patch_root) / "op", ignore_errors=True)
    d = _copies(g, patch_root, doc)
    roots = _roots(g, patch_root)
    for kind, changes in ((FILES, plan.files), (STATE, plan.state)):
        entries: dict[str, dict[str, bool]] = {}
        for rel, new in changes.items():
            old = roots[kind] / rel
            before = old.is_file()
            if before:
                dest = d / kind / "before" / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(old, dest)
            if new is not None:
                dest = d / kind / "after" / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(new)
            entries[rel] = {"before": before, "after": new is not None}
        doc[kind] = entries
    if g is not None:
        sp = stack_path(g.state_dir(), plan.queue)
        doc["before"] = {
            "branch_ref": g.try_resolve(f"refs/heads/{plan.branch}") if plan.branch else None,
            "head_branch": g.current_branch(),
            "head": g.head(),
            "stack": json.loads(sp.read_text()) if sp.exists() else None,
        }
    else:
        doc["before"] = {"branch_ref": None, "head_branch": None, "head": None, "stack": None}
    doc["after"] = {
        "head": plan.head,
        "stack": None if plan.stack is None else stackfile.to_doc(plan.stack),
        "worktree": plan.worktree,
        "overlay": plan.overlay,
        "intent_to_add": list(plan.intent_to_add),
    }
    _write_doc(g, patch_root, doc)
    return doc


def _write_doc(g: GitRepo | None, patch_root: Path, doc: dict[str, Any]) -> None:
    """Write the journal `doc` in its home, with the home's identity: only a journal
    this folder holds on this machine is ever replayed (`_read`)."""
    h = home(g, patch_root)
    h.mkdir(parents=True, exist_ok=True)
    doc["home_id"] = home_identity(h)
    path = h / JOURNAL
    atomic_write(path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())


def _stash_if_dirty(
    g: GitRepo, patch_root: Path, doc: dict[str, Any]
) -> tuple[str | None, list[str]]:
    """Before forcing a checkout while recovering: stash the working tree's changes unless
    every changed file is as one side of the interrupted command holds it (a checkout
    killed halfway leaves files of both sides, none of them the person's). Returns the
    stash, and the files of ours to remove if the forced checkout leaves them untracked."""
    own = own_paths(patch_root, g.root)
    dirty = g.dirty_paths(own)
    if not dirty:
        return None, []
    before, after = doc["before"], doc["after"]
    sides = [before.get("head"), before.get("branch_ref"), after.get("head"), after.get("overlay")]
    # With the stale lock of patchq's killed git just removed, a file cut short on the
    # way to the tree that git was writing is its torn write, not the person's edit: the
    # after side going forward, the before side going back (an `undo`, a rollback).
    torn = [s for s in sides if s] if g.removed_lock else []
    if not g.foreign_files(dirty, [s for s in sides if s], torn):
        return None, [p for p in dirty if (g.root / p).is_file() or (g.root / p).is_symlink()]
    return g.stash_save(f"patchq: saved while recovering {doc['op']}"), []


def _remove_leftovers(g: GitRepo, paths: list[str]) -> None:
    """Files a killed checkout wrote that the checked-out side does not track: ours."""
    if not paths:
        return
    for rel in set(paths) & set(g.untracked()):
        path = g.root / rel
        if inside(g.root, rel):
            path.unlink(missing_ok=True)
            for parent in path.parents:
                if parent == g.root:
                    break
                try:
                    parent.rmdir()
                except OSError:
                    break


def _forward(
    g: GitRepo | None, patch_root: Path, doc: dict[str, Any], recovering: bool
) -> str | None:
    after = doc["after"]
    saved = None
    if after["head"] is not None and g is not None:
        saved = _move_forward(g, patch_root, doc, recovering)
    crashpoint("journal:target-moved")
    _put_files(g, patch_root, doc, "after")
    if g is not None and after["stack"] is not None:
        save(g.state_dir(), doc["queue"], stackfile.from_doc(after["stack"]))
    return saved


def _move_forward(
    g: GitRepo, patch_root: Path, doc: dict[str, Any], recovering: bool
) -> str | None:
    after, branch = doc["after"], doc["branch"]
    why = f"{doc['op']} {doc.get('reason', '')}".strip()
    reason = f"patchq: {why}"
    saved = None
    head = after["head"]
    if after["worktree"] == CHECKOUT:
        if recovering:
            # A killed checkout may have left some files half-moved; keep anything that
            # is not what either side holds in a stash, then force.
            saved, ours = _stash_if_dirty(g, patch_root, doc)
            g.checkout_branch(branch, head, why, force=True)
            _remove_leftovers(g, ours)
        elif g.current_branch() == branch and g.head() == head:
            pass  # already there (a push that stopped at its first patch)
        elif "expect" in doc:
            try:
                g.move_checked_out(branch, head, doc["expect"]["branch_ref"], why)
            except GitError as err:
                raise _Raced(err) from err
        else:
            g.checkout_branch(branch, head, why)
        if after.get("overlay"):
            g.overlay(head, after["overlay"])
            g.intend_to_add(after.get("intent_to_add") or [])
    elif after["worktree"] == INDEX and g.current_branch() == branch:
        # The working tree holds the person's edits: move only the branch and the index.
        g.reset_to(head, why)
    else:
        g.update_ref(f"refs/heads/{branch}", head, None, reason)
    return saved


def _backward(
    g: GitRepo | None, patch_root: Path, doc: dict[str, Any], recovering: bool
) -> str | None:
    before, after = doc["before"], doc["after"]
    saved = None
    _put_files(g, patch_root, doc, "before")
    if after["head"] is not None and g is not None:
        saved = _move_backward(g, patch_root, doc, recovering)
    if g is not None and after["stack"] is not None:
        if before["stack"] is None:
            stack_path(g.state_dir(), doc["queue"]).unlink(missing_ok=True)
        else:
            save(g.state_dir(), doc["queue"], stackfile.from_doc(before["stack"]))
    return saved


def _move_backward(
    g: GitRepo, patch_root: Path, doc: dict[str, Any], recovering: bool
) -> str | None:
    before, after, branch = doc["before"], doc["after"], doc["branch"]
    why = f"undo {doc['op']}"
    reason = f"patchq: {why}"
    saved = None
    old_ref = before["branch_ref"]
    if after["worktree"] == CHECKOUT:
        ours: list[str] = []
        if recovering:
            saved, ours = _stash_if_dirty(g, patch_root, doc)
        if before["head_branch"] == branch and old_ref:
            g.checkout_branch(branch, old_ref, why, force=True)
        else:
            g.restore_head(before["head_branch"], before["head"])
            if old_ref:
                g.update_ref(f"refs/heads/{branch}", old_ref, None, reason)
            elif g.try_resolve(f"refs/heads/{branch}"):
                g.delete_branch(branch)
        _remove_leftovers(g, ours)
    elif old_ref:
        if after["worktree"] == INDEX and g.current_branch() == branch:
            g.reset_to(old_ref, why)
        else:
            g.update_ref(f"refs/heads/{branch}", old_ref, None, reason)
    return saved


def _put_files(g: GitRepo | None, patch_root: Path, doc: dict[str, Any], side: str) -> None:
    """Give the journaled files (patch repo, then state) their `before` or `after` bytes;
    none through a symlink out of the patch repo."""
    d = _copies(g, patch_root, doc)
    roots = _roots(g, patch_root)
    for kind in (FILES, STATE):
        root = roots[kind] if kind == FILES else None
        for rel, f in doc.get(kind, {}).items():
            dest = roots[kind] / rel
            if f[side]:
                data = (d / kind / side / rel).read_bytes()
                # A file that already holds these bytes is not written again: rolling
                # back a transaction whose writes never happened (a read-only patch
                # repo) must not fail on the very files it never changed.
                if not (dest.is_file() and not dest.is_symlink() and dest.read_bytes() == data):
                    atomic_write(dest, data, root)
            elif root is not None:
                remove(dest, root)  # through a symlink inside, which stays
            else:
                dest.unlink(missing_ok=True)
            if side == "after":
                crashpoint(f"journal:{'file' if kind == FILES else 'state'}-written")


def _clear(g: GitRepo | None, patch_root: Path, doc: dict[str, Any]) -> None:
    h = home(g, patch_root)
    if g is not None and doc.get("held"):
        g.drop_ref(held_ref(str(doc.get("queue"))))
    (h / JOURNAL).unlink(missing_ok=True)
    shutil.rmtree(h / "op", ignore_errors=True)
    if g is None:
        try:
            h.rmdir()  # the patch repo's `.patchq/` exists only while a journal does
        except OSError:
            pass
