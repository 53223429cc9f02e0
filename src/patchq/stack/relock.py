"""Keeping `series.lock` and the last rebase's review true after a patch is edited.

The common end of a rebase is a person fixing what it got wrong — a build error, a merge
that went the wrong way — with `refresh`. Left alone, `verify` would then call the
reviewed series "different from series.lock" and `report` would show the rebase's
version of the patch, not the one committed. So `refresh` asks `relock` for the new
lock and the new review record and writes them in its own transaction: the lock's hash
of the patch, its result tree and files (the whole series re-applied on the lock's base,
in memory, as `verify` will), and, when the lock is the last rebase's, that patch marked
`resolved` in the review, its interdiff running from before the rebase to the fix.

Nothing is brought up to date where that would be a lie: a stack not on the lock's base
(left to `verify`, which names the command), or a series that no longer applies exactly
on it (then `note` says so, and what to do).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from patchq.core.lock import Lock, records_for, sha256
from patchq.core.records import LastRebase
from patchq.core.status import Outcome
from patchq.git.repo import GitRepo
from patchq.stack.apply import Failure, apply_series, with_placements
from patchq.store import pinned, rebasestate
from patchq.store.patchrepo import LOCK, PatchRepo
from patchq.store.statedir import last_rebase_path

# The lock's outcomes a person's edit after the rebase turns into `resolved`.
_BY_THE_REBASE = (Outcome.UNCHANGED, Outcome.REFRESHED, Outcome.MERGED, Outcome.NEW)


@dataclass(frozen=True, slots=True)
class Relock:
    """What to write with the edited patch: the patch-repo files (the lock) and patchq's
    state files (the review record), by name; or why the lock stays as it was."""

    files: dict[str, bytes] = field(default_factory=dict)
    state: dict[str, bytes] = field(default_factory=dict)
    note: str | None = None

    @property
    def updated(self) -> bool:
        return bool(self.files)


def reapplied(g: GitRepo, written: PatchRepo, lock: Lock) -> Lock | Failure:
    """`lock` brought up to date with the patch repo `written` (edits staged, perhaps a
    reordered series): the active series re-applied on the lock's base in memory, as
    `verify` will, its records carried over; or where it no longer applies exactly."""
    entries = written.series.active(lock.guards)
    with g.dry_run():
        res = apply_series(g, written, lock.base, entries, fuzz=lock.fuzz, commits=False)
    if res.failure is not None:
        return res.failure
    datas = [(e.name or "", written.read_patch(e.name or "")) for e in entries]
    records = with_placements(
        records_for(datas, lock, [e.raw for e in written.series.entries]), res.patches
    )
    return Lock(lock.base, res.tree, res.files, lock.guards, records, lock.last_rebase)


def not_updated(failure: Failure, base: str, stack_base: str | None = None) -> str:
    """Why series.lock was left as it was: the patch that no longer applies on its base.
    With the stack on another base (`stack_base`: `push --merge` onto a newer upstream,
    the patch refreshed there), the command that pins the series on the stack's base."""
    if stack_base is not None and stack_base != base:
        return (
            f"series.lock not updated: {failure.display} no longer applies exactly on its "
            f"base {base[:12]} (the stack is on {stack_base[:12]}; `patchq apply --onto "
            f"{stack_base[:12]} --force` pins the series there)"
        )
    return (
        f"series.lock not updated: {failure.display} no longer applies exactly "
        f"on its base {base[:12]} (refresh the patches above, then `patchq apply`)"
    )


def after_edit(
    g: GitRepo, repo: PatchRepo, stack_base: str, name: str, *, before: bytes, data: bytes
) -> Relock:
    """The lock and review record once patch `name` holds `data` instead of `before`
    (the stack on `stack_base`); nothing to write where there is no lock."""
    lock = repo.read_lock()
    if lock is None:
        return Relock()
    if lock.base != stack_base:
        # The stack is being worked on another base (`push --merge` onto a newer
        # upstream): the lock is not this stack's to update; `verify` says what to run.
        # The bytes it pins for the patch are kept, so that the patches after it still
        # have their pre-images on the lock's base (store/pinned.py).
        return Relock(state=_keep_pinned(g, repo, lock, name, before))
    new = reapplied(g, replace(repo, staged={**repo.staged, name: data}), lock)
    if isinstance(new, Failure):
        return Relock(note=not_updated(new, lock.base))
    records = new.patches
    last_path = last_rebase_path(g.state_dir(), repo.config.queue)
    last = rebasestate.read_last(last_path)
    state: dict[str, bytes] = {}
    rebased = (
        last is not None
        and lock.last_rebase is not None
        and last.onto == lock.base == lock.last_rebase.get("onto")
        and any(p.name == name for p in last.patches)
    )
    if rebased and last is not None:
        records = tuple(
            replace(r, rebase="resolved") if r.name == name and r.rebase in _BY_THE_REBASE else r
            for r in records
        )
        state[last_path.name] = rebasestate.last_bytes(_edited_review(last, name, before, data))
    return Relock({LOCK: replace(new, patches=records).to_json()}, state)


def _keep_pinned(
    g: GitRepo, repo: PatchRepo, lock: Lock, name: str, before: bytes
) -> dict[str, bytes]:
    """The pinned-copies record with `before` kept, where the lock pins it for `name`."""
    record, sha = lock.record(name), sha256(before)
    if record is None or record.sha256 != sha:
        return {}
    path = pinned.pinned_path(g.state_dir(), repo.config.queue)
    hashes = {p.sha256 for p in lock.patches}
    return {path.name: pinned.kept(pinned.read(path), sha, before, hashes)}


def _edited_review(last: LastRebase, name: str, before: bytes, data: bytes) -> LastRebase:
    """The review with `name` resolved by hand: its new bytes `data`; its old bytes
    those from before the rebase (kept where the rebase already rewrote it)."""
    old = dict(last.old)
    if name not in old:
        # The rebase left the file as it was: the file before this edit is its old self.
        old[name] = before
    new = dict(last.new) | {name: data}
    patches = tuple(
        replace(p, outcome="resolved") if p.name == name and p.outcome in _BY_THE_REBASE else p
        for p in last.patches
    )
    return replace(last, patches=patches, old=tuple(old.items()), new=tuple(new.items()))
