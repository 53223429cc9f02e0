"""`series.lock`: the pinned upstream base, the resulting tree, and each patch's record.

JSON with indent 2, sorted keys and a trailing newline (DESIGN §2), so it diffs well in
review and two machines that apply the same series write the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from patchq.core.errors import BadInputError
from patchq.core.status import GONE, OUTCOMES, Method

VERSION = 1


@dataclass(frozen=True, slots=True)
class PatchRecord:
    """One patch in the lock: its file hash, what the last rebase did, and the drift."""

    name: str
    sha256: str
    rebase: str = "new"
    drift: tuple[str, ...] = ()
    # The placement method of each hunk in the last rebase (DESIGN §4); written only
    # when some hunk needed more than exact or offset placement.
    methods: tuple[str, ...] = ()
    # Why the last rebase took the patch as upstreamed: {"kind": …, "commit": …}.
    evidence: Mapping[str, str] | None = None
    # The review hints of the last rebase (DESIGN §5): text for a person.
    hints: tuple[str, ...] = ()
    # `rebase --exec-each`: the command's run with this patch (and those below) applied,
    # {"command": …, "ok": bool, "code": N}.
    exec: Mapping[str, Any] | None = None
    # Hunks `apply` placed with fuzz, or where another place matched as well: as GNU
    # patch placed them on `base` (DESIGN §4 step 3), {"file", "hunk" (1-based), "line",
    # "fuzz", "passed_over": [lines]} each. `verify` and a rebase's pinned preimages
    # re-place them the same way.
    placed: tuple[Mapping[str, Any], ...] = ()
    # The proposed methods (DESIGN §4.1) the last rebase took without a stop because the
    # person accepted them (`rebase --accept`, `accept` in patchq.toml): to review.
    accepted: tuple[str, ...] = ()

    def to_doc(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.name,
            "sha256": self.sha256,
            "rebase": self.rebase,
            "drift": list(self.drift),
        }
        if any(m not in (Method.EXACT, Method.OFFSET) for m in self.methods):
            doc["methods"] = list(self.methods)
        if self.evidence is not None:
            doc["evidence"] = dict(self.evidence)
        if self.hints:
            doc["hints"] = list(self.hints)
        if self.exec is not None:
            doc["exec"] = dict(self.exec)
        if self.placed:
            doc["placed"] = [dict(x) for x in self.placed]
        if self.accepted:
            doc["accepted"] = list(self.accepted)
        return doc

    @property
    def fuzz(self) -> int:
        """The most fuzz a recorded placement needed (0: none)."""
        return max((int(x.get("fuzz", 0)) for x in self.placed), default=0)


@dataclass(frozen=True, slots=True)
class Lock:
    base: str
    # None: written where the base's whole tree was not at hand (only `files` is known).
    result_tree: str | None
    files: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    guards: tuple[str, ...] = ()
    patches: tuple[PatchRecord, ...] = ()
    last_rebase: Mapping[str, str] | None = None
    # `rebase --exec`: the command's run on the whole rebased series (`result_tree`).
    exec: Mapping[str, Any] | None = None

    @property
    def fuzz(self) -> int:
        """The fuzz the pinned series was applied with, as far as its hunks needed any:
        re-applied with it, GNU placement puts every hunk where `apply` put it."""
        return max((p.fuzz for p in self.patches), default=0)

    def record(self, name: str) -> PatchRecord | None:
        for p in self.patches:
            if p.name == name:
                return p
        return None

    def to_json(self) -> bytes:
        doc: dict[str, Any] = {
            "version": VERSION,
            "base": self.base,
            "result_tree": self.result_tree,
            "files": {k: {"base": b, "result": r} for k, (b, r) in sorted(self.files.items())},
            "guards": sorted(self.guards),
            "patches": [p.to_doc() for p in self.patches],
            "last_rebase": dict(self.last_rebase) if self.last_rebase is not None else None,
        }
        if self.exec is not None:
            doc["exec"] = dict(self.exec)
        # A non-UTF-8 path (held as surrogates) is written as a JSON `\udcXX` escape, which
        # json.loads turns back into the same surrogate: the file stays UTF-8 and exact.
        text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        return text.encode("utf-8", "backslashreplace")

    @classmethod
    def from_json(cls, data: bytes, where: str = "series.lock") -> Lock:
        try:
            doc = json.loads(data)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            if doc.get("version") != VERSION:
                raise ValueError(f"unsupported version {doc.get('version')!r}")
            files = {str(k): (v.get("base"), v.get("result")) for k, v in doc["files"].items()}
            patches = tuple(
                PatchRecord(
                    str(p["name"]),
                    str(p["sha256"]),
                    str(p.get("rebase", "new")),
                    tuple(str(d) for d in p.get("drift", [])),
                    tuple(str(m) for m in p.get("methods", [])),
                    {str(k): str(v) for k, v in p["evidence"].items()}
                    if p.get("evidence")
                    else None,
                    tuple(str(x) for x in p.get("hints", [])),
                    _exec_record(p.get("exec")),
                    tuple(_placement(x) for x in p.get("placed", [])),
                    tuple(str(m) for m in p.get("accepted", [])),
                )
                for p in doc["patches"]
            )
            for p in patches:
                if p.rebase not in OUTCOMES:
                    raise ValueError(f"unknown rebase outcome {p.rebase!r} for {p.name}")
            last = doc.get("last_rebase")
            tree = doc["result_tree"]
            return cls(
                str(doc["base"]),
                None if tree is None else str(tree),
                files,
                tuple(str(g) for g in doc.get("guards", [])),
                patches,
                {str(k): str(v) for k, v in last.items()} if last else None,
                _exec_record(doc.get("exec")),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise BadInputError(
                f"cannot read the lock: {e}",
                where,
                "restore it from version control or re-run `patchq apply`",
            ) from None


def _exec_record(doc: Any) -> dict[str, Any] | None:
    """A recorded run of the `--exec` command: {"command": str, "ok": bool, "code": int}."""
    if doc is None:
        return None
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("command"), str)
        or not isinstance(doc.get("ok"), bool)
        or not isinstance(doc.get("code", 0), int)
    ):
        raise ValueError(f"malformed exec record {doc!r}")
    return {"command": doc["command"], "ok": doc["ok"], "code": doc.get("code", 0)}


def placement_text(x: Mapping[str, Any]) -> str:
    """One hunk placement `series.lock` records, for a person (lint, status)."""
    how = f"with fuzz {x['fuzz']}" if x["fuzz"] else "exactly"
    text = f"{x['file']} hunk #{x['hunk']} placed {how} at line {x['line']}"
    passed = x.get("passed_over") or []
    if passed:
        lines = ", ".join(str(n) for n in passed[:5]) + (", …" if len(passed) > 5 else "")
        text += f", passing over the match{'es' if len(passed) > 1 else ''} at line {lines}"
    return text + " (GNU patch's placement, kept by series.lock)"


def _placement(doc: Any) -> dict[str, Any]:
    """A recorded GNU placement of a hunk (see `PatchRecord.placed`)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("file"), str):
        raise ValueError(f"malformed placement record {doc!r}")
    out: dict[str, Any] = {"file": doc["file"]}
    for key in ("hunk", "line", "fuzz"):
        if not isinstance(doc.get(key), int):
            raise ValueError(f"malformed placement record {doc!r}")
        out[key] = doc[key]
    passed = doc.get("passed_over", [])
    if not isinstance(passed, list) or not all(isinstance(n, int) for n in passed):
        raise ValueError(f"malformed placement record {doc!r}")
    out["passed_over"] = list(passed)
    return out


def keeps_exec(previous: Lock, lock: Lock) -> bool:
    """Whether `previous`'s records of `--exec` runs still hold for `lock`: the same base,
    the same patches with the same bytes in the same order, the same result."""

    def applied(k: Lock) -> list[tuple[str, str]]:
        return [(p.name, p.sha256) for p in k.patches if p.rebase not in GONE]

    return (previous.base, previous.result_tree, applied(previous)) == (
        lock.base,
        lock.result_tree,
        applied(lock),
    )


def without_exec(lock: Lock) -> Lock:
    """The lock with no record of `--exec` runs: what a new application of the series
    onto another base or tree must write, since those runs were of another tree."""
    return replace(lock, exec=None, patches=tuple(replace(p, exec=None) for p in lock.patches))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def records_for(
    names_and_data: Sequence[tuple[str, bytes]], previous: Lock | None, order: Sequence[str] = ()
) -> tuple[PatchRecord, ...]:
    """Patch records for a fresh apply: keep what the previous lock said of each patch, and
    its records of patches the last rebase took out of the series (upstreamed, dropped).

    Records follow `order` (the series file's lines, comments included, so a patch that
    left the series keeps its place), else the order given."""
    out = []
    names = set()
    for name, data in names_and_data:
        names.add(name)
        old = previous.record(name) if previous else None
        if old is not None and old.rebase not in GONE:
            # Placements were of the last application; the caller records this one's.
            out.append(replace(old, sha256=sha256(data), placed=()))
        else:
            out.append(PatchRecord(name, sha256(data)))
    if previous is not None:
        out.extend(p for p in previous.patches if p.rebase in GONE and p.name not in names)
    if order:
        where: dict[str, int] = {}
        for i, line in enumerate(order):
            for word in line.split():
                where.setdefault(word, i)
        out.sort(key=lambda rec: where.get(rec.name, len(order)))  # stable for ties
    return tuple(out)
