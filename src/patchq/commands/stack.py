"""The stack verbs: push, pop, goto, refresh, new, delete, rename, fold, header.

Each is a transaction: the new commits are built in memory, objects written in one
batch, the branch moved and the working tree updated once, and only then the patch
files and the stack record written. Uncommitted work is never overwritten: moves refuse
(exit 5) unless `--force`, which first saves it as a git stash and says which.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from patchq.core.errors import BadInputError, ConflictError, UnsafeStateError
from patchq.core.patch import Patch, parse
from patchq.core.series import Entry, Series, make_entry
from patchq.git.memtree import MemTree
from patchq.git.repo import GitRepo, ObjectWriter
from patchq.ops import journal
from patchq.ops.apply import (
    Failure,
    PatchResult,
    Preimage,
    SectionState,
    apply_section,
    apply_series,
    ident_date,
    identity,
    load_patch,
    preimages,
    raise_failure,
)
from patchq.ops.refresh import render_refreshed
from patchq.ops.session import Context
from patchq.ops.targets import active_entries, branch_name, check_branch, choose_base
from patchq.store.patchrepo import PATCHES, SERIES, PatchRepo
from patchq.store.stack import Stack, load
from patchq.store.statedir import rebase_state_path, repo_lock, run_lock


@dataclass(frozen=True, slots=True)
class MoveOutcome:
    """What a push/pop/goto did: the patches moved, how they applied, where it stopped."""

    stack: Stack
    pushed: tuple[PatchResult, ...] = ()
    popped: tuple[str, ...] = ()
    failure: Failure | None = None
    saved: str | None = None  # the stash holding work saved by --force


def _rebase_state(ctx: Context) -> Path:
    return rebase_state_path(ctx.git().state_dir(), ctx.repo().config.queue)


def _refuse_during_rebase(ctx: Context) -> None:
    """The stack and the series belong to a rebase until it finishes (DESIGN §3, exit 5)."""
    if _rebase_state(ctx).exists():
        raise UnsafeStateError("a rebase is in progress", str(ctx.git().root),
                               "finish it with `patchq rebase --continue`, `--skip` or "
                               "`--abort` first")


def _open_stack(ctx: Context, create: bool) -> Stack:
    repo, g = ctx.repo(), ctx.git()
    _refuse_during_rebase(ctx)
    stack = load(g.state_dir(), repo.config.queue)
    if stack is None or (not stack.applied and g.current_branch() != stack.branch):
        if not create:
            raise BadInputError("no patch is applied", str(g.root), "`patchq push` first")
        return Stack(choose_base(ctx, None), branch_name(ctx, None))
    check_branch(g, stack)
    return stack


def _protect(ctx: Context, force: bool, what: str, can_force: bool = True) -> str | None:
    """Refuse to move over uncommitted work, or (--force) save it as a stash first.

    `what` is the command the user typed, so the hint names the right one.
    """
    g = ctx.git()
    dirty = g.dirty_paths(ctx.own_paths())
    if not dirty:
        return None
    if not force:
        more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
        hint = (f"`patchq refresh` them, or `patchq {what} --force` to save them in a stash "
                "first") if can_force else "`patchq refresh` or `git stash` them first"
        raise UnsafeStateError(f"unrefreshed changes in {dirty[0]}{more}", str(g.root), hint)
    return g.stash_save(f"patchq: saved before {what}")


def _series_state(ctx: Context, stack: Stack) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """The active series, checked to begin with the applied stack."""
    _, entries = active_entries(ctx, None)
    names = tuple(e.name or "" for e in entries)
    if names[: len(stack.applied)] != stack.applied:
        raise UnsafeStateError("the applied patches are no longer the start of the active "
                               "series (series or guards changed)", "series",
                               "`patchq pop -a --force` and push again")
    return names, entries


def _resolve_target(names: Sequence[str], applied: int, target: str | None) -> int:
    """How many patches should be applied after pushing to `target`: the next one, N
    more, or up to and including the patch named."""
    if target is None:
        return applied + 1
    if target.isdigit() and target not in names:
        return applied + int(target)
    if target not in names:
        raise BadInputError(f"no active patch named {target!r}", "series",
                            "see `patchq series -v`")
    return names.index(target) + 1


def _preimage(ctx: Context, g: GitRepo, entries: Sequence[Entry], w: ObjectWriter
              ) -> Preimage:
    """Each patch's pre-images for the 3-way step: from the lock's pinned base, else none
    (the merge then falls back on the patch's `index` blob ids, DESIGN §4 step 4)."""
    lock = ctx.repo().read_lock()
    if lock is None or not g.has_object(lock.base):
        return lambda name, path: None
    return preimages(g, ctx.repo(), lock.base, entries, w)


def push(ctx: Context, target: str | None, all_: bool, fuzz: int | None, merge: bool,
         force: bool, progress: Callable[[int, str], None] | None = None,
         verb: str = "push") -> MoveOutcome:
    """Apply the next patch (or up to `target`, or all) on top of the stack."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = _open_stack(ctx, create=True)
        names, entries = _series_state(ctx, stack)
        n = len(stack.applied)
        want = len(names) if all_ else _resolve_target(names, n, target)
        if want <= n or n >= len(names):
            raise BadInputError("nothing to push" if n >= len(names) else
                                f"{target} is already applied", "series",
                                "see `patchq series -v`")
        want = min(want, len(names))
        saved = _protect(ctx, force, verb)
        w = g.writer()
        fz = repo.config.fuzz if fuzz is None else fuzz
        pre = _preimage(ctx, g, entries, w) if merge else None
        result = apply_series(g, repo, stack.head, entries[n:want], w, fuzz=fz,
                              progress=progress, stamp=stack.base, preimage=pre)
        pushed = tuple(p.name for p in result.patches)
        new = stack.extended(pushed, tuple(p.commit or "" for p in result.patches))
        f = result.failure
        if f is not None and f.tree is not None:
            f = _rest_of_merged_patch(g, w, f, fz)
        if f is not None and f.tree is not None:
            # 3-way conflict: like StGit, the patch goes on the stack with its old content
            # unchanged in the commit and the merge (with markers) in the working tree;
            # `patchq refresh` after resolving records the resolution.
            when, tz = ident_date(g.commit_info(stack.base)["committer"])
            author, message = identity(f.name, f.patch, when, tz)
            tree = g.commit_info(new.head, w)["tree"].decode()
            commit = GitRepo.commit_object(w, tree, [new.head], message, author, author)
            new = new.extended((f.name,), (commit,))
        w.flush()
        overlay: str | None = None
        added: tuple[str, ...] = ()
        if f is not None and f.tree is not None:
            overlay = f.tree
            # Files the patch creates stay known to git (intent to add), so `refresh`
            # records them rather than leaving them out as untracked.
            added = tuple(g.added_paths(new.head, f.tree))
        journal.run(g, repo.root, journal.Plan(
            verb, new.branch, new.head, new, repo.config.queue, overlay=overlay,
            intent_to_add=added, reason=f"{len(new.applied) - n} patches"))
    return MoveOutcome(new, result.patches, failure=f, saved=saved)


def _rest_of_merged_patch(g: GitRepo, w: ObjectWriter, f: Failure, fuzz: int) -> Failure:
    """After a section conflicted in the 3-way merge, apply the patch's later sections too,
    so the working tree holds the whole patch for the person resolving it.

    `apply_series` stops at the conflicting section; a later section that does not apply
    either turns the result into a plain failure (nothing is pushed), never a half patch.
    """
    sections = f.patch.sections
    k = next(i for i, s in enumerate(sections) if s is f.section)
    state = SectionState(g, w, f.tree or "")
    for s in sections[k + 1 :]:
        res = apply_section(state, s, w, fuzz, f.display)
        if not all(h.applied for h in res.hunks):
            return replace(f, path=res.path, hunks=res.hunks, section=s, merged=None,
                           conflicts=0, tree=None)
    return replace(f, tree=state.tree.write(w))


def pop(ctx: Context, target: str | None, all_: bool, force: bool,
        verb: str = "pop") -> MoveOutcome:
    """Remove the top patch (or down to `target`, which stays applied, or all)."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = _open_stack(ctx, create=False)
        if not stack.applied:
            raise BadInputError("no patch is applied", str(g.root))
        n = len(stack.applied)
        if all_:
            keep = 0
        elif target is None:
            keep = n - 1
        elif target in stack.applied:
            keep = stack.applied.index(target) + 1
            if keep == n:
                raise BadInputError(f"{target} is already the top patch", "series")
        elif target.isdigit():
            keep = max(n - int(target), 0)
        else:
            raise BadInputError(f"{target!r} is not applied", "series", "see `patchq applied`")
        saved = _protect(ctx, force, verb)
        new = stack.truncated(keep)
        journal.run(g, repo.root, journal.Plan(verb, new.branch, new.head, new,
                                               repo.config.queue, reason=f"{n - keep} patches"))
    return MoveOutcome(new, popped=stack.applied[keep:][::-1], saved=saved)


def goto(ctx: Context, name: str, force: bool) -> MoveOutcome:
    """Push or pop until `name` is the top patch."""
    stack = load(ctx.git().state_dir(), ctx.repo().config.queue)
    if stack is not None and name in stack.applied:
        return pop(ctx, name, False, force, verb="goto")
    return push(ctx, name, False, None, False, force, verb="goto")


# --- editing the queue ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    name: str
    changed: bool
    untracked: tuple[str, ...]


def refresh(ctx: Context, name: str | None) -> RefreshOutcome:
    """Regenerate the top (or named applied) patch from the working tree."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = _open_stack(ctx, create=False)
        if not stack.applied:
            raise BadInputError("no patch is applied", str(g.root), "`patchq push` first")
        name = name or stack.applied[-1]
        if name not in stack.applied:
            raise BadInputError(f"{name!r} is not applied", "series", "push it first")
        k = stack.applied.index(name)
        head_tree = g.commit_info(stack.head)["tree"].decode()
        parent = stack.commit_below(k)
        parent_tree = g.commit_info(parent)["tree"].decode()
        w = g.writer()
        wt = _worktree(ctx, w, head_tree)
        if k == len(stack.applied) - 1:
            new_tree = wt
        else:
            new_tree = _carry_edits_down(ctx, stack, k, head_tree, wt, w)
        entry = _entry(repo, name)
        old_data, old_patch = load_patch(repo, entry)
        w.flush()  # git diff-tree below reads the carried-down tree from the object store
        diff = g.diff_trees(parent_tree, new_tree, repo.config.context)
        _refuse_conflict_markers(diff, repo.display(name), name, str(g.root))
        data = render_refreshed(old_patch, diff, repo.display(name),
                                entry.strip_level(repo.config.strip))
        info = g.commit_info(stack.commits[k])
        commit = _recommit(w, info, new_tree, parent)
        commits = list(stack.commits[: k]) + [commit]
        if k < len(stack.applied) - 1:
            above = [repo.series.find(n) for n in stack.applied[k + 1 :]]
            res = apply_series(g, repo, commit, [e for e in above if e], w,
                               stamp=stack.base)
            if res.failure is not None:
                raise ConflictError(f"after refreshing {name}, {res.failure.display} no longer "
                                    f"applies: {res.failure.message()}", str(g.root),
                                    "nothing was changed; refresh the patches above first")
            if res.tree != wt:
                raise ConflictError(f"your edits do not carry through the patches above {name}",
                                    str(g.root), "nothing was changed; pop to it and refresh")
            commits += [p.commit or "" for p in res.patches]
        new = replace(stack, commits=tuple(commits))
        w.flush()
        journal.run(g, repo.root, journal.Plan(
            "refresh", new.branch, new.head, new, repo.config.queue, worktree=journal.INDEX,
            files={f"{PATCHES}/{name}": data} if data != old_data else {}, reason=name))
        own = tuple(ctx.own_paths())
        return RefreshOutcome(name, data != old_data, tuple(
            p for p in g.untracked() if not any(p == o or p.startswith(o + "/") for o in own)))


def _worktree(ctx: Context, w: ObjectWriter, head_tree: str) -> str:
    """The working tree as a tree, with the patch repo's own files as in `head_tree`.

    With the queue inside the target (quilt-style), `series` and `patches/` may be tracked
    there; the patch files refresh writes must never end up inside a patch.
    """
    g = ctx.git()
    wt = g.worktree_tree()
    own = ctx.own_paths()
    if not own:
        return wt
    paths = g.changed_paths(head_tree, wt, own)
    if not paths:
        return wt
    head = MemTree(lambda oid: g.read_tree(oid, w), head_tree)
    tree = MemTree(lambda oid: g.read_tree(oid, w), wt)
    for path in paths:
        entry = head.get(path)
        if entry is None:
            tree.remove(path)
        else:
            tree.set(path, *entry)
    return tree.write(w)


def _refuse_conflict_markers(diff: bytes, label: str, name: str, where: str) -> None:
    """Refuse to record the markers `push --merge` left (labelled with the patch's file)."""
    marker = b">>>>>>> " + label.encode("utf-8", "surrogateescape")
    for s in parse(diff, "working tree", 1).sections:
        for h in s.hunks:
            if any(t == "+" and c.rstrip(b"\r\n") == marker for t, c in h.lines):
                raise ConflictError(f"{s.path} still has the conflict markers of {name}",
                                    where, "resolve them first")


def _recommit(w: ObjectWriter, info: dict[str, bytes], tree: str, parent: str) -> str:
    """A commit like `info` (same author, committer, message) with a new tree and parent."""
    lines = [b"tree " + tree.encode(), b"parent " + parent.encode(),
             b"author " + info["author"], b"committer " + info["committer"]]
    return w.add("commit", b"\n".join(lines) + b"\n\n" + info["message"])


def _carry_edits_down(ctx: Context, stack: Stack, k: int, head_tree: str, wt: str,
                      w: ObjectWriter) -> str:
    """The tree of patch k with the working tree's edits (relative to the top) applied."""
    g = ctx.git()
    edits = parse(g.diff_trees(head_tree, wt, 3), "working tree", 1)
    tree_k = g.commit_info(stack.commits[k])["tree"].decode()
    state = SectionState(g, w, tree_k)
    for s in edits.sections:
        res = apply_section(state, s, w, 0, "working tree")
        if not all(h.applied for h in res.hunks):
            raise ConflictError(f"your edit to {s.path} does not apply to {stack.applied[k]}",
                                str(g.root), "nothing was changed; pop to it and refresh")
    return state.tree.write(w)


def new(ctx: Context, name: str, message: str | None) -> str:
    """Create an empty patch after the top and push it."""
    repo, g = ctx.repo(), ctx.git()
    entry = make_entry(name)
    path = repo.patch_path(name)
    if path.exists() or repo.series.find(name) is not None:
        raise BadInputError(f"patch {name!r} already exists", str(path))
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = _open_stack(ctx, create=True)
        if stack.applied:
            _series_state(ctx, stack)
        if g.current_branch() != stack.branch or g.head() != stack.head:
            _protect(ctx, False, "new", can_force=False)
        # On the stack branch the new commit has the top's tree, so the checkout below
        # leaves uncommitted edits alone; like `stg new`, they go into the new patch on
        # `patchq refresh`.
        header = (message.rstrip("\n") + "\n").encode() if message else b""
        after = stack.top
        series = repo.series.with_appended([entry], after) if after else \
            _insert_first(repo.series, entry)
        w = g.writer()
        info_tree = g.commit_info(stack.head)["tree"].decode()
        when, tz = ident_date(g.commit_info(stack.base)["committer"])
        # The same identity and message `push` gives the patch, so both make one commit.
        ident, text = identity(name, Patch(header, ()), when, tz)
        commit = GitRepo.commit_object(w, info_tree, [stack.head], text, ident, ident)
        w.flush()
        new_stack = stack.extended((name,), (commit,))
        journal.run(g, repo.root, journal.Plan(
            "new", new_stack.branch, new_stack.head, new_stack, repo.config.queue,
            files={f"{PATCHES}/{name}": header, SERIES: _series_bytes(series)}, reason=name))
    return name


def _insert_first(series: Series, entry: Entry) -> Series:
    """`entry` as the first patch, after the comments that open the file."""
    entries = series.entries
    first = next((i for i, e in enumerate(entries) if e.is_patch), None)
    if first is None:
        return series.with_appended([entry])
    return Series(entries[:first] + (entry,) + entries[first:])


def delete(ctx: Context, name: str, remove_file: bool) -> bool:
    """Remove an unapplied (or the top) patch from the series; its file is kept unless -r.

    Returns whether the patch was popped first.
    """
    repo, g = ctx.repo(), ctx.git()
    _entry(repo, name)  # refuse an unknown name before anything else
    _refuse_during_rebase(ctx)
    with run_lock(g.state_dir(), repo.root):
        stack = load(g.state_dir(), repo.config.queue)
        popped = stack is not None and name in stack.applied
        files: dict[str, bytes | None] = {SERIES: _series_bytes(
            Series(tuple(e for e in repo.series.entries if e.name != name)))}
        if remove_file:
            files[f"{PATCHES}/{name}"] = None
        if stack is not None and popped:
            if stack.top != name:
                raise UnsafeStateError(f"{name} is applied below the top", "series",
                                       f"`patchq goto {name}` then pop it, or pop down past it")
            check_branch(g, stack)
            _protect(ctx, False, "delete", can_force=False)
            new = stack.truncated(len(stack.applied) - 1)
            # The pop and the series edit are one change: a kill in between is recoverable.
            journal.run(g, repo.root, journal.Plan("delete", new.branch, new.head, new,
                                                   repo.config.queue, files=files, reason=name))
        else:
            journal.run(g, repo.root, journal.Plan("delete", "", None, None, repo.config.queue,
                                                   files=files, reason=name))
    return popped


def rename(ctx: Context, old: str, new_name: str) -> None:
    """Rename a patch's file and series line (strip level and guards kept)."""
    repo, g = ctx.repo(), ctx.git()
    entry = _entry(repo, old)
    target = repo.patch_path(new_name)
    if target.exists() or repo.series.find(new_name) is not None:
        raise BadInputError(f"patch {new_name!r} already exists", str(target))
    fresh = make_entry(new_name, entry.strip, entry.guards)
    with run_lock(g.state_dir(), ctx.repo().root):
        _refuse_during_rebase(ctx)
        data, patch = load_patch(repo, entry)
        stack = load(g.state_dir(), repo.config.queue)
        series = Series(tuple(replace(fresh, lineno=e.lineno) if e.name == old else e
                              for e in repo.series.entries))
        files: dict[str, bytes | None] = {f"{PATCHES}/{new_name}": data,
                                          SERIES: _series_bytes(series),
                                          f"{PATCHES}/{old}": None}
        if stack is not None and old in stack.applied:
            # A header-less patch's commit subject is its name: follow the new one.
            renamed = replace(stack, applied=tuple(new_name if n == old else n
                                                   for n in stack.applied))
            _rewrite_messages(g, repo, renamed, new_name, patch, "rename", files)
        else:
            journal.run(g, repo.root, journal.Plan("rename", "", None, None, repo.config.queue,
                                                   files=files, reason=f"{old} to {new_name}"))


def fold(ctx: Context, name: str) -> None:
    """Merge the unapplied patch `name` into the top patch, and drop it from the series."""
    repo, g = ctx.repo(), ctx.git()
    entry = _entry(repo, name)
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = _open_stack(ctx, create=False)
        if not stack.applied:
            raise BadInputError("no patch is applied to fold into", str(g.root))
        if name in stack.applied:
            raise BadInputError(f"{name} is applied; only an unapplied patch can be folded",
                                "series")
        _protect(ctx, False, "fold", can_force=False)
        top = stack.applied[-1]
        k = len(stack.applied) - 1
        w = g.writer()
        res = apply_series(g, repo, stack.head, [entry], w, commits=False)
        if res.failure is not None:
            raise_failure(res.failure)
        parent_tree = g.commit_info(stack.commit_below(k))["tree"].decode()
        top_entry = repo.series.find(top)
        assert top_entry is not None
        _, old_patch = load_patch(repo, top_entry)
        w.flush()  # git diff-tree below reads the folded tree from the object store
        data = render_refreshed(old_patch, g.diff_trees(parent_tree, res.tree,
                                                        repo.config.context), repo.display(top),
                                top_entry.strip_level(repo.config.strip))
        commit = _recommit(w, g.commit_info(stack.head), res.tree, stack.commit_below(k))
        new = replace(stack, commits=stack.commits[:-1] + (commit,))
        w.flush()
        remaining = Series(tuple(e for e in repo.series.entries if e.name != name))
        journal.run(g, repo.root, journal.Plan(
            "fold", new.branch, new.head, new, repo.config.queue,
            files={f"{PATCHES}/{top}": data, SERIES: _series_bytes(remaining),
                   f"{PATCHES}/{name}": None}, reason=f"{name} into {top}"))


def header(ctx: Context, name: str | None, edit: Callable[[str], str | None] | None) -> str:
    """The header of a patch; with `edit`, replace it (the diff is kept byte for byte)."""
    repo = ctx.repo()
    name = name or top(ctx)
    entry = _entry(repo, name)
    data, patch = load_patch(repo, entry)
    text = patch.header.decode("utf-8", "surrogateescape")
    if edit is None:
        return text
    try:
        g: GitRepo | None = ctx.git()
    except BadInputError:  # a patch repo edited on its own: no stack to follow
        g = None
    if g is not None:
        _refuse_during_rebase(ctx)
    stack = load(g.state_dir(), repo.config.queue) if g is not None else None
    if g is not None and stack is not None and name in stack.applied:
        check_branch(g, stack)  # refuse before the editor opens, not after the typing
    changed = edit(text)
    if changed is None or changed == text:
        return text
    new_header = changed.encode("utf-8", "surrogateescape")
    if new_header and not new_header.endswith(b"\n"):
        new_header += b"\n"
    new_data = new_header + data[len(patch.header):]
    try:
        new_patch = parse(new_data, repo.display(name), entry.strip_level(repo.config.strip))
    except BadInputError as e:
        # Nothing is changed, and nothing typed is lost: the text goes to a file of its own.
        fd, kept = tempfile.mkstemp(prefix=f"patchq-header-{Path(name).name}-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(changed)
        raise BadInputError(f"the edited header would break the patch: {e.what}", e.where,
                            f"nothing was changed; your text is saved in {kept}") from None
    files: dict[str, bytes | None] = {f"{PATCHES}/{name}": new_data}
    if g is None:
        with repo_lock(repo.root):
            repo.write_patch(name, new_data)
        return changed
    with run_lock(g.state_dir(), repo.root):
        stack = load(g.state_dir(), repo.config.queue)
        if stack is not None and name in stack.applied:
            _rewrite_messages(g, repo, stack, name, new_patch, "header", files)
        else:
            journal.run(g, repo.root, journal.Plan("header", "", None, None, repo.config.queue,
                                                   files=files, reason=name))
    return changed


def _series_bytes(series: Series) -> bytes:
    return series.format().encode("utf-8", "surrogateescape")


def _rewrite_messages(g: GitRepo, repo: PatchRepo, stack: Stack, name: str, patch: Patch,
                      op: str, files: dict[str, bytes | None]) -> None:
    """Give an applied patch's commit the author and message of its new header, and re-parent
    the commits above (trees unchanged), so the stack is what pushing the series gives."""
    check_branch(g, stack)
    k = stack.applied.index(name)
    w = g.writer()
    when, tz = ident_date(g.commit_info(stack.base)["committer"])
    author, message = identity(name, patch, when, tz)
    tree = g.commit_info(stack.commits[k])["tree"].decode()
    commit = GitRepo.commit_object(w, tree, [stack.commit_below(k)], message, author, author)
    commits = list(stack.commits[:k]) + [commit]
    for old in stack.commits[k + 1 :]:
        info = g.commit_info(old)
        commit = _recommit(w, info, info["tree"].decode(), commit)
        commits.append(commit)
    w.flush()
    new = replace(stack, commits=tuple(commits))
    # Same trees: moving only the branch leaves the index and the working tree as they are.
    journal.run(g, repo.root, journal.Plan(op, stack.branch, new.head, new, repo.config.queue,
                                           worktree=journal.REF, files=files, reason=name))


def _entry(repo: PatchRepo, name: str) -> Entry:
    """The series entry of patch `name`; bad input if the series has none."""
    entry = repo.series.find(name)
    if entry is None:
        raise BadInputError(f"no patch named {name!r} in the series", "series")
    return entry


def top(ctx: Context) -> str:
    """The top applied patch; bad input if none."""
    stack = load(ctx.git().state_dir(), ctx.repo().config.queue)
    if stack is None or not stack.applied:
        raise BadInputError("no patch is applied", "series", "name a patch")
    return stack.applied[-1]


# --- inspecting ------------------------------------------------------------------------


def series_marks(ctx: Context, guards: Sequence[str]) -> tuple[tuple[str, Entry], ...]:
    """Each patch of the series with quilt's `series -v` mark: `=` the top, `+` applied,
    ` ` unapplied, and `#` guarded out (not applied by push or apply)."""
    repo = ctx.repo()
    try:
        done = applied(ctx)
    except BadInputError:  # no target: a patch repo read on its own applies nothing
        done = ()
    out = []
    for e in repo.series.patches:
        mark = "#" if not e.active(guards) else " "
        if e.name in done:
            mark = "=" if e.name == done[-1] else "+"
        out.append((mark, e))
    return tuple(out)


def applied(ctx: Context) -> tuple[str, ...]:
    stack = load(ctx.git().state_dir(), ctx.repo().config.queue)
    return stack.applied if stack else ()


def unapplied(ctx: Context) -> tuple[str, ...]:
    done = set(applied(ctx))
    _, entries = active_entries(ctx, None)
    return tuple(e.name or "" for e in entries if e.name not in done)


def diff(ctx: Context, name: str | None) -> bytes:
    """The top patch as refresh would write it now, or a named patch as applied or filed."""
    repo, g = ctx.repo(), ctx.git()
    stack = load(g.state_dir(), repo.config.queue)
    if name is None:
        if stack is None or not stack.applied:
            raise BadInputError("no patch is applied", "series", "name a patch")
        parent = g.commit_info(stack.commit_below(len(stack.applied) - 1))["tree"].decode()
        w = g.writer()
        wt = _worktree(ctx, w, g.commit_info(stack.head)["tree"].decode())
        w.flush()
        return g.diff_trees(parent, wt, repo.config.context)
    if stack is not None and name in stack.applied:
        k = stack.applied.index(name)
        a = g.commit_info(stack.commit_below(k))["tree"].decode()
        b = g.commit_info(stack.commits[k])["tree"].decode()
        return g.diff_trees(a, b, repo.config.context)
    entry = _entry(repo, name)
    _, patch = load_patch(repo, entry)
    return b"".join(s.render() for s in patch.sections)


def files(ctx: Context, name: str | None) -> tuple[str, ...]:
    repo = ctx.repo()
    _, patch = load_patch(repo, _entry(repo, name or top(ctx)))
    return patch.paths


def patches_touching(ctx: Context, path: str) -> tuple[str, ...]:
    repo = ctx.repo()
    out = []
    for e in repo.series.patches:
        _, patch = load_patch(repo, e)
        if path in patch.paths:
            out.append(e.name or "")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Status:
    branch: str | None
    base: str | None
    applied: tuple[str, ...]
    unapplied: tuple[str, ...]
    guards: tuple[str, ...]
    dirty: tuple[str, ...]
    on_branch: bool
    operation: str | None


def status(ctx: Context) -> Status:
    repo, g = ctx.repo(), ctx.git()
    stack = load(g.state_dir(), repo.config.queue)
    op = "rebase" if _rebase_state(ctx).exists() else None
    interrupted = journal.pending(g)
    if interrupted is not None:
        op = f"interrupted {interrupted.get('op', 'command')}"
    return Status(stack.branch if stack else None, stack.base if stack else None,
                  stack.applied if stack else (), unapplied(ctx), repo.config.guards,
                  tuple(g.dirty_paths(ctx.own_paths())),
                  stack is not None and g.current_branch() == stack.branch, op)
