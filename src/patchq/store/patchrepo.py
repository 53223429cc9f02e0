"""The patch repo on disk: `patchq.toml`, `series`, `patches/` and `series.lock`.

Finding it, reading it, and writing it back atomically. Paths inside `patches/` named by
the series are confined to that folder, so a hostile series cannot make patchq read or
write elsewhere.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from patchq.core.errors import BadInputError
from patchq.core.paths import check_name, name_problem
from patchq.core.series import Series
from patchq.core.tiers import parse_accept, valid_names
from patchq.store.files import atomic_write, confine, escaping_link, read_optional, read_regular
from patchq.store.statedir import crashpoint

if TYPE_CHECKING:
    from patchq.core.lock import Lock
    from patchq.core.resolutions import Book, Remembered

# The lock, the patch styles and the resolutions (which load the patch model) are loaded
# where they are used: reading `patchq.toml` and `series` alone — what shell completion
# does on each TAB — loads none of them.
CONFIG, SERIES, PATCHES, LOCK = "patchq.toml", "series", "patches", "series.lock"
RESOLUTIONS = "resolutions"  # core.resolutions.FOLDER (tests/cli/test_completion.py checks)
RETIRED = ("remove", "move")  # the values of `retired` in patchq.toml
# What `lint` may be told to accept (`lint-allow` in patchq.toml, `lint --allow`): patches
# with no header, a header naming no author, sections whose old name is the new one plus
# a backup suffix (`--- a.c.orig` / `+++ a.c`, as `diff -u a.c.orig a.c` writes them).
LINT_ALLOW = ("no-header", "no-author", "orig-names")


def own_paths(patch_root: Path, target_root: Path) -> list[str]:
    """The patch repo's files inside the target (when the queue lives in the upstream
    checkout, quilt-style), as target paths: changes to them are not the user's edits.
    A name that is a symlink inside the patch repo (Debian's `series ->
    debian/patches/series`) stands for the file it points to as well."""
    root, target = patch_root.resolve(), target_root.resolve()
    out = []
    for name in (CONFIG, SERIES, LOCK, PATCHES, RESOLUTIONS):
        places = [root / name]
        if places[0].is_symlink():
            places.append(places[0].resolve())
        for place in places:
            try:
                out.append(place.relative_to(target).as_posix())
            except ValueError:
                continue
    return out


@dataclass(frozen=True, slots=True)
class Config:
    """patchq.toml: what to track and how to apply."""

    upstream: str | None = None
    branch: str | None = None
    pin: str | None = None  # the upstream commit the series is made against
    target: str | None = None
    strip: int = 1
    fuzz: int = 0
    guards: tuple[str, ...] = ()
    context: int = 3
    queue: str = "main"
    # What happens to the file of a patch a rebase upstreams or a person drops: "remove"
    # it from patches/, or "move" it aside to patches/.upstreamed/ or patches/.dropped/.
    retired: str = "remove"
    style: str = "keep"  # how refreshed patches are spelled: keep, git, quilt
    # Remember conflict resolutions in `resolutions/` and reuse them (DESIGN §4.7).
    rerere: bool = True
    # The build/test command `rebase` runs in the target afterwards (`exec`), and after
    # each replayed patch (`exec-each`); the person's own, never a patch's.
    exec: str | None = None
    exec_each: str | None = None
    lint_allow: tuple[str, ...] = ()  # LINT_ALLOW kinds this repo's patches are fine without
    # The proposed methods (DESIGN §4.1, core.tiers) `rebase` and `check` take without a
    # stop, as `--accept` does.
    accept: tuple[str, ...] = ()
    # The file the build reads its list of patches from (an RPM spec, a BitBake recipe,
    # …), relative to the patch repo: kept in step whenever `series` is written.
    recipe: str | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, where: str) -> Config:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise BadInputError(f"cannot read the configuration: {e}", where) from None
        known = {
            "upstream": str,
            "branch": str,
            "pin": str,
            "target": str,
            "strip": int,
            "fuzz": int,
            "guards": list,
            "context": int,
            "queue": str,
            "retired": str,
            "style": str,
            "rerere": bool,
            "exec": str,
            "exec-each": str,
            "lint-allow": list,
            "accept": list,
            "recipe": str,
        }
        kwargs: dict[str, object] = {}
        extra: dict[str, object] = {}
        for key, value in doc.items():
            if key not in known:
                extra[key] = value  # tables other tools or later versions own
                continue
            if not isinstance(value, known[key]) or (
                isinstance(value, bool) and known[key] is not bool
            ):
                word = "true or false" if known[key] is bool else f"a {known[key].__name__}"
                raise BadInputError(f"`{key}` must be {word}", where)
            kwargs[key.replace("-", "_")] = value
        allow = kwargs.pop("lint_allow", [])
        assert isinstance(allow, list)
        bad = [a for a in allow if a not in LINT_ALLOW]
        if bad:
            raise BadInputError(
                f"`lint-allow` holds {bad[0]!r}",
                where,
                "its values: " + ", ".join(f'"{k}"' for k in LINT_ALLOW),
            )
        kwargs["lint_allow"] = tuple(allow)
        accept = kwargs.pop("accept", [])
        assert isinstance(accept, list)
        try:
            if not all(isinstance(a, str) for a in accept):
                raise ValueError(
                    f"`accept` must be a list of method names (valid: {valid_names()})"
                )
            kwargs["accept"] = parse_accept(accept)
        except ValueError as e:
            raise BadInputError(f"`accept`: {e}", where) from None
        guards = kwargs.pop("guards", [])
        assert isinstance(guards, list)
        if not all(isinstance(g, str) and g and not g.startswith(("+", "-")) for g in guards):
            raise BadInputError("`guards` must be a list of guard names", where)
        for key in ("strip", "fuzz", "context"):
            v = kwargs.get(key)
            if isinstance(v, int) and v < 0:
                raise BadInputError(f"`{key}` must not be negative", where)
        if kwargs.get("retired", "remove") not in RETIRED:
            raise BadInputError('`retired` must be "remove" or "move"', where)
        style = kwargs.get("style")
        if isinstance(style, str) and style not in _styles():
            raise BadInputError(
                f'`style` must be "keep", "git" or "quilt", not {style!r}',
                where,
                "keep writes each patch in its own style",
            )
        for key in ("exec", "exec_each"):
            command = kwargs.get(key)
            if isinstance(command, str) and "\0" in command:
                # No shell can be handed it: refused as the file is read, before a
                # rebase writes anything (not a failure to start it afterwards).
                raise BadInputError(
                    f"`{key.replace('_', '-')}` holds a NUL byte, which no command can",
                    where,
                    "remove it",
                )
        queue = kwargs.get("queue")
        if isinstance(queue, str) and not _valid_queue(queue):
            raise BadInputError(f"invalid queue name {queue!r}", where)
        return cls(guards=tuple(guards), extra=extra, **kwargs)  # type: ignore[arg-type]


def _styles() -> tuple[str, ...]:
    from patchq.core.patchstyle import STYLES

    return tuple(STYLES)


def _utf8(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInputError(f"the configuration is not UTF-8 ({e.reason})", where) from None


def _valid_queue(name: str) -> bool:
    return (
        bool(name)
        and all(c.isalnum() or c in "-_." for c in name)
        and not name.startswith(".")
        and ".." not in name
    )


# What this process read of each patch repo's `series`, by root. A command that writes
# `series` checks, holding the lock, that the file still holds what it read
# (`series_changed`): one that read it before another patchq wrote it (two `guard`s at
# once) refuses instead of writing over that change.
_SERIES_READ: dict[Path, bytes | None] = {}


def series_changed(root: Path) -> bool:
    """Whether `root`'s series is no longer what this process read of it."""
    return root in _SERIES_READ and read_optional(root / SERIES) != _SERIES_READ[root]


def series_written(root: Path, data: bytes) -> None:
    """This process wrote `data` as `root`'s series: what it holds now."""
    _SERIES_READ[root] = data


@dataclass(frozen=True, slots=True)
class PatchRepo:
    """A patch repo folder; `series` and `config` are read when it is opened."""

    root: Path
    config: Config
    series: Series
    # Patch files about to be written, by name: read instead of the files (a command that
    # checks its result before one journal transaction writes it).
    staged: dict[str, bytes] = field(default_factory=dict)

    @property
    def patches_dir(self) -> Path:
        return self.root / PATCHES

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK

    @classmethod
    def find(cls, start: Path) -> Path:
        """The nearest folder upwards holding patchq.toml or series."""
        start = start.resolve()
        for d in (start, *start.parents):
            if (d / CONFIG).is_file():
                return d
        for d in (start, *start.parents):
            if (d / SERIES).is_file():
                return d
        raise BadInputError(
            "no patch repo here or above (no patchq.toml or series)",
            str(start),
            "run `patchq init`, or give --dir",
        )

    @classmethod
    def open(cls, root: Path) -> PatchRepo:
        root = root.resolve()
        if not root.is_dir():
            raise BadInputError("patch repo folder does not exist", str(root))
        cfg_path = root / CONFIG
        cfg = read_optional(cfg_path)
        config = Config.parse(_utf8(cfg, str(cfg_path)), str(cfg_path)) if cfg else Config()
        series_path = root / SERIES
        data = read_optional(series_path)
        _SERIES_READ[root] = data
        crashpoint("patchrepo:read")  # the tests' way to run another patchq just now
        text = data.decode("utf-8", "surrogateescape") if data else ""
        return cls(root, config, Series.parse(text, str(series_path)))

    def patch_path(self, name: str) -> Path:
        """The file of patch `name`, refused if the name would leave patches/."""
        if name_problem(name) is not None:
            check_name(name, str(self.root / SERIES))  # raises, naming the series
        parts = name.split("/")
        path = self.patches_dir / name
        if len(parts) == 1 and not os.path.islink(path):
            return path  # a plain file right in patches/: nothing to resolve
        where = str(self.root / SERIES)
        base = self.patches_dir.resolve()
        real = path.resolve()
        if real != base and base not in real.parents:
            raise BadInputError(f"patch {name!r} resolves outside patches/", where)
        return path

    def read_patch(self, name: str, path: Path | None = None) -> bytes:
        """Patch `name`'s bytes (staged ones first); `path`: its `patch_path`, if at hand."""
        if name in self.staged:
            return self.staged[name]
        path = self.patch_path(name) if path is None else path
        try:
            return read_regular(path)
        except FileNotFoundError:
            raise BadInputError(
                f"patch {name!r} is in the series but its file is missing", str(path)
            ) from None
        except IsADirectoryError:
            raise BadInputError(f"patch {name!r} is a directory", str(path)) from None

    def retire(
        self, name: str, outcome: str, keep: bool = False, taken: Iterable[str] = ()
    ) -> dict[str, bytes | None]:
        """The writes that take the file of a patch that left the series (`outcome`:
        upstreamed or dropped) out of patches/, so a build applying every file there
        does not pick it up: removed, or with `retired = "move"` (or `keep`) moved to
        `patches/.<outcome>/<name>` (a hidden folder no `*.patch` glob enters). A file
        already there (retired by an earlier rebase) is never written over: the new one
        takes the first free `<stem>.<n><ext>`, nor are the paths of `taken` (the other
        writes of the same run): no retired patch is ever lost."""
        try:
            data = self.read_patch(name)
        except BadInputError:
            return {}  # already gone
        writes: dict[str, bytes | None] = {f"{PATCHES}/{name}": None}
        if keep or self.config.retired == "move":
            writes[self.retired_name(outcome, name, taken)] = data
        return writes

    def retired_name(self, outcome: str, name: str, taken: Iterable[str] = ()) -> str:
        """The free path, under patches/.<outcome>/, for retired patch `name`: the name
        itself, else `x.1.patch`, `x.2.patch`, … (none on disk nor in `taken`)."""
        folder = f"{PATCHES}/.{outcome}"
        head, slash, leaf = name.rpartition("/")
        stem, dot, ext = leaf.partition(".")
        busy = set(taken)
        n = 0
        while True:
            base = leaf if n == 0 else f"{stem}.{n}{dot}{ext}"
            rel = f"{folder}/{head}{slash}{base}"
            path = self.root / rel
            if rel not in busy and not (path.exists() or path.is_symlink()):
                return rel
            n += 1

    def display(self, name: str) -> str:
        """How messages name a patch: `patches/<name>`, as the series file would."""
        return f"{PATCHES}/{name}"

    def read_lock(self) -> Lock | None:
        from patchq.core.lock import Lock

        data = read_optional(self.lock_path)
        if data is None:
            return None
        return Lock.from_json(data, str(self.lock_path))

    def resolutions(self) -> Book:
        """The remembered resolutions a run may reuse (none where `rerere = false`)."""
        from patchq.core.resolutions import Book
        from patchq.core.resolutions import parse as parse_resolution

        if not self.config.rerere:
            return Book(())
        return Book((n, parse_resolution(d, w)) for n, w, d in read_resolutions(self.root))

    def check_writable(self) -> None:
        """Refuse (exit 5), before anything is written, a patch repo whose `patches/`,
        `series`, `series.lock` or `patchq.toml` is a symlink out of it."""
        check_writable(self.root)

    def write_lock(self, lock: Lock) -> None:
        atomic_write(self.lock_path, lock.to_json(), self.root)

    def write_series(self, series: Series) -> None:
        atomic_write(
            self.root / SERIES, series.format().encode("utf-8", "surrogateescape"), self.root
        )

    def write_patch(self, name: str, data: bytes) -> None:
        atomic_write(self.patch_path(name), data, self.root)


def check_writable(root: Path) -> None:
    """`PatchRepo.check_writable` for a patch repo folder."""
    for name in (PATCHES, SERIES, LOCK, CONFIG, RESOLUTIONS):
        confine(root, root / name)


def read_resolutions(root: Path) -> list[tuple[str, str, bytes]]:
    """Every file in the patch repo's `resolutions/`, as (name, where, bytes), by name.
    Refused (exit 4): a folder that is a symlink out of the patch repo, and a resolution
    that is a symlink or no regular file — a patch repo from a stranger must not make
    patchq read elsewhere."""
    from patchq.core.resolutions import SUFFIX

    folder = root / RESOLUTIONS
    if not folder.is_dir():
        return []
    if escaping_link(root, folder) is not None:
        raise BadInputError(f"{RESOLUTIONS}/ is a symlink out of the patch repo", str(folder))
    out = []
    for f in sorted(folder.iterdir()):
        if not f.name.endswith(SUFFIX) or f.name.startswith("."):
            continue
        where = f"{RESOLUTIONS}/{f.name}"
        if f.is_symlink():
            raise BadInputError("is a symlink; a resolution must be a file", where)
        try:
            out.append((f.name, where, read_regular(f)))
        except IsADirectoryError:
            raise BadInputError("is a folder, not a file", where) from None
    return out


def resolution_path(r: Remembered) -> str:
    """Where resolution `r` is written, relative to the patch repo."""
    return f"{RESOLUTIONS}/{r.filename}"
