"""What a run works on: the stack branch, the active patches and the base to apply onto.

Shared by the verbs that apply, check and rebase a series, so each decides these the
same way: `--onto`, else the lock's base, else the config's `pin` or upstream branch.
"""

from __future__ import annotations

from collections.abc import Sequence

from patchq.core.errors import BadInputError, UnsafeStateError
from patchq.core.records import Stack
from patchq.core.series import Entry
from patchq.git.repo import GitRepo
from patchq.stack.context import Context
from patchq.store.stack import load


def branch_name(ctx: Context, branch: str | None) -> str:
    name = branch or f"patchq/{ctx.repo().config.queue}"
    if not name or name.startswith("-") or any(c.isspace() for c in name) or ".." in name:
        raise BadInputError(f"invalid branch name {name!r}", "--branch")
    return name


def active_entries(
    ctx: Context, guards: Sequence[str] | None
) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    repo = ctx.repo()
    active = tuple(guards) if guards is not None else repo.config.guards
    return active, repo.series.active(active)


def choose_base(ctx: Context, onto: str | None) -> str:
    """--onto, else the lock's base, else the config's `pin`, else the configured upstream
    branch, else HEAD."""
    g = ctx.git()
    if onto:
        return g.resolve(onto)
    lock = ctx.repo().read_lock()
    if lock is not None:
        if not g.has_object(lock.base):
            raise BadInputError(
                f"the lock's base {lock.base[:12]} is not in the target",
                str(g.root),
                "fetch it, or give --onto REF",
            )
        return lock.base
    pin = ctx.repo().config.pin
    if pin:
        return g.resolve(pin)
    branch = ctx.repo().config.branch
    if branch:
        for ref in (f"origin/{branch}", branch):
            oid = g.try_resolve(ref)
            if oid:
                return oid
    head = g.head()
    if head is None:
        raise BadInputError("the target has no commits", str(g.root), "give --onto REF")
    return head


def default_onto(ctx: Context, g: GitRepo, onto: str | None) -> tuple[str, str]:
    """REF given, else the configured upstream branch (origin/<branch>, then <branch>)."""
    if onto:
        return onto, g.resolve(onto)
    branch = ctx.repo().config.branch
    if branch:
        for ref in (f"origin/{branch}", branch):
            oid = g.try_resolve(ref)
            if oid:
                return ref, oid
    raise BadInputError(
        "no upstream to check against",
        str(ctx.repo().root),
        "give --onto REF, or set `branch` in patchq.toml",
    )


def old_base(ctx: Context, g: GitRepo) -> tuple[str, tuple[str, ...]]:
    """The pinned base (the lock's, else the applied stack's) and the guards it used."""
    repo = ctx.repo()
    lock = repo.read_lock()
    if lock is not None:
        if not g.has_object(lock.base):
            raise BadInputError(
                f"the lock's base {lock.base[:12]} is not in the target",
                str(g.root),
                "fetch upstream history first",
            )
        return lock.base, lock.guards
    stack = load(g.state_dir(), repo.config.queue)
    if stack is not None:
        return stack.base, repo.config.guards
    raise BadInputError(
        "no series.lock and no applied stack: nothing pins the old base",
        str(repo.lock_path),
        "run `patchq apply --onto OLD-BASE` first",
    )


def check_branch(g: GitRepo, stack: Stack) -> None:
    """The target must be on the stack's branch, at the recorded top."""
    current = g.current_branch()
    if current != stack.branch:
        raise UnsafeStateError(
            f"the target is on {current or 'a detached HEAD'}, not on the "
            f"stack branch {stack.branch}",
            str(g.root),
            f"`git checkout {stack.branch}` first",
        )
    head = g.head()
    if head != stack.head:
        raise UnsafeStateError(
            f"{stack.branch} moved outside patchq (now {str(head)[:12]}, "
            f"expected {stack.head[:12]})",
            str(g.root),
            "reset it, or re-apply with `patchq apply`",
        )


def check_own_branch(g: GitRepo, name: str, queue: str, force: bool) -> None:
    """Refuse (exit 5) to reset a branch the stack did not make: `name` exists and is not
    the recorded stack branch at its recorded top (another branch of the person's, or the
    stack branch with commits made on it with git). `--force` resets it; its commits
    stay in the branch's reflog."""
    tip = g.try_resolve(f"refs/heads/{name}")
    if tip is None or force:
        return
    stack = load(g.state_dir(), queue)
    if stack is not None and stack.branch == name and tip == stack.head:
        return
    if g.try_resolve(f"refs/remotes/origin/{name}") == tip:
        return  # a clone's copy of a stack branch made elsewhere: origin keeps it
    why = (
        f"has commits made outside patchq (now {tip[:12]}, expected {stack.head[:12]})"
        if stack is not None and stack.branch == name
        else f"exists (at {tip[:12]}) and patchq did not make it"
    )
    raise UnsafeStateError(
        f"branch {name} {why}",
        str(g.root),
        "name another with --branch, or give --force to reset it",
    )
