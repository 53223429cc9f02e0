"""Replaying a series onto a new upstream in memory: the ladder of DESIGN §4 per hunk.

Shared by `check` (classify, change nothing) and `rebase` (classify, then refresh and
record). Each section of a patch climbs the ladder, `rebase/ladder.py`'s table of rungs
in its one order: exact → offset → fuzz (policy) via the engine, the pinned base's
doubt, the tests for a change upstream already holds, the 3-way merge against the
patch's exact preimage from the pinned base, anchored placement, the moved-block search,
remembered resolutions, the context-drift proposal, and the conflict. Files that
upstream renamed are followed; files it deleted make the patch `missing`. This module
holds what the rungs share (the tree being built, the run's caches) and what is judged
of a patch as a whole: its provenance, its outcome, its review hints.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from patchq.core import bounded, placement
from patchq.core import hunks as engine
from patchq.core.errors import BadInputError, UnsafePathError
from patchq.core.header import origins
from patchq.core.hints import NEAR, hunk_hints, maybe_sibling, stripped
from patchq.core.hunkplace import added_near, line_of, removed_runs
from patchq.core.moved import Found, Indexed, anchors_of, find_block, index_text
from patchq.core.names import Normalisation
from patchq.core.patch import FilePatch, Patch
from patchq.core.paths import FILES, FileMode
from patchq.core.progress import Progress
from patchq.core.records import CONTENT, ORIGIN, PATCH_ID, Evidence, HunkOutcome
from patchq.core.resolutions import Book
from patchq.core.resolve import Region, patch_side
from patchq.core.series import Entry
from patchq.core.status import (
    CLEAN,
    CONFLICT,
    EXACT,
    FUZZ,
    MERGE,
    MISSING,
    MOVED,
    OFFSET,
    RANK,
    REUSED,
    UPSTREAMED,
    Outcome,
    outcome,
)
from patchq.core.tiers import PARTLY, proposal, proposals, taken
from patchq.git.memtree import GITLINK, SYMLINK, MemTree
from patchq.git.repo import GitRepo
from patchq.rebase.drift import Drifted, drifted_sections
from patchq.rebase.evidence import UNREAD, Provenance, all_taken, held_back
from patchq.rebase.ladder import Section, climb
from patchq.stack.apply import (
    PINNED_FUZZ,
    OldStack,
    Preimage,
    SectionState,
    check_modes,
    fit_section,
    load_applicable,
)
from patchq.store.patchrepo import PatchRepo
from patchq.store.statedir import crashpoint

# What the moved-block search's indexes may hold, in bytes of the files indexed.
_INDEXED_BYTES = 32 << 20
# Alignments kept (Replay.align_of): each is a list of opcodes, a few KB at most.
_ALIGNMENTS = 64


@dataclass(frozen=True, slots=True)
class PatchCheck:
    name: str
    hunks: tuple[HunkOutcome, ...]
    tree_before: str
    # After the patch. A conflict: in rebase `tree_before` (the replay stops there); in
    # check the patch's side of each conflict, which the replay goes on with.
    tree: str
    # A conflict's sections that applied, with markers in the files that did not (rebase).
    conflict_tree: str | None = None
    conflict_files: tuple[str, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    # What the patch needed to be read and applied as GNU patch would (core.patch).
    normalisations: tuple[Normalisation, ...] = ()
    # Why the patch is, or may be, upstream (DESIGN §4); shown with a stop it caused.
    evidence: Evidence | None = None
    # What a person should look at that no tool decides (DESIGN §5).
    hints: tuple[str, ...] = ()
    # A conflict's regions left to a person, by file: `rebase --continue` remembers
    # what they wrote for each (core.resolutions).
    regions: tuple[tuple[str, Region], ...] = ()
    # "Fixed differently upstream" (DESIGN §4.1): upstream changed the lines the patch
    # removes or changes in every hunk, so the patch is never merged alone; and whether
    # its added lines (or near-identical ones) are already upstream near the spot.
    rewritten: bool = False
    added_present: bool = False

    @property
    def status(self) -> str:
        if not self.hunks:
            return CLEAN
        statuses = [h.status for h in self.hunks]
        if all(s == UPSTREAMED for s in statuses):
            return UPSTREAMED
        worst = max((s for s in statuses if s != UPSTREAMED), key=RANK.__getitem__)
        if UPSTREAMED in statuses and RANK[worst] < RANK[OFFSET]:
            return OFFSET  # partly upstreamed: the rest still needs a refresh
        return worst

    @property
    def drift(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for h in self.hunks for c in h.drift))


def partly_upstream(hunks: list[HunkOutcome]) -> list[HunkOutcome]:
    """DESIGN §4.1 "Trust": a patch is upstreamed only as a whole. Where upstream holds
    some of its hunks and the others still apply, nothing proves the rest is wanted (or
    that upstream took the change the patch's way), so the patch stops for review with
    the present hunks named — the others applied in the tree, no markers — instead of
    finishing alone with part of its change dropped. A patch that stops anyway keeps its
    upstreamed hunks as they are (the stop names them)."""
    up = [h for h in hunks if h.status == UPSTREAMED]
    if not up or len(up) == len(hunks) or any(h.status in (CONFLICT, MISSING) for h in hunks):
        return hunks
    return [
        replace(h, status=CONFLICT, reason=f"{PARTLY} (review: keep or drop the rest)")
        if h.status == UPSTREAMED
        else h
        for h in hunks
    ]


def stop_notes(p: PatchCheck, subjects: dict[str, str]) -> list[str]:
    """What a stop at `p` must say beyond its files: the evidence that it is upstream,
    where upstream moved a block, and the review hints (the first three)."""
    out = []
    if p.evidence is not None and p.status != UPSTREAMED:
        out.append(f"{p.evidence.said()} names it, but the new upstream does not hold it")
    if any(h.reason == UNREAD for h in p.hunks):
        out.append(UNREAD)
    for h in p.hunks:
        if h.moved_to is not None and h.status in (CONFLICT, MISSING):
            f, line, by = h.moved_to
            who = f" by {by[:12]} {subjects.get(by, '')}".rstrip() if by else ""
            out.append(f"{h.file} hunk #{h.index + 1}: its block moved to {f}:{line}{who}")
        elif h.status in (CONFLICT, MISSING) and (
            "more than one place" in h.reason or h.reason.startswith(PARTLY)
        ):
            out.append(f"{h.file} hunk #{h.index + 1}: {h.reason}")
    out += [f"hint: {x}" for x in p.hints[:3]]
    return out


SERIES_SO_FAR = "series so far"  # a reorder's markers: the patches replayed before


def for_review(p: PatchCheck, accept: Sequence[str] = ()) -> bool:
    """DESIGN §4.1: whether a replayed patch that landed stops for review — a proposal
    `accept` does not take, or upstream (in a reorder: the patches it now sits on)
    changed every line it changes and no accepted proposal took it. The one test
    `rebase`, `check`, `sink` and `float` share."""
    if proposals(p.hunks, accept):
        return True
    return p.rewritten and not taken(p.hunks, p.rewritten, accept)


def lock_outcome(p: PatchCheck) -> Outcome:
    """The lock outcome of a replayed patch (see `core.status.outcome`)."""
    return outcome(p.status, (h.status for h in p.hunks), bool(p.renames))


def step_patch(run: Replay, before: str, entry: Entry) -> tuple[PatchCheck, str]:
    """One patch replayed on the tree `before` in the run's context (upstream, the
    pinned pre-images, the run's caches): its outcome and the tree after it. Nothing of
    the patch stays on the run: stepped again from `before`, it gives the same outcome."""
    if run.tree() != before:
        run.state = SectionState(run.g, before)
    res = run.step(entry)
    return res, res.tree


def replayed(
    run: Replay, entries: Sequence[Entry], progress: Progress | None = None
) -> Iterator[tuple[Entry, PatchCheck]]:
    """The one driver of a replay (check, rebase, the reorders, push --merge): each of
    `entries` stepped in order on the tree the one before it left, its files read ahead
    in batches, with its outcome. The caller stops where it must."""
    tree = run.tree()
    for i, e in enumerate(entries):
        if progress is not None:
            progress(i, e.name or "", len(entries))
        run.read_ahead(entries, i)
        res, tree = step_patch(run, tree, e)
        yield e, res


class _Tried(NamedTuple):
    """A patch's sections as `Replay._sections` tried them, before the patch is judged."""

    display: str
    placed: list[tuple[FilePatch, FilePatch]]
    hunks: list[HunkOutcome]
    markers: dict[str, bytes]
    renames: list[tuple[str, str]]
    notes: list[Normalisation]
    # The conflict regions left to a person, by file.
    regions: dict[str, tuple[Region, ...]]
    # What the sections' "rewritten upstream" tests and review hints need, made only
    # when the patch's outcome asks for them.
    looked: list[_Looked]


class _Looked(NamedTuple):
    """One section as the ladder left it, for the tests made once the patch is judged."""

    s: FilePatch
    name: str
    pin_path: str | None
    content: bytes  # upstream's file
    first: engine.FileResult  # the engine's own placement
    res: engine.FileResult  # the placement once doubted
    unplaced: tuple[int, ...]
    pre: bytes | None  # the pre-image, where the ladder read it
    hint: bool  # upstream changed the file: review hints are looked for


class _Judged(NamedTuple):
    """Provenance's verdict on a tried patch: its hunks, the evidence, and whether it
    proved the patch upstream whole."""

    hunks: list[HunkOutcome]
    evidence: Evidence | None
    whole: bool = False


@dataclass(slots=True)
class Replay:
    """A replay's run: upstream, the pinned pre-images, the tree being built and the
    caches the steps share. Nothing of one patch stays here for the next (`step_patch`);
    `sections` keeps, by patch, what the drift attribution reads afterwards."""

    g: GitRepo
    repo: PatchRepo
    old_base: str
    onto: str
    fuzz: int
    preimage: Preimage | None
    renames: dict[str, str]
    state: SectionState
    # For each patch with hunks that did not apply cleanly, those hunks by the path the
    # replay gave them: attribute_drift needs them and need not parse the patch again.
    sections: dict[str, dict[str, Drifted]] = field(default_factory=dict)
    # Whether a conflict gets a tree with its markers for a person to resolve (rebase);
    # check and rebase --dry-run only report.
    conflict_trees: bool = True
    provenance: Provenance | None = None
    # The files upstream changed in old base..onto (where a moved block is looked for).
    _upstream_changed: frozenset[str] | None = None
    # The resolutions a person made before, reused for the same conflict (DESIGN §4.7).
    resolutions: Book | None = None
    # The old base's tree, read when a moved block's new place is checked.
    _old_tree: MemTree | None = None
    # The moved-block search's file indexes, by blob (the most recent _INDEXED_BYTES).
    _indexes: OrderedDict[tuple[str, bool], tuple[str, Indexed | None, int]] = field(
        default_factory=OrderedDict
    )
    _indexes_bytes: int = 0
    _alignments: OrderedDict[bytes, placement.Alignment] = field(default_factory=OrderedDict)
    # The label of the lines the patch meets in a conflict's markers: upstream's in a
    # rebase, `SERIES_SO_FAR` in a reorder (what is there is the series, not upstream).
    ours: str = "upstream"
    # The proposed methods the person accepted (core.tiers): a hunk upstream holds in a
    # patch it does not hold whole stops the patch unless `upstreamed` is among them.
    accept: tuple[str, ...] = ()

    @classmethod
    def start(
        cls,
        g: GitRepo,
        repo: PatchRepo,
        old_base: str,
        onto: str,
        *,
        fuzz: int,
        preimage: Preimage | None,
        tree: str | None = None,
        conflict_trees: bool = True,
        resolutions: Book | None = None,
        accept: tuple[str, ...] = (),
        expected: Callable[[], Sequence[Patch]] | None = None,
        ours: str = "upstream",
    ) -> Replay:
        """A replay onto `onto` from the pinned `old_base` (`tree`: the tree it starts on,
        else onto's). `expected`: the patches it will replay, which provenance reads in
        one pass the first time it is asked about any; `ours`: the label of the lines a
        patch meets in a conflict's markers."""
        onto_tree = tree or g.commit_info(onto)["tree"].decode()
        renames, changed = g.tree_changes(old_base, onto) if old_base != onto else ({}, frozenset())
        return cls(
            g,
            repo,
            old_base,
            onto,
            fuzz,
            preimage,
            renames,
            SectionState(g, onto_tree),
            conflict_trees=conflict_trees,
            provenance=Provenance(g, old_base, onto, expected) if old_base != onto else None,
            _upstream_changed=changed,
            resolutions=resolutions,
            accept=accept,
            ours=ours,
        )

    def tree(self) -> str:
        return self.state.tree.write(self.state.w)

    def read_ahead(self, entries: Sequence[Entry], i: int) -> None:
        """Before the `i`-th of `entries` is stepped (SectionState.read_ahead)."""
        self.state.read_ahead(self.repo, entries, i)

    def step(self, entry: Entry) -> PatchCheck:
        """Replay one patch on the current tree; a conflict leaves the tree without it."""
        assert entry.name is not None
        crashpoint("replay:patch")
        _, patch = load_applicable(self.repo, entry)
        display = self.repo.display(entry.name)
        before = self.tree()
        if self._origin_upstream(patch):
            # Its origin is an ancestor of the new upstream: first the quick tests of
            # the ladder only (placed as it is, or there reversed). If they prove the
            # origin commit made the whole patch and upstream still holds part of it as
            # made, it is upstreamed — what the finer tests would add (a rewritten block
            # that holds a hunk, git's merge) changes no outcome, only a hunk's reason.
            # Else the patch is replayed again with the whole ladder.
            tried = self._sections(patch, display, entry.name, quick=True)
            judged = self._judge(patch, tried.placed, tried.hunks)
            if judged.whole:
                return self._outcome(entry, patch, before, tried, judged)
            self.state.undo(before)
        tried = self._sections(patch, display, entry.name, quick=False)
        judged = self._judge(patch, tried.placed, tried.hunks)
        return self._outcome(entry, patch, before, tried, judged)

    def _origin_upstream(self, patch: Patch) -> bool:
        """Whether the patch names an origin commit the new upstream holds (provenance's
        one batched `rev-list`, asked anyway by `_judge`)."""
        named = origins(patch.header)
        return bool(named) and self.provenance is not None and bool(self.provenance.upstream(named))

    def _sections(self, patch: Patch, display: str, name: str, *, quick: bool) -> _Tried:
        """Each section of the patch classified and, where safe, applied to the tree (which
        records what it changed, for `undo`): (sections as placed, hunk checks, markers by
        file, renames followed, normalisations)."""
        hunks: list[HunkOutcome] = []
        markers: dict[str, bytes] = {}
        renames: list[tuple[str, str]] = []
        st = self.state
        st.changed = {}
        regions: dict[str, tuple[Region, ...]] = {}
        looked: list[_Looked] = []
        notes = list(patch.normalisations)
        placed: list[tuple[FilePatch, FilePatch]] = []
        for s in patch.sections:
            s, fixed = fit_section(st, s)
            notes.extend(fixed)
            s2 = self._follow_rename(s)
            if s2 is not s:
                renames.append((s.path, s2.path))
            placed.append((s, s2))
            # The pinned preimage is filed under the patch's own path, not upstream's new one.
            checks, merged = self._section(
                s2, display, name, s.old_path, quick=quick, looked=looked, regions=regions
            )
            hunks.extend(checks)
            if merged is not None:
                markers[s2.path] = merged
        return _Tried(display, placed, hunks, markers, renames, notes, regions, looked)

    def _outcome(
        self,
        entry: Entry,
        patch: Patch,
        before: str,
        tried: _Tried,
        judged: _Judged,
    ) -> PatchCheck:
        """The patch's result once judged: the tree kept, undone or given its conflicts."""
        assert entry.name is not None
        display, placed, _, markers, renames, notes, open_regions, looked = tried
        hunks, evidence, _ = judged
        st = self.state
        if UPSTREAMED not in self.accept:
            hunks = partly_upstream(hunks)
        hunks = self._located(placed, hunks)
        rest = [h for h in hunks if h.status != UPSTREAMED]
        rewritten = bool(rest) and all(
            h.status not in (CLEAN, OFFSET, FUZZ) and h.method not in (MOVED, REUSED) for h in rest
        )
        changed: dict[tuple[str, int], bool] = {}
        if rewritten:
            # Whether upstream rewrote the lines of every hunk matters only now.
            changed = self._rewritten(looked)
            rewritten = all((h.file, h.index) in changed for h in rest)
        present = rewritten and any(changed[(h.file, h.index)] for h in rest)
        if evidence is not None and all(h.status == UPSTREAMED for h in hunks):
            st.undo(before)  # upstream holds all of it: nothing of the patch stays
            st.changed = {}
        conflict_tree = None
        if any(h.status in (CONFLICT, MISSING) for h in hunks):
            # What a person resolves goes to a side tree: the patch's sections that applied,
            # and markers in the files that did not (a missing file's change is theirs to
            # redo). A rebase stops there.
            if self.conflict_trees:
                for path, data in markers.items():
                    cur = st.tree.get(path, display)
                    st.put(path, cur[0] if cur else FileMode.REGULAR, data, display, markers=True)
                conflict_tree = self.tree()
                st.undo(before)
                after = before
            else:
                # check forecasts what rebase will replay the next patches on: this one as
                # resolved by a person who keeps its change — the sections that applied,
                # and the patch's side of each conflict region (core.resolve.patch_side).
                for path, data in markers.items():
                    regions = open_regions.get(path)
                    cur = st.tree.get(path, display)
                    if regions and cur is not None:
                        st.put(path, cur[0], patch_side(data, regions), display)
                after = self.tree()
        else:
            after = self.tree()
        st.changed = None
        res = PatchCheck(
            entry.name,
            tuple(hunks),
            before,
            after,
            conflict_tree,
            tuple(markers),
            tuple(renames),
            tuple(notes),
            evidence,
            # An upstreamed patch leaves the series: nothing of it is left to review.
            () if all(h.status == UPSTREAMED for h in hunks) else self._hinted(looked),
            tuple((f, r) for f, rs in open_regions.items() if f in markers for r in rs),
            rewritten,
            present,
        )
        if any(h.status != CLEAN for h in hunks):
            self.sections[entry.name] = drifted_sections(patch.sections, renames, hunks)
        return res

    def _judge(
        self,
        patch: Patch,
        placed: Sequence[tuple[FilePatch, FilePatch]],
        hunks: list[HunkOutcome],
    ) -> _Judged:
        """Provenance (DESIGN §4): the evidence that the patch is upstream, and what it
        decides. A patch whose every hunk upstream holds is upstreamed, with the strongest
        evidence found (else `content`). Evidence for a patch upstream does not wholly
        hold makes it upstreamed only if the named commit's own diff holds the rest (a
        trimmed backport) and the engine placed none of it; otherwise it is a stop, the
        evidence shown — never a patch applied a second time, never one silently dropped."""
        if not hunks:
            return _Judged(hunks, None)
        prov = self.provenance
        failed = any(h.status not in (CLEAN, OFFSET, FUZZ) for h in hunks)
        everything = all(h.status == UPSTREAMED for h in hunks)
        ev: Evidence | None = None
        if prov is not None and (failed or origins(patch.header)):
            paths = sorted(
                {p for s, s2 in placed for p in (*s.paths, *s2.paths)}
                | {h.moved_to[0] for h in hunks if h.moved_to is not None}
            )
            ev = prov.find(patch, paths, weak=failed)
        if everything:
            return _Judged(hunks, ev or Evidence(CONTENT, ""), whole=True)
        if ev is None and failed and prov is not None and prov.unavailable:
            # The range's history could not be read (git missed an object): evidence it
            # would have found could stop this patch, so it is not decided alone.
            return _Judged(held_back(hunks, UNREAD), None)
        if ev is None:
            return _Judged(hunks, None)
        assert prov is not None
        by_path = {s2.path: (tuple(dict.fromkeys((*s.paths, *s2.paths))), s2) for s, s2 in placed}
        rest = [h for h in hunks if h.status != UPSTREAMED]
        if (
            ev.kind in (ORIGIN, PATCH_ID)
            and len(by_path) == len(placed)  # one section a file: each hunk known
            and any(h.status == UPSTREAMED for h in hunks)
            and self._made_by(ev.commit, by_path, hunks)
        ):
            # The very commit the patch is — its origin an ancestor of the new upstream,
            # or a commit of the range with its patch-id — whose own diff makes every
            # hunk, and the new upstream's lines still hold some of them as it made them:
            # upstream took the whole patch, and the lines that differ now are its later
            # work (an edit, a partial revert), which replaying the patch would undo or
            # apply twice. Dropped, as `git rebase` drops it, each such hunk saying so.
            # Where no hunk is there as the commit made it, the history alone says so —
            # a branch that took the commit and put it back out, or a packaging history
            # holding its own patches — and that is a stop, below.
            made = f"{ev.commit[:12]} made this change; upstream changed these lines since"
            return _Judged(all_taken(hunks, made), ev, whole=True)
        held = all(h.status in (MERGE, CONFLICT, MISSING) for h in rest) and prov.holds(
            ev.commit,
            [
                (by_path[h.file][0], by_path[h.file][1].hunks[h.index])
                for h in rest
                if h.file in by_path and h.index < len(by_path[h.file][1].hunks)
            ],
        )
        if held:
            return _Judged(all_taken(hunks, f"{ev.commit[:12]}'s own diff holds its change"), ev)
        why = f"{ev.said()} names it, but the new upstream does not hold this change"
        return _Judged(held_back(hunks, why), ev)

    def _made_by(
        self,
        commit: str,
        by_path: Mapping[str, tuple[tuple[str, ...], FilePatch]],
        hunks: Sequence[HunkOutcome],
    ) -> bool:
        """Whether `commit`'s own diff makes every hunk of the patch (each one a hunk
        with lines: a binary or mode-only section cannot be shown to be there)."""
        assert self.provenance is not None
        pairs = []
        for h in hunks:
            got = by_path.get(h.file)
            if got is None or h.index >= len(got[1].hunks):
                return False
            pairs.append((got[0], got[1].hunks[h.index]))
        return self.provenance.holds(commit, pairs)

    def _rewritten(self, looked: Sequence[_Looked]) -> dict[tuple[str, int], bool]:
        """The hunks of the patch's sections whose lines upstream changed, by (path,
        index), each with whether its added lines are already upstream near the spot. A
        hunk whose block the engine found as it was (exact, or moved) is not one upstream
        rewrote: only the others are looked at."""
        out: dict[tuple[str, int], bool] = {}
        for x in looked:
            as_was = {h.index for h in x.first.hunks if h.applied and h.status in (EXACT, OFFSET)}
            self._note_rewritten(x.s, x.content, x.name, x.pin_path, out=out, skip=as_was)
        return out

    def _note_rewritten(
        self,
        s: FilePatch,
        content: bytes,
        name: str,
        pin_path: str | None,
        *,
        out: dict[tuple[str, int], bool],
        skip: AbstractSet[int] = frozenset(),
    ) -> None:
        """DESIGN §4.1 "fixed differently upstream": note in `out` each hunk of the section
        whose lines upstream changed — a run of lines it removes is not where the alignment
        maps the hunk (a pure insertion: the block it goes in is gone) — with whether its
        added lines (or near-identical ones) are there near the spot."""
        split = self.g.lines.split
        up: list[bytes] | None = None
        pre: bytes | None = None
        for i, h in enumerate(s.hunks):
            old = list(h.old_lines)
            if old and i in skip:
                continue  # its block is there as it was (the engine placed it so)
            if up is None:
                up = split(content)
            if old and placement.count(up, old) > 0:
                continue  # its block is there as it was: nothing upstream changed in it
            if pre is None:
                pre = self.preimage_of(s, name, pin_path) or b""
            at, window = h.old_pos, up
            align = (
                self.align_of(pre, content)
                if pre and pre != content and len(up) <= placement.HINT_LINES
                else None
            )
            if align is not None and align.whole:
                start = self._pinned_at(s, i, pre, name)
                at = align.at(start)
                end = align.at(start + len(old), end=True)
                pad = len(old) + 10
                window = up[max(at - pad, 0) : end + pad]
                if not any(tag == "-" for tag, _ in h.lines):
                    if placement.alike_block(old, up[at:end]):
                        continue  # a pure insertion whose block is still there
                elif all(placement.count(window, run) > 0 for run in removed_runs(h)):
                    continue  # every line it removes is still near the spot
            elif not any(tag == "-" for tag, _ in h.lines) or all(
                placement.count(up, run) > 0 for run in removed_runs(h)
            ):
                continue  # no pinned base to say more: only lines gone from the file count
            out[(s.path, i)] = added_near(h, up, at)

    def _located(
        self, placed: Sequence[tuple[FilePatch, FilePatch]], hunks: list[HunkOutcome]
    ) -> list[HunkOutcome]:
        """Each proposed hunk with the line its change is at in the new file, for the
        person who reviews it (core.tiers); the others as they are."""
        by_path = {s2.path: s2 for _, s2 in placed}
        out = []
        for h in hunks:
            sec = by_path.get(h.file)
            if not proposal(h, hunks) or sec is None or h.index >= len(sec.hunks):
                out.append(h)
                continue
            got = self.state.tree.get(h.file)
            lines = self.g.lines.split(self.state.content(got[1])) if got is not None else []
            out.append(replace(h, line=line_of(sec.hunks[h.index], lines, h.moved_to)))
        return out

    def _follow_rename(self, s: FilePatch) -> FilePatch:
        old = s.old_path
        if old is None or old not in self.renames or self.state.tree.get(old) is not None:
            return s
        to = self.renames[old]
        new_path = to if s.new_path == old else s.new_path
        return replace(s, old_path=to, new_path=new_path, raw_header=None)

    def _section(
        self,
        s: FilePatch,
        display: str,
        name: str,
        pin_path: str | None,
        *,
        quick: bool,
        looked: list[_Looked],
        regions: dict[str, tuple[Region, ...]],
    ) -> tuple[list[HunkOutcome], bytes | None]:
        """Classify and (where safe) apply one section; returns hunk checks and markers,
        and adds to the patch's `looked` and conflict `regions`."""
        where = f"{display}:{s.lineno}"
        st = self.state
        path = s.path
        n = max(len(s.hunks), 1)
        check_modes(s, where)
        if s.binary:
            return [HunkOutcome(path, 0, CONFLICT, reason="binary patch")], None
        current = st.get(s.old_path, where) if s.old_path is not None else st.get(s.path, where)
        absent = self._absent(s, current, where)
        if absent is not None:
            return absent, None
        assert current is not None
        # The refusals `apply` makes (application.apply_section), made here too: the replay
        # must never write through a symlink, into a submodule, or over upstream's file.
        if current[0] == GITLINK:
            raise BadInputError(
                f"{s.old_path!r} is a submodule; patchq does not patch submodules", where
            )
        if current[0] == SYMLINK and SYMLINK not in (s.old_mode, s.new_mode):
            raise UnsafePathError(
                f"{s.old_path!r} is a symlink upstream",
                where,
                "patchq never writes through symlinks",
            )
        if (
            (s.rename or s.copy)
            and s.new_path is not None
            and s.new_path != s.old_path
            and st.get(s.new_path, where) is not None
        ):
            return [
                HunkOutcome(path, i, CONFLICT, reason=f"{s.new_path} already exists upstream")
                for i in range(n)
            ], None
        content = st.content(current[1])
        sec = Section(s, name, pin_path, content, self)
        at = climb(sec, quick=quick)  # (quick: what still fails stays unplaced)
        hint = s.old_path in self.upstream_changed()
        looked.append(
            _Looked(s, name, pin_path, content, at.first, at.res, at.unplaced, sec.known_pre, hint)
        )
        checks, final, markers = list(at.checks), at.final, at.markers
        if at.open_regions is not None:
            regions[s.path] = at.open_regions
        if markers is not None:
            return checks, markers
        if s.is_delete:
            if final:
                return [
                    replace(c, status=CONFLICT, reason=f"{path} is not empty after its deletion")
                    for c in checks
                ], None
            st.remove(path, where)
            return checks, None
        mode = s.new_mode or current[0]
        if s.rename:
            assert s.old_path is not None
            st.remove(s.old_path, where)
        if final != content or s.rename or mode != current[0]:
            st.put(path, mode, final, where)
        return checks, None

    def _absent(
        self, s: FilePatch, current: tuple[str, str] | None, where: str
    ) -> list[HunkOutcome] | None:
        """A section whose file is new, or gone upstream: its checks (the file made where
        the patch creates it), or None when the file is there to be patched."""
        st = self.state
        path = s.path
        n = max(len(s.hunks), 1)
        if s.is_new:
            if current is not None:
                wanted = engine.apply_hunks(None, s.hunks).content
                same = st.content(current[1]) == wanted
                status = UPSTREAMED if same else CONFLICT
                return [
                    HunkOutcome(
                        path, i, status, reason="" if same else f"{path} already exists upstream"
                    )
                    for i in range(n)
                ]
            res = engine.apply_hunks(None, s.hunks)
            st.put(path, s.new_mode or FileMode.REGULAR, res.content, where)
            return [HunkOutcome(path, i, CLEAN) for i in range(len(s.hunks))]
        if current is None:
            if s.is_delete:
                return [HunkOutcome(path, i, UPSTREAMED) for i in range(n)]
            if s.hunks:
                # Upstream deleted the file: its blocks may live on in another file.
                relocated = self.relocate(
                    s, list(range(len(s.hunks))), cur=None, pre=None, up=None, where=where
                )
                if relocated is not None:
                    return [relocated[0][i] for i in range(len(s.hunks))]
            return [
                HunkOutcome(path, i, MISSING, reason=f"{s.old_path} is gone upstream")
                for i in range(n)
            ]
        return None

    def upstream_changed(self) -> frozenset[str]:
        """The files upstream changed in old base..onto (one `diff-tree`, made once)."""
        if self._upstream_changed is None:
            self._upstream_changed = self.g.tree_changes(self.old_base, self.onto)[1]
        return self._upstream_changed

    def _hinted(self, looked: Sequence[_Looked]) -> tuple[str, ...]:
        """The patch's review hints, worked out once its outcome is known: an upstreamed
        patch leaves the series and its hints with it (a rebase onto an upstream that
        took the series spent a fifth of its time on hints no one saw)."""
        hints: list[str] = []
        for x in looked:
            if x.hint:
                hints += self._hint(
                    x.s,
                    x.content,
                    x.res,
                    failing=x.unplaced,
                    pre=x.pre,
                    name=x.name,
                    pin_path=x.pin_path,
                )
        return tuple(dict.fromkeys(hints))

    def _hint(
        self,
        s: FilePatch,
        content: bytes,
        res: engine.FileResult,
        *,
        failing: Sequence[int],
        pre: bytes | None,
        name: str,
        pin_path: str | None,
    ) -> list[str]:
        """DESIGN §5's review hints for a section whose file upstream changed. A hunk the
        engine placed matched its context in one piece, so only a sibling beside it can
        be hinted: the pinned base is read and aligned (a window around the hunk) only
        where a line beside it looks like one it changes. A hunk that failed is judged
        on the whole file's alignment."""
        split = self.g.lines.split
        up = split(content)
        out: list[str] = []
        if not s.hunks or len(up) > placement.HINT_LINES:
            return out
        placed = placement.starts(s.hunks, res)
        pre_lines: list[bytes] | None = None
        align: placement.Alignment | None = None
        seen: Counter[bytes] | None = None
        for i, h in enumerate(s.hunks):
            n = len(h.old_lines)
            p = placed.get(i)
            if i not in failing and p is not None:
                beside = up[max(p - NEAR, 0) : p] + up[p + n : p + n + NEAR]
                if not maybe_sibling(h, beside):
                    continue
            if pre_lines is None:
                pre = pre if pre is not None else self.preimage_of(s, name, pin_path)
                if pre is None or pre == content:
                    return out
                pre_lines = split(pre)
                if len(pre_lines) > placement.HINT_LINES:
                    return out
            assert pre is not None
            start = self._pinned_at(s, i, pre, name, pre_lines)
            if p is None or i in failing:
                align = align or self.align_of(pre, content)
                if not align.whole:
                    return out  # too long to align: no hint where nothing is mapped
                p = align.at(start)
            w = 2 * NEAR + 2
            plo, ulo = max(start - w, 0), max(p - w, 0)
            # A window around the hunk, but a hunk may be as long as anyone likes: bounded
            # (beyond the bound, head and tail alike and one change: fewer hints).
            ops = bounded.opcodes(pre_lines[plo : start + n + w], up[ulo : p + n + w])
            shifted = [(t, a + plo, b + plo, c + ulo, d + ulo) for t, a, b, c, d in ops]
            seen = stripped(up) if seen is None else seen
            out += hunk_hints(s.path, i, h, start, up, ops=shifted, seen=seen)
        return out

    def _was_there(self, block: Sequence[bytes], f: Found) -> bool:
        """Whether the file `f` found the block in held it (or its look-alike) already at
        the old base: then upstream did not move the block there."""
        if self._old_tree is None:
            tree = self.g.commit_info(self.old_base)["tree"].decode()
            self._old_tree = MemTree(self.g.read_tree, tree)
        try:
            got = self._old_tree.get(f.path)
        except UnsafePathError:
            return False
        if got is None or got[0] not in FILES:
            return False
        ix = self._indexed(got[1], f.path, old=True)
        return ix is not None and bool(find_block(block, {f.path: ix}))

    def _indexed(self, blob: str, path: str, old: bool = False) -> Indexed | None:
        """File `path`'s index for the moved-block search (None past placement.MOVED_BYTES), made
        once per content: every failing hunk of the run searches the same upstream files.
        One version is kept per path (and one of the old base's), the newest, so what is
        kept is about the size of the files upstream changed."""
        key = (path, old)
        hit = self._indexes.get(key)
        if hit is not None and hit[0] == blob:
            self._indexes.move_to_end(key)
            return hit[1]
        data = self.state.content(blob)
        size = len(data) if len(data) <= placement.MOVED_BYTES else 0
        found = index_text(self.g.lines.split(data)) if size else None
        if hit is not None:
            self._indexes_bytes -= hit[2]
        self._indexes[key] = (blob, found, size)
        self._indexes.move_to_end(key)
        self._indexes_bytes += size
        while self._indexes_bytes > _INDEXED_BYTES and len(self._indexes) > 1:
            _, (_, _, gone) = self._indexes.popitem(last=False)
            self._indexes_bytes -= gone
        return found

    def align_of(self, pre: bytes, up: bytes) -> placement.Alignment:
        """The line alignment of a pinned base with upstream's file, made once for the
        pair: the held-change test, the hints and the moved-block search all ask it, and
        a patch's later sections (or the next patch on the file) often ask it again.
        Kept by the contents' digests (not the contents: the kept alignments cost a few
        ops lists, not the files), the newest _ALIGNMENTS of them."""
        key = (
            hashlib.blake2b(pre, digest_size=20).digest()
            + hashlib.blake2b(up, digest_size=20).digest()
        )
        hit = self._alignments.get(key)
        if hit is None:
            hit = self._alignments[key] = placement.Alignment(
                self.g.lines.split(pre), self.g.lines.split(up)
            )
            if len(self._alignments) > _ALIGNMENTS:
                self._alignments.popitem(last=False)
        else:
            self._alignments.move_to_end(key)
        return hit

    def _lines_of(self, p: str, own: str, own_lines: list[bytes] | None) -> list[bytes]:
        """The lines of file `p` of the current tree (`own_lines` for the section's own)."""
        if p == own and own_lines is not None:
            return own_lines
        got = self.state.tree.peek(p)
        assert got is not None and got[1] is not None
        return self.g.lines.split(self.state.content(got[1]))

    def relocate(
        self,
        s: FilePatch,
        failing: Sequence[int],
        *,
        cur: bytes | None,
        pre: bytes | None,
        up: bytes | None,
        where: str,
    ) -> tuple[dict[int, HunkOutcome], bytes | None] | None:
        """DESIGN §4 step 6: the failing hunks whose pre-image block is gone from its
        place, looked for among the files upstream changed (and elsewhere in their own
        file, `cur`). Applied only when every one is found unchanged at one place; a
        block found edited is a conflict that says where it went; two places, a refusal.
        Returns the hunks' checks and the section's own file as changed (None where it
        did not change or a hunk did not land), or None when no block was found at all."""
        path = s.path
        split = self.g.lines.split
        cur_lines = split(cur) if cur is not None else None
        up_lines = split(up) if up is not None else None
        firsts = {x for i in failing for x in anchors_of(s.hunks[i].old_lines)}
        if not firsts:
            return None
        align = (
            self.align_of(pre, up)
            if pre is not None and up is not None and up_lines is not None and cur is not None
            else None
        )
        if align is not None and not align.whole:
            align = None  # too long to align: searched as where no base is pinned
        files = self._candidates(path, firsts, cur_lines)
        if not files:
            return None
        out: dict[int, HunkOutcome] = {}
        plans: list[tuple[int, Found]] = []
        for i in failing:
            h = s.hunks[i]
            skip = None
            if align is not None and pre is not None:
                start = engine.locate(split(pre), h)
                start = h.old_pos if start is None else start
                lo = align.at(start)
                hi = align.at(start + len(h.old_lines), end=True)
                if up_lines is not None and placement.alike_block(h.old_lines, up_lines[lo:hi]):
                    continue  # the block is still where it was: not moved
                span = (lo - len(h.old_lines), hi + len(h.old_lines))

                def skip(p: str, line: int, span: tuple[int, int] = span) -> bool:
                    return p == path and span[0] <= line <= span[1]

            # In its own file only an exact copy counts: an edited look-alike there is
            # far more often the block itself, edited in place, or one of its siblings.
            found = find_block(h.old_lines, files, skip, frozenset({path}))
            # A place in another file that already held such a block at the old base is
            # a sibling (the same code in a look-alike file), not where this one went.
            found = [f for f in found if f.path == path or not self._was_there(h.old_lines, f)]
            if not found:
                continue
            if len(found) > 1:
                places = ", ".join(f"{f.path}:{f.line + 1}" for f in found[:4])
                out[i] = HunkOutcome(
                    path,
                    i,
                    CONFLICT,
                    reason=f"its block moved upstream, but to more than one place ({places})",
                )
                continue
            f = found[0]
            if f.exact:
                plans.append((i, f))
                out[i] = HunkOutcome(
                    path,
                    i,
                    MERGE,
                    via=MOVED,
                    moved_to=(f.path, f.line + 1, ""),
                    reason=f"its block moved to {f.path}:{f.line + 1}",
                )
            else:
                out[i] = HunkOutcome(
                    path,
                    i,
                    CONFLICT,
                    moved_to=(f.path, f.line + 1, ""),
                    reason=f"its block moved to {f.path}:{f.line + 1} and was edited there",
                )
        if not out:
            return None
        if len(plans) != len(failing):
            # Not every failing hunk can land: none does (what was found is still said).
            for i in failing:
                if i in out and out[i].status != CONFLICT:
                    c = out[i]
                    out[i] = replace(c, status=CONFLICT, via="")
                elif i not in out:
                    out[i] = HunkOutcome(path, i, CONFLICT if cur is not None else MISSING)
            return out, None
        own = self._move_blocks(s, plans, cur, cur_lines, where)
        return out, own if cur is not None else b""

    def _candidates(
        self, path: str, firsts: set[bytes], cur_lines: list[bytes] | None
    ) -> dict[str, Indexed]:
        """The files a moved block may have gone to: those upstream changed that hold one
        of the blocks' telling lines, and the section's own file (`cur_lines`)."""
        # Only a file that holds one of the blocks' telling lines can hold a block: each
        # file's index (made once per content) answers that without reading it through.
        files: dict[str, Indexed] = {}
        for p in sorted(self.upstream_changed()):
            if p == path:
                continue
            got = self.state.tree.peek(p)
            if got is None or got[0] not in FILES or got[1] is None:
                continue
            ix = self._indexed(got[1], p)
            if ix is not None and ix.has_any(firsts):
                files[p] = ix
        if cur_lines is not None:
            files[path] = index_text(cur_lines)
        return files

    def _move_blocks(
        self,
        s: FilePatch,
        plans: Sequence[tuple[int, Found]],
        cur: bytes | None,
        cur_lines: list[bytes] | None,
        where: str,
    ) -> bytes | None:
        """Each planned hunk's change made where its block was found: the other files
        written to the tree, the section's own file returned (None where it is gone)."""
        path = s.path
        own = cur
        edits: dict[str, list[bytes]] = {}
        for i, f in sorted(plans, key=lambda x: -x[1].line):
            lines = edits.setdefault(f.path, list(self._lines_of(f.path, path, cur_lines)))
            h = s.hunks[i]
            new = list(h.new_lines)
            end = f.line + len(h.old_lines)
            if new and end == len(lines) and not lines[-1].endswith(b"\n"):
                new[-1] = new[-1].rstrip(b"\n")
            elif new and not new[-1].endswith(b"\n") and end < len(lines):
                new[-1] += b"\n"
            lines[f.line : end] = new
        for p, lines in edits.items():
            data = b"".join(lines)
            if p == path:
                own = data
                continue
            got = self.state.tree.peek(p)
            assert got is not None
            self.state.put(p, got[0], data, where)
        return own

    def _pinned_at(
        self, s: FilePatch, i: int, pre: bytes, name: str, lines: list[bytes] | None = None
    ) -> int:
        """Where hunk I of section S stood on its pinned base PRE (0-based, LINES its
        lines): where it applies there, else — its context stale there too — where `apply
        --fuzz` put it (GNU patch's fuzz; see OldStack), else its stated line."""
        h = s.hunks[i]
        lines = self.g.lines.split(pre) if lines is None else lines
        found = engine.locate(lines, h)
        if found is None and self.pinned_with_fuzz(name):
            fuzzed = engine.apply_hunks(
                pre, s.hunks, fuzz=PINNED_FUZZ, split=self.g.lines.split, gnu=True
            )
            if i < len(fuzzed.hunks) and fuzzed.hunks[i].applied:
                found = h.old_pos + fuzzed.hunks[i].offset
        return h.old_pos if found is None else found

    def pinned_with_fuzz(self, name: str) -> bool:
        """Whether the pinned series placed patch NAME with fuzz (see OldStack)."""
        return isinstance(self.preimage, OldStack) and self.preimage.placed_with_fuzz(name)

    def preimage_of(self, s: FilePatch, name: str, pin_path: str | None = None) -> bytes | None:
        """The file this section was made against: from the pinned base, else `index`."""
        if s.old_path is None:
            return None
        pre = self.preimage(name, pin_path or s.old_path) if self.preimage else None
        if pre is None and s.old_id and self.g.has_object(s.old_id):
            pre = self.state.content(self.g.resolve(s.old_id, "blob"))
        return pre
