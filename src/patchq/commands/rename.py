"""`rename`: rename a patch's file and series line (strip level and guards kept).

An applied patch without a header has its name as its commit subject, so its commit
follows the new name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from patchq.core.errors import BadInputError
from patchq.core.series import Entry, Series, make_entry
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import load_patch
from patchq.stack.context import Context
from patchq.store.patchrepo import LOCK, PATCHES, SERIES
from patchq.store.stack import load
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class RenameOutcome:
    """The patch's old and new name."""

    old: str
    new: str


def rename(ctx: Context, old: str, new_name: str) -> RenameOutcome:
    """Rename a patch's file and series line (strip level and guards kept)."""
    repo, g = ctx.repo(), ctx.git()
    entry = stack_ops.entry(repo, old)
    target = repo.patch_path(new_name)
    if target.exists() or repo.series.find(new_name) is not None:
        raise BadInputError(f"patch {new_name!r} already exists", str(target))
    make_entry(new_name)  # refuses a name no series line can hold, before anything is written
    with run_lock(g.state_dir(), ctx.repo().root):
        stack_ops.refuse_during_rebase(ctx)
        data, patch = load_patch(repo, entry)
        stack = load(g.state_dir(), repo.config.queue)
        series = Series(
            tuple(_renamed(e, new_name) if e.name == old else e for e in repo.series.entries)
        )
        files: dict[str, bytes | None] = {
            f"{PATCHES}/{new_name}": data,
            SERIES: stack_ops.series_bytes(series),
            f"{PATCHES}/{old}": None,
        }
        lock = repo.read_lock()
        if lock is not None and lock.record(old) is not None:
            # The same bytes under a new name: the record (its hash, placements, what the
            # last rebase did) follows the name, so `verify` passes as before.
            records = tuple(replace(r, name=new_name) if r.name == old else r for r in lock.patches)
            files[LOCK] = replace(lock, patches=records).to_json()
        if stack is not None and old in stack.applied:
            # A header-less patch's commit subject is its name: follow the new one.
            renamed = replace(
                stack, applied=tuple(new_name if n == old else n for n in stack.applied)
            )
            stack_ops.rewrite_messages(g, repo, renamed, new_name, patch, op="rename", files=files)
        else:
            journal.run(
                g,
                repo.root,
                journal.Plan(
                    "rename",
                    "",
                    None,
                    None,
                    repo.config.queue,
                    files=files,
                    reason=f"{old} to {new_name}",
                ),
            )
    return RenameOutcome(old, new_name)


def _renamed(entry: Entry, new_name: str) -> Entry:
    """The series line with its first word, the name, replaced: its strip level, guards,
    comment and spacing kept as they were written."""
    assert entry.name is not None
    lead = len(entry.raw) - len(entry.raw.lstrip(" \t"))
    raw = entry.raw[:lead] + new_name + entry.raw[lead + len(entry.name) :]
    return replace(entry, raw=raw, name=new_name)
