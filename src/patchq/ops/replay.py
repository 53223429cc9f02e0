"""Replaying a series onto a new upstream in memory: the ladder of DESIGN §4 per hunk.

Shared by `check` (classify, change nothing) and `rebase` (classify, then refresh and
record). For every hunk, in order: exact → offset → fuzz (policy) via the engine; a hunk
that fails is tested for being already upstream (it reverse-applies); the rest go to a
3-way merge against the patch's exact preimage from the pinned base; where the merge
conflicts, anchored placement may still put the change where its removed lines (or the
line a pure insertion hangs from) match exactly once; otherwise it is a conflict.
Files that upstream renamed are followed; files it deleted make the patch `missing`.

The pinned base is also used to doubt the engine, never to guess harder: a hunk placed
by offset or fuzz whose surrounding lines differ from the pre-image's (it may have
landed in a look-alike copy of the block) is kept only if the 3-way merge gives the same
file; anchored placement needs its lines to be unique in the pre-image too; and a hunk
counts as upstreamed by reverse-applying only if its patched lines occur once.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher

from patchq.core import bounded
from patchq.core import hunks as engine
from patchq.core.errors import BadInputError, UnsafePathError
from patchq.core.header import origins
from patchq.core.hints import NEAR, hunk_hints, maybe_sibling, stripped
from patchq.core.moved import Found, Indexed, anchors_of, find_block, index
from patchq.core.names import Normalisation
from patchq.core.patch import FilePatch, Hunk, Patch, Split, split_lines
from patchq.core.resolutions import Book
from patchq.core.resolve import Region, by_hunk, patch_side
from patchq.core.series import Entry
from patchq.core.status import (
    CLEAN,
    CONFLICT,
    DELETE_WINS,
    FUZZ,
    MERGE,
    MISSING,
    MOVED,
    OFFSET,
    RANK,
    UPSTREAMED,
    drift_of,
    method_of,
    outcome,
)
from patchq.git.memtree import GITLINK, SYMLINK, MemTree
from patchq.git.repo import GitRepo, ObjectWriter
from patchq.ops.apply import (
    PINNED_FUZZ,
    OldStack,
    Preimage,
    SectionState,
    check_modes,
    fit_section,
    load_applicable,
    load_patch,
)
from patchq.ops.drift import Attribution, Change, attribute
from patchq.ops.drift import histories as histories_for
from patchq.ops.evidence import CONTENT, Evidence, Provenance
from patchq.store.patchrepo import PatchRepo
from patchq.store.statedir import crashpoint


@dataclass(frozen=True, slots=True)
class HunkCheck:
    """How one hunk fares on the new upstream, and the upstream commits behind it."""

    file: str
    index: int
    status: str
    offset: int = 0
    fuzz: int = 0
    anchored: bool = False
    reason: str = ""
    drift: tuple[str, ...] = ()
    via: str = ""  # a finer method than the status says (zealous, word, delete-wins, …)
    # Where upstream moved the hunk's block (file, 1-based line, the commit that moved
    # it, "" until drift attribution names it): applied there (`moved`) or a conflict.
    moved_to: tuple[str, int, str] | None = None

    @property
    def method(self) -> str:
        """How the hunk was placed (DESIGN §4), "" where it was not."""
        return method_of(self.status, self.anchored, self.via)


@dataclass(frozen=True, slots=True)
class PatchCheck:
    name: str
    hunks: tuple[HunkCheck, ...]
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


def stop_notes(p: PatchCheck, subjects: dict[str, str]) -> list[str]:
    """What a stop at `p` must say beyond its files: the evidence that it is upstream,
    where upstream moved a block, and the review hints (the first three)."""
    out = []
    if p.evidence is not None and p.status != UPSTREAMED:
        out.append(f"{p.evidence.said()} names it, but the new upstream does not hold it")
    for h in p.hunks:
        if h.moved_to is not None and h.status in (CONFLICT, MISSING):
            f, line, by = h.moved_to
            who = f" by {by[:12]} {subjects.get(by, '')}".rstrip() if by else ""
            out.append(f"{h.file} hunk #{h.index + 1}: its block moved to {f}:{line}{who}")
        elif h.status in (CONFLICT, MISSING) and "more than one place" in h.reason:
            out.append(f"{h.file} hunk #{h.index + 1}: {h.reason}")
    out += [f"hint: {x}" for x in p.hints[:3]]
    return out


def lock_outcome(p: PatchCheck) -> str:
    """The lock outcome of a replayed patch (see `core.status.outcome`)."""
    return outcome(p.status, (h.status for h in p.hunks), bool(p.renames))


@dataclass(slots=True)
class Replay:
    """The running state of a replay: the new tree and what each patch did."""

    g: GitRepo
    repo: PatchRepo
    old_base: str
    onto: str
    w: ObjectWriter
    fuzz: int
    preimage: Preimage | None
    renames: dict[str, str]
    state: SectionState
    results: list[PatchCheck] = field(default_factory=list)
    # For each patch with hunks that did not apply cleanly, those hunks by the path the
    # replay gave them: attribute_drift needs them and need not parse the patch again.
    sections: dict[str, dict[str, Drifted]] = field(default_factory=dict)
    # Whether a conflict gets a tree with its markers for a person to resolve (rebase);
    # check and rebase --dry-run only report.
    conflict_trees: bool = True
    provenance: Provenance | None = None
    # The files upstream changed in old base..onto (where a moved block is looked for).
    _upstream_changed: frozenset[str] | None = None
    _hints: list[str] = field(default_factory=list)
    # The resolutions a person made before, reused for the same conflict (DESIGN §4.7).
    resolutions: Book | None = None
    # The current patch's conflict regions left to a person, by file.
    open_regions: dict[str, tuple[Region, ...]] = field(default_factory=dict)
    # The old base's tree, read when a moved block's new place is checked.
    _old_tree: MemTree | None = None
    # The moved-block search's file indexes, by blob (the most recent _INDEXED_BYTES).
    _indexes: OrderedDict[tuple[str, bool], tuple[str, Indexed | None, int]] = field(
        default_factory=OrderedDict
    )
    _indexes_bytes: int = 0
    _alignments: dict[tuple[bytes, bytes], _Alignment] = field(default_factory=dict)

    @classmethod
    def start(
        cls,
        g: GitRepo,
        repo: PatchRepo,
        old_base: str,
        onto: str,
        w: ObjectWriter,
        fuzz: int,
        preimage: Preimage | None,
        tree: str | None = None,
        conflict_trees: bool = True,
        resolutions: Book | None = None,
    ) -> Replay:
        onto_tree = tree or g.commit_info(onto, w)["tree"].decode()
        renames, changed = g.tree_changes(old_base, onto) if old_base != onto else ({}, frozenset())
        return cls(
            g,
            repo,
            old_base,
            onto,
            w,
            fuzz,
            preimage,
            renames,
            SectionState(g, w, onto_tree),
            conflict_trees=conflict_trees,
            provenance=Provenance(g, old_base, onto) if old_base != onto else None,
            _upstream_changed=changed,
            resolutions=resolutions,
        )

    def tree(self) -> str:
        return self.state.tree.write(self.w)

    def step(self, entry: Entry) -> PatchCheck:
        """Replay one patch on the current tree; a conflict leaves the tree without it."""
        assert entry.name is not None
        crashpoint("replay:patch")
        _, patch = load_applicable(self.repo, entry)
        display = self.repo.display(entry.name)
        before = self.tree()
        hunks: list[HunkCheck] = []
        markers: dict[str, bytes] = {}
        renames: list[tuple[str, str]] = []
        st = self.state
        st.changed = {}
        self.open_regions = {}
        notes = list(patch.normalisations)
        self._hints = []
        placed: list[tuple[FilePatch, FilePatch]] = []
        for s in patch.sections:
            s, fixed = fit_section(st, s)
            notes.extend(fixed)
            s2 = self._follow_rename(s)
            if s2 is not s:
                renames.append((s.path, s2.path))
            placed.append((s, s2))
            # The pinned preimage is filed under the patch's own path, not upstream's new one.
            checks, merged = self._section(s2, display, entry.name, s.old_path)
            hunks.extend(checks)
            if merged is not None:
                markers[s2.path] = merged
        hunks, evidence = self._judge(patch, placed, hunks)
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
                    st.put(path, cur[0] if cur else "100644", data, self.w, display, markers=True)
                conflict_tree = self.tree()
                st.undo(before)
                after = before
            else:
                # check forecasts what rebase will replay the next patches on: this one as
                # resolved by a person who keeps its change — the sections that applied,
                # and the patch's side of each conflict region (core.resolve.patch_side).
                for path, data in markers.items():
                    regions = self.open_regions.get(path)
                    cur = st.tree.get(path, display)
                    if regions and cur is not None:
                        st.put(path, cur[0], patch_side(data, regions), self.w, display)
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
            () if all(h.status == UPSTREAMED for h in hunks) else tuple(dict.fromkeys(self._hints)),
            tuple((f, r) for f, rs in self.open_regions.items() if f in markers for r in rs),
        )
        self.results.append(res)
        if any(h.status != CLEAN for h in hunks):
            self.sections[entry.name] = _drifted(patch.sections, renames, hunks)
        return res

    def _judge(
        self,
        patch: Patch,
        placed: Sequence[tuple[FilePatch, FilePatch]],
        hunks: list[HunkCheck],
    ) -> tuple[list[HunkCheck], Evidence | None]:
        """Provenance (DESIGN §4): the evidence that the patch is upstream, and what it
        decides. A patch whose every hunk upstream holds is upstreamed, with the strongest
        evidence found (else `content`). Evidence for a patch upstream does not wholly
        hold makes it upstreamed only if the named commit's own diff holds the rest (a
        trimmed backport) and the engine placed none of it; otherwise it is a stop, the
        evidence shown — never a patch applied a second time, never one silently dropped."""
        if not hunks:
            return hunks, None
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
            return hunks, ev or Evidence(CONTENT, "")
        if ev is None:
            return hunks, None
        assert prov is not None
        by_path = {s2.path: (tuple(dict.fromkeys((*s.paths, *s2.paths))), s2) for s, s2 in placed}
        rest = [h for h in hunks if h.status != UPSTREAMED]
        held = all(h.status in (MERGE, CONFLICT, MISSING) for h in rest) and prov.holds(
            ev.commit,
            [
                (by_path[h.file][0], by_path[h.file][1].hunks[h.index])
                for h in rest
                if h.file in by_path and h.index < len(by_path[h.file][1].hunks)
            ],
        )
        if held:
            why = f"{ev.commit[:12]}'s own diff holds its change"
            return [
                h
                if h.status == UPSTREAMED
                else HunkCheck(h.file, h.index, UPSTREAMED, reason=why, drift=h.drift)
                for h in hunks
            ], ev
        why = f"{ev.said()} names it, but the new upstream does not hold this change"
        return [
            h
            if h.status in (UPSTREAMED, CONFLICT, MISSING)
            else replace(h, status=CONFLICT, reason=why, offset=0, fuzz=0, anchored=False, via="")
            for h in hunks
        ], ev

    def _follow_rename(self, s: FilePatch) -> FilePatch:
        old = s.old_path
        if old is None or old not in self.renames or self.state.tree.get(old) is not None:
            return s
        to = self.renames[old]
        new_path = to if s.new_path == old else s.new_path
        return replace(s, old_path=to, new_path=new_path, raw_header=None)

    def _section(
        self, s: FilePatch, display: str, name: str, pin_path: str | None = None
    ) -> tuple[list[HunkCheck], bytes | None]:
        """Classify and (where safe) apply one section; returns hunk checks and markers."""
        where = f"{display}:{s.lineno}"
        st = self.state
        path = s.path
        n = max(len(s.hunks), 1)
        check_modes(s, where)
        if s.binary:
            return [HunkCheck(path, 0, CONFLICT, reason="binary patch")], None
        current = st.get(s.old_path, where) if s.old_path is not None else st.get(s.path, where)
        if s.is_new:
            if current is not None:
                wanted = engine.apply_hunks(None, s.hunks).content
                same = st.content(current[1]) == wanted
                status = UPSTREAMED if same else CONFLICT
                return [
                    HunkCheck(
                        path, i, status, reason="" if same else f"{path} already exists upstream"
                    )
                    for i in range(n)
                ], None
            res = engine.apply_hunks(None, s.hunks)
            st.put(path, s.new_mode or "100644", res.content, self.w, where)
            return [HunkCheck(path, i, CLEAN) for i in range(len(s.hunks))], None
        if current is None:
            if s.is_delete:
                return [HunkCheck(path, i, UPSTREAMED) for i in range(n)], None
            if s.hunks:
                # Upstream deleted the file: its blocks may live on in another file.
                relocated = self._relocate(s, list(range(len(s.hunks))), None, None, None, where)
                if relocated is not None:
                    return [relocated[0][i] for i in range(len(s.hunks))], None
            return [
                HunkCheck(path, i, MISSING, reason=f"{s.old_path} is gone upstream")
                for i in range(n)
            ], None
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
                HunkCheck(path, i, CONFLICT, reason=f"{s.new_path} already exists upstream")
                for i in range(n)
            ], None
        content = st.content(current[1])
        res = engine.apply_hunks(content, s.hunks, fuzz=self.fuzz, split=self.g.lines.split)
        # A hunk the engine could not place has no offset or fuzz, whatever it tried.
        checks = [
            HunkCheck(path, h.index, drift_of(h.status), h.offset, h.fuzz)
            if h.applied
            else HunkCheck(path, h.index, CONFLICT, reason=h.reason)
            for h in res.hunks
        ]
        final = res.content
        markers = None
        failing = [h.index for h in res.failures]
        moved = any(h.status in (OFFSET, FUZZ) for h in res.hunks)
        pre = self._preimage(s, name, pin_path) if failing or moved else None
        # The patch on its own pinned preimage, placed as `apply` placed it there (GNU
        # patch's placement): what the doubt and the merge compare with.
        theirs = (
            engine.apply_hunks(pre, s.hunks, split=self.g.lines.split, gnu=True)
            if pre is not None
            else None
        )
        pinned_fuzz = 0
        if (
            theirs is not None
            and not theirs.ok
            and isinstance(self.preimage, OldStack)
            and self.preimage.placed_with_fuzz(name)
        ):
            # Placed there as the pinned series placed it (`apply --fuzz`; see OldStack).
            pinned_fuzz = PINNED_FUZZ
            theirs = engine.apply_hunks(
                pre, s.hunks, fuzz=pinned_fuzz, split=self.g.lines.split, gnu=True
            )
        doubtful = _doubtful(s.hunks, res, content, pre, theirs, self.g.lines.split)
        if doubtful and pre is not None and theirs is not None:
            # A hunk that moved to a place whose surroundings differ from the pinned base's
            # may have landed in a look-alike copy. Trust it only if the 3-way merge agrees.
            merged, conflicts = self.g.merge_file(
                content, pre, theirs.content, ("upstream", "base", name)
            )
            if (conflicts or merged != res.content) and (failing or len(doubtful) > 1):
                # The whole file's merge also holds the other hunks' conflicts: each doubt
                # is then weighed by the merge of that hunk alone.
                doubtful = [
                    i
                    for i in doubtful
                    if not self._agrees_alone(s.hunks, i, content, pre, pinned_fuzz, name)
                ]
            if doubtful and (conflicts or merged != res.content):
                failing = sorted(failing + doubtful)
                for i in doubtful:
                    checks[i] = replace(
                        checks[i],
                        status=CONFLICT,
                        offset=0,
                        fuzz=0,
                        reason="its lines match only at a place that differs from the pinned base",
                    )
                res = _apply_only(
                    content,
                    s.hunks,
                    [i for i in range(len(s.hunks)) if i not in failing],
                    self.fuzz,
                    self.g.lines.split,
                )
                final = res.content
                for r in res.hunks:
                    checks[r.index] = (
                        HunkCheck(path, r.index, drift_of(r.status), r.offset, r.fuzz)
                        if r.applied
                        else HunkCheck(path, r.index, CONFLICT, reason=r.reason)
                    )
                failing = sorted(set(failing) | {r.index for r in res.failures})
        if s.old_path in self.upstream_changed():
            self._hint(s, content, res, failing, pre, name, pin_path)
        if failing:
            cur = res.content
            cur_lines = self.g.lines.split(cur)
            pre_lines = self.g.lines.split(pre) if pre is not None else None
            for i in list(failing):
                back = engine.apply_hunks(cur, [s.hunks[i]], reverse=True, split=self.g.lines.split)
                # Upstreamed only if the patched lines are there once: a look-alike
                # elsewhere in the file proves nothing.
                if (
                    back.ok
                    and _count(cur_lines, s.hunks[i].new_lines) == 1
                    and _removed(s.hunks[i : i + 1], cur_lines, pre_lines)
                    and not (
                        pre_lines is not None
                        and _kept(s.hunks[i : i + 1], cur_lines, cur_lines, pre_lines)
                    )
                ):
                    checks[i] = replace(checks[i], status=UPSTREAMED, reason="")
                    failing.remove(i)
            if failing and pre_lines is not None:
                # Upstream rewrote the block and it now holds the patch's change: found
                # by content, within the block the alignment maps the hunk to.
                up_lines = self.g.lines.split(content)
                assert pre is not None
                align = self._align(pre, content)
                for i in list(failing):
                    if _held(s.hunks[i], pre_lines, up_lines, align):
                        checks[i] = replace(
                            checks[i],
                            status=UPSTREAMED,
                            reason="upstream's block already holds its change",
                        )
                        failing.remove(i)
            if failing:
                final, markers = self._merge(s, content, cur, pre, theirs, failing, checks, name)
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
            st.put(path, mode, final, self.w, where)
        return checks, None

    def _agrees_alone(
        self, hunks: Sequence[Hunk], i: int, content: bytes, pre: bytes, fuzz: int, name: str
    ) -> bool:
        """Whether the 3-way merge of hunk `i` alone (its change on the pinned base into
        upstream's file) is clean and puts it where the engine placed it."""
        split = self.g.lines.split
        one = engine.apply_hunks(pre, [hunks[i]], fuzz=fuzz, split=split)
        if not one.ok:
            return False
        merged, conflicts = self.g.merge_file(content, pre, one.content, ("upstream", "base", name))
        placed = _apply_only(content, hunks, [i], self.fuzz, split)
        return conflicts == 0 and placed.ok and merged == placed.content

    def upstream_changed(self) -> frozenset[str]:
        """The files upstream changed in old base..onto (one `diff-tree`, made once)."""
        if self._upstream_changed is None:
            self._upstream_changed = self.g.tree_changes(self.old_base, self.onto)[1]
        return self._upstream_changed

    def _hint(
        self,
        s: FilePatch,
        content: bytes,
        res: engine.FileResult,
        failing: Sequence[int],
        pre: bytes | None,
        name: str,
        pin_path: str | None,
    ) -> None:
        """DESIGN §5's review hints for a section whose file upstream changed. A hunk the
        engine placed matched its context in one piece, so only a sibling beside it can
        be hinted: the pinned base is read and aligned (a window around the hunk) only
        where a line beside it looks like one it changes. A hunk that failed is judged
        on the whole file's alignment."""
        split = self.g.lines.split
        up = split(content)
        if not s.hunks or len(up) > _HINT_LINES:
            return
        placed = _starts(s.hunks, res)
        pre_lines: list[bytes] | None = None
        align: _Alignment | None = None
        seen: Counter[bytes] | None = None
        for i, h in enumerate(s.hunks):
            n = len(h.old_lines)
            p = placed.get(i)
            if i not in failing and p is not None:
                beside = up[max(p - NEAR, 0) : p] + up[p + n : p + n + NEAR]
                if not maybe_sibling(h, beside):
                    continue
            if pre_lines is None:
                pre = pre if pre is not None else self._preimage(s, name, pin_path)
                if pre is None or pre == content:
                    return
                pre_lines = split(pre)
                if len(pre_lines) > _HINT_LINES:
                    return
            start = engine.locate(pre_lines, h)
            start = h.old_pos if start is None else start
            if p is None or i in failing:
                assert pre is not None
                align = align or self._align(pre, content)
                p = align.at(start)
            w = 2 * NEAR + 2
            plo, ulo = max(start - w, 0), max(p - w, 0)
            # A window around the hunk, but a hunk may be as long as anyone likes: bounded
            # (beyond the bound, head and tail alike and one change: fewer hints).
            ops = bounded.opcodes(pre_lines[plo : start + n + w], up[ulo : p + n + w])
            shifted = [(t, a + plo, b + plo, c + ulo, d + ulo) for t, a, b, c, d in ops]
            seen = stripped(up) if seen is None else seen
            self._hints.extend(hunk_hints(s.path, i, h, start, up, shifted, seen))

    def _was_there(self, block: Sequence[bytes], f: Found) -> bool:
        """Whether the file `f` found the block in held it (or its look-alike) already at
        the old base: then upstream did not move the block there."""
        if self._old_tree is None:
            w = self.w
            tree = self.g.commit_info(self.old_base, w)["tree"].decode()
            self._old_tree = MemTree(lambda oid: self.g.read_tree(oid, w), tree)
        try:
            got = self._old_tree.get(f.path)
        except UnsafePathError:
            return False
        if got is None or got[0] not in ("100644", "100755"):
            return False
        ix = self._indexed(got[1], f.path, old=True)
        return ix is not None and bool(find_block(block, {f.path: ix}))

    def _indexed(self, blob: str, path: str, old: bool = False) -> Indexed | None:
        """File `path`'s index for the moved-block search (None past _MOVED_BYTES), made
        once per content: every failing hunk of the run searches the same upstream files.
        One version is kept per path (and one of the old base's), the newest, so what is
        kept is about the size of the files upstream changed."""
        key = (path, old)
        hit = self._indexes.get(key)
        if hit is not None and hit[0] == blob:
            self._indexes.move_to_end(key)
            return hit[1]
        data = self.state.content(blob)
        size = len(data) if len(data) <= _MOVED_BYTES else 0
        found = index(self.g.lines.split(data)) if size else None
        if hit is not None:
            self._indexes_bytes -= hit[2]
        self._indexes[key] = (blob, found, size)
        self._indexes.move_to_end(key)
        self._indexes_bytes += size
        while self._indexes_bytes > _INDEXED_BYTES and len(self._indexes) > 1:
            _, (_, _, gone) = self._indexes.popitem(last=False)
            self._indexes_bytes -= gone
        return found

    def _align(self, pre: bytes, up: bytes) -> _Alignment:
        """The line alignment of a pinned base with upstream's file, made once for the
        pair: the held-change test, the hints and the moved-block search all ask it."""
        key = (pre, up)
        hit = self._alignments.get(key)
        if hit is None:
            hit = self._alignments[key] = _Alignment(
                self.g.lines.split(pre), self.g.lines.split(up)
            )
            if len(self._alignments) > 4:
                self._alignments.pop(next(iter(self._alignments)))
        return hit

    def _lines_of(self, p: str, own: str, own_lines: list[bytes] | None) -> list[bytes]:
        """The lines of file `p` of the current tree (`own_lines` for the section's own)."""
        if p == own and own_lines is not None:
            return own_lines
        got = self.state.tree.peek(p)
        assert got is not None and got[1] is not None
        return self.g.lines.split(self.state.content(got[1]))

    def _relocate(
        self,
        s: FilePatch,
        failing: Sequence[int],
        cur: bytes | None,
        pre: bytes | None,
        up: bytes | None,
        where: str,
    ) -> tuple[dict[int, HunkCheck], bytes | None] | None:
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
            self._align(pre, up)
            if pre is not None and up is not None and up_lines is not None and cur is not None
            else None
        )
        # Only a file that holds one of the blocks' telling lines can hold a block: each
        # file's index (made once per content) answers that without reading it through.
        files: dict[str, Indexed] = {}
        for p in sorted(self.upstream_changed()):
            if p == path:
                continue
            got = self.state.tree.peek(p)
            if got is None or got[0] not in ("100644", "100755") or got[1] is None:
                continue
            ix = self._indexed(got[1], p)
            if ix is not None and ix.has_any(firsts):
                files[p] = ix
        if cur_lines is not None:
            files[path] = index(cur_lines)
        if not files:
            return None
        out: dict[int, HunkCheck] = {}
        plans: list[tuple[int, Found]] = []
        for i in failing:
            h = s.hunks[i]
            skip = None
            if align is not None and pre is not None:
                start = engine.locate(split(pre), h)
                start = h.old_pos if start is None else start
                lo = align.at(start)
                hi = align.at(start + len(h.old_lines), end=True)
                if up_lines is not None and _alike_block(h.old_lines, up_lines[lo:hi]):
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
                out[i] = HunkCheck(
                    path,
                    i,
                    CONFLICT,
                    reason=f"its block moved upstream, but to more than one place ({places})",
                )
                continue
            f = found[0]
            if f.exact:
                plans.append((i, f))
                out[i] = HunkCheck(
                    path,
                    i,
                    MERGE,
                    via=MOVED,
                    moved_to=(f.path, f.line + 1, ""),
                    reason=f"its block moved to {f.path}:{f.line + 1}",
                )
            else:
                out[i] = HunkCheck(
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
                    out[i] = HunkCheck(path, i, CONFLICT if cur is not None else MISSING)
            return out, None
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
            self.state.put(p, got[0], data, self.w, where)
        return out, own if cur is not None else b""

    def _preimage(self, s: FilePatch, name: str, pin_path: str | None = None) -> bytes | None:
        """The file this section was made against: from the pinned base, else `index`."""
        if s.old_path is None:
            return None
        pre = self.preimage(name, pin_path or s.old_path) if self.preimage else None
        if pre is None and s.old_id and self.g.has_object(s.old_id):
            pre = self.state.content(self.g.resolve(s.old_id, "blob"))
        return pre

    def _merge(
        self,
        s: FilePatch,
        content: bytes,
        cur: bytes,
        pre: bytes | None,
        theirs: engine.FileResult | None,
        failing: list[int],
        checks: list[HunkCheck],
        name: str,
    ) -> tuple[bytes, bytes | None]:
        """3-way merge, then anchored placement, then the resolutions a person made
        before; fills `checks`, returns (content, markers)."""
        assert s.old_path is not None
        merged: bytes | None = None
        regions: list[Region] = []
        labels = ("upstream", "base", name)
        if pre is not None:
            if theirs is not None and theirs.ok:
                merged, conflicts, _ = self.g.merge_resolving(
                    content, pre, theirs.content, labels, None, regions
                )
                merged_lines, up_lines = self.g.lines.split(merged), self.g.lines.split(content)
                # The merge holds every hunk's change, so the line balance counts them all.
                if (
                    conflicts == 0
                    and _removed([s.hunks[i] for i in failing], merged_lines, up_lines)
                    and not _kept(s.hunks, merged_lines, up_lines, self.g.lines.split(pre))
                ):
                    # Merging in the failing hunks changed nothing beyond the hunks that
                    # applied: upstream already made those changes.
                    if merged == cur:
                        for i in failing:
                            checks[i] = replace(checks[i], status=UPSTREAMED, reason="")
                    else:
                        _settle(s.hunks, theirs, failing, checks, regions)
                    return merged, None
                if conflicts == 0:
                    merged = None  # clean, but it kept what the patch removes: no markers
        placed = (
            anchored(cur, [s.hunks[i] for i in failing], pre, self.g.lines.split)
            if pre is not None
            else None
        )
        if placed is not None:
            for i in failing:
                checks[i] = replace(checks[i], status=MERGE, anchored=True, reason="")
            return placed, None
        moved = self._relocate(s, failing, cur, pre, content, f"{name}:{s.lineno}")
        if moved is not None:
            found, moved_cur = moved
            for i in failing:
                checks[i] = (
                    replace(found[i], drift=checks[i].drift, offset=0, fuzz=0)
                    if i in found
                    else replace(checks[i], status=CONFLICT)
                )
            if moved_cur is not None:
                return moved_cur, None
        if merged is not None and pre is not None and theirs is not None and self.resolutions:
            # DESIGN §4 step 7: the conflict regions a person resolved before, as they did.
            regions = []
            merged, conflicts, _ = self.g.merge_resolving(
                content, pre, theirs.content, labels, self.resolutions.lookup, regions
            )
            if conflicts == 0:
                _settle(s.hunks, theirs, failing, checks, regions)
                return merged, None
        if merged is None:
            for i in failing:
                checks[i] = replace(checks[i], status=CONFLICT)
            merged = _conflict_blocks(cur, [s.hunks[i] for i in failing], name, self.g.lines.split)
        else:
            assert theirs is not None
            _settle(s.hunks, theirs, failing, checks, regions)
            self.open_regions[s.path] = tuple(r for r in regions if not r.settled)
        return content, merged


def _settle(
    hunks: Sequence[Hunk],
    theirs: engine.FileResult,
    failing: Sequence[int],
    checks: list[HunkCheck],
    regions: Sequence[Region],
) -> None:
    """Each failing hunk as the merge placed it (`core.resolve.by_hunk` decides): a
    conflict where a region left to a person holds its change, else merged — by the
    finer method or remembered resolution that settled its region, if one did. Only the
    hunks in a conflict region are a person's to resolve; the others merged."""
    starts = _starts(hunks, theirs)
    spans = [_span(hunks[i], starts[i]) if i in starts else None for i in failing]
    named: list[Region] = []  # the regions whose note a hunk carries
    for i, (conflict, region) in zip(failing, by_hunk(spans, regions), strict=True):
        if region is not None and not conflict:
            named.append(region)
        if conflict:
            checks[i] = replace(checks[i], status=CONFLICT)
        elif region is None:
            checks[i] = replace(checks[i], status=MERGE, reason="", via="")
        else:
            checks[i] = replace(checks[i], status=MERGE, reason=_note(region), via=region.method)
    # Every upstream line a delete-wins discarded is named, even where its region was not
    # matched to a hunk (a hunk spanning several regions, or one whose place is unknown):
    # the rest go to the first merged hunk, which then records delete-wins.
    merged = [i for i in failing if checks[i].status == MERGE]
    gone = [
        x
        for r in regions
        if r.method == DELETE_WINS and not any(r is n for n in named)
        for x in r.discarded
    ]
    if merged and gone:
        i = merged[0]
        reason = "; ".join(x for x in (checks[i].reason, _discards(gone)) if x)
        checks[i] = replace(checks[i], reason=reason, via=DELETE_WINS)


def _span(h: Hunk, start: int) -> tuple[int, int]:
    """The lines a hunk changes in the file it was made on, [start, end), 0-based (an
    insertion: the empty span where it goes)."""
    k = start
    first = last = None
    for tag, _ in h.lines:
        if tag != " " and first is None:
            first = k
        if tag == "-":
            k += 1
            last = k
        elif tag == "+":
            last = k if last is None or last < k else last
        else:
            k += 1
    if first is None or last is None:
        return start, start
    return first, max(first, last)


def _note(region: Region) -> str:
    """What a reviewer must know of a settled region: the upstream lines a delete-wins
    discarded, the remembered resolution reused."""
    if region.source:
        return f"resolved as a person did before: {region.source}"
    return _discards(region.discarded)


def _discards(gone: Sequence[bytes]) -> str:
    """The note naming the upstream lines a delete-wins discarded ("" for none)."""
    if not gone:
        return ""
    shown = "; ".join(x.decode("utf-8", "replace").strip() for x in gone[:10])
    more = f" and {len(gone) - 10} more" if len(gone) > 10 else ""
    return f"discards upstream's {shown}{more}"


def upstream_renames(g: GitRepo, old: str, new: str) -> dict[str, str]:
    """Files upstream renamed between two commits (old path → new path)."""
    if old == new:
        return {}
    return g.renames(old, new)


def _trivial(line: bytes) -> bool:
    """A line too common to anchor on: blank, or only brackets and punctuation."""
    return len(line.strip().strip(b"{}()[];,").strip()) < 3


def anchored(
    content: bytes, hunks: Sequence[Hunk], pre: bytes, split: Split = split_lines
) -> bytes | None:
    """DESIGN §4 step 5: place each change block where its removed lines — or, for a pure
    insertion, the unchanged line it hangs from (where that line is blank or punctuation,
    the hunk's context from the nearest telling line to it) — occur exactly once, both in
    the new file and in the pinned pre-image `pre` (so it is the same line, not a
    look-alike in another block that upstream left alone while editing the real one).
    None if any can't."""
    lines = split(content)
    old = split(pre)
    for h in hunks:
        if h.has_context and _count(lines, h.old_lines):
            # The hunk's whole block is in the file, but not where the pinned base puts
            # it (the doubt refused it): a look-alike copy. Anchoring would find it too.
            return None
        blocks = _change_blocks(h)
        runs = _context_runs(h)
        for (before, removed, added, after), (above, below) in zip(blocks, runs, strict=True):
            if removed:
                if all(_trivial(x) for x in removed) or _count(old, removed) != 1:
                    return None
                hits = _find(lines, removed, 2)
                if len(hits) != 1:
                    return None
                i = hits[0]
                lines[i : i + len(removed)] = added
                continue
            # The line it hangs from; where that is blank or punctuation, the context run
            # from the nearest telling line to it (`#include "x.h"` and a blank line):
            # unique in both files, and whole, so the insertion point is the same point.
            # The nearer telling line first (the line above on a tie).
            anchor_hit = None
            up_run, down_run = _anchor_run(above, reverse=True), _anchor_run(below, reverse=False)
            sides = [(up_run, 1), (down_run, -1)]
            if up_run is None or (down_run is not None and len(down_run) < len(up_run)):
                sides.reverse()
            for seq, step in sides:
                if seq is None or _count(old, seq) != 1:
                    continue
                hits = _find(lines, seq, 2)
                if len(hits) != 1:
                    continue
                edge = len(seq) - 1 if step == 1 else 0
                if _inserted_at(old, lines, _find(old, seq)[0] + edge, hits[0] + edge, step):
                    return None
                anchor_hit = hits[0] + len(seq) if step == 1 else hits[0]
                break
            if (
                anchor_hit is None
                and after is None
                and h.trailing_context == 0
                and before is not None
                and old
                and old[-1] == before
                and lines
                and lines[-1] == before
                # Upstream appended a block ending the same way: insert/insert, refused.
                and _count(lines, [before]) == _count(old, [before])
            ):
                # An insertion at the end of the file (no trailing context): the end of
                # the file is its anchor, as GNU patch takes it, however common the last
                # line — when the file still ends with the line it hung from.
                anchor_hit = len(lines)
            if anchor_hit is None:
                return None
            lines[anchor_hit:anchor_hit] = added
    return b"".join(lines)


# How far past the anchor a neighbour of the pinned base is looked for.
_INSERT_WINDOW = 8


def _inserted_at(
    old: Sequence[bytes], lines: Sequence[bytes], at_old: int, at_new: int, step: int
) -> bool:
    """Whether upstream inserted lines right beside the anchor of a pure insertion: the
    anchor's neighbour in the pinned base (the next line for step 1, the previous one for
    step -1) is no longer next to it in the new file but a few lines further on. The patch
    and upstream then both inserted at one point (insert/insert): which goes first is a
    person's call. A neighbour that is gone (upstream edited it) is not an insertion."""
    k = at_old + step
    if not 0 <= k < len(old) or _trivial(old[k]):
        return False
    neighbour = old[k]
    j = at_new + step
    if 0 <= j < len(lines) and lines[j] == neighbour:
        return False
    for m in range(2, _INSERT_WINDOW + 1):
        j = at_new + step * m
        if not 0 <= j < len(lines):
            return False
        if lines[j] == neighbour:
            return True
    return False


class _Alignment:
    """Where the pinned base's lines went in upstream's file (a line diff, made once)."""

    def __init__(self, pre: Sequence[bytes], up: Sequence[bytes]) -> None:
        self.ops = SequenceMatcher(None, list(pre), list(up)).get_opcodes()

    def at(self, x: int, end: bool = False) -> int:
        """Upstream's line for base line `x` (a changed block maps to its edges)."""
        for tag, i1, i2, j1, j2 in self.ops:
            if i1 <= x < i2 or (x == i2 and end):
                if tag == "equal":
                    return j1 + (x - i1)
                return j2 if end else j1
        return self.ops[-1][4] if self.ops else 0


# Lines around the mapped block that still count as inside it.
_SLACK = 3
# Files longer than this get no review hints (the alignment is a line diff); files
# bigger than this are not searched for a moved block.
_HINT_LINES = 20000
_MOVED_BYTES = 4 << 20
# What the moved-block search's indexes may hold, in bytes of the files indexed (one
# version a path: about the size of the files upstream changed).
_INDEXED_BYTES = 32 << 20


def _telling_line(line: bytes) -> bool:
    return len(line.strip().strip(b"{}()[];,").strip()) >= 4


def _alike_block(block: Sequence[bytes], lines: Sequence[bytes]) -> bool:
    """Whether `lines` (where the alignment maps a hunk's block) still look like it."""
    if not lines:
        return False
    ratio = bounded.ratio(_ended(block), _ended(lines))  # too long to compare: not alike
    return ratio is not None and ratio >= 0.6


def _held(h: Hunk, pre: Sequence[bytes], up: Sequence[bytes], align: _Alignment) -> bool:
    """Whether upstream's file holds the hunk's change where the alignment maps the
    hunk's block: every telling line it adds is there, none it removes (and does not
    add back) is — judged within that block only, never anywhere in the file."""
    adds = [x for _, _, added, _ in _change_blocks(h) for x in _ended(added) if not _trivial(x)]
    if not adds:
        return False  # a pure deletion proves nothing by absence
    rems = {x for _, removed, _, _ in _change_blocks(h) for x in _ended(removed)}
    rems = {x for x in rems if not _trivial(x)} - set(adds)
    start = engine.locate(list(pre), h)
    start = h.old_pos if start is None else start
    lo = align.at(start)
    hi = align.at(start + len(h.old_lines), end=True)
    block = Counter(_ended(up[max(lo - _SLACK - len(adds), 0) : hi + _SLACK + len(adds)]))
    need = Counter(adds)
    return all(block[x] >= n for x, n in need.items()) and not any(block[x] for x in rems)


def _removed(
    hunks: Sequence[Hunk], result: Sequence[bytes], before: Sequence[bytes] | None
) -> bool:
    """Whether `result` lacks what `hunks` remove, rather than holding it elsewhere: each
    run of removed lines occurs in it fewer times than in `before` (not at all, without
    it). Where upstream *moved* a block the patch removes, a clean 3-way merge and the
    reverse-apply test both take the move for the removal (found by the rebase property
    in tests/test_properties.py), and the patch would be dropped as upstreamed. A block
    that ended the file without a newline counts with one too: moved up, it gains one
    (lines are compared as if each ended in one, `_ended`)."""
    res = _ended_file(result)
    was = None if before is None else _ended_file(before)
    for h in hunks:
        for _, removed, _, _ in _change_blocks(h):
            block = _ended(removed)
            now = _count(res, block)
            if now and (was is None or now >= _count(was, block)):
                return False
    return True


def _kept(
    hunks: Sequence[Hunk], result: Sequence[bytes], upstream: Sequence[bytes], pre: Sequence[bytes]
) -> bool:
    """Whether `result` still holds a line the hunks remove that upstream moved rather than
    removed — what `_removed`'s whole-block test misses when upstream moved only part of
    a removed block, or edited a line next to it while moving it (found by the rebase
    property). Line by line: each telling line the hunks remove on balance (n more times
    than they add it) that upstream did not already remove itself (fewer copies than in
    the pinned preimage) must be that much rarer in `result` than upstream. Blank and
    brace-only lines tell nothing — upstream removes and adds those all the time."""
    net: Counter[bytes] = Counter()
    for h in hunks:
        for _, removed, added, _ in _change_blocks(h):
            net.update(_ended(x for x in removed if not _trivial(x)))
            net.subtract(_ended(x for x in added if not _trivial(x)))
    wanted = {k: n for k, n in net.items() if n > 0}
    if not wanted:
        return False
    left, up, was = (Counter(_ended_file(x)) for x in (result, upstream, pre))
    for k, n in wanted.items():
        need = max(0, n - max(0, was[k] - up[k]))  # what upstream has not removed itself
        if left[k] > up[k] - need:
            return True
    return False


def _ended(lines: Iterable[bytes]) -> list[bytes]:
    """Lines with a newline added where one is missing: a file's last line gains one when
    moved up."""
    return [x if x.endswith(b"\n") else x + b"\n" for x in lines]


def _ended_file(lines: Sequence[bytes]) -> list[bytes]:
    """`_ended` for a whole file's lines (split_lines): only the last can lack one."""
    out = list(lines)
    if out and not out[-1].endswith(b"\n"):
        out[-1] += b"\n"
    return out


def _count(lines: Sequence[bytes], seq: Sequence[bytes]) -> int:
    """How many times `seq` occurs in `lines` (an empty `seq`: never)."""
    return len(_find(lines, seq))


def _find(lines: Sequence[bytes], seq: Sequence[bytes], most: int | None = None) -> list[int]:
    """Where `seq` starts in `lines` (an empty `seq`: nowhere); the first `most` only."""
    if not seq:
        return []
    n = len(seq)
    first = seq[0]
    want = list(seq)
    out: list[int] = []
    i = -1
    stop = max(len(lines) - n + 1, 0)
    while True:
        try:
            i = lines.index(first, i + 1, stop)
        except ValueError:
            return out
        if n == 1 or list(lines[i : i + n]) == want:
            out.append(i)
            if most is not None and len(out) >= most:
                return out


# How many lines around a moved hunk must look as they did in the pinned base.
_SURROUNDINGS = 3


def _starts(hunks: Sequence[Hunk], res: engine.FileResult) -> dict[int, int]:
    """Where each placed hunk's old lines start in the file it was applied to (0-based)."""
    out = {}
    shift = 0
    for r in res.hunks:
        if not r.applied:
            continue
        h = hunks[r.index]
        out[r.index] = r.line - 1 - shift
        shift += len(h.new_lines) - len(h.old_lines)
    return out


def _doubtful(
    hunks: Sequence[Hunk],
    res: engine.FileResult,
    content: bytes,
    pre: bytes | None,
    then: engine.FileResult | None,
    split: Split = split_lines,
) -> list[int]:
    """Hunks placed by offset or fuzz whose surrounding lines differ from the pre-image's
    (`then`: the hunks applied to the pre-image)."""
    moved = [r.index for r in res.hunks if r.status in (OFFSET, FUZZ)]
    if not moved or pre is None or then is None or not then.ok:
        return []
    was, now = _starts(hunks, then), _starts(hunks, res)
    a, b = split(pre), split(content)
    k = _SURROUNDINGS
    out = []
    for i in moved:
        q, p, n = was[i], now[i], len(hunks[i].old_lines)
        if p < 0:  # fuzz dropped leading context that is not even in the file
            out.append(i)
            continue
        above = a[max(q - k, 0) : q] == b[max(p - k, 0) : p]
        below = a[q + n : q + n + k] == b[p + n : p + n + k]
        if not (above and below):
            out.append(i)
    return out


def _apply_only(
    content: bytes,
    hunks: Sequence[Hunk],
    keep: Sequence[int],
    fuzz: int,
    split: Split = split_lines,
) -> engine.FileResult:
    """Apply only the hunks `keep`; the report keeps the hunks' own indices."""
    res = engine.apply_hunks(content, [hunks[i] for i in keep], fuzz=fuzz, split=split)
    return engine.FileResult(res.content, tuple(replace(r, index=keep[r.index]) for r in res.hunks))


def _runs(h: Hunk) -> Iterator[tuple[int, int]]:
    """Where each run of -/+ lines of `h` starts and ends (indices into its lines)."""
    lines = h.lines
    i = 0
    while i < len(lines):
        if lines[i][0] == " ":
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j][0] != " ":
            j += 1
        yield i, j
        i = j


def _change_blocks(h: Hunk) -> list[tuple[bytes | None, list[bytes], list[bytes], bytes | None]]:
    """Each run of -/+ lines with the context line before and after it."""
    lines = h.lines
    out = []
    for i, j in _runs(h):
        before = lines[i - 1][1] if i > 0 else None
        after = lines[j][1] if j < len(lines) else None
        removed = [c for t, c in lines[i:j] if t == "-"]
        added = [c for t, c in lines[i:j] if t == "+"]
        out.append((before, removed, added, after))
    return out


def _context_runs(h: Hunk) -> list[tuple[list[bytes], list[bytes]]]:
    """For each run of -/+ lines (as `_change_blocks`), the context lines right above it
    (back to the previous run or the hunk's start) and right below it."""
    lines = h.lines
    out = []
    for i, j in _runs(h):
        a = i
        while a > 0 and lines[a - 1][0] == " ":
            a -= 1
        b = j
        while b < len(lines) and lines[b][0] == " ":
            b += 1
        out.append(([c for _, c in lines[a:i]], [c for _, c in lines[j:b]]))
    return out


def _anchor_run(run: Sequence[bytes], reverse: bool) -> list[bytes] | None:
    """The context an insertion hangs from: from the line next to it (the run's last line
    if `reverse`, else its first) out to the nearest line that is not trivial; None if the
    run has none."""
    order = range(len(run) - 1, -1, -1) if reverse else range(len(run))
    for k in order:
        if not _trivial(run[k]):
            return list(run[k:]) if reverse else list(run[: k + 1])
    return None


def _conflict_blocks(
    content: bytes, hunks: Sequence[Hunk], name: str, split: Split = split_lines
) -> bytes:
    """Without a preimage to merge against: mark each hunk at its stated place."""
    lines = split(content)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    for h in sorted(hunks, key=lambda x: -x.old_pos):
        pos = min(h.old_pos, len(lines))
        block = [b"<<<<<<< upstream (the patch expected the lines below)\n"]
        block += [x if x.endswith(b"\n") else x + b"\n" for x in h.old_lines]
        block += [b"=======\n"] + [x if x.endswith(b"\n") else x + b"\n" for x in h.new_lines]
        block += [f">>>>>>> {name}\n".encode()]
        lines[pos:pos] = block
    return b"".join(lines)


def attribute_drift(
    g: GitRepo,
    old_base: str,
    onto: str,
    w: ObjectWriter,
    results: Sequence[PatchCheck],
    repo: PatchRepo,
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
    base_tree = MemTree(
        lambda oid: g.read_tree(oid, w), g.commit_info(old_base, w)["tree"].decode()
    )
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
                _drifted(load_patch(repo, entry)[1].sections, r.renames, r.hunks)
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
                new_hunks.append(replace(h, drift=tuple(c.commit for c in histories[h.file])))
                continue
            start, length = _region(g, w, base_tree, sec.old_path, sec.hunks[h.index], texts)
            att: Attribution = attribute(histories[h.file], start, length)
            new_hunks.append(_moved_by(replace(h, drift=att.for_status(h.status)), histories))
        done = replace(r, hunks=tuple(new_hunks))
        if done.evidence is not None and not done.evidence.commit:
            # Upstreamed by content: the newest upstream commit behind its hunks made it so.
            behind = done.drift
            if behind:
                done = replace(done, evidence=Evidence(done.evidence.kind, behind[-1]))
        out.append(done)
    return out, subjects


def _moved_by(h: HunkCheck, histories: dict[str, list[Change]]) -> HunkCheck:
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


@dataclass(frozen=True, slots=True)
class Drifted:
    """What drift attribution needs of a section: its old path and its unclean hunks."""

    old_path: str | None
    hunks: dict[int, Hunk]


def _drifted(
    sections: Sequence[FilePatch], renames: Sequence[tuple[str, str]], checks: Sequence[HunkCheck]
) -> dict[str, Drifted]:
    """A patch's unclean hunks by the path the replay reported them under."""
    renamed = dict(renames)
    want: dict[str, set[int]] = {}
    for c in checks:
        if c.status != CLEAN:
            want.setdefault(c.file, set()).add(c.index)
    out = {}
    for s in sections:
        path = renamed.get(s.path, s.path)
        if path in want:
            out[path] = Drifted(s.old_path, {i: s.hunks[i] for i in want[path] if i < len(s.hunks)})
    return out


def _region(
    g: GitRepo,
    w: ObjectWriter,
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
        texts[path] = g.lines.split(g.read_blob(entry[1], w)) if entry is not None else None
    lines = texts[path]
    if lines is not None:
        start = engine.locate(lines, h)
        if start is not None:
            return start, len(h.old_lines)
    return h.old_pos, len(h.old_lines)
