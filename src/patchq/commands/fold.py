"""`fold`: merge an unapplied patch into the top patch and drop it from the series."""

from __future__ import annotations

from dataclasses import dataclass, replace

from patchq.core.errors import BadInputError
from patchq.core.header import folded_header
from patchq.core.series import Series
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import apply_series, ident_date, identity, load_patch, raise_failure
from patchq.stack.context import Context
from patchq.stack.refresh import files_of, render_refreshed
from patchq.store.patchrepo import PATCHES, SERIES
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class FoldOutcome:
    """The patch folded and the top patch it went into."""

    name: str
    into: str


def fold(ctx: Context, name: str) -> FoldOutcome:
    """Merge the unapplied patch `name` into the top patch, and drop it from the series."""
    repo, g = ctx.repo(), ctx.git()
    entry = stack_ops.entry(repo, name)
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = stack_ops.open_stack(ctx, create=False)
        if not stack.applied:
            raise BadInputError("no patch is applied to fold into", str(g.root))
        if name in stack.applied:
            raise BadInputError(
                f"{name} is applied; only an unapplied patch can be folded", "series"
            )
        stack_ops.protect(ctx, False, "fold", can_force=False)
        top = stack.applied[-1]
        k = len(stack.applied) - 1
        w = g.writer()
        res = apply_series(g, repo, stack.head, [entry], commits=False)
        if res.failure is not None:
            raise_failure(res.failure)
        parent_tree = g.commit_info(stack.commit_below(k))["tree"].decode()
        top_entry = repo.series.find(top)
        assert top_entry is not None
        _, old_patch = load_patch(repo, top_entry)
        _, folded = load_patch(repo, entry)
        # The folded patch's description joins the top's, as `stg squash` keeps both.
        old_patch = replace(old_patch, header=folded_header(old_patch.header, folded.header))
        w.flush()  # git diff-tree below reads the folded tree from the object store
        data = render_refreshed(
            old_patch,
            g.diff_trees(parent_tree, res.tree, repo.config.context, full_index=True),
            repo.display(top),
            top_entry.strip_level(repo.config.strip),
            style=repo.config.style,
            old_file=files_of(g, parent_tree),
        )
        # The top's commit says what pushing the new patch file would: its new message.
        when, tz = ident_date(g.commit_info(stack.base)["committer"])
        author, message = identity(top, old_patch, when, tz, g.user_identity())
        commit = g.commit_object(res.tree, [stack.commit_below(k)], message, author, author)
        new = replace(stack, commits=stack.commits[:-1] + (commit,))
        w.flush()
        remaining = Series(tuple(e for e in repo.series.entries if e.name != name))
        journal.run(
            g,
            repo.root,
            journal.Plan(
                "fold",
                new.branch,
                new.head,
                new,
                repo.config.queue,
                files={
                    f"{PATCHES}/{top}": data,
                    SERIES: stack_ops.series_bytes(remaining),
                    f"{PATCHES}/{name}": None,
                },
                reason=f"{name} into {top}",
            ),
        )
    return FoldOutcome(name, top)
