"""`lint`: check a patch repo on its own, without a target (the verb and its checks).

Errors (exit 4) make the series unusable: a missing or unparsable patch, a duplicate, a
malformed guard or strip level, an unsafe name. Warnings (exit 1) are worth a look: a
patch without a header or without an author patchq can read, a patch that needed a
normalisation to be read as GNU patch reads it (whitespace damage, a lone `+++` line, …),
a lock whose hashes no longer match, a hunk `apply` placed with fuzz or past another
match (GNU patch's placement, kept by the lock), a file in patches/ that no series line names, two
patches that make the same change (core.sameness: applied in order, the second fails).
The lock's records of patches the last rebase upstreamed or dropped are expected, not
findings, so `patchq lint && git commit` works right after a rebase. A repo whose
ecosystem carries patches without headers, or made with `diff -u a.c.orig a.c`, says so
once (`lint-allow` in patchq.toml, or `lint --allow`), and `patchq lint && git commit`
works there too. Pure over the files it is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchq.core.errors import BadInputError, PatchqError
from patchq.core.header import header_info
from patchq.core.lock import Lock, placement_text, sha256
from patchq.core.patch import parse
from patchq.core.resolutions import parse as parse_resolution
from patchq.core.sameness import Key, change_key
from patchq.core.series import Series
from patchq.core.status import GONE
from patchq.core.text import shortened
from patchq.formats import recipes
from patchq.stack import recipe
from patchq.stack.context import Context
from patchq.store import trust
from patchq.store.files import read_regular
from patchq.store.patchrepo import (
    LINT_ALLOW,
    LOCK,
    PATCHES,
    SERIES,
    Config,
    PatchRepo,
    read_resolutions,
)
from patchq.store.statedir import JOURNAL, PATCH_REPO_HOME, foreign, read_journal

# A note names something worth knowing that is no fault: it leaves the exit code alone.
ERROR, WARNING, NOTE = "error", "warning", "note"


@dataclass(frozen=True, slots=True)
class Finding:
    level: str
    where: str
    what: str

    def line(self) -> str:
        return f"{self.where}: {self.level}: {self.what}"


# The backup suffixes `diff -u a.c.orig a.c` leaves on a section's old name.
BACKUP_SUFFIXES = (".orig", ".old", ".bak", ".original", "~")


def backup_names(names: Sequence[str]) -> bool:
    """Whether differing section names are one name with and without a backup suffix
    (`a.c.orig` and `a.c`): the way conda-forge and vcpkg recipes' patches are made."""
    bare = set()
    for name in names:
        for suffix in BACKUP_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                break
        bare.add(name)
    return len(bare) == 1


def findings(root: Path, allow: Iterable[str] = ()) -> list[Finding]:
    """Every finding for the patch repo at `root`, errors first within each file; the
    kinds in `allow` (and in the config's `lint-allow`) are not findings."""
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
    out += _commands(root, config)
    out += _target(root, config)
    out += _journal(root)
    try:
        series = Series.parse(
            series_path.read_text(encoding="utf-8", errors="surrogateescape"), SERIES
        )
    except BadInputError as err:
        return out + [Finding(ERROR, err.where or SERIES, err.what)]
    repo = PatchRepo(root, config, series)
    out += _recipe(root, config, series)
    allowed = set(allow) | set(config.lint_allow)
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
        out.extend(_authorship(patch.header, where, allowed))
        # What GNU patch would read but the patch needed repaired (core.patch).
        for n in patch.normalisations:
            out.append(Finding(WARNING, f"{where}:{n.line}", n.message()))
        for s in patch.sections:
            if s.candidates and not ("orig-names" in allowed and backup_names(s.candidates)):
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
    # The patch repo's own files, where a link puts them in patches/ (Debian's `series ->
    # debian/patches/series` with `patches -> debian/patches`): not stray patches.
    own = {(root / n).resolve() for n in (SERIES, LOCK, "patchq.toml")}
    if pdir.is_dir():
        for f in sorted(pdir.rglob("*")):
            rel = f.relative_to(pdir).as_posix()
            if f.resolve() in own:
                continue
            if f.is_file() and rel not in listed and not rel.startswith(".") and rel != "series":
                commented = any(rel in (x.raw or "") for x in series.entries if x.name is None)
                if not commented:
                    out.append(Finding(WARNING, f"{PATCHES}/{rel}", "not named in series"))
    return out + _resolutions(root)


def _recipe(root: Path, config: Config, series: Series) -> list[Finding]:
    """A recipe (`recipe` in patchq.toml) that disagrees with the active series, or
    holds what patchq cannot rewrite safely: warnings at its line."""
    rel = config.recipe
    if rel is None or (root / rel).resolve() == (root / SERIES).resolve():
        return []
    try:
        text = read_regular(root / rel).decode("utf-8", "surrogateescape")
    except OSError:
        return [Finding(ERROR, rel, "the recipe patchq.toml names cannot be read")]
    try:
        found = recipes.read(rel, text, recipe.prefix(root, rel))
    except BadInputError as err:
        return [Finding(ERROR, err.where or rel, err.what)]
    names = [e.name for e in series.active(config.guards) if e.name is not None]
    out = [
        Finding(WARNING, f"{rel}:{p.line}", f"not in step with the series: {p.what}")
        for p in recipes.disagreements(found, names)
    ]
    return out + [
        Finding(WARNING, f"{rel}:{p.line}", f"patchq cannot keep this list in step: {p.what}")
        for p in found.problems
    ]


def _authorship(header: bytes, where: str, allowed: set[str]) -> list[Finding]:
    """A patch with no header, or a header naming no author patchq can read (DEP-3
    `Author:`/`From:`, a mail `From:`, hg's `# User`, git show's `Author:`): its commits
    and `export --mbox` would credit the person running patchq instead."""
    if not header.strip():
        if "no-header" in allowed:
            return []
        return [
            Finding(
                WARNING,
                where,
                "has no header: say what it does and why "
                "(DEP-3 Description/Author/Origin/Forwarded, or a mail header)",
            )
        ]
    info = header_info(header)
    if info.author_name or info.author_email or "no-author" in allowed:
        return []
    return [
        Finding(
            WARNING,
            where,
            "names no author patchq can read (DEP-3 `Author:`, or a mail `From:`): "
            "its commits and `export --mbox` credit your git identity instead",
        )
    ]


def _commands(root: Path, config: Config) -> list[Finding]:
    """Each command patchq.toml names (`exec`, `exec-each`), and whether the person
    trusts it: `rebase` runs only a trusted one (core/trust.py)."""
    try:
        marks = trust.read()
    except BadInputError as err:
        return [Finding(WARNING, err.where or "trust file", err.what)]
    return [
        Finding(
            NOTE,
            "patchq.toml",
            f"{c.key} = `{c.command}`: "
            + (
                "trusted, `rebase` runs it"
                if c.trusted
                else "not trusted, `rebase` will not run it; `patchq trust` allows it"
            ),
        )
        for c in trust.configured(root.resolve(), config, marks)
    ]


def _target(root: Path, config: Config) -> list[Finding]:
    """The checkout `target` points patchq at, where it is not the layout `init --target`
    makes (inside the patch repo or beside it): a patch repo's files (a clone's) choose
    it, so it is named. It needs no trust — patchq runs nothing there, refuses to move
    over uncommitted work, and every change it makes is in the journal and the reflog —
    and `check` names it every time."""
    if config.target is None:
        return []
    home = root.resolve()
    where = (home / config.target).resolve()
    if where == home or home.parent in where.parents or where == home.parent:
        return []
    return [
        Finding(
            NOTE,
            "patchq.toml",
            f"target = {repr(shortened(config.target))}: stack commands change the git checkout "
            f"at {where}, outside this patch repo's folder; `--target DIR` overrides it",
        )
    ]


def _journal(root: Path) -> list[Finding]:
    """A journal in `.patchq/` that this machine did not write (it came with a clone or a
    tarball), or one patchq does not open (a symlink, a FIFO): every command that writes
    refuses over it, and none replays it."""
    home = root / PATCH_REPO_HOME
    try:
        found = read_journal(home)
    except BadInputError as err:
        return [Finding(ERROR, err.where or str(home), err.what)]
    if found is None or not found[1]:
        return []
    alien = foreign(home)
    return [Finding(ERROR, f"{PATCH_REPO_HOME}/{JOURNAL}", f"{alien.what} — {alien.hint}")]


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
    return 1 if any(f.level == WARNING for f in findings) else 0


@dataclass(frozen=True, slots=True)
class LintOutcome:
    """Every finding, errors first within each file."""

    findings: tuple[Finding, ...]

    @property
    def exit_code(self) -> int:
        """0 clean, 1 warnings only, 4 errors."""
        return exit_code(list(self.findings))


def lint(ctx: Context, cwd: Path, allow: Sequence[str] = ()) -> LintOutcome:
    """Lint the patch repo given (`--dir`), else the nearest one up from `cwd`, accepting
    the `allow` kinds (`LINT_ALLOW`, each value a comma-separated list) besides the
    config's. The repo is not opened as commands open it: a broken one is what lint is
    for."""
    kinds = [k.strip() for value in allow for k in value.split(",") if k.strip()]
    unknown = [a for a in kinds if a not in LINT_ALLOW]
    if unknown:
        raise BadInputError(
            f"lint --allow {unknown[0]}: no such kind",
            None,
            "one of " + ", ".join(LINT_ALLOW),
        )
    root = ctx.dir if ctx.dir is not None else PatchRepo.find(cwd)
    return LintOutcome(tuple(findings(root, kinds)))
