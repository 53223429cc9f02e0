"""`refresh`: write the working tree's changes into the top (or a named applied) patch.

The new patch file keeps its header and unchanged hunks byte for byte; refreshing a
patch below the top carries the edits down to it and rebuilds the commits above.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from patchq.core.errors import BadInputError, ConflictError, UnsafeStateError
from patchq.core.header import mails
from patchq.core.patch import parse
from patchq.core.records import Stack
from patchq.core.text import shortened
from patchq.stack import journal, relock
from patchq.stack import moves as stack_ops
from patchq.stack.apply import SectionState, apply_section, apply_series, load_patch
from patchq.stack.context import Context
from patchq.stack.refresh import files_of, render_refreshed
from patchq.store.patchrepo import PATCHES
from patchq.store.statedir import run_lock


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    """The patch refreshed, whether its file changed, and the untracked files left out."""

    name: str
    changed: bool
    untracked: tuple[str, ...]
    # Whether series.lock (and the last rebase's review) were brought up to date, or why
    # not (stack/relock.py).
    relocked: bool = False
    lock_note: str | None = None
    from_file: bool = False  # `--from-file`: the commit was rebuilt from the patch file


# Which side wins when the patch file changed since it was applied (`--from-…`).
FROM_COMMIT, FROM_FILE = "commit", "file"


def _refuse_a_stop_without_its_merge(ctx: Context, stack: Stack, clean: bool) -> None:
    """A `push --merge` stop's commit holds none of its patch (the merge is in the
    working tree): a working tree that holds nothing beyond it lost the merge (saved in
    a stash by a `pop --force` or `delete` since undone), and taking it would empty the
    patch file. Refused (exit 5), nothing changed."""
    stop = stack_ops.pushed_stop(ctx, stack) if clean else None
    if stop is None:
        return
    raise UnsafeStateError(
        f"the working tree no longer holds the merge the push stopped at {stop.patch} with: "
        "taking it would empty the patch",
        str(ctx.git().root),
        "`git stash list` shows it if a command saved it (`git stash pop` puts it back); "
        "`patchq push --abort` gives the push up",
    )


def refresh(
    ctx: Context,
    name: str | None,
    wins: str | None = None,
    going_on: stack_ops.PushStop | None = None,
) -> RefreshOutcome:
    """Regenerate the top (or named applied) patch from the working tree. A patch file
    holding several mails, or one changed since it was applied, is never written over
    unless `wins` says which side to take: the person's text is never lost to a refresh.
    `going_on`: the `push --merge` stop a `push --continue` takes the tree of, recorded
    with the patch so that a kill before the push on is said and can be gone on from."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = stack_ops.open_stack(ctx, create=False)
        if not stack.applied:
            raise BadInputError("no patch is applied", str(g.root), "`patchq push` first")
        name = name or stack.applied[-1]
        if name not in stack.applied:
            raise BadInputError(f"{name!r} is not applied", "series", "push it first")
        k = stack.applied.index(name)
        if k < len(stack.applied) - 1:
            # The tree holds the stopped push's merge of the top patch, not edits of this one.
            stack_ops.refuse_at_push_stop(
                ctx,
                f"refreshing {name} below it",
                f"`patchq push --continue` (or `patchq refresh` of {stack.applied[-1]}) "
                "takes the tree into it first",
            )
        head_tree = g.commit_info(stack.head)["tree"].decode()
        parent = stack.commit_below(k)
        parent_tree = g.commit_info(parent)["tree"].decode()
        w = g.writer()
        wt = stack_ops.worktree(ctx, head_tree)
        if k == len(stack.applied) - 1:
            _refuse_a_stop_without_its_merge(ctx, stack, wt == head_tree)
            new_tree = wt
        else:
            new_tree = _carry_edits_down(ctx, stack, k, head_tree, wt)
        entry = stack_ops.entry(repo, name)
        old_data, old_patch = load_patch(repo, entry)
        _refuse_several_mails(old_data, repo.display(name))
        if wins != FROM_COMMIT and stack_ops.changed_file(ctx, stack, k):
            if wins == FROM_FILE:
                return _from_file(ctx, stack, k)
            raise UnsafeStateError(
                "the file changed since the patch was applied (a pull or an edit): "
                "refresh would write over it",
                repo.display(name),
                "`patchq refresh --from-file` re-applies the file, `--from-commit` "
                "rewrites it from the commit and your edits",
            )
        w.flush()  # git diff-tree below reads the carried-down tree from the object store
        diff = g.diff_trees(parent_tree, new_tree, repo.config.context, full_index=True)
        _refuse_conflict_markers(diff, repo.display(name), name, str(g.root))
        data = render_refreshed(
            old_patch,
            diff,
            repo.display(name),
            entry.strip_level(repo.config.strip),
            style=repo.config.style,
            old_file=files_of(g, parent_tree),
        )
        info = g.commit_info(stack.commits[k])
        commit = stack_ops.recommit(g, info, new_tree, parent)
        commits = list(stack.commits[:k]) + [commit]
        if k < len(stack.applied) - 1:
            above = [repo.series.find(n) for n in stack.applied[k + 1 :]]
            res = apply_series(g, repo, commit, [e for e in above if e], stamp=stack.base)
            if res.failure is not None:
                raise ConflictError(
                    f"after refreshing {name}, {res.failure.display} no longer "
                    f"applies: {res.failure.message()}",
                    str(g.root),
                    "nothing was changed; refresh the patches above first",
                )
            if res.tree != wt:
                raise ConflictError(
                    f"your edits do not carry through the patches above {name}",
                    str(g.root),
                    "nothing was changed; pop to it and refresh",
                )
            commits += [p.commit or "" for p in res.patches]
        new = replace(stack, commits=tuple(commits))
        w.flush()
        lock = (
            relock.after_edit(g, repo, stack.base, name, before=old_data, data=data)
            if data != old_data
            else relock.Relock()
        )
        files: dict[str, bytes | None] = {f"{PATCHES}/{name}": data} if data != old_data else {}
        files.update(lock.files)
        journal.run(
            g,
            repo.root,
            journal.Plan(
                "refresh",
                new.branch,
                new.head,
                new,
                repo.config.queue,
                worktree=journal.INDEX,
                files=files,
                state={**lock.state, **_going_on_state(ctx, going_on, new.head)},
                reason=name,
            ),
        )
        own = tuple(ctx.own_paths())
        return RefreshOutcome(
            name,
            data != old_data,
            tuple(
                p for p in g.untracked() if not any(p == o or p.startswith(o + "/") for o in own)
            ),
            lock.updated,
            lock.note,
        )


def _going_on_state(
    ctx: Context, going_on: stack_ops.PushStop | None, head: str
) -> dict[str, bytes | None]:
    """The record of a `push --continue` going on past the refresh (none for a refresh)."""
    if going_on is None:
        return {}
    return stack_ops.continue_state(ctx.repo().config.queue, going_on, head)


def _refuse_several_mails(data: bytes, display: str) -> None:
    """Refuse (exit 5) to refresh a file of several mails: only the first one's header
    would stay, the others' subjects and messages lost."""
    subjects = mails(data)
    if len(subjects) > 1:
        named = ", ".join(repr(shortened(s, 40)) for s in subjects[:3])
        more = f" and {len(subjects) - 3} more" if len(subjects) > 3 else ""
        raise UnsafeStateError(
            f"the file holds {len(subjects)} mails ({named}{more}): refresh would keep "
            "only the first one's message",
            display,
            "split it, one patch a mail (`patchq import --mbox FILE`), then refresh",
        )


def _from_file(ctx: Context, stack: Stack, k: int) -> RefreshOutcome:
    """`refresh --from-file`: the patch file wins — it and the patches above are applied
    again onto the commit below it, and the working tree follows (it must hold no edits:
    they were made against the commit the file replaces)."""
    repo, g = ctx.repo(), ctx.git()
    name = stack.applied[k]
    stack_ops.protect(ctx, False, "refresh --from-file", can_force=False)
    expect = journal.expect(g, stack.branch)
    entries = [stack_ops.entry(repo, n) for n in stack.applied[k:]]
    w = g.writer()
    res = apply_series(
        g,
        repo,
        stack.commit_below(k),
        entries,
        fuzz=repo.config.fuzz,
        stamp=stack.base,
        preimage=stack_ops.pinned_preimages(ctx, g, entries),
    )
    if res.failure is not None:
        raise ConflictError(
            f"{res.failure.display} does not apply where {name} was: {res.failure.message()}",
            str(g.root),
            "nothing was changed; fix the file, or `patchq refresh --from-commit`",
        )
    w.flush()
    new = replace(stack, commits=stack.commits[:k] + tuple(p.commit or "" for p in res.patches))
    journal.run(
        g,
        repo.root,
        journal.Plan(
            "refresh",
            new.branch,
            new.head,
            new,
            repo.config.queue,
            reason=f"{name} from its file",
            typed="refresh --from-file",
            expect=expect,
        ),
    )
    return RefreshOutcome(name, False, (), from_file=True)


def _refuse_conflict_markers(diff: bytes, label: str, name: str, where: str) -> None:
    """Refuse to record the markers `push --merge` left (labelled with the patch's file)."""
    marker = b">>>>>>> " + label.encode("utf-8", "surrogateescape")
    for s in parse(diff, "working tree", 1).sections:
        for h in s.hunks:
            if any(t == "+" and c.rstrip(b"\r\n") == marker for t, c in h.lines):
                raise ConflictError(
                    f"{s.path} still has the conflict markers of {name}",
                    where,
                    "resolve them first",
                )


def _carry_edits_down(ctx: Context, stack: Stack, k: int, head_tree: str, wt: str) -> str:
    """The tree of patch k with the working tree's edits (relative to the top) applied."""
    g = ctx.git()
    edits = parse(g.diff_trees(head_tree, wt, 3), "working tree", 1)
    tree_k = g.commit_info(stack.commits[k])["tree"].decode()
    state = SectionState(g, tree_k)
    for s in edits.sections:
        res = apply_section(state, s, 0, "working tree")
        if not all(h.applied for h in res.hunks):
            raise ConflictError(
                f"your edit to {s.path} does not apply to {stack.applied[k]}",
                str(g.root),
                "nothing was changed; pop to it and refresh",
            )
    return state.tree.write(state.w)
