"""The rebase in progress and the record of the last one: typed values, versioned files.

A rebase that stops at a conflict must be resumable by a later process (`--continue`,
`--skip`, `--abort`), so everything it knows lives in `.git/patchq/<queue>.rebase.json`
while it is stopped; when it finishes it leaves `.git/patchq/<queue>.last-rebase.json`
for `report`. Both are frozen values here, changed by building new ones, each with one
serialiser (`to_doc`) and one deserialiser (`from_doc`); the files carry a version, and
one that cannot be read is an `UnsafeStateError` (exit 5) naming it, before anything
is changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchq.core.records import (
    DonePatch,
    ExecRun,
    HunkOutcome,
    LastRebase,
    PatchOutcome,
    RebaseState,
    Reorder,
    Stack,
    StoppedPatch,
)
from patchq.core.resolve import Region
from patchq.core.trust import Configured
from patchq.store import jsonrecord as jr
from patchq.store import stack as stack_record
from patchq.store.files import atomic_write

# --- serialisers -------------------------------------------------------------------------


def _moved(doc: dict[str, Any]) -> tuple[str, int, str] | None:
    m = jr.obj_or_none(doc, "moved_to") if "moved_to" in doc else None
    if m is None:
        return None
    return (jr.text(m, "file"), jr.integer(m, "line"), jr.text(m, "commit"))


def _extras(p: PatchOutcome | StoppedPatch) -> dict[str, Any]:
    """The optional keys of a patch record: evidence and hints, where there are some."""
    doc: dict[str, Any] = {}
    if p.evidence is not None:
        doc["evidence"] = dict(p.evidence)
    if p.hints:
        doc["hints"] = list(p.hints)
    if isinstance(p, PatchOutcome) and p.accepted:
        doc["accepted"] = list(p.accepted)
    return doc


def _evidence(doc: dict[str, Any]) -> tuple[tuple[str, str], ...] | None:
    return jr.pairs(doc, "evidence") if doc.get("evidence") is not None else None


def _hints(doc: dict[str, Any]) -> tuple[str, ...]:
    return jr.texts(doc, "hints") if "hints" in doc else ()


def _hunk(doc: dict[str, Any]) -> HunkOutcome:
    return HunkOutcome.recorded(
        jr.text(doc, "file"),
        jr.integer(doc, "index"),
        jr.text(doc, "status"),
        jr.text_or_none(doc, "method", required=False) or "",
        offset=jr.integer(doc, "offset"),
        fuzz=jr.integer(doc, "fuzz"),
        anchored=jr.flag(doc, "anchored"),
        drift=jr.texts(doc, "drift"),
        reason=jr.text(doc, "reason"),
        moved_to=_moved(doc),
        # Absent from a record an older patchq wrote: no narrower list, no count.
        touched_by=jr.texts(doc, "touched_by") if "touched_by" in doc else (),
        shifted=jr.integer(doc, "shifted") if "shifted" in doc else 0,
        line=jr.integer(doc, "line") if "line" in doc else 0,
    )


def outcome_doc(p: PatchOutcome) -> dict[str, Any]:
    """The JSON form of one patch's outcome, as the record keeps it and `rebase --json`
    prints it (no `commit` for a patch that left the stack, `shown` only after a stop)."""
    doc: dict[str, Any] = {
        "name": p.name,
        "status": p.status,
        "outcome": p.outcome,
        "drift": list(p.drift),
        "hunks": [h.to_doc() for h in p.hunks],
    }
    if p.commit is not None:
        doc["commit"] = p.commit
    if p.shown is not None:
        doc["shown"] = p.shown
    return doc | _extras(p)


def _outcome(doc: dict[str, Any]) -> PatchOutcome:
    return PatchOutcome(
        jr.text(doc, "name"),
        jr.text(doc, "status"),
        jr.text(doc, "outcome"),
        jr.texts(doc, "drift"),
        tuple(_hunk(h) for h in jr.objects(doc, "hunks")),
        jr.text_or_none(doc, "commit", required=False),
        jr.flag_or_none(doc, "shown"),
        _evidence(doc),
        _hints(doc),
        jr.texts(doc, "accepted") if "accepted" in doc else (),
    )


def _stopped_doc(c: StoppedPatch) -> dict[str, Any]:
    return (
        {
            "name": c.name,
            "status": c.status,
            "drift": list(c.drift),
            "hunks": [h.to_doc() for h in c.hunks],
            "tree_before": c.tree_before,
            "tree_after": c.tree_after,
            "conflict_tree": c.conflict_tree,
            "files": list(c.files),
            "shown": c.shown,
            "regions": [_region_doc(f, r) for f, r in c.regions],
        }
        | _extras(c)
        | ({"rewritten": True, "added_present": c.added_present} if c.rewritten else {})
    )


def _lines_doc(lines: tuple[bytes, ...]) -> list[str]:
    # Lines are bytes; JSON holds text. surrogateescape carries any byte through.
    return [x.decode("utf-8", "surrogateescape") for x in lines]


def _lines(doc: dict[str, Any], key: str) -> tuple[bytes, ...]:
    return tuple(x.encode("utf-8", "surrogateescape") for x in jr.texts(doc, key))


def _region_doc(file: str, r: Region) -> dict[str, Any]:
    return {
        "file": file,
        "base": _lines_doc(r.base),
        "ours": _lines_doc(r.ours),
        "theirs": _lines_doc(r.theirs),
        "start": r.start,
        "out": r.out,
        "out_len": r.out_len,
    }


def _region(doc: dict[str, Any]) -> tuple[str, Region]:
    return jr.text(doc, "file"), Region(
        _lines(doc, "base"),
        _lines(doc, "ours"),
        _lines(doc, "theirs"),
        jr.integer(doc, "start"),
        jr.integer(doc, "out"),
        jr.integer(doc, "out_len"),
    )


def _stopped(doc: dict[str, Any]) -> StoppedPatch:
    return StoppedPatch(
        jr.text(doc, "name"),
        jr.text(doc, "status"),
        jr.texts(doc, "drift"),
        tuple(_hunk(h) for h in jr.objects(doc, "hunks")),
        jr.text(doc, "tree_before"),
        jr.text(doc, "tree_after"),
        jr.text_or_none(doc, "conflict_tree"),
        jr.texts(doc, "files"),
        jr.flag(doc, "shown"),
        _evidence(doc),
        _hints(doc),
        # A state written before resolutions were remembered has none to remember.
        tuple(_region(r) for r in jr.objects(doc, "regions")) if "regions" in doc else (),
        # A state written before it was recorded: not known, so not said.
        jr.flag(doc, "rewritten") if "rewritten" in doc else False,
        jr.flag(doc, "added_present") if "added_present" in doc else False,
    )


def to_doc(s: RebaseState) -> dict[str, Any]:
    """The JSON form of a rebase state (version 1)."""
    return {
        "version": jr.VERSION,
        "old_base": s.old_base,
        "onto": s.onto,
        "onto_ref": s.onto_ref,
        "guards": list(s.guards),
        "fuzz": s.fuzz,
        "orig_branch": s.orig_branch,
        "orig_head": s.orig_head,
        "stack_before": None if s.stack_before is None else stack_record.to_doc(s.stack_before),
        "branch": s.branch,
        "branch_before": s.branch_before,
        "entries": list(s.entries),
        # A done patch is kept flat, its outcome beside its trees, as before versions.
        "done": [
            outcome_doc(d.patch) | {"tree_before": d.tree_before, "tree_after": d.tree_after}
            for d in s.done
        ],
        "head": s.head,
        "current": None if s.current is None else _stopped_doc(s.current),
        "subjects": dict(s.subjects),
        "exec": s.exec_cmd,
        "exec_each": s.exec_each,
        "reorder": None
        if s.reorder is None
        else {
            "verb": s.reorder.verb,
            "name": s.reorder.name,
            "order": list(s.reorder.order),
            "applied": s.reorder.applied,
            "anchor": s.reorder.anchor,
            "after": s.reorder.after,
        },
        "untrusted": [c.to_doc() for c in s.untrusted],
        "accept": list(s.accept),
    }


def from_doc(doc: dict[str, Any]) -> RebaseState:
    """The rebase state a JSON form describes; `jsonrecord.StateFormatError` if none."""
    if doc.get("phase", "running") != "running":
        # Written by a patchq that finished a rebase outside the journal.
        raise jr.StateFormatError(f"'phase' is {doc.get('phase')!r}")
    before = jr.obj_or_none(doc, "stack_before")
    current = jr.obj_or_none(doc, "current")
    reorder = jr.obj_or_none(doc, "reorder") if "reorder" in doc else None
    return RebaseState(
        jr.text(doc, "old_base"),
        jr.text(doc, "onto"),
        jr.text(doc, "onto_ref"),
        jr.texts(doc, "guards"),
        jr.integer(doc, "fuzz"),
        jr.text_or_none(doc, "orig_branch"),
        jr.text_or_none(doc, "orig_head"),
        None if before is None else stack_record.from_doc(before),
        jr.text(doc, "branch"),
        jr.text_or_none(doc, "branch_before"),
        jr.texts(doc, "entries"),
        tuple(
            DonePatch(_outcome(d), jr.text(d, "tree_before"), jr.text(d, "tree_after"))
            for d in jr.objects(doc, "done")
        ),
        jr.text(doc, "head"),
        None if current is None else _stopped(current),
        jr.pairs(doc, "subjects"),
        jr.text_or_none(doc, "exec", required=False) or "",
        jr.text_or_none(doc, "exec_each", required=False) or "",
        None
        if reorder is None
        else Reorder(
            jr.text(reorder, "verb"),
            jr.text(reorder, "name"),
            jr.texts(reorder, "order"),
            jr.integer(reorder, "applied"),
            jr.text_or_none(reorder, "anchor", required=False) or "",
            bool(jr.flag_or_none(reorder, "after")),
        ),
        _untrusted(doc),
        jr.texts(doc, "accept") if "accept" in doc else (),
    )


def _untrusted(doc: dict[str, Any]) -> tuple[Configured, ...]:
    if "untrusted" not in doc:
        return ()
    return tuple(
        Configured(jr.text(c, "key"), jr.text(c, "command"), jr.flag(c, "trusted"))
        for c in jr.objects(doc, "untrusted")
    )


def exec_doc(x: ExecRun) -> dict[str, Any]:
    """The JSON form of one run of the `--exec` command (records, `rebase --json`)."""
    return {"command": x.command, "ok": x.ok, "code": x.code, "patch": x.patch, "note": x.note}


def _exec_run(doc: dict[str, Any]) -> ExecRun:
    return ExecRun(
        jr.text(doc, "command"),
        jr.flag(doc, "ok"),
        jr.integer(doc, "code"),
        jr.text_or_none(doc, "patch"),
        jr.text(doc, "note"),
    )


def _texts_of(pairs: tuple[tuple[str, bytes], ...]) -> dict[str, str]:
    # Patches are bytes; JSON holds text. surrogateescape carries any byte through.
    return {k: v.decode("utf-8", "surrogateescape") for k, v in pairs}


def _bytes_of(doc: dict[str, Any], key: str) -> tuple[tuple[str, bytes], ...]:
    return tuple((k, v.encode("utf-8", "surrogateescape")) for k, v in jr.pairs(doc, key))


def last_to_doc(r: LastRebase) -> dict[str, Any]:
    """The JSON form of the last rebase's record (version 1)."""
    return {
        "version": jr.VERSION,
        "from": r.base,
        "onto": r.onto,
        "onto_ref": r.onto_ref,
        "patches": [outcome_doc(p) for p in r.patches],
        "subjects": dict(r.subjects),
        "old": _texts_of(r.old),
        "new": _texts_of(r.new),
        "exec": r.exec_cmd,
        "exec_each": r.exec_each,
        "exec_runs": [exec_doc(x) for x in r.exec_runs],
        "untrusted": [c.to_doc() for c in r.untrusted],
    }


def last_from_doc(doc: dict[str, Any]) -> LastRebase:
    """The record a JSON form describes; `jsonrecord.StateFormatError` if none."""
    return LastRebase(
        jr.text(doc, "from"),
        jr.text(doc, "onto"),
        jr.text(doc, "onto_ref"),
        tuple(_outcome(p) for p in jr.objects(doc, "patches")),
        jr.pairs(doc, "subjects"),
        _bytes_of(doc, "old"),
        _bytes_of(doc, "new"),
        jr.text_or_none(doc, "exec", required=False) or "",
        jr.text_or_none(doc, "exec_each", required=False) or "",
        tuple(_exec_run(x) for x in jr.objects(doc, "exec_runs")) if "exec_runs" in doc else (),
        _untrusted(doc),
    )


# --- files -------------------------------------------------------------------------------


def read_state(path: Path) -> RebaseState | None:
    """The rebase state at `path`, or None when no rebase is in progress."""
    # --abort cannot help here: it needs this very file to know what to restore.
    return jr.read(
        path,
        from_doc,
        "rebase state",
        "patchq cannot undo the rebase without it: move it aside, "
        "and `git reflog` shows where the stack branch was",
    )


def state_bytes(state: RebaseState) -> bytes:
    """The file form of `state`, for a journal to write."""
    return jr.dumps(to_doc(state))


def write_state(path: Path, state: RebaseState) -> None:
    """Record `state` at `path` (atomically)."""
    atomic_write(path, state_bytes(state))


def read_last(path: Path) -> LastRebase | None:
    """The last rebase's record at `path`, or None when there is none on this machine."""
    return jr.read(
        path,
        last_from_doc,
        "record of the last rebase",
        "`patchq report` cannot read it; the next `patchq rebase` "
        "rewrites it (or delete it to report from series.lock "
        "alone)",
    )


def last_bytes(record: LastRebase) -> bytes:
    """The file form of the last rebase's record, for a journal to write."""
    return jr.dumps(last_to_doc(record))


@dataclass(frozen=True, slots=True)
class ExecProgress:
    """`--exec-each` under way: the commands, the whole rebased stack the runs walk, the
    runs finished, and the patch whose run is going on: what `recover` and `rebase
    --continue` need to go on after a kill."""

    cmd: str
    each: str
    stack: Stack
    runs: tuple[ExecRun, ...]
    patch: str | None


def exec_progress_bytes(p: ExecProgress) -> bytes:
    doc = {
        "version": 1,
        "exec": p.cmd,
        "exec_each": p.each,
        "stack": stack_record.to_doc(p.stack),
        "runs": [exec_doc(x) for x in p.runs],
        "patch": p.patch,
    }
    return jr.dumps(doc)


def _exec_progress(doc: dict[str, Any]) -> ExecProgress:
    return ExecProgress(
        jr.text(doc, "exec"),
        jr.text(doc, "exec_each"),
        stack_record.from_doc(jr.obj(doc, "stack")),
        tuple(_exec_run(x) for x in jr.objects(doc, "runs")),
        jr.text_or_none(doc, "patch"),
    )


def read_exec_progress(path: Path) -> ExecProgress | None:
    """The `--exec-each` record at `path`, if there is one."""
    return jr.read(
        path,
        _exec_progress,
        "record of the --exec-each runs",
        "remove it; `patchq push -a` checks the whole stack out again",
    )
