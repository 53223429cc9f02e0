"""The values that cross layers: what a rebase finds and records, the applied stack, and
why a patch may be upstream. Frozen values, changed by building new ones; each layer
imports them from here (the store serialises them, the formats render them, the rebase
makes them), none re-declares them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from patchq.core.resolve import Region
from patchq.core.status import method_of
from patchq.core.trust import Configured


class EvidenceKind(StrEnum):
    """What says a patch may be upstream, strongest first (DESIGN §4)."""

    ORIGIN = "origin"
    PATCH_ID = "patch-id"
    SUBJECT = "subject"
    CONTENT = "content"


ORIGIN, PATCH_ID, SUBJECT = EvidenceKind.ORIGIN, EvidenceKind.PATCH_ID, EvidenceKind.SUBJECT
CONTENT = EvidenceKind.CONTENT


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why a patch is (or may be) upstream: its kind and the upstream commit it names
    ("" for content evidence whose commit is not known yet)."""

    kind: EvidenceKind
    commit: str

    def doc(self) -> dict[str, str]:
        return {"kind": self.kind, "commit": self.commit}

    def said(self) -> str:
        said: dict[str, str] = {
            ORIGIN: "its origin",
            PATCH_ID: "the same patch-id",
            SUBJECT: "the same subject and files",
            CONTENT: "its change, by content",
        }
        what = said.get(self.kind, self.kind)
        return f"upstream {self.commit[:12]} ({what})" if self.commit else f"upstream ({what})"


@dataclass(frozen=True, slots=True)
class HunkOutcome:
    """How one hunk fares on a new upstream — placed (and how), or not, and the upstream
    commits behind it: what the replay finds, the rebase records, `check --json`, the
    rebase's JSON and the report show, through one `to_doc`."""

    file: str
    index: int
    status: str  # a `Status` drift word
    offset: int = 0
    fuzz: int = 0
    anchored: bool = False
    reason: str = ""
    drift: tuple[str, ...] = ()
    via: str = ""  # a finer method than the status says (zealous, word, delete-wins, …)
    # Where upstream moved the hunk's block (file, 1-based line, the commit that moved
    # it, "" until drift attribution names it): applied there (`moved`) or a conflict.
    moved_to: tuple[str, int, str] | None = None
    # Of the upstream commits behind it, those that changed its own lines or context
    # (`drift` keeps all that moved it), and how many merely shifted it.
    touched_by: tuple[str, ...] = ()
    shifted: int = 0
    # Where the hunk's change is in the new file (1-based; 0: not known): said for a
    # proposal, whose place a person checks (DESIGN §4.1).
    line: int = 0

    @property
    def method(self) -> str:
        """How the hunk was placed (DESIGN §4), "" where it was not."""
        return method_of(self.status, self.anchored, self.via)

    def to_doc(self) -> dict[str, Any]:
        """The JSON form of the hunk, the same in the rebase's records, its `--json`,
        `check --json` and the report."""
        return {
            "file": self.file,
            "index": self.index,
            "status": self.status,
            "offset": self.offset,
            "fuzz": self.fuzz,
            "anchored": self.anchored,
            "drift": list(self.drift),
            "touched_by": list(self.touched_by),
            "shifted": self.shifted,
            "reason": self.reason,
            "method": self.method,
            "line": self.line,
            "moved_to": None
            if self.moved_to is None
            else {"file": self.moved_to[0], "line": self.moved_to[1], "commit": self.moved_to[2]},
        }

    @classmethod
    def recorded(
        cls,
        file: str,
        index: int,
        status: str,
        method: str,
        **rest: Any,
    ) -> HunkOutcome:
        """A hunk as a record read back keeps it, its `method` given: the finer method is
        whatever the status and anchoring alone would not say."""
        anchored = bool(rest.get("anchored", False))
        via = method if method != method_of(status, anchored) else ""
        return cls(file, index, status, via=via, **rest)


@dataclass(frozen=True, slots=True)
class PatchOutcome:
    """What a rebase did to one patch: what `rebase --json` and `report` show."""

    name: str
    status: str  # the replay's status of the patch
    outcome: str  # the lock's: unchanged, refreshed, merged, resolved, upstreamed, dropped
    drift: tuple[str, ...] = ()
    hunks: tuple[HunkOutcome, ...] = ()
    commit: str | None = None  # the rebased commit; None for a patch that left the stack
    # For a patch that stopped at a conflict: whether its markers had reached the
    # working tree (kept because `rebase --json` has always shown it).
    shown: bool | None = None
    # Why it is (or may be) upstream, {"kind": …, "commit": …} (DESIGN §4), and the
    # review hints of DESIGN §5.
    evidence: tuple[tuple[str, str], ...] | None = None
    hints: tuple[str, ...] = ()
    # The proposed methods (DESIGN §4.1) taken without a stop, the person having
    # accepted them: an "accepted proposal" to review.
    accepted: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DonePatch:
    """A patch the rebase is done with, and the trees its refreshed file is diffed from."""

    patch: PatchOutcome
    tree_before: str
    tree_after: str


@dataclass(frozen=True, slots=True)
class StoppedPatch:
    """The patch the rebase stopped at, waiting for a person to resolve or skip it."""

    name: str
    status: str
    drift: tuple[str, ...]
    hunks: tuple[HunkOutcome, ...]
    tree_before: str
    tree_after: str
    conflict_tree: str | None  # the sections that applied, markers in the rest
    files: tuple[str, ...]  # the files that hold markers
    shown: bool  # whether the markers reached the working tree yet
    evidence: tuple[tuple[str, str], ...] | None = None
    hints: tuple[str, ...] = ()
    # The conflict regions left to the person, by file: what `--continue` remembers.
    regions: tuple[tuple[str, Region], ...] = ()
    # "Fixed differently upstream" (DESIGN §4.1): upstream changed every line it changes
    # (`drift` names the commits), and whether its added lines are already there.
    rewritten: bool = False
    added_present: bool = False

    def resolved(self, commit: str, tree: str) -> DonePatch:
        """This patch as the person resolved it, committed as `commit` with `tree`."""
        return DonePatch(
            PatchOutcome(
                self.name,
                self.status,
                "resolved",
                self.drift,
                self.hunks,
                commit,
                self.shown,
                self.evidence,
                self.hints,
            ),
            self.tree_before,
            tree,
        )

    def dropped(self) -> DonePatch:
        """This patch skipped: it leaves the series."""
        return DonePatch(
            PatchOutcome(
                self.name,
                self.status,
                "dropped",
                self.drift,
                self.hunks,
                None,
                self.shown,
                self.evidence,
                self.hints,
            ),
            self.tree_before,
            self.tree_after,
        )


@dataclass(frozen=True, slots=True)
class ExecRun:
    """One run of the user's `--exec` command after a rebase: with every patch applied
    (`patch` None) or, for `--exec-each`, with `patch` and those below it applied."""

    command: str
    ok: bool
    code: int
    patch: str | None = None
    note: str = ""  # why a run that exited 0 still failed (it left changes behind)


@dataclass(frozen=True, slots=True)
class Reorder:
    """A `sink`/`float` that stopped at a conflict and goes on as a rebase onto the base
    it started from: the patches are replayed in their new order, each 3-way step pinned
    to its pre-image in the `order` they were written in."""

    verb: str  # "sink", "float" or "move"
    name: str  # the patch moved
    order: tuple[str, ...]  # the active patches in the old order: the pre-images' order
    applied: int  # how many patches of the new order are applied when it is done
    # `move`'s: the patch it goes before (after, with `after`); "" for sink and float.
    anchor: str = ""
    after: bool = False


@dataclass(frozen=True, slots=True)
class RebaseState:
    """Everything a stopped rebase needs to go on, or to put everything back."""

    old_base: str
    onto: str
    onto_ref: str
    guards: tuple[str, ...]
    fuzz: int
    orig_branch: str | None  # where HEAD was before (None: detached)
    orig_head: str | None
    stack_before: Stack | None  # the stack record to restore on --abort
    branch: str  # the stack branch being rebuilt
    branch_before: str | None  # its commit before the rebase (None: it did not exist)
    entries: tuple[str, ...]  # the active patches, in series order
    done: tuple[DonePatch, ...]
    head: str  # the rebased stack so far
    current: StoppedPatch | None
    # The subjects of the upstream commits named in drift, as (commit, subject) pairs.
    subjects: tuple[tuple[str, str], ...]
    # The commands to run when the rebase is done ("": none), fixed when it started so
    # that nothing applied meanwhile (a quilt-style queue's own patchq.toml) can change them.
    exec_cmd: str = ""
    exec_each: str = ""
    reorder: Reorder | None = None  # a stopped `sink`/`float`, not a rebase onto upstream
    # The commands patchq.toml names that the person has not trusted: not run, and said so
    # when the rebase is done.
    untrusted: tuple[Configured, ...] = ()
    # The proposed methods (DESIGN §4.1) taken without a stop (`--accept`, `accept`),
    # fixed when the rebase started.
    accept: tuple[str, ...] = ()

    def with_subjects(self, subjects: dict[str, str]) -> RebaseState:
        """This state knowing `subjects` too (a commit seen again keeps its place)."""
        merged = dict(self.subjects) | subjects
        return replace(self, subjects=tuple(merged.items()))

    def with_done(self, done: DonePatch, head: str | None = None) -> RebaseState:
        """This state with one more patch done and, if it made a commit, a new head."""
        return replace(
            self, done=self.done + (done,), current=None, head=self.head if head is None else head
        )


@dataclass(frozen=True, slots=True)
class LastRebase:
    """The record of the last finished rebase that `report` reviews."""

    base: str
    onto: str
    onto_ref: str
    patches: tuple[PatchOutcome, ...]
    subjects: tuple[tuple[str, str], ...]
    # Each refreshed patch's bytes before and after, as (name, bytes) pairs: the report's
    # interdiff needs the old ones, which the patch repo no longer holds.
    old: tuple[tuple[str, bytes], ...] = ()
    new: tuple[tuple[str, bytes], ...] = ()
    # The `--exec`/`--exec-each` commands asked for, and their runs once they ran.
    exec_cmd: str = ""
    exec_each: str = ""
    exec_runs: tuple[ExecRun, ...] = ()
    untrusted: tuple[Configured, ...] = ()  # configured commands not run (not trusted)


@dataclass(frozen=True, slots=True)
class Stack:
    """Base commit, branch, and the applied patches with their commits, bottom first."""

    base: str
    branch: str
    applied: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()

    @property
    def head(self) -> str:
        return self.commits[-1] if self.commits else self.base

    @property
    def top(self) -> str | None:
        return self.applied[-1] if self.applied else None

    def commit_below(self, index: int) -> str:
        """The commit a patch at `index` sits on (the base for the first)."""
        return self.commits[index - 1] if index > 0 else self.base

    def truncated(self, n: int) -> Stack:
        """The stack with only its first `n` patches applied."""
        return replace(self, applied=self.applied[:n], commits=self.commits[:n])

    def extended(self, names: tuple[str, ...], commits: tuple[str, ...]) -> Stack:
        return replace(self, applied=self.applied + names, commits=self.commits + commits)
