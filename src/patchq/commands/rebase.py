"""`rebase`: carry the series onto a new upstream, refresh it, and record what happened.

The whole run happens in memory; the target is touched once at the end — or, at a
conflict, once to show the markers. Until the rebase finishes, `series`, `patches/` and
`series.lock` are not written at all: pending results live under `.git/patchq/`, so
`--abort` has nothing to undo in the patch repo. The finishing writes first back up
what they replace, so even a rebase killed while finishing can be aborted or continued.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from patchq.core.errors import BadInputError, ConflictError, UnsafeStateError
from patchq.core.lock import GONE, Lock, PatchRecord, sha256
from patchq.core.patch import parse
from patchq.core.series import Entry, Series
from patchq.git.repo import GitRepo
from patchq.ops.apply import apply_series, ident_date, identity, load_patch, preimages
from patchq.ops.check import CheckOutcome, Progress, check
from patchq.ops.drift import Change
from patchq.ops.drift import histories as histories_for
from patchq.ops.refresh import render_refreshed
from patchq.ops.replay import (
    CONFLICT,
    MISSING,
    PatchCheck,
    Replay,
    attribute_drift,
    lock_outcome,
)
from patchq.ops.session import Context
from patchq.ops.targets import branch_name, default_onto, old_base
from patchq.store.files import atomic_write
from patchq.store.patchrepo import PatchRepo
from patchq.store.stack import Stack, load, save
from patchq.store.statedir import crashpoint, rebase_pending_dir, rebase_state_path, run_lock

# The marker lines of a diff3-style conflict (ours, base, theirs); each carries a label.
MARKERS = (b"<<<<<<< ", b"||||||| ", b">>>>>>> ")


def _state_path(ctx: Context) -> Path:
    return rebase_state_path(ctx.git().state_dir(), ctx.repo().config.queue)


def _pending_dir(ctx: Context) -> Path:
    return rebase_pending_dir(ctx.git().state_dir(), ctx.repo().config.queue)


def in_progress(ctx: Context) -> bool:
    return _state_path(ctx).exists()


def _read_state(ctx: Context) -> dict[str, Any]:
    try:
        doc = json.loads(_state_path(ctx).read_text())
    except FileNotFoundError:
        raise BadInputError("no rebase in progress", str(ctx.git().root)) from None
    except ValueError:
        raise UnsafeStateError("the rebase state is damaged", str(_state_path(ctx)),
                               "`patchq rebase --abort`") from None
    assert isinstance(doc, dict)
    return doc


def _write_state(ctx: Context, doc: dict[str, Any]) -> None:
    atomic_write(_state_path(ctx), (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())


@dataclass(frozen=True, slots=True)
class RebaseOutcome:
    """Where a rebase run ended: finished, or stopped at a conflict (state saved)."""

    done: tuple[dict[str, Any], ...]
    finished: bool
    conflict: PatchCheck | None = None
    subjects: dict[str, str] | None = None
    base: str = ""
    onto: str = ""


def start(ctx: Context, onto: str, fuzz: int | None, progress: Progress | None = None
          ) -> RebaseOutcome:
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        if in_progress(ctx):
            raise UnsafeStateError("a rebase is already in progress", str(_state_path(ctx)),
                                   "`patchq rebase --continue`, `--skip` or `--abort`")
        g.require_clean(ctx.own_paths())
        ref, onto_id = default_onto(ctx, g, onto)
        base, guards = old_base(ctx, g)
        entries = repo.series.active(guards)
        stack = load(g.state_dir(), repo.config.queue)
        branch = stack.branch if stack else branch_name(ctx, None)
        tip = g.try_resolve(f"refs/heads/{stack.branch}") if stack else None
        if stack is not None and tip is not None and tip != stack.head:
            # Commits made on the stack branch with git are edits no patch holds yet; the
            # rebase would rebuild the branch without them.
            raise UnsafeStateError(f"{stack.branch} moved outside patchq (now {tip[:12]}, "
                                   f"expected {stack.head[:12]})", str(g.root),
                                   "fold those commits into patches (`git reset --soft` and "
                                   "`patchq refresh`), or reset the branch")
        doc: dict[str, Any] = {
            "old_base": base, "onto": onto_id, "onto_ref": ref, "guards": list(guards),
            "fuzz": repo.config.fuzz if fuzz is None else fuzz,
            "orig_branch": g.current_branch(), "orig_head": g.head(),
            "stack_before": None if stack is None else {
                "base": stack.base, "branch": stack.branch, "applied": list(stack.applied),
                "commits": list(stack.commits)},
            "branch": branch,
            "branch_before": g.try_resolve(f"refs/heads/{branch}"),
            "entries": [e.name for e in entries], "done": [], "head": onto_id,
            "current": None, "phase": "running", "subjects": {},
        }
        return _run(ctx, doc, progress)


def _run(ctx: Context, doc: dict[str, Any], progress: Progress | None = None
         ) -> RebaseOutcome:
    """Replay the remaining patches from doc['head']; stop at a conflict or finish."""
    repo, g = ctx.repo(), ctx.git()
    entries = [repo.series.find(n) for n in doc["entries"]]
    if any(e is None for e in entries):
        raise UnsafeStateError("the series changed during the rebase", "series",
                               "`patchq rebase --abort`")
    all_entries = [e for e in entries if e is not None]
    w = g.writer()
    pre = preimages(g, repo, doc["old_base"], all_entries, w)
    rp = Replay.start(g, repo, doc["old_base"], doc["onto"], w, int(doc["fuzz"]), pre,
                      tree=g.commit_info(doc["head"], w)["tree"].decode())
    when, tz = ident_date(g.commit_info(doc["onto"])["committer"])
    finished_names = {d["name"] for d in doc["done"]}
    todo = [e for e in all_entries if e.name not in finished_names]
    # Upstream's history of every file the remaining patches touch, in one `git log`.
    touched = {rp.renames.get(p, p) for e in todo for p in load_patch(repo, e)[1].paths}
    histories: dict[str, list[Change]] = (
        histories_for(g, doc["old_base"], doc["onto"], touched, rp.renames)
        if touched and doc["old_base"] != doc["onto"] else {})
    for i, entry in enumerate(todo):
        assert entry.name is not None
        if progress is not None:
            progress(i, entry.name, len(todo))
        res = rp.step(entry)
        (res,), subjects = attribute_drift(g, doc["old_base"], doc["onto"], w, [res], repo,
                                           [entry], histories, rp.renames, rp.sections)
        doc["subjects"].update(subjects)
        record = {"name": entry.name, "status": res.status, "drift": list(res.drift),
                  "hunks": [_hunk_json(h) for h in res.hunks],
                  "tree_before": res.tree_before, "tree_after": res.tree}
        if res.status in (CONFLICT, MISSING):
            w.flush()
            doc["current"] = record | {"conflict_tree": res.conflict_tree,
                                       "files": list(res.conflict_files), "shown": False}
            # State first, then the target: a run killed in between can still --abort.
            _write_state(ctx, doc)
            crashpoint("rebase:stopped")
            _show_conflict(ctx, doc, res.name, res.conflict_tree)
            doc["current"]["shown"] = True
            _write_state(ctx, doc)
            return RebaseOutcome(tuple(doc["done"]), False, res, doc["subjects"],
                                 doc["old_base"], doc["onto"])
        record["outcome"] = lock_outcome(res)
        if record["outcome"] != "upstreamed":
            _, patch = load_patch(repo, entry)
            author, message = identity(entry.name, patch, when, tz)
            commit = GitRepo.commit_object(w, res.tree, [doc["head"]], message, author, author)
            doc["head"] = commit
            record["commit"] = commit
        doc["done"].append(record)
    w.flush()
    return _finish(ctx, doc)


def _hunk_json(h: Any) -> dict[str, Any]:
    return {"file": h.file, "index": h.index, "status": h.status, "offset": h.offset,
            "fuzz": h.fuzz, "anchored": h.anchored, "drift": list(h.drift), "reason": h.reason}


def _show_conflict(ctx: Context, doc: dict[str, Any], name: str,
                   conflict_tree: str | None) -> None:
    """Check out the rebased stack so far and lay the markers over it (index untouched)."""
    g = ctx.git()
    g.checkout_branch(doc["branch"], doc["head"], f"rebase stopped at {name}", force=True)
    if conflict_tree is not None:
        g.overlay(doc["head"], conflict_tree)
        # Files the patch creates stay known to git (intent to add), so `git diff` shows
        # them and --continue takes them without a `git add`.
        g.intend_to_add(g.added_paths(doc["head"], conflict_tree))


def _clear_conflict(ctx: Context, doc: dict[str, Any]) -> None:
    """Throw away the working tree's conflict state (used by --skip and --abort)."""
    g = ctx.git()
    cur = doc.get("current") or {}
    g.discard_changes()
    tree = cur.get("conflict_tree")
    if tree:
        for name in g.added_paths("HEAD", tree):
            path = g.root / name
            if path.is_file() and not path.is_symlink():
                path.unlink()


def continue_(ctx: Context, progress: Progress | None = None) -> RebaseOutcome:
    """Take the person's resolution of the conflicting patch (no `git add` needed)."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        doc = _read_state(ctx)
        if doc.get("phase") == "finishing":
            return _finish(ctx, doc)
        cur = doc.get("current")
        if not cur:
            return _run(ctx, doc, progress)
        if not cur.get("shown", True):
            # Killed before the markers reached the working tree: show them now.
            _show_conflict(ctx, doc, cur["name"], cur.get("conflict_tree"))
            cur["shown"] = True
            _write_state(ctx, doc)
            raise ConflictError(f"{cur['name']} needs resolving; its conflict is now in the "
                                "working tree", str(g.root),
                                "resolve it, then `patchq rebase --continue`")
        for path in cur.get("files", []):
            f = g.root / path
            if f.is_file() and any(line.startswith(MARKERS) for line in f.read_bytes()
                                   .split(b"\n")):
                raise ConflictError(f"{path} still has conflict markers", str(g.root),
                                    "resolve them, then `patchq rebase --continue`")
        wt = g.worktree_tree()
        if wt == cur["tree_before"]:
            # As `git rebase --continue` does: an empty resolution is not silently kept as
            # an empty patch; the person says whether to drop it.
            raise ConflictError(f"the resolution of {cur['name']} changes nothing",
                                str(g.root), "edit the files, or `patchq rebase --skip` to "
                                "drop the patch")
        entry = repo.series.find(cur["name"])
        if entry is None:
            raise UnsafeStateError("the series changed during the rebase", "series",
                                   "`patchq rebase --abort`")
        _, patch = load_patch(repo, entry)
        when, tz = ident_date(g.commit_info(doc["onto"])["committer"])
        author, message = identity(cur["name"], patch, when, tz)
        w = g.writer()
        commit = GitRepo.commit_object(w, wt, [doc["head"]], message, author, author)
        w.flush()
        doc["head"] = commit
        record = dict(cur)
        record.pop("conflict_tree", None)
        record.pop("files", None)
        record |= {"outcome": "resolved", "commit": commit, "tree_after": wt}
        doc["done"].append(record)
        doc["current"] = None
        g.reset_to(commit, f"rebase: resolved {cur['name']}")
        _write_state(ctx, doc)
        return _run(ctx, doc, progress)


def skip(ctx: Context, progress: Progress | None = None) -> RebaseOutcome:
    """Drop the conflicting patch (recorded `dropped`) and go on."""
    g = ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        doc = _read_state(ctx)
        cur = doc.get("current")
        if not cur:
            raise BadInputError("no conflicting patch to skip", str(_state_path(ctx)))
        _clear_conflict(ctx, doc)
        record = {k: v for k, v in cur.items() if k not in ("conflict_tree", "files")}
        doc["done"].append(record | {"outcome": "dropped"})
        doc["current"] = None
        _write_state(ctx, doc)
        return _run(ctx, doc, progress)


def abort(ctx: Context) -> None:
    """Put the target, series, patches/ and series.lock back exactly as they were."""
    repo, g = ctx.repo(), ctx.git()
    with run_lock(g.state_dir(), ctx.repo().root):
        doc = _read_state(ctx)
        _clear_conflict(ctx, doc)
        backup = _pending_dir(ctx) / "backup"
        if backup.is_dir():
            _restore_backup(repo.root, backup)
        branch = doc["branch"]
        before = doc.get("branch_before")
        orig_branch, orig_head = doc.get("orig_branch"), doc.get("orig_head")
        if orig_branch == branch and before:
            g.checkout_branch(branch, before, "rebase --abort")
        else:
            g.restore_head(orig_branch, orig_head)
            if before:
                g.update_ref(f"refs/heads/{branch}", before, None, "patchq: rebase --abort")
            elif g.try_resolve(f"refs/heads/{branch}"):
                g.delete_branch(branch)
        sb = doc.get("stack_before")
        if sb:
            save(g.state_dir(), repo.config.queue,
                 Stack(sb["base"], sb["branch"], tuple(sb["applied"]), tuple(sb["commits"])))
        shutil.rmtree(_pending_dir(ctx), ignore_errors=True)
        _state_path(ctx).unlink(missing_ok=True)


def _restore_backup(root: Path, backup: Path) -> None:
    manifest = json.loads((backup / "manifest.json").read_text())
    for rel, existed in manifest.items():
        dest = root / rel
        if existed:
            atomic_write(dest, (backup / "files" / rel).read_bytes())
        else:
            dest.unlink(missing_ok=True)


def _finish(ctx: Context, doc: dict[str, Any]) -> RebaseOutcome:
    """Write the refreshed patches, series and lock (backed up first), move the stack."""
    repo, g = ctx.repo(), ctx.git()
    new_bytes: dict[str, bytes] = {}
    old_bytes: dict[str, bytes] = {}
    resuming = doc.get("phase") == "finishing"
    saved = _pending_dir(ctx) / "backup" / "files"
    if resuming and (saved / "series").is_file():
        # Killed while finishing: the patch repo may be half-written; start from the copy.
        repo = replace(repo, series=Series.parse(
            (saved / "series").read_text(encoding="utf-8", errors="surrogateescape")))
    changed = [r for r in doc["done"] if r["outcome"] in ("refreshed", "merged", "resolved")]
    diffs = dict(zip((r["name"] for r in changed), g.diff_trees_many(
        [(r["tree_before"], r["tree_after"]) for r in changed], repo.config.context),
        strict=True))
    for rec in changed:
        entry = repo.series.find(rec["name"])
        assert entry is not None
        backup_copy = saved / "patches" / rec["name"]
        data = backup_copy.read_bytes() if resuming and backup_copy.is_file() \
            else repo.read_patch(rec["name"])
        patch = parse(data, repo.display(rec["name"]), entry.strip_level(repo.config.strip))
        diff = diffs[rec["name"]]
        new_bytes[rec["name"]] = render_refreshed(patch, diff, repo.display(rec["name"]),
                                                  entry.strip_level(repo.config.strip))
        old_bytes[rec["name"]] = data
    gone = {r["name"]: r["outcome"] for r in doc["done"]
            if r["outcome"] in ("upstreamed", "dropped")}
    series = Series(tuple(
        _commented(e.raw, gone[e.name], doc["onto"]) if e.name in gone else e
        for e in repo.series.entries))
    # The report needs the old patches; keep them beside the state, not in the patch repo.
    last = {"from": doc["old_base"], "onto": doc["onto"], "onto_ref": doc["onto_ref"],
            "patches": [{k: v for k, v in r.items() if not k.startswith("tree")}
                        for r in doc["done"]],
            "subjects": doc["subjects"],
            "old": {k: v.decode("utf-8", "surrogateescape") for k, v in old_bytes.items()},
            "new": {k: v.decode("utf-8", "surrogateescape") for k, v in new_bytes.items()}}
    if doc.get("phase") != "finishing":
        _backup(ctx, repo.root, ["series", "series.lock"] +
                [f"patches/{n}" for n in new_bytes])
        doc["phase"] = "finishing"
        _write_state(ctx, doc)
    crashpoint("rebase:finishing")
    for name, data in new_bytes.items():
        repo.write_patch(name, data)
        crashpoint("rebase:patch-written")
    repo.write_series(series)
    crashpoint("rebase:series-written")
    kept = [r for r in doc["done"] if r["outcome"] not in GONE]
    # Every patch the rebase saw is recorded, those that left the active series too: the
    # lock is where `upstreamed` and `dropped` are kept for tools and reviewers.
    records = []
    for r in doc["done"]:
        data = new_bytes.get(r["name"]) or repo.read_patch(r["name"])
        records.append(PatchRecord(r["name"], sha256(data), r["outcome"], tuple(r["drift"])))
    top_tree = g.commit_info(doc["head"])["tree"].decode()
    # `files` must list what `verify` will see the series touch: re-apply the series just
    # written onto the new base, in memory, exactly as `apply` and `verify` do.
    written = PatchRepo.open(repo.root)
    again = apply_series(g, written, doc["onto"], written.series.active(doc["guards"]),
                         g.writer(dry_run=True), commits=False)
    files = dict(again.files)
    if again.failure is not None:
        onto_tree = g.commit_info(doc["onto"])["tree"].decode()
        files = g.changed_blobs(onto_tree, top_tree)
    lock = Lock(doc["onto"], top_tree, files, tuple(doc["guards"]), tuple(records),
                {"from": doc["old_base"], "onto": doc["onto"], "onto_ref": doc["onto_ref"]})
    repo.write_lock(lock)
    crashpoint("rebase:lock-written")
    g.checkout_branch(doc["branch"], doc["head"], f"rebase onto {doc['onto'][:12]}",
                      force=True)
    crashpoint("rebase:checked-out")
    save(g.state_dir(), repo.config.queue, Stack(doc["onto"], doc["branch"],
                                     tuple(r["name"] for r in kept),
                                     tuple(r["commit"] for r in kept)))
    atomic_write(g.state_dir() / f"{repo.config.queue}.last-rebase.json",
                 (json.dumps(last, indent=2, sort_keys=True) + "\n").encode())
    shutil.rmtree(_pending_dir(ctx), ignore_errors=True)
    _state_path(ctx).unlink(missing_ok=True)
    return RebaseOutcome(tuple(doc["done"]), True, None, doc["subjects"], doc["old_base"],
                         doc["onto"])


def _commented(raw: str, outcome: str, onto: str) -> Entry:
    """The series line of a patch leaving the active series, kept as a comment."""
    return Entry(raw=f"# {outcome} in {onto[:12]}: {raw.rstrip()}\n")


def _backup(ctx: Context, root: Path, rels: list[str]) -> None:
    backup = _pending_dir(ctx) / "backup"
    shutil.rmtree(backup, ignore_errors=True)
    manifest = {}
    for rel in rels:
        src = root / rel
        manifest[rel] = src.exists()
        if src.exists():
            dest = backup / "files" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    atomic_write(backup / "manifest.json", json.dumps(manifest).encode())


def dry_run(ctx: Context, onto: str, fuzz: int | None, progress: Progress | None = None
            ) -> CheckOutcome:
    """What `rebase --onto` would do to each patch, changing nothing: the replay `check`
    runs (outcome_of names each patch's would-be outcome)."""
    return check(ctx, onto, fuzz, progress)


def outcome_of(p: PatchCheck) -> str:
    """The lock outcome a patch would get (`conflict` where a person must decide)."""
    return lock_outcome(p)

