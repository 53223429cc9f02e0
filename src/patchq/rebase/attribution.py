"""The drift attribution of a replay's results: each hunk that did not apply cleanly gets
the upstream commits that moved it (`drift`), those that changed its own lines or context
(`touched_by`) and how many merely shifted it (`shifted`); see rebase/drift.py for how.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from patchq.core import hunks as engine
from patchq.core.errors import UnsafePathError
from patchq.core.patch import Hunk
from patchq.core.records import Evidence, HunkOutcome
from patchq.core.series import Entry
from patchq.core.status import CLEAN
from patchq.git.memtree import MemTree
from patchq.git.repo import GitRepo
from patchq.rebase.drift import Attribution, Change, Drifted, attribute, drifted_sections
from patchq.rebase.drift import histories as histories_for
from patchq.rebase.replay import PatchCheck
from patchq.stack.apply import PINNED_FUZZ, load_patch
from patchq.store.patchrepo import PatchRepo


def upstream_renames(g: GitRepo, old: str, new: str) -> dict[str, str]:
    """Files upstream renamed between two commits (old path → new path)."""
    if old == new:
        return {}
    return g.renames(old, new)


def attribute_drift(
    g: GitRepo,
    old_base: str,
    onto: str,
    results: Sequence[PatchCheck],
    repo: PatchRepo,
    *,
    entries: Sequence[Entry],
    histories: dict[str, list[Change]] | None = None,
    renames: dict[str, str] | None = None,
    sections: dict[str, dict[str, Drifted]] | None = None,
) -> tuple[list[PatchCheck], dict[str, str]]:
    """Fill each non-clean hunk's `drift`: one `git log` per file that drifted (a caller
    that attributes patch by patch passes the same `histories` to keep it so).

    Also returns the subjects of the commits named, for messages and reports."""
    subjects: dict[str, str] = {}
    if old_base == onto:
        return list(results), subjects
    by_name = {e.name: e for e in entries}
    base_tree = MemTree(g.read_tree, g.commit_info(old_base)["tree"].decode())
    histories = {} if histories is None else histories
    texts: dict[str, list[bytes] | None] = {}  # old base's files, read and split once
    drifted = {h.file for r in results for h in r.hunks if h.status != CLEAN}
    drifted |= {h.moved_to[0] for r in results for h in r.hunks if h.moved_to is not None}
    missing = drifted - set(histories)
    if missing:
        if renames is None:
            renames = upstream_renames(g, old_base, onto)
        histories.update(histories_for(g, old_base, onto, missing, renames))
    out = []
    for r in results:
        if all(h.status == CLEAN for h in r.hunks):
            out.append(r)
            continue
        entry = by_name.get(r.name)
        secs = (sections or {}).get(r.name)
        if secs is None:
            secs = (
                drifted_sections(load_patch(repo, entry)[1].sections, r.renames, r.hunks)
                if entry is not None
                else {}
            )
        new_hunks = []
        for h in r.hunks:
            sec = secs.get(h.file)
            if h.status == CLEAN or sec is None:
                new_hunks.append(h)
                continue
            subjects.update((c.commit, c.subject) for c in histories[h.file])
            if sec.old_path is None or h.index not in sec.hunks:
                # A file the patch creates (upstream created it too), or a section without
                # hunks: every upstream commit to the file is behind it.
                every = tuple(c.commit for c in histories[h.file])
                new_hunks.append(replace(h, drift=every, touched_by=every))
                continue
            start, length = _region(g, base_tree, sec.old_path, sec.hunks[h.index], texts)
            att: Attribution = attribute(histories[h.file], start, length)
            h = replace(
                h, drift=att.for_status(h.status), touched_by=att.touched, shifted=len(att.moved)
            )
            new_hunks.append(_moved_by(h, histories))
        done = replace(r, hunks=tuple(new_hunks))
        if done.evidence is not None and not done.evidence.commit:
            # Upstreamed by content: the newest upstream commit behind its hunks made it so.
            behind = done.drift
            if behind:
                done = replace(done, evidence=Evidence(done.evidence.kind, behind[-1]))
        out.append(done)
    return out, subjects


def _moved_by(h: HunkOutcome, histories: dict[str, list[Change]]) -> HunkOutcome:
    """A moved hunk with the upstream commit that moved its block: one that changed both
    its old file and the file it went to (else the newest that touched its old place)."""
    if h.moved_to is None or h.moved_to[2]:
        return h
    there = {c.commit for c in histories.get(h.moved_to[0], [])}
    both = [c for c in h.drift if c in there] or [
        c.commit for c in histories.get(h.file, []) if c.commit in there
    ]
    by = both[-1] if both else (h.drift[-1] if h.drift else "")
    return replace(h, moved_to=(h.moved_to[0], h.moved_to[1], by))


def _region(
    g: GitRepo,
    base_tree: MemTree,
    path: str,
    h: Hunk,
    texts: dict[str, list[bytes] | None],
) -> tuple[int, int]:
    """Where a hunk's context and removed lines sit in the old base's file (0-based).

    `texts` keeps each file read and split once for all the hunks that drifted in it."""
    if path not in texts:
        try:
            entry = base_tree.get(path)
        except UnsafePathError:
            entry = None
        texts[path] = g.lines.split(g.read_blob(entry[1])) if entry is not None else None
    lines = texts[path]
    if lines is not None:
        start = engine.locate(lines, h)
        if start is None:
            # Its context was stale on the old base too (the series was applied there with
            # fuzz): where GNU patch's fuzz places it, not its stated line.
            fuzzed = engine.gnu_apply(lines, [h], PINNED_FUZZ)
            if fuzzed is not None and fuzzed.hunks:
                start = h.old_pos + fuzzed.hunks[0].offset
        if start is not None:
            return start, len(h.old_lines)
    return h.old_pos, len(h.old_lines)
