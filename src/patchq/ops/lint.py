"""`lint`: check a patch repo on its own, without a target.

Errors (exit 4) make the series unusable: a missing or unparsable patch, a duplicate, a
malformed guard or strip level, an unsafe name. Warnings (exit 1) are worth a look: a
patch without a header, a patch that needed a normalisation to be read as GNU patch
reads it (whitespace damage, a lone `+++` line, …), a lock whose hashes no longer
match, a hunk `apply` placed with fuzz or past another match (GNU patch's placement, kept
by the lock), a file in patches/ that no series line names, two patches that make the same
change (core.sameness: applied in order, the second fails). The lock's records of patches the
last rebase upstreamed or dropped are expected, not findings, so `patchq lint && git
commit` works right after a rebase. Pure over the files it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from patchq.core.errors import BadInputError, PatchqError
from patchq.core.lock import Lock, placement_text, sha256
from patchq.core.patch import parse
from patchq.core.resolutions import parse as parse_resolution
from patchq.core.sameness import Key, change_key
from patchq.core.series import Series
from patchq.core.status import GONE
from patchq.store.patchrepo import LOCK, PATCHES, SERIES, Config, PatchRepo, read_resolutions

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    level: str
    where: str
    what: str

    def line(self) -> str:
        return f"{self.where}: {self.level}: {self.what}"


def lint(root: Path) -> list[Finding]:
    """Every finding for the patch repo at `root`, errors first within each file."""
    out: list[Finding] = []
    series_path = root / SERIES
    if not series_path.is_file():
        return [Finding(ERROR, str(series_path), "no series file")]
    try:
        config = (
            Config.parse(
                (root / "patchq.toml").read_text(encoding="utf-8"), str(root / "patchq.toml")
            )
            if (root / "patchq.toml").is_file()
            else Config()
        )
    except BadInputError as err:
        out.append(Finding(ERROR, err.where or "patchq.toml", err.what))
        config = Config()
    try:
        series = Series.parse(
            series_path.read_text(encoding="utf-8", errors="surrogateescape"), SERIES
        )
    except BadInputError as err:
        return out + [Finding(ERROR, err.where or SERIES, err.what)]
    repo = PatchRepo(root, config, series)
    hashes: dict[str, str] = {}
    changes: dict[Key, str] = {}  # what each patch changes: the first patch making it
    for e in series.patches:
        assert e.name is not None
        where = f"{PATCHES}/{e.name}"
        try:
            data = repo.read_patch(e.name)
        except PatchqError as err:
            out.append(Finding(ERROR, f"{SERIES}:{e.lineno}", err.what))
            continue
        hashes[e.name] = sha256(data)
        try:
            patch = parse(data, where, e.strip_level(config.strip))
        except PatchqError as err:
            out.append(Finding(ERROR, err.where or where, err.what))
            continue
        if not patch.sections:
            out.append(Finding(WARNING, where, "contains no diff"))
        key = change_key(patch)
        if key is not None and key in changes:
            out.append(
                Finding(
                    WARNING,
                    where,
                    f"makes the same change as {PATCHES}/{changes[key]} "
                    "(applied in order, the second copy fails): delete one",
                )
            )
        elif key is not None:
            changes[key] = e.name
        if not patch.header.strip():
            out.append(
                Finding(
                    WARNING,
                    where,
                    "has no header: say what it does and why "
                    "(DEP-3 Description/Author/Origin/Forwarded, or a mail header)",
                )
            )
        # What GNU patch would read but the patch needed repaired (core.patch).
        for n in patch.normalisations:
            out.append(Finding(WARNING, f"{where}:{n.line}", n.message()))
        for s in patch.sections:
            if s.candidates:
                names = ", ".join(repr(c) for c in s.candidates)
                out.append(
                    Finding(
                        WARNING,
                        f"{where}:{s.lineno}",
                        f"the names {names} differ; the one that exists in the target is "
                        "patched, as GNU patch does",
                    )
                )
    lock_path = root / LOCK
    if lock_path.is_file():
        try:
            lock = Lock.from_json(lock_path.read_bytes(), LOCK)
        except BadInputError as err:
            out.append(Finding(ERROR, LOCK, err.what))
        else:
            for rec in lock.patches:
                if rec.name not in hashes:
                    # A patch the last rebase found upstream or a person dropped keeps its
                    # record in the lock on purpose: the review of that rebase names it.
                    if series.find(rec.name) is None and rec.rebase not in GONE:
                        out.append(
                            Finding(WARNING, LOCK, f"{rec.name} is locked but not in the series")
                        )
                    continue
                for x in rec.placed:
                    out.append(Finding(WARNING, f"{PATCHES}/{rec.name}", placement_text(x)))
                if hashes[rec.name] != rec.sha256:
                    out.append(
                        Finding(
                            WARNING,
                            f"{PATCHES}/{rec.name}",
                            "changed since series.lock was written (sha256 differs)",
                        )
                    )
    listed = set(series.names())
    pdir = root / PATCHES
    if pdir.is_dir():
        for f in sorted(pdir.rglob("*")):
            rel = f.relative_to(pdir).as_posix()
            if f.is_file() and rel not in listed and not rel.startswith(".") and rel != "series":
                commented = any(rel in (x.raw or "") for x in series.entries if x.name is None)
                if not commented:
                    out.append(Finding(WARNING, f"{PATCHES}/{rel}", "not named in series"))
    return out + _resolutions(root)


def _resolutions(root: Path) -> list[Finding]:
    """`resolutions/`: each file must parse (an error: rebase and check would refuse
    it); one named otherwise than its conflict's key is worth a look (its sides were
    edited, so it answers another conflict than its name says)."""
    try:
        files = read_resolutions(root)
    except BadInputError as err:
        return [Finding(ERROR, err.where or "resolutions", err.what)]
    out = []
    for name, where, data in files:
        try:
            r = parse_resolution(data, where)
        except BadInputError as err:
            out.append(Finding(ERROR, err.where or where, err.what))
            continue
        if r.filename != name:
            out.append(
                Finding(
                    WARNING,
                    where,
                    f"its sides are those of {r.filename}: was a side edited? "
                    "(only the resolution's lines are meant to be)",
                )
            )
    return out


def exit_code(findings: list[Finding]) -> int:
    if any(f.level == ERROR for f in findings):
        return 4
    return 1 if findings else 0
