"""Applying a series to a git tree in memory: one commit per patch, no working tree.

This is where the patch model, the hunk engine and the git layer meet. Each section of
each patch is checked (paths confined, no writing through symlinks or into submodules),
its hunks are placed by the engine, and the resulting blobs and trees are hashed into an
`ObjectWriter` that the caller flushes once — or never, for `verify` and dry runs.
Commits are reproducible: identity and date come from the patch header, with fallbacks
(the user's git identity, then `patchq <patchq@invalid>`; the base commit's committer
date), and the committer equals the author.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from patchq.core import hunks as engine
from patchq.core.errors import ApplyError, BadInputError, PatchqError, UnsafePathError
from patchq.core.header import commit_message, fallback_subject, header_info
from patchq.core.lock import PatchRecord, sha256
from patchq.core.names import Normalisation, resolve_section
from patchq.core.patch import FilePatch, Patch, parse
from patchq.core.paths import FileMode, check_link_path, file_mode, is_git_name
from patchq.core.progress import Progress
from patchq.core.records import Stack
from patchq.core.series import Entry
from patchq.core.status import CONFLICT, FAILED, FUZZ, MERGE
from patchq.git.memtree import GITLINK, SYMLINK, MemTree
from patchq.git.objects import TREE_MODE, Ident, ObjectWriter
from patchq.git.repo import GitRepo
from patchq.store import pinned
from patchq.store.patchrepo import PatchRepo
from patchq.store.stack import load as load_stack
from patchq.store.statedir import crashpoint

DEFAULT_MODE = FileMode.REGULAR
FALLBACK_NAME, FALLBACK_EMAIL = "patchq", "patchq@invalid"


@dataclass(frozen=True, slots=True)
class SectionResult:
    """One file section of a patch: what it did to which path and how its hunks landed."""

    path: str
    old_path: str | None
    action: str  # modify, new, delete, rename, copy, mode
    hunks: tuple[engine.HunkResult, ...] = ()

    @property
    def status(self) -> str:
        return engine.worst(h.status for h in self.hunks)


@dataclass(frozen=True, slots=True)
class PatchResult:
    name: str
    sections: tuple[SectionResult, ...]
    tree: str
    commit: str | None = None
    # What the patch needed to be read and applied as GNU patch would (core.patch).
    normalisations: tuple[Normalisation, ...] = ()

    @property
    def status(self) -> str:
        return engine.worst(s.status for s in self.sections)


@dataclass(frozen=True, slots=True)
class Failure:
    """Where a series stopped: the patch, the file, and each hunk's report."""

    name: str
    display: str
    path: str
    hunks: tuple[engine.HunkResult, ...]
    patch: Patch
    section: FilePatch
    merged: bytes | None = None  # the 3-way result with conflict markers, if one was tried
    conflicts: int = 0
    tree: str | None = None  # the tree with every section up to and including the merge
    # The fuzz (1 or 2, GNU patch's default) that would make the section apply, 0 if none.
    gnu_fuzz: int = 0

    def message(self) -> str:
        bad = [h for h in self.hunks if not h.applied]
        parts = []
        for h in bad[:3]:
            if h.index >= len(self.section.hunks):
                parts.append(h.reason)
                continue
            hunk = self.section.hunks[h.index]
            parts.append(
                f"hunk #{h.index + 1} (patch line {hunk.lineno}, file line "
                f"{hunk.old_start}) {h.status}: {h.reason or 'no match'}"
            )
        more = f"; {len(bad) - 3} more" if len(bad) > 3 else ""
        hint = (
            f"; applies with fuzz {self.gnu_fuzz}, as GNU patch would: rerun with "
            f"`--fuzz {self.gnu_fuzz}` (or set `fuzz = {self.gnu_fuzz}` in patchq.toml)"
            if self.gnu_fuzz
            else ""
        )
        return f"{self.path}: " + "; ".join(parts) + more + hint


@dataclass(frozen=True, slots=True)
class SeriesResult:
    base: str
    base_tree: str
    patches: tuple[PatchResult, ...]
    tree: str
    head: str
    files: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    failure: Failure | None = None


Preimage = Callable[[str, str], "bytes | None"]


def placed(p: PatchResult) -> tuple[dict[str, object], ...]:
    """The hunks of an applied patch that `series.lock` records (`PatchRecord.placed`):
    those placed with fuzz, or where another place matched as well."""
    return tuple(
        {
            "file": s.path,
            "hunk": h.index + 1,
            "line": h.line,
            "fuzz": h.fuzz,
            "passed_over": list(h.passed_over),
        }
        for s in p.sections
        for h in s.hunks
        if h.status == FUZZ or h.passed_over
    )


def with_placements(
    records: Sequence[PatchRecord], results: Sequence[PatchResult]
) -> tuple[PatchRecord, ...]:
    """Lock records carrying how this application placed each patch's hunks."""
    by_name = {p.name: placed(p) for p in results}
    return tuple(replace(r, placed=by_name.get(r.name, ())) for r in records)


_BLOB_CACHE = 32 << 20


class SectionState:
    """The tree being built plus a cache of blob contents by id."""

    def __init__(self, g: GitRepo, base_tree: str, objects: ObjectWriter | None = None) -> None:
        self.g = g
        # The overlay its objects go to: the repository's current one, or the one a lazy
        # re-application (OldStack) was started with.
        self.w = g.objects if objects is None else objects
        self.tree = MemTree(g.read_tree, base_tree)
        self.base_tree = base_tree
        self._links: dict[str, bool] | None = None
        # Recently used file contents; everything can be read again (from the writer or
        # git), so the cache is bounded — a thousand-patch replay would otherwise hold
        # every file it touched, twice (old and new series).
        self.blobs: OrderedDict[str, bytes] = OrderedDict()
        self.blob_bytes = 0
        self.base: dict[str, tuple[str, str] | None] = {}
        # While not None: what each path held before the first change since it was set,
        # so a replay can take back a patch that conflicted (`undo`).
        self.changed: dict[str, tuple[str, str] | None] | None = None

    def watched_links(self) -> dict[str, bool]:
        """The links that must keep pointing inside: the base's that do (read once, when
        the first link is written) and every link written since."""
        if self._links is None:
            base = MemTree(self.g.read_tree, self.base_tree)
            self._links = {
                path: True
                for path, _ in self.g.symlinks(self.base_tree)
                if _link_problem(base.peek, self.content, path, self._target(base, path)) is None
            }
        return self._links

    def _target(self, tree: MemTree, path: str) -> bytes:
        entry = tree.peek(path)
        return self.content(entry[1]) if entry and entry[1] else b""

    def get(self, path: str, where: str) -> tuple[str, str] | None:
        entry = self.tree.get(path, where)
        if path not in self.base:
            self.base[path] = entry
        return entry

    def content(self, oid: str) -> bytes:
        data = self.blobs.get(oid)
        if data is None:
            data = self.g.read_blob(oid)
            self._remember(oid, data)
        else:
            self.blobs.move_to_end(oid)
        return data

    def _remember(self, oid: str, data: bytes) -> None:
        if oid in self.blobs:
            return
        self.blobs[oid] = data
        self.blob_bytes += len(data)
        while self.blob_bytes > _BLOB_CACHE and len(self.blobs) > 1:
            _, old = self.blobs.popitem(last=False)
            self.blob_bytes -= len(old)

    def read_ahead(self, repo: PatchRepo, entries: Sequence[Entry], i: int) -> None:
        """Before the `i`-th of `entries` is applied: every READ_AHEAD patches, read ahead
        in a few batches the files the next ones touch first (those no earlier patch
        touched: still the base tree's). A patch that does not load is left for the loop
        to report."""
        if i % READ_AHEAD:
            return
        paths = []
        for entry in entries[i : i + READ_AHEAD]:
            try:
                _, patch = load_patch(repo, entry)
            except (PatchqError, OSError):
                break
            for s in patch.sections:
                if s.old_path is not None and not s.is_new and s.old_path not in self.base:
                    paths.append(s.old_path)
        if paths:
            self.g.prefetch_paths((self.base_tree, p) for p in paths)

    def put(
        self,
        path: str,
        mode: str,
        data: bytes,
        where: str,
        *,
        markers: bool = False,
        edit: tuple[str, engine.Edit] | None = None,
    ) -> None:
        """Write a file; a symlink's target is checked (`markers`: conflict text for a
        person, not a target anyone will follow). `edit`: the blob the engine spliced
        `data` from, and how (a pack delta without search, where that blob is `path`'s)."""
        before = self.tree.get(path, where)
        if mode == SYMLINK and markers:
            # Conflict text is no target to follow: the person gets it as a file.
            try:
                _check_link(self, path, data, where)
            except UnsafePathError:
                mode = DEFAULT_MODE
        elif mode == SYMLINK:
            # Here, not in apply_section alone: rebase and check write trees through
            # this too.
            _check_link(self, path, data, where)
        if path not in self.base:
            self.base[path] = before
        if self.changed is not None and path not in self.changed:
            self.changed[path] = before
        oid = self.w.add(
            "blob",
            data,
            base=before[1] if before else None,
            edit=edit[1]
            if edit is not None and before is not None and before[1] == edit[0]
            else None,
        )
        if before is not None and before[1] in self.blobs:
            self.blob_bytes -= len(self.blobs.pop(before[1]))  # only current versions
        self._remember(oid, data)
        self.tree.set(path, mode, oid, where)

    def remove(self, path: str, where: str) -> None:
        before = self.tree.get(path, where)
        if path not in self.base:
            self.base[path] = before
        if self.changed is not None and path not in self.changed:
            self.changed[path] = before
        self.tree.remove(path, where)

    def undo(self, tree: str) -> None:
        """Put back what `changed` recorded, which must give `tree` again; a tree it
        cannot restore (a file and a directory traded places) is read afresh instead."""
        changed, self.changed = self.changed or {}, None
        try:
            for path, entry in reversed(changed.items()):  # the last change first
                if entry is None:
                    self.tree.remove(path)
                else:
                    self.tree.set(path, entry[0], entry[1])
            if self.tree.write(self.w) == tree:
                return
        except UnsafePathError:
            pass
        self.tree = MemTree(self.g.read_tree, tree)


# Patches whose first-touched files are read ahead in one batch (SectionState.read_ahead).
READ_AHEAD = 64

_PARSED: OrderedDict[tuple[str, int, int, int], tuple[bytes, Patch]] = OrderedDict()
# The parses kept, by the bytes of patch text they hold (a parse takes about 4.5 times its
# text): a whole 1,000-patch series (9.5 MB) fits, so a check or rebase that reads the
# series up front for provenance and then replays it parses each patch once.
_PARSED_BYTES = 16 << 20
_parsed_bytes = 0


def load_patch(repo: PatchRepo, entry: Entry) -> tuple[bytes, Patch]:
    """Read and parse a series entry's patch with its strip level.

    check and rebase read each patch three times (provenance reads the whole series up
    front, then the replay and the drift attribution read each patch); the parses are
    kept up to _PARSED_BYTES of text, keyed by the file's path, size and mtime, so an edit
    in between is always seen. Bytes staged in `repo` (about to be written) are parsed
    afresh: the file on disk is not what they are."""
    assert entry.name is not None
    strip = entry.strip_level(repo.config.strip)
    if entry.name in repo.staged:
        data = repo.staged[entry.name]
        return data, parse(data, repo.display(entry.name), strip)
    path = repo.patch_path(entry.name)
    try:
        st = os.stat(path)
        key = (str(path), st.st_mtime_ns, st.st_size, strip)
    except OSError:
        key = None
    if entry.name in repo.staged:
        key = None  # bytes about to be written, not the file's: never the file's parse
    if key is not None and key in _PARSED:
        _PARSED.move_to_end(key)
        hit: tuple[bytes, Patch] = _PARSED[key]
        return hit
    data = repo.read_patch(entry.name, path)
    patch = parse(data, repo.display(entry.name), strip)
    if key is not None:
        global _parsed_bytes
        _PARSED[key] = (data, patch)
        _parsed_bytes += len(data)
        while _parsed_bytes > _PARSED_BYTES and len(_PARSED) > 1:
            _, (gone, _) = _PARSED.popitem(last=False)
            _parsed_bytes -= len(gone)
    return data, patch


def identity(
    name: str,
    patch: Patch,
    fallback_when: int,
    fallback_tz: str,
    who: tuple[str, str] | None,
) -> tuple[Ident, str]:
    """The author (also used as committer) and the message for a patch's commit.

    A header without an author gives `who` (the user's git identity, `GitRepo.user_identity`),
    else `patchq <patchq@invalid>`; the date policy does not depend on it."""
    info = header_info(patch.header)
    fallback_name, fallback_email = who or (FALLBACK_NAME, FALLBACK_EMAIL)
    ident = Ident(
        info.author_name or fallback_name,
        info.author_email or fallback_email,
        info.date if info.date is not None else fallback_when,
        info.tz or fallback_tz,
    )
    return ident, commit_message(info, fallback_subject(name))


def apply_series(
    g: GitRepo,
    repo: PatchRepo,
    base: str,
    entries: Sequence[Entry],
    *,
    fuzz: int = 0,
    commits: bool = True,
    progress: Progress | None = None,
    stamp: str | None = None,
    preimage: Preimage | None = None,
) -> SeriesResult:
    """Apply `entries` in order onto commit `base`; stop at the first patch that fails.

    `stamp` is the commit whose committer date dates header-less patches (default `base`;
    a stack passes its base so one-by-one pushes give the same commits as `apply`).
    `preimage(i, path)`, when given, returns the file entry `i` was made against, for the
    3-way fallback (DESIGN §4 step 4).
    """
    w = g.objects
    info = g.commit_info(base)
    base_tree = info["tree"].decode()
    stamp_info = info if stamp is None or stamp == base else g.commit_info(stamp)
    when, tz = ident_date(stamp_info.get("committer", b""))
    state = SectionState(g, base_tree)
    results: list[PatchResult] = []
    head = base
    tree = base_tree
    failure: Failure | None = None
    for n, entry in enumerate(entries):
        assert entry.name is not None
        if progress is not None:
            progress(n, entry.name, len(entries))
        state.read_ahead(repo, entries, n)
        _, patch = load_applicable(repo, entry)
        display = repo.display(entry.name)
        sections: list[SectionResult] = []
        notes = list(patch.normalisations)
        for section in patch.sections:
            section, fixed = fit_section(state, section)
            notes.extend(fixed)
            res = apply_section(state, section, fuzz, display)
            if any(not h.applied for h in res.hunks) and preimage is not None:
                res, merged, conflicts = _merge_section(
                    state, section, res, display, partial(preimage, entry.name)
                )
                if conflicts and merged is not None:
                    sections.append(res)
                    state.put(
                        section.path,
                        section.new_mode or _mode_of(state, section),
                        merged,
                        display,
                        markers=True,
                    )
                    failure = Failure(
                        entry.name,
                        display,
                        res.path,
                        res.hunks,
                        patch,
                        section,
                        merged,
                        conflicts,
                        state.tree.write(w),
                    )
                    break
            sections.append(res)
            if any(not h.applied for h in res.hunks):
                failure = Failure(
                    entry.name,
                    display,
                    res.path,
                    res.hunks,
                    patch,
                    section,
                    gnu_fuzz=_fuzz_needed(state, section) if fuzz < 2 else 0,
                )
                break
        if failure is not None:
            break
        tree = state.tree.write(w)
        commit = None
        if commits:
            author, message = identity(entry.name, patch, when, tz, g.user_identity())
            commit = g.commit_object(tree, [head], message, author, author)
            head = commit
        results.append(PatchResult(entry.name, tuple(sections), tree, commit, tuple(notes)))
        w.maybe_flush()
        crashpoint("apply:patch")
    files = {}
    for path, before in state.base.items():
        after = state.tree.get(path, "")
        b = before[1] if before else None
        a = after[1] if after else None
        files[path] = (b, a)
    return SeriesResult(base, base_tree, tuple(results), tree, head, files, failure)


def load_applicable(repo: PatchRepo, entry: Entry) -> tuple[bytes, Patch]:
    """`load_patch`, refusing a patch that would write what is no file before any of it
    is applied: a directory's or submodule's mode (a file's mode is already git's own,
    `core.patch` normalises it)."""
    data, patch = load_patch(repo, entry)
    assert entry.name is not None
    display = repo.display(entry.name)
    for s in patch.sections:
        check_modes(s, f"{display}:{s.lineno}")
    return data, patch


def check_modes(s: FilePatch, where: str) -> None:
    """A section's modes must be files' (`paths.file_mode` raises for the others)."""
    for mode in (s.old_mode, s.new_mode):
        if mode is not None:
            file_mode(mode, where)


def ident_date(raw: bytes) -> tuple[int, str]:
    """The date of a raw `Name <email> 1700000000 +0100` identity line."""
    parts = raw.rsplit(b" ", 2)
    try:
        return int(parts[-2]), parts[-1].decode()
    except (IndexError, ValueError):
        return 0, "+0000"


class _Tree:
    """The `TreeView` of a tree being built: what `resolve_section` asks of it."""

    def __init__(self, state: SectionState) -> None:
        self.state = state

    def exists(self, path: str) -> bool:
        entry = self.state.tree.peek(path)
        return entry is not None and entry[0] != TREE_MODE

    def is_dir(self, path: str) -> bool:
        entry = self.state.tree.peek(path)
        return entry is not None and entry[0] == TREE_MODE

    def has_crlf(self, path: str) -> bool:
        entry = self.state.tree.peek(path)
        if entry is None or entry[0] == TREE_MODE or entry[1] is None:
            return False
        return b"\r\n" in self.state.content(entry[1])

    def mode(self, path: str) -> str | None:
        entry = self.state.tree.peek(path)
        return None if entry is None or entry[0] == TREE_MODE else str(entry[0])


def fit_section(state: SectionState, s: FilePatch) -> tuple[FilePatch, tuple[Normalisation, ...]]:
    """The section as GNU patch would apply it to the tree as it is now (its file name
    chosen among a plain diff's names, a converted CRLF patch file's CRs stripped)."""
    return resolve_section(s, _Tree(state))


def _fuzz_needed(state: SectionState, s: FilePatch) -> int:
    """The fuzz (1 or 2, GNU patch's default) with which a section that failed would
    apply as GNU patch places it; 0 when neither makes it apply."""
    if s.old_path is None or s.binary or not s.hunks:
        return 0
    entry = state.tree.peek(s.old_path)
    if entry is None or entry[0] == TREE_MODE or entry[1] is None:
        return 0
    content = state.content(entry[1])
    for fuzz in (1, 2):
        if engine.apply_hunks(content, s.hunks, fuzz=fuzz, split=state.g.lines.split, gnu=True).ok:
            return fuzz
    return 0


def apply_section(state: SectionState, s: FilePatch, fuzz: int, display: str) -> SectionResult:
    """Apply one file section to the tree; bad input raises, a hunk that fails is reported.

    Hunks are placed as GNU patch places them wherever it places them all (`apply`,
    `push`, `verify`: a series on the base it is pinned to, DESIGN §4 step 3); the
    engine's own rules decide the rest."""
    where = f"{display}:{s.lineno}"
    check_modes(s, where)
    if s.binary:
        raise BadInputError(
            f"binary patch for {s.path!r} cannot be applied by patchq",
            where,
            "apply it with `git apply` and re-export, or drop it from the series",
        )
    for p in s.paths:
        entry = state.tree.get(p, where)  # path confinement and symlink checks
        if entry is not None and entry[0] == GITLINK:
            raise BadInputError(f"{p!r} is a submodule; patchq does not patch submodules", where)
    old_entry = state.get(s.old_path, where) if s.old_path is not None else None
    new_entry = state.get(s.new_path, where) if s.new_path is not None else None
    if s.is_new:
        action = "new"
        if new_entry is not None:
            return _conflict(s, f"{s.path!r} already exists")
        mode, content = s.new_mode or DEFAULT_MODE, None
    else:
        assert s.old_path is not None
        if old_entry is None:
            return _conflict(s, f"{s.old_path!r} does not exist")
        mode = old_entry[0]
        if mode == SYMLINK and SYMLINK not in (s.old_mode, s.new_mode):
            raise UnsafePathError(
                f"{s.old_path!r} is a symlink in the target",
                where,
                "patchq never writes through symlinks",
            )
        content = state.content(old_entry[1])
        action = (
            "delete" if s.is_delete else "rename" if s.rename else "copy" if s.copy else "modify"
        )
        if s.new_path != s.old_path and not s.is_delete and new_entry is not None:
            return _conflict(s, f"{s.new_path!r} already exists")
        if s.new_mode and s.new_mode != mode:
            mode = s.new_mode
            if action == "modify" and not s.hunks:
                action = "mode"
    result = engine.apply_hunks(content, s.hunks, fuzz=fuzz, split=state.g.lines.split, gnu=True)
    res = SectionResult(s.path, s.old_path, action, result.hunks)
    if not result.ok:
        return res
    if s.is_delete:
        if result.content:
            return _conflict(s, f"{s.path!r} is not empty after its deletion", result.hunks)
        state.remove(s.path, where)
        return res
    if action == "rename":
        assert s.old_path is not None
        state.remove(s.old_path, where)
    spliced = None
    if old_entry is not None and result.edit is not None:
        spliced = (old_entry[1], result.edit)
    state.put(s.path, mode, result.content, where, edit=spliced)
    return res


def _merge_section(
    state: SectionState,
    s: FilePatch,
    res: SectionResult,
    display: str,
    preimage: Callable[[str], bytes | None],
) -> tuple[SectionResult, bytes | None, int]:
    """3-way fallback for a section whose hunks did not apply: merge the patch's change
    (preimage → preimage + patch) into the file as it is now, like `git merge-file`."""
    if s.is_new or s.is_delete or s.old_path is None or res.action == "conflict":
        return res, None, 0
    where = f"{display}:{s.lineno}"
    current = state.get(s.old_path, where)
    before = preimage(s.old_path)
    if before is None and s.old_id and state.g.has_object(s.old_id):
        before = state.content(state.g.resolve(s.old_id, "blob"))
    if current is None or before is None:
        return res, None, 0
    theirs = engine.apply_hunks(before, s.hunks, split=state.g.lines.split)
    if not theirs.ok:
        return res, None, 0
    ours = state.content(current[1])
    merged, conflicts = state.g.merge_file(
        ours, before, theirs.content, ("upstream", "base", display)
    )
    hunks = tuple(
        h
        if h.applied
        else engine.HunkResult(h.index, CONFLICT if conflicts else MERGE, reason=h.reason)
        for h in res.hunks
    )
    out = SectionResult(res.path, res.old_path, res.action, hunks)
    if conflicts:
        return out, merged, conflicts
    mode = s.new_mode or current[0]
    if s.rename:
        state.remove(s.old_path, where)
    state.put(s.path, mode, merged, where)
    return out, None, 0


def _mode_of(state: SectionState, s: FilePatch) -> str:
    entry = state.tree.get(s.old_path or s.path)
    return entry[0] if entry else DEFAULT_MODE


# The most fuzz a section of the pinned series may need to be re-applied on its base:
# the most `apply --fuzz` takes. GNU placement tries each level in turn, nearest match
# first, so any lower level `apply` used places the hunk in the same place.
PINNED_FUZZ = 3


class OldStack:
    """Each patch's files as they were when the series applied on the pinned base (the
    lock's): the exact preimages the 3-way step merges against. A section is re-applied
    exactly or at an offset; a patch the lock records on this base, byte for byte,
    applied there (perhaps with `apply --fuzz`: an old series made for an older release,
    as distributions carry them), so its section is re-placed with fuzz where it needs
    it, as `apply` placed it. Any other patch that does not apply stops the pinning.

    Lazy: the old series is re-applied only as far as the latest patch asked about, and
    only the blob ids of the paths each patch touches are remembered, so a check or
    rebase without conflicts never pays for it.

    Where the applied stack is that re-application already — its record lists exactly
    these patches on this base, its top's tree is the lock's result, and every patch up
    to the one asked about is the file the lock pinned, byte for byte — a patch's files
    are read from the commit below it instead (a few object reads, not a re-application
    of everything below). Anything else re-applies, as before.
    """

    def __init__(
        self,
        g: GitRepo,
        repo: PatchRepo,
        base: str,
        entries: Sequence[Entry],
        stack: Stack | None = None,
        *,
        copies: Mapping[str, bytes] | None = None,
    ) -> None:
        self.g, self.repo, self.w = g, repo, g.objects
        self.entries = list(entries)
        self.index = {e.name: i for i, e in enumerate(self.entries)}
        self.base = base
        self.state: SectionState | None = None
        self.done = 0
        self.before: dict[tuple[str, str], str | None] = {}
        self.broken = False  # the old series itself stopped applying
        self.fuzzed: set[str] = set()  # patches re-placed with fuzz
        lock = repo.read_lock()
        self.pinned = (
            {(p.name, p.sha256) for p in lock.patches}
            if lock is not None and lock.base == base
            else set()
        )
        # The bytes the lock pins for patches since refreshed on another base, by hash.
        self.copies = dict(copies or {})
        self.pinned_sha = {name: sha for name, sha in self.pinned}
        # The applied stack's commits, while they are the pinned series' re-application.
        self.commits: tuple[str, ...] | None = None
        self.result_tree = lock.result_tree if lock is not None and lock.base == base else None
        if (
            stack is not None
            and self.result_tree is not None
            and stack.base == base
            and stack.applied == tuple(e.name for e in self.entries)
            and len(stack.commits) == len(stack.applied)
        ):
            self.commits = stack.commits
        self.checked = 0  # entries[:checked] are the files the lock pinned
        self._ahead = 0  # the stack's commits and trees below entries[:_ahead] are read

    def placed_with_fuzz(self, name: str) -> bool:
        """Whether the patch needed fuzz on the pinned base (its patched side in a 3-way
        merge is then placed with fuzz too)."""
        want = self.index.get(name)
        while want is not None and self.done <= want and not self.broken:
            self._advance()
        return name in self.fuzzed

    def __call__(self, name: str, path: str) -> bytes | None:
        want = self.index.get(name)
        if want is None:
            return None
        if (
            self.commits is not None
            and self._stacked(want)
            and any(path in s.paths for s in load_patch(self.repo, self.entries[want])[1].sections)
        ):
            return self._below(want, path)  # (a file it does not name: re-applied, as ever)
        while self.done <= want and not self.broken:
            self._advance()
        oid = self.before.get((name, path))
        return self.state.content(oid) if oid and self.state else None

    def _stacked(self, want: int) -> bool:
        """Whether the applied stack's commits hold the pinned series up to `want`."""
        assert self.commits is not None
        if self.checked == 0:
            top = self.g.commit_info(self.commits[-1])["tree"].decode() if self.commits else None
            if top != self.result_tree:
                self.commits = None
                return False
        while self.checked <= want:
            entry = self.entries[self.checked]
            assert entry.name is not None
            if (entry.name, sha256(load_patch(self.repo, entry)[0])) not in self.pinned:
                self.commits = None  # edited since it was applied: re-applied instead
                return False
            self.checked += 1
        return True

    def _below(self, want: int, path: str) -> bytes | None:
        """`path` as the commit below the `want`-th patch holds it (None if absent)."""
        assert self.commits is not None
        if want >= self._ahead:
            self._read_ahead(want)
        commit = self.commits[want - 1] if want > 0 else self.base
        got = self.g.entry_at(self.g.commit_info(commit)["tree"].decode(), path)
        if got is None or got[0] in (TREE_MODE, GITLINK):
            return None
        return self.g.read_blob(got[1])

    def _read_ahead(self, want: int) -> None:
        """Read ahead, in a few batches, the commits below the next READ_AHEAD patches and the
        trees on the way to their files (not the files: only some are ever asked for)."""
        assert self.commits is not None
        end = min(want + READ_AHEAD, len(self.entries))
        below = [self.commits[k - 1] if k > 0 else self.base for k in range(want, end)]
        self.g.prefetch(below)
        pairs: list[tuple[str, str]] = []
        for k, commit in zip(range(want, end), below, strict=True):
            tree = self.g.commit_info(commit)["tree"].decode()
            try:
                sections = load_patch(self.repo, self.entries[k])[1].sections
            except (PatchqError, OSError):
                break
            pairs.extend((tree, p) for s in sections for p in s.paths)
        self.g.prefetch_paths(pairs, blobs=False)
        self._ahead = end

    def _advance(self) -> None:
        if self.state is None:
            tree = self.g.commit_info(self.base)["tree"].decode()
            self.state = SectionState(self.g, tree, self.w)
        entry = self.entries[self.done]
        assert entry.name is not None
        data, patch = load_applicable(self.repo, entry)
        display = self.repo.display(entry.name)
        locked = (entry.name, sha256(data)) in self.pinned
        copy = self.copies.get(self.pinned_sha.get(entry.name, ""))
        if not locked and copy is not None:
            # Refreshed on another base since: the bytes the lock pins re-apply here.
            patch = parse(copy, display, entry.strip_level(self.repo.config.strip))
            for s in patch.sections:
                check_modes(s, f"{display}:{s.lineno}")
            locked = True
        for section in patch.sections:
            section, _ = fit_section(self.state, section)
            for path in section.paths:
                if (entry.name, path) not in self.before:
                    got = self.state.tree.get(path, display)
                    self.before[(entry.name, path)] = got[1] if got else None
            res = apply_section(self.state, section, 0, display)
            if locked and any(not h.applied for h in res.hunks):
                # A section that failed left the tree as it was: placed again as `apply
                # --fuzz` placed it.
                res = apply_section(self.state, section, PINNED_FUZZ, display)
                self.fuzzed.add(entry.name)
            if any(not h.applied for h in res.hunks):
                self.broken = True
                break
        self.done += 1


def preimages(g: GitRepo, repo: PatchRepo, base: str, entries: Sequence[Entry]) -> Preimage:
    """The 3-way step's preimage lookup for a series pinned at `base` (see OldStack)."""
    try:
        stack = load_stack(g.state_dir(), repo.config.queue)
    except PatchqError:
        stack = None  # an unreadable record: the series is re-applied, as without one
    copies = pinned.read(pinned.pinned_path(g.state_dir(), repo.config.queue))
    return OldStack(g, repo, base, entries, stack, copies=copies)


def _conflict(s: FilePatch, why: str, hunks: tuple[engine.HunkResult, ...] = ()) -> SectionResult:
    """A section that cannot apply as a whole (its file is missing, or already there)."""
    return SectionResult(
        s.path, s.old_path, "conflict", hunks + (engine.HunkResult(len(hunks), FAILED, reason=why),)
    )


def _check_link(state: SectionState, path: str, target: bytes, where: str) -> None:
    """A symlink a patch writes must point inside the target, and not into .git; nor
    may it make a link that pointed inside point outside (`l -> s/..` is the root while
    `s` is nothing, and outside once a later patch makes `s -> .`). So every link the
    series made, and every link of the base that pointed inside, is checked again
    against the tree with this one in it."""
    check_link_path(path, where)
    problem = _link_problem(state.tree.peek, state.content, path, target, new=True)
    if problem is not None:
        raise UnsafePathError(*problem, where)
    links = state.watched_links()
    links[path] = True
    for other in list(links):
        if other == path:
            continue
        entry = state.tree.peek(other)
        if entry is None or entry[0] != SYMLINK or entry[1] is None:
            continue  # gone, or no longer a link: it makes nothing escape
        peek, read = _with(state, path, target)
        problem = _link_problem(peek, read, other, state.content(entry[1]))
        if problem is not None:
            raise UnsafePathError(
                f"symlink {path!r} makes symlink {other!r} point outside the target",
                where,
                "a symlink may only point inside the target, through every other link",
            )


_NEW = "new link"  # the id `_with` gives the link being written


def _with(state: SectionState, path: str, target: bytes) -> tuple[Peek, Callable[[str], bytes]]:
    """The tree's lookups, with the link being written at `path` in it already."""

    def peek(p: str) -> tuple[str, str | None] | None:
        return (SYMLINK, _NEW) if p == path else state.tree.peek(p)

    def read(oid: str) -> bytes:
        return target if oid == _NEW else state.content(oid)

    return peek, read


Peek = Callable[[str], "tuple[str, str | None] | None"]


def _link_problem(
    peek: Peek, read: Callable[[str], bytes], path: str, target: bytes, new: bool = False
) -> tuple[str, str | None] | None:
    """Why the link at `path` to `target` leaves the tree or enters .git, or None.

    The target is resolved the way the kernel will, through the symlinks the tree holds:
    with `dot -> .` in the tree, `dot/dot/..` leaves it though it reads as inside, and
    `out/x` leaves it when `out` points outside. A name that does not exist (yet) is
    taken as a folder; a link made later is checked against this one again."""
    text = target.decode("utf-8", "surrogateescape")
    if text.startswith("/") or "\0" in text:
        return f"symlink {path!r} points to absolute path {text!r}", None
    outside = (
        f"symlink {path!r} points outside the target ({text!r})",
        "a symlink may only point inside the target",
    )
    at = path.split("/")[:-1]  # where resolution stands: the link's folder, then on
    todo = text.split("/")
    hops = 0
    while todo:
        name = todo.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            if not at:
                return outside
            at.pop()
            continue
        at.append(name)
        if is_git_name(name.encode("utf-8", "surrogateescape")):
            return f"symlink {path!r} points into .git ({text!r})", None
        here = "/".join(at)
        entry = (SYMLINK, None) if new and here == path else peek(here)
        if entry is None or entry[0] != SYMLINK:
            continue
        hops += 1
        if hops > 40:  # the kernel's own limit (ELOOP)
            return f"symlink {path!r} goes through too many symlinks", None
        if here == path or entry[1] is None:
            link = text
        else:
            link = read(entry[1]).decode("utf-8", "surrogateescape")
        if link.startswith("/"):
            return outside
        at.pop()
        todo = link.split("/") + todo
    return None


def failure_error(f: Failure) -> ApplyError:
    """The error that reports a patch that does not apply (exit 3)."""
    return ApplyError(
        f"patch does not apply: {f.message()}",
        f.display,
        "or rebase it (`patchq rebase`)"
        if f.gnu_fuzz
        else "rebase it (`patchq rebase`) or fix the patch",
    )


def raise_failure(f: Failure) -> None:
    """Raise the error of a patch that does not apply."""
    raise failure_error(f)


def changed_since_applied(
    g: GitRepo,
    repo: PatchRepo,
    entry: Entry,
    *,
    parent: str,
    commit: str,
    preimage: Preimage | None = None,
) -> bool:
    """Whether the patch file of `entry` no longer makes the change its applied `commit`
    holds over `parent` (a pull or an edit changed it since it was pushed): applied in
    memory onto `parent`, it does not give `commit`'s tree. A commit that changes nothing
    (a patch pushed with `--merge` at a conflict, its change in the working tree) is not
    compared."""
    parent_tree = g.commit_info(parent)["tree"].decode()
    tree = g.commit_info(commit)["tree"].decode()
    if tree == parent_tree:
        return False
    with g.dry_run():
        try:
            # Fuzz up to 2, and the 3-way step where the lock pins a base: the ways a
            # push may have placed the file; what matters is the tree it gives.
            fuzz = max(repo.config.fuzz, 2)
            res = apply_series(
                g, repo, parent, [entry], fuzz=fuzz, commits=False, preimage=preimage
            )
        except PatchqError:
            return True
    return res.failure is not None or res.tree != tree
