"""`verify`: the proof that the series still reproduces what `series.lock` promises.

The series is re-applied onto the lock's base without writing anything and compared
with the lock's result tree and files; where the base commit is missing, the locked
files in the target are the base.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from patchq.core.errors import BadInputError
from patchq.core.lock import Lock, sha256
from patchq.core.paths import FileMode, check_path
from patchq.core.series import Entry
from patchq.core.status import GONE
from patchq.git.memtree import MemTree
from patchq.git.objects import Ident, object_id
from patchq.git.repo import GitRepo
from patchq.stack.apply import apply_series
from patchq.stack.context import Context
from patchq.store.stack import load


@dataclass(frozen=True, slots=True)
class VerifyOutcome:
    """Whether the series reproduces the lock, and each way it does not."""

    ok: bool
    expected_tree: str | None
    tree: str | None
    problems: tuple[str, ...]
    mode: str = "tree"  # "tree": re-applied on the base commit; "files": on the locked files
    # The command that brings series.lock up to date with patches edited since it was
    # written (None where no patch was).
    hint: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when the series reproduces the lock, 1 when it differs."""
        return 0 if self.ok else 1


def verify(ctx: Context, files_only: bool = False) -> VerifyOutcome:
    """Re-apply onto the lock's base in memory; compare with result_tree and files.

    Where the base commit is not in the target (a shallow or partial checkout), or with
    `files_only`, the base is rebuilt from the target's copies of the locked files, which
    must be exactly as the lock says they were at the base.
    """
    repo, g = ctx.repo(), ctx.git()
    lock = repo.read_lock()
    if lock is None:
        raise BadInputError(
            "no series.lock to verify against", str(repo.lock_path), "run `patchq apply` first"
        )
    entries = repo.series.active(lock.guards)
    problems = _hash_problems(ctx, lock, entries)
    hint = (
        "the patches changed since series.lock was written: `patchq apply --pin` pins them "
        f"on {lock.base[:12]} again (`patchq refresh` records an edit as it makes it)"
        if problems
        else None
    )
    g.writer(dry_run=True)  # verify writes no object
    mode = "tree"
    base = lock.base
    if files_only or not g.has_object(lock.base):
        mode = "files"
        base_or_problems = _sparse_base(g, lock)
        if isinstance(base_or_problems, list):
            return VerifyOutcome(
                False, lock.result_tree, None, tuple(problems + base_or_problems), mode, hint
            )
        base = base_or_problems
    result = apply_series(g, repo, base, entries, fuzz=lock.fuzz, commits=False)
    if result.failure is not None:
        problems.append(
            f"{result.failure.display}: does not apply exactly on the base: "
            f"{result.failure.message()}"
        )
        stack = load(g.state_dir(), repo.config.queue)
        if hint is not None and stack is not None and stack.base != lock.base:
            # Refreshed on the stack's base (a `push --merge` onto a newer upstream): it
            # will not apply on the lock's again; the lock follows the stack there.
            hint = (
                f"the patches changed since series.lock was written, on the stack's base "
                f"{stack.base[:12]}: `patchq apply --onto {stack.base[:12]} --force` pins "
                "them there"
            )
        return VerifyOutcome(False, lock.result_tree, None, tuple(problems), mode, hint)
    if mode == "tree" and lock.result_tree is not None and result.tree != lock.result_tree:
        problems.append(
            f"result tree {result.tree[:12]} differs from the lock's {lock.result_tree[:12]}"
        )
    for path, (b, r) in sorted(lock.files.items()):
        got = result.files.get(path)
        if got is None:
            if b != r:
                problems.append(f"{path}: the lock lists it but the series no longer touches it")
        elif got != (b, r):
            problems.append(f"{path}: blob {_short(got[1])} differs from the lock's {_short(r)}")
    for path in sorted(set(result.files) - set(lock.files)):
        problems.append(f"{path}: touched by the series but not in the lock")
    return VerifyOutcome(
        not problems,
        lock.result_tree,
        result.tree if mode == "tree" else None,
        tuple(problems),
        mode,
        hint,
    )


def _hash_problems(ctx: Context, lock: Lock, entries: Sequence[Entry]) -> list[str]:
    """Patches added, removed or edited since the lock was written (first changed first)."""
    repo = ctx.repo()
    problems: list[str] = []
    locked = [p.name for p in lock.patches if p.rebase not in GONE]
    names = [e.name or "" for e in entries]
    for name in names:
        rec = lock.record(name)
        if rec is None:
            problems.append(f"{repo.display(name)}: not in series.lock (added since)")
        elif rec.sha256 != sha256(repo.read_patch(name)):
            problems.append(f"{repo.display(name)}: changed since series.lock was written")
    for name in locked:
        if name not in names:
            problems.append(f"{name}: in series.lock but no longer in the active series")
    return problems


def _sparse_base(g: GitRepo, lock: Lock) -> str | list[str]:
    """An in-memory commit holding just the locked files as the target has them, if they
    are exactly as at the lock's base; else the list of files that are not."""
    tree = MemTree(g.read_tree, None)
    bad = []
    for path, (before, _) in sorted(lock.files.items()):
        parts = check_path(path, "series.lock")
        full = g.root.joinpath(*(p.decode("utf-8", "surrogateescape") for p in parts))
        if full.is_symlink():
            bad.append(f"{path}: is a symlink in the target")
            continue
        data = full.read_bytes() if full.is_file() else None
        have = object_id("blob", data) if data is not None else None
        if have != before:
            bad.append(
                f"{path}: not as at the pinned base {lock.base[:12]} "
                f"(blob {_short(have)}, expected {_short(before)})"
            )
        elif data is not None:
            mode = FileMode.EXECUTABLE if os.access(full, os.X_OK) else FileMode.REGULAR
            tree.set(path, mode, g.objects.add("blob", data))
    if bad:
        return bad
    ident = Ident("patchq", "patchq@invalid", 0)
    return g.commit_object(
        tree.write(g.objects), [], "the locked files at the base\n", ident, ident
    )


def _short(oid: str | None) -> str:
    return oid[:12] if oid else "(absent)"
