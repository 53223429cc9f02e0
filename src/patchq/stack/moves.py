"""The stack operations the stack verbs share: open the stack, protect uncommitted work,
move it through the journal.

Each move is a transaction: the new commits are built in memory, objects written in one
batch, the branch moved and the working tree updated once, and only then the patch
files and the stack record written. Uncommitted work is never overwritten: moves refuse
(exit 5) unless `--force`, which first saves it as a git stash and says which.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from hashlib import sha256

from patchq.core.errors import (
    AcceptedError,
    BadInputError,
    ConflictError,
    PatchqError,
    UnsafeStateError,
)
from patchq.core.patch import Patch
from patchq.core.progress import Progress
from patchq.core.records import Stack
from patchq.core.series import Entry, Series
from patchq.core.status import MERGE
from patchq.core.words import plural
from patchq.git.memtree import MemTree
from patchq.git.repo import GitRepo
from patchq.stack import journal
from patchq.stack.apply import (
    Failure,
    PatchResult,
    Preimage,
    SectionState,
    SeriesResult,
    apply_section,
    apply_series,
    changed_since_applied,
    failure_error,
    ident_date,
    identity,
    load_applicable,
    preimages,
)
from patchq.stack.context import Context
from patchq.stack.targets import (
    active_entries,
    branch_name,
    check_branch,
    check_own_branch,
    choose_base,
)
from patchq.store.patchrepo import PatchRepo
from patchq.store.stack import load
from patchq.store.statedir import rebase_state_path, run_lock

# A proposed hunk (DESIGN §4.1): (file, 1-based line, hunk index, method, evidence).
Proposal = tuple[str, int, int, str, str]


@dataclass(frozen=True, slots=True)
class Laddered:
    """A patch `push --merge` placed with the rebase's ladder after git's plain merge did
    not (commands/push.py climbs it): the tree with the patch placed — proposals applied,
    no markers — the method of each hunk, the proposals not accepted (the push stops
    for review at them), the proposed methods `accept` took, and whether the patches
    below changed every line it changes (fixed differently: a stop all the same)."""

    name: str
    display: str  # its file, as errors name it
    tree: str
    methods: tuple[str, ...]
    proposals: tuple[Proposal, ...] = ()
    accepted: tuple[str, ...] = ()
    rewritten: bool = False
    # Fixed differently: the upstream commits since the lock's base that changed its
    # lines (commit, subject), and whether its added lines are already there.
    fixed: tuple[tuple[str, str], ...] = ()
    added_present: bool = False

    @property
    def review(self) -> bool:
        """Whether the push stops for review at this patch."""
        return bool(self.proposals) or (self.rewritten and not self.accepted)


# (tree to place the patch on, its series entry, the pinned pre-images) -> the patch
# placed by the ladder, or None where the ladder has a conflict too.
Ladder = Callable[[str, Entry, Preimage], Laddered | None]


@dataclass(frozen=True, slots=True)
class MoveOutcome:
    """What a push/pop/goto did: the patches moved, how they applied, where it stopped."""

    stack: Stack
    pushed: tuple[PatchResult, ...] = ()
    popped: tuple[str, ...] = ()
    failure: Failure | None = None
    saved: str | None = None  # the stash holding work saved by --force
    aside: str | None = None  # the stash holding untracked or ignored files in the way
    # `push --merge`: the patches the ladder placed (the last one may be a stop for review).
    laddered: tuple[Laddered, ...] = ()

    @property
    def review(self) -> Laddered | None:
        """The patch the push stopped at for review (its proposals in the tree), if any."""
        last = self.laddered[-1] if self.laddered else None
        return last if last is not None and last.review else None

    @property
    def problem(self) -> PatchqError | None:
        """Why the move stopped short of its target, as the error to report; None if not."""
        r = self.review
        if r is not None:
            return review_error(r)
        f = self.failure
        if f is None:
            taken = [x for x in self.laddered if x.accepted]
            if not taken:
                return None
            what = ", ".join(f"{x.name} ({', '.join(x.accepted)})" for x in taken)
            return AcceptedError(
                f"pushed with {plural(len(taken), 'accepted proposal')} to review: {what}",
                None,
                "check them, then `patchq refresh NAME` writes each into its file",
            )
        if f.tree is not None:
            return ConflictError(
                f"{plural(f.conflicts, 'conflict')} in {f.path} left in the working tree",
                f.display,
                "resolve them, then `patchq push --continue` takes them and pushes on; or "
                "`patchq push --abort` puts everything back",
            )
        return failure_error(f)

    @property
    def exit_code(self) -> int:
        """0 when the move reached its target; 1 when `push --merge` took accepted
        proposals; 3 when a push stopped at a patch (a conflict, or for review)."""
        problem = self.problem
        return 0 if problem is None else problem.exit_code


def review_error(r: Laddered) -> ConflictError:
    """`push --merge` stopped for review at patch `r`: each proposed hunk, and the way on."""
    parts = [
        (f"{f}:{line}" if line else f) + f" (hunk #{i + 1}) by {m}" + (f" ({why})" if why else "")
        for f, line, i, m, why in r.proposals
    ]
    if r.rewritten and not r.accepted:
        parts.append(fixed_differently(r.name, r.fixed, r.added_present))
    n = len(r.proposals)
    names = ",".join(dict.fromkeys(m for _, _, _, m, _ in r.proposals)) or "rewritten"
    return ConflictError(
        f"{r.name} stops for review: "
        + (f"{plural(n, 'proposed hunk')} applied in the working tree (no markers): " if n else "")
        + "; ".join(parts),
        r.display,
        "check the files (edit them if need be), then `patchq push --continue` takes them "
        f"and pushes on; or `patchq push --abort` puts everything back; `--accept {names}` "
        + ("takes such proposals without a stop" if n else "takes such a patch without a stop"),
    )


def fixed_differently(name: str, fixed: Sequence[tuple[str, str]], present: bool) -> str:
    """What a `push --merge` stop says of a patch whose every changed line was changed
    since the series was pinned (DESIGN §4.1, "fixed differently upstream"): the
    upstream commits that did (`fixed`), and the one command that drops the patch."""
    who = "; ".join(f"{c[:12]} {s}".strip() for c, s in fixed[:3])
    more = f" and {len(fixed) - 3} more" if len(fixed) > 3 else ""
    return (
        "every line it changes was changed since the series was pinned "
        + (f"(upstream: {who}{more}; or by the patches below it)" if who else "")
        + ("(upstream, or by the patches below it)" if not who else "")
        + ": it may be fixed differently upstream"
        + ("; its added lines (or near-identical ones) are already there" if present else "")
        + f" — `patchq delete {name}` drops it"
    )


def rebase_in_progress(ctx: Context) -> bool:
    """Whether a rebase of this queue is in progress in the target."""
    return rebase_state_path(ctx.git().state_dir(), ctx.repo().config.queue).exists()


def refuse_during_rebase(ctx: Context) -> None:
    """The stack and the series belong to a rebase until it finishes (DESIGN §3, exit 5)."""
    if rebase_in_progress(ctx):
        raise UnsafeStateError(
            "a rebase is in progress",
            str(ctx.git().root),
            "finish it with `patchq rebase --continue`, `--skip` or `--abort` first",
        )


def refuse_at_push_stop(ctx: Context, what: str, hint: str = "") -> None:
    """Refuse (exit 5, an operation in progress) to `what` while a `push --merge` stop
    waits (its merge in the working tree, which `what` would take for the person's
    edits): its own ways on and back come first."""
    stop = pushed_stop(ctx, load(ctx.git().state_dir(), ctx.repo().config.queue))
    if stop is None:
        return
    left = "its proposals are" if stop.kind == REVIEW else "its merge, with markers, is"
    raise UnsafeStateError(
        f"a push --merge stopped at {stop.patch} ({left} in the working tree): "
        f"settle it before {what}",
        str(ctx.git().root),
        (hint or "`patchq push --continue` takes the tree into it and pushes on")
        + ", `patchq push --abort` puts back everything as before the push",
    )


def open_stack(ctx: Context, create: bool) -> Stack:
    """The recorded stack, checked out; with `create`, a new empty one if none is."""
    repo, g = ctx.repo(), ctx.git()
    refuse_during_rebase(ctx)
    stack = load(g.state_dir(), repo.config.queue)
    if stack is None or (not stack.applied and g.current_branch() != stack.branch):
        if not create:
            raise BadInputError("no patch is applied", str(g.root), "`patchq push` first")
        return Stack(choose_base(ctx, None), branch_name(ctx, None))
    check_branch(g, stack)
    return stack


def protect(ctx: Context, force: bool, what: str, can_force: bool = True) -> str | None:
    """Refuse to move over uncommitted work, or (--force) save it as a stash first.

    `what` is the command the user typed, so the hint names the right one.
    """
    g = ctx.git()
    dirty = g.dirty_paths(ctx.own_paths())
    if not dirty:
        return None
    if not force:
        more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
        hint = (
            (f"`patchq refresh` them, or `patchq {what} --force` to save them in a stash first")
            if can_force
            else "`patchq refresh` or `git stash` them first"
        )
        stop = pushed_stop(ctx, load(g.state_dir(), ctx.repo().config.queue))
        if stop is not None:
            # What a stopped push left: its own ways on and back come first.
            hint = (
                f"a push stopped at {stop.patch}: `patchq push --continue` takes them and "
                "pushes on, `patchq push --abort` puts back everything as before the push"
            )
        raise UnsafeStateError(f"unrefreshed changes in {dirty[0]}{more}", str(g.root), hint)
    return g.stash_save(f"patchq: saved before {what}")


def series_state(ctx: Context, stack: Stack) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """The active series, checked to begin with the applied stack."""
    _, entries = active_entries(ctx, None)
    names = tuple(e.name or "" for e in entries)
    if names[: len(stack.applied)] != stack.applied:
        raise UnsafeStateError(
            "the applied patches are no longer the start of the active "
            "series (series or guards changed)",
            "series",
            "`patchq pop -a --force` and push again",
        )
    return names, entries


# --- moving the stack ------------------------------------------------------------------


def _resolve_target(names: Sequence[str], applied: int, target: str | None) -> int:
    """How many patches should be applied after pushing to `target`: the next one, N
    more, or up to and including the patch named."""
    if target is None:
        return applied + 1
    if target.isdigit() and target not in names:
        return applied + int(target)
    if target not in names:
        raise BadInputError(f"no active patch named {target!r}", "series", "see `patchq series -v`")
    return names.index(target) + 1


def pinned_preimages(ctx: Context, g: GitRepo, entries: Sequence[Entry]) -> Preimage:
    """The pre-images the lock pins for `entries` (what `push --merge` merges against)."""
    return _preimage(ctx, g, entries)


def changed_file(ctx: Context, stack: Stack, k: int) -> bool:
    """Whether the file of the k-th applied patch changed since it was applied (a pull,
    an edit): it no longer makes the change its commit holds, and writing it from the
    commit would lose that change."""
    g, repo = ctx.git(), ctx.repo()
    found = repo.series.find(stack.applied[k])
    if found is None or ladder_placed(ctx, stack, k):
        return False
    return changed_since_applied(
        g,
        repo,
        found,
        parent=stack.commit_below(k),
        commit=stack.commits[k],
        preimage=_preimage(ctx, g, [found]),
    )


def _preimage(ctx: Context, g: GitRepo, entries: Sequence[Entry]) -> Preimage:
    """Each patch's pre-images for the 3-way step: from the lock's pinned base, else none
    (the merge then falls back on the patch's `index` blob ids, DESIGN §4 step 4)."""
    lock = ctx.repo().read_lock()
    if lock is None or not g.has_object(lock.base):
        return lambda name, path: None
    return preimages(g, ctx.repo(), lock.base, entries)


def push_patches(
    ctx: Context,
    target: str | None,
    *,
    all_: bool,
    fuzz: int | None,
    merge: bool,
    force: bool,
    progress: Progress | None,
    verb: str,
    ladder: Ladder | None = None,
    accept: tuple[str, ...] = (),
) -> MoveOutcome:
    """Apply the next patch (or up to `target`, or all) on top of the stack, as `verb`.
    With `merge` and a `ladder`, a patch git's merge does not place is placed by the
    rebase's ladder (DESIGN §4.1): automatic and accepted methods go on, a proposal stops
    the push for review with it applied in the working tree, no markers."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = open_stack(ctx, create=True)
        if not stack.applied:
            check_own_branch(g, stack.branch, repo.config.queue, force)
        names, entries = series_state(ctx, stack)
        n = len(stack.applied)
        if (all_ or target is None) and n >= len(names):
            # The requested state holds: every active patch is applied (DESIGN §3, exit 0),
            # for a plain `push` as for `push -a`, as quilt's and StGit's users expect.
            return MoveOutcome(stack)
        want = len(names) if all_ else _resolve_target(names, n, target)
        if want <= n or n >= len(names):
            raise BadInputError(
                "nothing to push" if n >= len(names) else f"{target} is already applied",
                "series",
                "see `patchq series -v`",
            )
        want = min(want, len(names))
        saved = protect(ctx, force, verb)
        expect = journal.expect(g, stack.branch)
        w = g.writer()
        fz = repo.config.fuzz if fuzz is None else fuzz
        pre = _preimage(ctx, g, entries) if merge else None
        results: list[PatchResult] = []
        laddered: list[Laddered] = []
        placements: dict[str, Placement] = {}
        new = stack
        start = n
        when, tz = ident_date(g.commit_info(stack.base)["committer"])
        while True:
            result = apply_series(
                g,
                repo,
                new.head,
                entries[start:want],
                fuzz=fz,
                progress=progress,
                stamp=stack.base,
                preimage=pre,
            )
            again = _merged_again(
                g, ladder, pre, head=new.head, todo=entries[start:want], done=result
            )
            kept = result.patches if again is None else result.patches[: again[0]]
            results += kept
            new = new.extended(tuple(p.name for p in kept), tuple(p.commit or "" for p in kept))
            f = result.failure if again is None else None
            if again is None and (f is None or ladder is None or pre is None):
                break
            assert ladder is not None and pre is not None  # `again` needs them too
            at = entries[start + len(kept)]
            tree = g.commit_info(new.head)["tree"].decode()
            lad = again[1] if again is not None else ladder(tree, at, pre)
            if lad is None:
                break  # a conflict on the ladder too: git's merge, markers and all
            laddered.append(lad)
            f = None
            data, patch = load_applicable(repo, at)
            author, message = identity(lad.name, patch, when, tz, g.user_identity())
            if lad.review:
                break
            commit = g.commit_object(lad.tree, [new.head], message, author, author)
            placements[lad.name] = Placement.of(data, tree, lad)
            new = new.extended((lad.name,), (commit,))
            start += len(kept) + 1
            if start >= want:
                break
        if f is not None and f.tree is not None:
            f = _rest_of_merged_patch(g, f, fz)
        review = laddered[-1] if laddered and laddered[-1].review else None
        shown = f.tree if f is not None else review.tree if review is not None else None
        stop: PushStop | None = None
        if shown is not None:
            new, stop = _stop_on_stack(
                g, repo, new, f, review, stamp=(when, tz), how=(names[want - 1], fuzz, accept)
            )
        w.flush()
        # Files the patch creates stay known to git (intent to add): `refresh` records them.
        added = tuple(g.added_paths(new.head, shown)) if shown is not None else ()
        aside = journal.run(
            g,
            repo.root,
            journal.Plan(
                verb,
                new.branch,
                new.head,
                new,
                repo.config.queue,
                overlay=shown,
                intent_to_add=added,
                reason=plural(len(new.applied) - n, "patch"),
                force=force,
                expect=expect,
                state={
                    **_stop_state(g, repo.config.queue, stop),
                    **_placed_state(g, repo.config.queue, new, placements),
                },
            ),
        )
    return MoveOutcome(
        new, tuple(results), failure=f, saved=saved, aside=aside, laddered=tuple(laddered)
    )


def _merged_again(
    g: GitRepo,
    ladder: Ladder | None,
    pre: Preimage | None,
    *,
    head: str,
    todo: Sequence[Entry],
    done: SeriesResult,
) -> tuple[int, Laddered] | None:
    """The first patch git's plain 3-way merge placed alone that the rebase's ladder
    would not let finish alone (DESIGN §4.1: a hunk upstream holds inside a patch it does
    not hold whole, a patch whose every changed line upstream changed — a stop for
    review — or a proposal `accept` takes): its index in `done` and the ladder's
    placement. None where every merged patch is the ladder's too (or there is no ladder:
    a push without --merge)."""
    if ladder is None or pre is None:
        return None
    parent = head
    for i, p in enumerate(done.patches):
        if p.status == MERGE:
            lad = ladder(g.commit_info(parent)["tree"].decode(), todo[i], pre)
            if lad is not None and (lad.review or lad.accepted):
                return i, lad
        parent = p.commit or parent
    return None


def _stop_on_stack(
    g: GitRepo,
    repo: PatchRepo,
    new: Stack,
    f: Failure | None,
    review: Laddered | None,
    *,
    stamp: tuple[int, str],
    how: tuple[str, int | None, tuple[str, ...]],
) -> tuple[Stack, PushStop]:
    """A 3-way conflict (`f`) or a proposal to review: like StGit, the patch goes on the
    stack with its old content unchanged in the commit and the merge (with markers; a
    proposal without) in the working tree, where `push --continue` (or `refresh`) takes
    it. The stack with it, and the stop to record (`how`: where the push was going, its
    fuzz and accepted methods)."""
    name = f.name if f is not None else review.name if review is not None else ""
    head_patch = f.patch if f is not None else load_applicable(repo, entry(repo, name))[1]
    author, message = identity(name, head_patch, *stamp, g.user_identity())
    tree = g.commit_info(new.head)["tree"].decode()
    commit = g.commit_object(tree, [new.head], message, author, author)
    target, fuzz, accept = how
    return new.extended((name,), (commit,)), PushStop(
        name,
        commit,
        REVIEW if review is not None else CONFLICT_STOP,
        review.proposals if review is not None else (),
        review is not None and review.rewritten and not review.accepted,
        (f.path,) if f is not None else (),
        target,
        fuzz,
        accept,
        review.fixed if review is not None else (),
        review is not None and review.added_present,
    )


REVIEW, CONFLICT_STOP = "review", "conflict"
CONTINUING = "continuing"  # a `push --continue` between its refresh and its push


@dataclass(frozen=True, slots=True)
class PushStop:
    """Where a `push --merge` stopped with its patch's merge in the working tree — git's
    markers (`conflict`), or proposals to review, no markers (`review`) — the patch on
    the stack at `commit`: what `status` names and `push --continue`/`--abort` settle.
    `target` is the last patch the push was to apply; `fuzz` and `accept` what it was
    given, so that `--continue` pushes on as it would have."""

    patch: str
    commit: str
    kind: str
    proposals: tuple[Proposal, ...] = ()
    rewritten: bool = False
    files: tuple[str, ...] = ()  # a conflict's file with markers
    target: str = ""
    fuzz: int | None = None
    accept: tuple[str, ...] = ()
    # `rewritten`: the upstream commits that changed its lines (commit, subject), and
    # whether its added lines are already there (Laddered's).
    fixed: tuple[tuple[str, str], ...] = ()
    added_present: bool = False


def stop_name(queue: str) -> str:
    """The state file (in `.git/patchq/`) recording where a `push --merge` stopped."""
    return f"{queue}.push-review.json"


def _stop_state(g: GitRepo, queue: str, stop: PushStop | None) -> dict[str, bytes | None]:
    """The stop record to write, or to remove (one a push before left); nothing when
    there is neither. A push also ends a `push --continue` that was going on."""
    name, going = stop_name(queue), continue_name(queue)
    out: dict[str, bytes | None] = {going: None} if (g.state_dir() / going).exists() else {}
    if stop is None and not (g.state_dir() / name).exists():
        return out
    return out | {name: stop_bytes(stop)}


def continue_name(queue: str) -> str:
    """The state file recording a `push --continue` between its two steps: the stopped
    patch taken into its file (a refresh), the push on to its target still to come."""
    return f"{queue}.push-continue.json"


def continue_state(queue: str, stop: PushStop, head: str) -> dict[str, bytes | None]:
    """The record `push --continue`'s refresh writes with the patch (the stack's new
    `head`): where the push goes on to, with its options; the push removes it."""
    doc = {
        "patch": stop.patch,
        "commit": head,
        "target": stop.target,
        "fuzz": stop.fuzz,
        "accept": list(stop.accept),
    }
    return {continue_name(queue): (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()}


def continuing(ctx: Context, stack: Stack | None) -> PushStop | None:
    """A `push --continue` killed between its steps — the stopped patch refreshed, the
    push on not run — while the stack is as that refresh left it; None otherwise."""
    if stack is None or not stack.applied:
        return None
    path = ctx.git().state_dir() / continue_name(ctx.repo().config.queue)
    try:
        doc = json.loads(path.read_bytes())
        if doc["commit"] != stack.head or doc["patch"] != stack.applied[-1]:
            return None
        fuzz = doc.get("fuzz")
        return PushStop(
            str(doc["patch"]),
            str(doc["commit"]),
            CONTINUING,
            target=str(doc["target"]),
            fuzz=None if fuzz is None else int(fuzz),
            accept=tuple(str(x) for x in doc.get("accept", ())),
        )
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as e:
        raise UnsafeStateError(
            f"the record of a push --continue under way is damaged ({e})",
            str(path),
            "delete it, then `patchq push` on to where the push was going",
        ) from None


def stop_bytes(stop: PushStop | None) -> bytes | None:
    """The stop record's bytes, or None (no stop: the file goes)."""
    if stop is None:
        return None
    doc = {
        "patch": stop.patch,
        "commit": stop.commit,
        "kind": stop.kind,
        "proposals": [
            {"file": f, "line": line, "hunk": i + 1, "method": m, "evidence": why}
            for f, line, i, m, why in stop.proposals
        ],
        "rewritten": stop.rewritten,
        "files": list(stop.files),
        "target": stop.target,
        "fuzz": stop.fuzz,
        "accept": list(stop.accept),
        "fixed": [list(x) for x in stop.fixed],
        "added_present": stop.added_present,
    }
    return (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()


def pushed_stop(ctx: Context, stack: Stack | None) -> PushStop | None:
    """Where a `push --merge` stopped (a conflict, or for review), while its patch is
    still the top of the stack as the push left it (`refresh` or a move ends the stop)."""
    if stack is None or not stack.applied:
        return None
    path = ctx.git().state_dir() / stop_name(ctx.repo().config.queue)
    try:
        doc = json.loads(path.read_bytes())
        if doc["commit"] != stack.head or doc["patch"] != stack.applied[-1]:
            return None
        props = tuple(
            (
                str(p["file"]),
                int(p["line"]),
                int(p["hunk"]) - 1,
                str(p["method"]),
                str(p["evidence"]),
            )
            for p in doc["proposals"]
        )
        fuzz = doc.get("fuzz")
        return PushStop(
            str(doc["patch"]),
            str(doc["commit"]),
            str(doc.get("kind", REVIEW)),
            props,
            bool(doc.get("rewritten")),
            tuple(str(x) for x in doc.get("files", ())),
            str(doc.get("target", "")),
            None if fuzz is None else int(fuzz),
            tuple(str(x) for x in doc.get("accept", ())),
            tuple((str(c), str(subject)) for c, subject in doc.get("fixed", ())),
            bool(doc.get("added_present")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def pushed_for_review(ctx: Context, stack: Stack | None) -> PushStop | None:
    """The stop of a `push --merge` for review (its proposals in the tree), if current."""
    stop = pushed_stop(ctx, stack)
    return stop if stop is not None and stop.kind == REVIEW else None


@dataclass(frozen=True, slots=True)
class Placement:
    """How `push --merge` placed a patch with the rebase's ladder (an automatic or
    accepted method): the sha256 of its file, the tree below it and the tree it made.
    Its commit is then not what the file applies to alone, yet it is the file's own
    placement, not an edit since: `refresh` writes it into the file."""

    sha256: str
    parent: str
    tree: str
    methods: tuple[str, ...] = ()  # each hunk's (as the ladder placed it)
    accepted: tuple[str, ...] = ()  # the proposed methods `--accept` took

    @classmethod
    def of(cls, data: bytes, parent: str, lad: Laddered) -> Placement:
        """The placement `lad` made of the patch file `data` on the tree `parent`."""
        return cls(sha256(data).hexdigest(), parent, lad.tree, lad.methods, lad.accepted)


def placed_name(queue: str) -> str:
    """The state file recording the ladder's placements of the applied patches."""
    return f"{queue}.push-placed.json"


def _placements(g: GitRepo, queue: str) -> dict[str, Placement]:
    """The placements recorded, by patch name ({} where none, or unreadable)."""
    try:
        doc = json.loads((g.state_dir() / placed_name(queue)).read_bytes())
        return {
            str(k): Placement(
                str(v["sha256"]),
                str(v["parent"]),
                str(v["tree"]),
                tuple(str(x) for x in v.get("methods", ())),
                tuple(str(x) for x in v.get("accepted", ())),
            )
            for k, v in doc.items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _placed_state(
    g: GitRepo, queue: str, stack: Stack, new: dict[str, Placement]
) -> dict[str, bytes | None]:
    """The placements record after a push: those of patches still applied, and `new`."""
    old = _placements(g, queue)
    keep = {k: v for k, v in {**old, **new}.items() if k in stack.applied}
    if keep == old:
        return {}
    if not keep:
        return {placed_name(queue): None}
    doc = {
        k: {
            "sha256": v.sha256,
            "parent": v.parent,
            "tree": v.tree,
            "methods": list(v.methods),
            "accepted": list(v.accepted),
        }
        for k, v in keep.items()
    }
    return {placed_name(queue): (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()}


def ladder_placed(ctx: Context, stack: Stack, k: int) -> bool:
    """Whether the k-th applied patch's commit is the placement `push --merge`'s ladder
    made of its file as it is now (so not a change to the file since it was pushed)."""
    return ladder_placement(ctx, stack, k) is not None


def ladder_placement(ctx: Context, stack: Stack, k: int) -> Placement | None:
    """The placement `push --merge`'s ladder made of the k-th applied patch's file as it
    is now, if its commit still holds it (what `refresh` would write into the file)."""
    g, repo = ctx.git(), ctx.repo()
    name = stack.applied[k]
    got = _placements(g, repo.config.queue).get(name)
    if got is None:
        return None
    try:
        data = repo.read_patch(name)
    except PatchqError:
        return None
    parent = g.commit_info(stack.commit_below(k))["tree"].decode()
    tree = g.commit_info(stack.commits[k])["tree"].decode()
    same = (got.sha256, got.parent, got.tree) == (sha256(data).hexdigest(), parent, tree)
    return got if same else None


def unwritten(ctx: Context, stack: Stack | None) -> tuple[tuple[str, Placement], ...]:
    """The applied patches whose commit holds a placement `push --merge`'s ladder made
    that their file does not hold yet (an accepted proposal, say): `refresh NAME` writes
    it. Only patches the placements record names are looked at."""
    if stack is None or not stack.applied:
        return ()
    names = _placements(ctx.git(), ctx.repo().config.queue)
    out = []
    for k, name in enumerate(stack.applied):
        got = ladder_placement(ctx, stack, k) if name in names else None
        if got is not None:
            out.append((name, got))
    return tuple(out)


def _rest_of_merged_patch(g: GitRepo, f: Failure, fuzz: int) -> Failure:
    """After a section conflicted in the 3-way merge, apply the patch's later sections too,
    so the working tree holds the whole patch for the person resolving it.

    `apply_series` stops at the conflicting section; a later section that does not apply
    either turns the result into a plain failure (nothing is pushed), never a half patch.
    """
    sections = f.patch.sections
    k = next(i for i, s in enumerate(sections) if s is f.section)
    state = SectionState(g, f.tree or "")
    for s in sections[k + 1 :]:
        res = apply_section(state, s, fuzz, f.display)
        if not all(h.applied for h in res.hunks):
            return replace(
                f, path=res.path, hunks=res.hunks, section=s, merged=None, conflicts=0, tree=None
            )
    return replace(f, tree=state.tree.write(state.w))


def pop_patches(
    ctx: Context, target: str | None, all_: bool, force: bool, verb: str
) -> MoveOutcome:
    """Remove the top patch (or down to `target`, which stays applied, or all), as `verb`."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        stack = open_stack(ctx, create=False)
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
        saved = protect(ctx, force, verb)
        expect = journal.expect(g, stack.branch)
        new = stack.truncated(keep)
        aside = journal.run(
            g,
            repo.root,
            journal.Plan(
                verb,
                new.branch,
                new.head,
                new,
                repo.config.queue,
                reason=plural(n - keep, "patch"),
                force=force,
                expect=expect,
            ),
        )
    return MoveOutcome(new, popped=stack.applied[keep:][::-1], saved=saved, aside=aside)


# --- editing applied patches -----------------------------------------------------------


def worktree(ctx: Context, head_tree: str) -> str:
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
    head = MemTree(g.read_tree, head_tree)
    tree = MemTree(g.read_tree, wt)
    for path in paths:
        kept = head.get(path)
        if kept is None:
            tree.remove(path)
        else:
            tree.set(path, *kept)
    return tree.write(g.objects)


def recommit(g: GitRepo, info: dict[str, bytes], tree: str, parent: str) -> str:
    """A commit like `info` (same author, committer, message) with a new tree and parent."""
    lines = [
        b"tree " + tree.encode(),
        b"parent " + parent.encode(),
        b"author " + info["author"],
        b"committer " + info["committer"],
    ]
    return g.objects.add("commit", b"\n".join(lines) + b"\n\n" + info["message"])


def rewrite_messages(
    g: GitRepo,
    repo: PatchRepo,
    stack: Stack,
    name: str,
    patch: Patch,
    *,
    op: str,
    files: dict[str, bytes | None],
) -> None:
    """Give an applied patch's commit the author and message of its new header, and re-parent
    the commits above (trees unchanged), so the stack is what pushing the series gives."""
    check_branch(g, stack)
    k = stack.applied.index(name)
    w = g.writer()
    when, tz = ident_date(g.commit_info(stack.base)["committer"])
    author, message = identity(name, patch, when, tz, g.user_identity())
    tree = g.commit_info(stack.commits[k])["tree"].decode()
    commit = g.commit_object(tree, [stack.commit_below(k)], message, author, author)
    commits = list(stack.commits[:k]) + [commit]
    for old in stack.commits[k + 1 :]:
        info = g.commit_info(old)
        commit = recommit(g, info, info["tree"].decode(), commit)
        commits.append(commit)
    w.flush()
    new = replace(stack, commits=tuple(commits))
    # Same trees: moving only the branch leaves the index and the working tree as they are.
    journal.run(
        g,
        repo.root,
        journal.Plan(
            op,
            stack.branch,
            new.head,
            new,
            repo.config.queue,
            worktree=journal.REF,
            files=files,
            reason=name,
        ),
    )


# --- the series ------------------------------------------------------------------------


def series_bytes(series: Series) -> bytes:
    """The `series` file's bytes for `series`."""
    return series.format().encode("utf-8", "surrogateescape")


def entry(repo: PatchRepo, name: str) -> Entry:
    """The series entry of patch `name`; bad input if the series has none."""
    found = repo.series.find(name)
    if found is None:
        raise BadInputError(f"no patch named {name!r} in the series", "series")
    return found


def top(ctx: Context) -> str:
    """The top applied patch; bad input if none."""
    stack = load(ctx.git().state_dir(), ctx.repo().config.queue)
    if stack is None or not stack.applied:
        raise BadInputError("no patch is applied", "series", "name a patch")
    return stack.applied[-1]
