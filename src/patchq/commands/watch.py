"""`check --watch`: report only what changed since the last watch, against every upstream
ref a fork tracks (nightly, beta, stable, ESR).

A watch keeps `watch.json` in the patch repo: each (upstream ref, patch) the last run
found not clean, with what it found (`offset`, `merge`, `upstreamed`, `conflict`,
`missing`, or `review`: a proposal `rebase` would stop at). A run compares the new
checks with it and reports what is new (a finding not recorded, or a different one),
what is fixed (recorded, clean now) and how many are still as recorded (counted, not
repeated); it then records the new findings. Its exit code is the worst new finding's:
0 nothing new, 1 new drift `rebase` handles alone, 3 a new stop.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from patchq.core.errors import BadInputError
from patchq.core.status import CLEAN, CONFLICT, MISSING
from patchq.rebase.check import CheckOutcome
from patchq.rebase.replay import for_review
from patchq.stack.context import Context
from patchq.store.files import atomic_write, read_optional

WATCH = "watch.json"
VERSION = 1
REVIEW = "review"
_STOPS = (CONFLICT, MISSING, REVIEW)

Findings = dict[str, dict[str, str]]  # upstream ref -> patch -> what was found


@dataclass(frozen=True, slots=True)
class Change:
    """One finding that is new or fixed: the upstream ref, the patch, what is found now
    (None: fixed) and what was recorded before (None: new)."""

    ref: str
    patch: str
    now: str | None
    before: str | None

    def to_doc(self) -> dict[str, str | None]:
        return {"ref": self.ref, "patch": self.patch, "now": self.now, "before": self.before}


@dataclass(frozen=True, slots=True)
class WatchOutcome:
    """What a watch found: the refs checked, the new and fixed findings, how many are
    still as recorded, and the state file."""

    refs: tuple[str, ...]
    new: tuple[Change, ...]
    fixed: tuple[Change, ...]
    still: int
    path: str
    reports: tuple[CheckOutcome, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        if any(c.now in _STOPS for c in self.new):
            return 3
        return 1 if self.new else 0


def findings(report: CheckOutcome) -> dict[str, str]:
    """What one check found per patch, for the patches that are not clean."""
    out: dict[str, str] = {}
    for p in report.patches:
        if p.status in (CONFLICT, MISSING):
            out[p.name] = str(p.status)
        elif for_review(p, report.accept):
            out[p.name] = REVIEW
        elif p.status != CLEAN or p.renames or p.hints:
            out[p.name] = str(p.status)
    return out


def _read(ctx: Context) -> Findings:
    path = ctx.repo().root / WATCH
    data = read_optional(path)
    if data is None:
        return {}
    try:
        doc = json.loads(data)
        seen = doc["seen"]
        if doc.get("version") != VERSION or not isinstance(seen, dict):
            raise ValueError
        return {
            str(ref): {str(p): str(f) for p, f in patches.items()} for ref, patches in seen.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BadInputError(
            "not a watch state patchq wrote", str(path), f"remove {WATCH} to start the watch anew"
        ) from None


def watch(ctx: Context, reports: Sequence[CheckOutcome]) -> WatchOutcome:
    """Compare `reports` (one a ref) with the last watch's findings, record the new ones."""
    before = _read(ctx)
    now: Findings = {r.onto_ref: findings(r) for r in reports}
    new: list[Change] = []
    fixed: list[Change] = []
    still = 0
    for ref, found in now.items():
        old = before.get(ref, {})
        for patch, what in found.items():
            if old.get(patch) == what:
                still += 1
            else:
                new.append(Change(ref, patch, what, old.get(patch)))
        fixed += [Change(ref, p, None, w) for p, w in old.items() if p not in found]
    # Refs this run did not check keep what was recorded for them.
    kept = {ref: found for ref, found in before.items() if ref not in now} | now
    repo = ctx.repo()
    doc = {"version": VERSION, "seen": {ref: dict(sorted(f.items())) for ref, f in kept.items()}}
    path = repo.root / WATCH
    atomic_write(path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode(), repo.root)
    return WatchOutcome(tuple(now), tuple(new), tuple(fixed), still, str(path), tuple(reports))
