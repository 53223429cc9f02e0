"""`export --script`: write the stdlib-only applier for machines without patchq."""

from __future__ import annotations

from pathlib import Path

from patchq.core.errors import BadInputError, DriftError
from patchq.formats import script as scriptgen
from patchq.git.memtree import SYMLINK, MemTree
from patchq.stack.apply import apply_series, load_patch, raise_failure
from patchq.stack.context import Context
from patchq.store import outputs


def export_script(ctx: Context, out: Path) -> int:
    """Build the script from the lock's base and the active series; returns files embedded."""
    outputs.target(out)  # a folder or a socket is refused before any work
    repo, g = ctx.repo(), ctx.git()
    lock = repo.read_lock()
    if lock is None:
        raise BadInputError(
            "no series.lock: the script embeds the locked result",
            str(repo.lock_path),
            "run `patchq apply` first",
        )
    if not g.has_object(lock.base):
        raise BadInputError(
            f"the lock's base {lock.base[:12]} is not in the target", str(g.root), "fetch it first"
        )
    entries = repo.series.active(lock.guards)
    g.writer(dry_run=True)  # the re-application stays in memory
    # With the fuzz the lock's placements needed, placed as `apply` placed them.
    res = apply_series(g, repo, lock.base, entries, fuzz=lock.fuzz, commits=False)
    if res.failure is not None:
        raise_failure(res.failure)
    if lock.result_tree is not None and res.tree != lock.result_tree:
        raise DriftError(
            "the series no longer gives series.lock's result",
            str(repo.lock_path),
            "run `patchq verify`, then `patchq apply` to re-lock",
        )
    final = MemTree(g.read_tree, res.tree)
    base_tree = MemTree(g.read_tree, res.base_tree)
    contents: dict[str, tuple[bytes | None, bytes | None]] = {}
    modes: dict[str, str | None] = {}
    for path, (before, after) in res.files.items():
        entry = final.get(path)
        was = base_tree.get(path)
        if before == after and (entry is None or was is None or entry[0] == was[0]):
            continue  # neither content nor mode changed
        contents[path] = (
            g.read_blob(before) if before else None,
            g.read_blob(after) if after else None,
        )
        modes[path] = entry[0] if entry else None
        if modes[path] == SYMLINK or (was is not None and was[0] == SYMLINK):
            raise BadInputError(
                f"the series changes the symlink {path!r}; the exported "
                "script writes regular files only",
                str(repo.root),
                "use `patchq apply` on that machine, or drop the symlink change from the series",
            )
    touched: dict[str, list[str]] = {}
    for e in entries:
        _, patch = load_patch(repo, e)
        for p in patch.paths:
            touched.setdefault(p, []).append(e.name or "")
    ids = {p: res.files[p] for p in contents}
    files = scriptgen.build_files(contents, ids, modes, touched)
    outputs.write(out, scriptgen.render(repo.root.name, lock.base, files).encode(), executable=True)
    return len(files)
