"""`rename`: rename a patch's file and series line (strip level and guards kept).

An applied patch without a header has its name as its commit subject, so its commit
follows the new name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from patchq.core.errors import BadInputError
from patchq.core.series import Series, make_entry
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import load_patch
from patchq.stack.context import Context
from patchq.store.patchrepo import PATCHES, SERIES
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
    fresh = make_entry(new_name, entry.strip, entry.guards)
    with run_lock(g.state_dir(), ctx.repo().root):
        stack_ops.refuse_during_rebase(ctx)
        data, patch = load_patch(repo, entry)
        stack = load(g.state_dir(), repo.config.queue)
        series = Series(
            tuple(
                replace(fresh, lineno=e.lineno) if e.name == old else e for e in repo.series.entries
            )
        )
        files: dict[str, bytes | None] = {
            f"{PATCHES}/{new_name}": data,
            SERIES: stack_ops.series_bytes(series),
            f"{PATCHES}/{old}": None,
        }
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
