"""Bring patches in: loose patch files, an mbox (`git format-patch --stdout`), a quilt series.

Everything here is pure: it takes bytes and names and returns `Incoming` values saying
what to write where, or raises `BadInputError` before anything is decided. The caller
(the `import` operation) then writes every file atomically and appends the series
entries in one transaction, so a bad patch in the middle of an import changes nothing.

Patch headers are read by `core.header`, which `push` and `apply` share.

Decisions a reader of the import code needs:

* `existing` is every name in `series` plus every file under `patches/` (relative, `/`).
  Names are checked case-insensitively against it (and against each other),
  because `patches/` may live on a case-insensitive filesystem, where `Fix.patch` would
  overwrite `fix.patch`. A name is also refused where it would turn an existing file into
  a directory or the other way round (`a.patch` vs `a.patch/b.patch`).
* Generated names are `NNNN-<slug>.patch` (`NNNN.patch` when the subject gives no slug);
  when one is taken, `-2`, `-3`, … goes before `.patch`. Loose files and mbox messages
  can therefore always be named without a clash; a quilt series keeps its names (guards
  and people refer to them), so there a clash is an error naming both.
* An mbox message starts at a `From ` line, at the top of the file or after a blank
  line, that looks like an envelope (`From <sender> <asctime date>`, as git, mutt and
  Python's `mailbox` write it); a `From ` line of prose does not split a message.
  Nothing is unescaped: each patch keeps the message's exact bytes, and mboxrd's
  `>From ` quoting can only touch the message text, never a diff line (those start
  with ` `, `+` or `-`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from patchq.core import patch as patchmod
from patchq.core.errors import BadInputError
from patchq.core.header import ENVELOPE_RE, Header, is_cover, read_header
from patchq.core.paths import check_name
from patchq.core.series import Series

# --- values -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Incoming:
    """One patch to write: its name under `patches/`, exact bytes, and series-line options."""

    name: str
    data: bytes
    strip: int | None = None
    guards: tuple[str, ...] = ()
    source: str = ""
    # A quilt series' comment and blank lines, kept verbatim: those above this patch,
    # and (for its last patch) those below it.
    before: tuple[str, ...] = ()
    trailer: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Skipped:
    """An mbox message that was not imported, and why (a cover letter, no diff)."""

    source: str
    subject: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class MboxImport:
    """What `from_mbox` found: the patches to write, in mbox order, and what it skipped."""

    patches: tuple[Incoming, ...]
    skipped: tuple[Skipped, ...]


# --- header reading ---------------------------------------------------------------------


# --- names ------------------------------------------------------------------------------

_SLUG_MAX = 52


def slug(text: str) -> str:
    """A file-name slug like `git format-patch` makes from a subject (case kept)."""
    s = re.sub(r"[^A-Za-z0-9._]+", "-", text)
    s = re.sub(r"\.{2,}", ".", s).strip("-.")
    # git keeps a trailing `-` left by the cut; we drop it, `0001-foo-.patch` helps nobody.
    return s[:_SLUG_MAX].rstrip("-.")


class _Taken:
    """The names in use, compared case-insensitively, with the directories they imply."""

    def __init__(self, existing: Sequence[str]) -> None:
        self._names: dict[str, str] = {}
        self._dirs: dict[str, str] = {}
        for name in existing:
            self.add(name)

    def add(self, name: str) -> None:
        key = name.casefold()
        self._names.setdefault(key, name)
        parts = key.split("/")
        for k in range(1, len(parts)):
            self._dirs.setdefault("/".join(parts[:k]), name)

    def clash(self, name: str) -> str | None:
        """The name in use that `name` would overwrite or collide with, if any."""
        key = name.casefold()
        if key in self._names:
            return self._names[key]
        if key in self._dirs:
            return self._dirs[key]
        parts = key.split("/")
        for k in range(1, len(parts)):
            prefix = "/".join(parts[:k])
            if prefix in self._names:
                return self._names[prefix]
        return None

    def free_name(self, number: int, subject: str) -> str:
        """`NNNN-<slug>.patch`, with `-2`, `-3`, … before `.patch` until it is free."""
        s = slug(subject)
        stem = f"{number:04d}-{s}" if s else f"{number:04d}"
        name, n = f"{stem}.patch", 1
        while self.clash(name) is not None:
            n += 1
            name = f"{stem}-{n}.patch"
        return name


# --- parsing helpers --------------------------------------------------------------------


def _parse(data: bytes, where: str, strip: int, first_line: int = 1) -> patchmod.Patch:
    """patch.parse, with errors numbered from `first_line` of the file `where` names."""
    try:
        return patchmod.parse(data, where, strip)
    except BadInputError as err:
        if first_line <= 1:
            raise
        # Only on failure: parse again behind blank lines (header text, which changes
        # nothing else), so the message and its hint count lines in the whole mbox.
        # patch.parse taking a first line number would make this unnecessary.
        try:
            patchmod.parse(b"\n" * (first_line - 1) + data, where, strip)
        except BadInputError as numbered:
            raise numbered from None
        raise err from None


def _refuse_encoded(head: Header, where: str) -> None:
    if head.encoding in ("base64", "quoted-printable"):
        raise BadInputError(
            f"the mail is {head.encoding}-encoded; patchq keeps patch bytes as they are",
            where,
            "save the message decoded (8bit), or apply it with `git am` and use `import --git`",
        )


# --- loose files ------------------------------------------------------------------------


def from_files(
    paths_and_data: Sequence[tuple[str, bytes]], existing: Sequence[str], start_number: int
) -> list[Incoming]:
    """Patch files to import, in the given order; all must parse or nothing is returned.

    A file keeps its base name when it ends in `.patch` or `.diff`, is free (see the module
    docstring) and can stand in a series line (no spaces, no leading `#`); otherwise it
    is named `NNNN-<slug of its subject>.patch`, NNNN being `start_number` plus its
    position in `paths_and_data` (so numbers follow the series order). A later file whose
    base name an earlier one took gets a numbered name. A file without a diff is refused
    unless its header is a patch header (mail, DEP-3, hg, git show): a header-only patch
    records a decision, a README does not. A file that only parses at `-p0`
    (`--- file.orig` / `+++ file`) gets `strip=0`. Base names that are unsafe (a leading
    `.`, backslashes, control characters) are refused, not renamed.
    """
    taken = _Taken(existing)
    out: list[Incoming] = []
    for index, (path, data) in enumerate(paths_and_data):
        parsed, strip = _parse_loose(data, path)
        head = read_header(parsed.header)
        if not parsed.sections and head.kind == "text":
            raise BadInputError(
                "no diff in this file",
                path,
                "patchq imports unified diffs (`git diff`, `diff -u`, quilt)",
            )
        _refuse_encoded(head, path)
        base = posixpath.basename(path)
        name: str | None = None
        if base.lower().endswith((".patch", ".diff")):
            check_name(base, path, new=True)
            if (
                not any(c.isspace() for c in base)
                and not base.startswith("#")
                and taken.clash(base) is None
            ):
                name = base
        if name is None:
            subject = head.info.subject or base.rsplit(".", 1)[0]
            name = taken.free_name(start_number + index, subject)
        taken.add(name)
        out.append(Incoming(name, data, strip, (), path))
    return out


def _parse_loose(data: bytes, path: str) -> tuple[patchmod.Patch, int | None]:
    try:
        return patchmod.parse(data, path, 1), None
    except BadInputError as first_error:
        try:
            return patchmod.parse(data, path, 0), 0
        except BadInputError:
            raise first_error from None


# --- mbox -------------------------------------------------------------------------------

_FROM_LINE_RE = re.compile(rb"^From [^\n]*", re.M)


def _mbox_messages(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(start, end, first line number) of each message; text before the first is one too."""
    starts = []
    for m in _FROM_LINE_RE.finditer(data):
        pos = m.start()
        if pos and not (data.endswith(b"\n\n", 0, pos) or data.endswith(b"\n\r\n", 0, pos)):
            continue
        if ENVELOPE_RE.match(m.group()):
            starts.append(pos)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = starts + [len(data)]
    line = 1
    for start, end in zip(bounds, bounds[1:], strict=False):
        yield start, end, line
        line += data.count(b"\n", start, end)


def from_mbox(data: bytes, where: str, existing: Sequence[str], start_number: int) -> MboxImport:
    """The patches of an mbox, in order; cover letters and mail without a diff are skipped.

    Each patch keeps its message's exact bytes, envelope line and separating blank line
    included, so the imported and skipped messages put together are the mbox again. Names
    are `NNNN-<slug>.patch`, numbered from `start_number` over the imported messages
    only. A `[PATCH 0/N]` message is a cover letter and is skipped unparsed; any other
    message must parse, and one whose body is base64- or quoted-printable-encoded is
    refused (its diff would be mangled). Whitespace-only text before the first message is
    ignored. `source` and error positions are `<where>:<line>` in the mbox.
    """
    taken = _Taken(existing)
    patches: list[Incoming] = []
    skipped: list[Skipped] = []
    for start, end, line in _mbox_messages(data):
        message = data[start:end]
        if not message.strip():
            continue
        source = f"{where}:{line}"
        top = read_header(_top_block(message))
        if is_cover(top.raw_subject):
            skipped.append(Skipped(source, top.info.subject, "cover letter"))
            continue
        parsed = _parse(message, where, 1, line)
        head = read_header(parsed.header)
        _refuse_encoded(head, source)
        if not parsed.sections:
            skipped.append(Skipped(source, head.info.subject, "no diff in this message"))
            continue
        name = taken.free_name(start_number + len(patches), head.info.subject or "")
        taken.add(name)
        patches.append(Incoming(name, message, None, (), source))
    return MboxImport(tuple(patches), tuple(skipped))


def _top_block(message: bytes) -> bytes:
    """A message's header block: up to its first blank line."""
    m = re.search(rb"\n\r?\n", message)
    return message if m is None else message[: m.start() + 1]


# --- quilt ------------------------------------------------------------------------------


def from_quilt(
    series_text: str,
    read: Callable[[str], bytes],
    where: str,
    existing: Sequence[str],
    folder: str | None = None,
) -> list[Incoming]:
    """The patches of a quilt series, in order, keeping names, `-pN`, guards and comments.

    `where` is the series file as the user named it (`../debian/patches/series`); errors
    say `<where>:<line>`, or `<its folder>/<patch>:<line>` for a malformed patch, which is
    also each patch's `source`. `read(name)` returns a patch file's bytes and raises
    OSError (or KeyError) when it is missing, so the error can name the series line.
    Names keep their subfolders (`fixes/0001-x.patch`, as gbp pq's topics write them; the
    caller creates the folders); a name in use is an error naming both. Patches without a
    `-pN` are parsed at quilt's default, -p1, and keep `strip=None`. Header-only patches
    are kept, as quilt keeps them. The series' comment and blank lines come along
    verbatim (a Debian series says why a patch is there, or holds one commented out):
    each patch carries those just above it in `before`, the last one those below it in
    `trailer`; blank lines at either end are left out. `folder`: where the patches are,
    when the list is not in their folder (`import --order LIST DIR`).
    """
    series_where = where
    if folder is None:
        folder = posixpath.dirname(where)
    series = Series.parse(series_text, series_where)
    taken = _Taken(existing)
    lines: dict[str, int] = {}  # names imported so far, with their series lines
    out: list[Incoming] = []
    pending: list[str] = []
    for entry in series.entries:
        if entry.name is None:
            if out or entry.raw.strip():
                pending.append(entry.raw if entry.raw.endswith("\n") else entry.raw + "\n")
            continue
        name = entry.name
        line_where = f"{series_where}:{entry.lineno}"
        data = _take(
            name, line_where, entry.lineno, taken=taken, lines=lines, read=read, folder=folder
        )
        _parse(data, posixpath.join(folder, name), entry.strip_level(1))
        out.append(
            Incoming(
                name,
                data,
                entry.strip,
                entry.guards,
                posixpath.join(folder, name),
                before=tuple(pending),
            )
        )
        pending = []
    while pending and not pending[-1].strip():
        pending.pop()
    if out and pending:
        out[-1] = replace(out[-1], trailer=tuple(pending))
    return out


def _take(
    name: str,
    line_where: str,
    lineno: int,
    *,
    taken: _Taken,
    lines: dict[str, int],
    read: Callable[[str], bytes],
    folder: str,
) -> bytes:
    """Check that `name` can be written and is free, read its bytes, and take the name."""
    check_name(name, line_where, new=True)
    other = taken.clash(name)
    if other is not None:
        if other in lines:
            what = f"clashes with {other!r} on line {lines[other]} of this series"
        elif other == name:
            what = "is already in the patch repo"
        else:
            what = f"clashes with {other!r} already in the patch repo"
        raise BadInputError(
            f"patch {name!r} {what}", line_where, "rename or delete one of them first"
        )
    try:
        data = read(name)
    except (OSError, KeyError):
        raise BadInputError(
            f"patch file {name!r} listed here is missing",
            line_where,
            f"expected it at {posixpath.join(folder, name)}",
        ) from None
    taken.add(name)
    lines[name] = lineno
    return data


# --- a folder of patches without a series (OpenWrt, Buildroot) ---------------------------

# What a build that applies "every patch in the folder" picks up: OpenWrt's and
# Buildroot's `*.patch`, and the `*.diff` some packages use.
PATCH_SUFFIXES = (".patch", ".diff")
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".lz", ".Z")


def folder_order(names: Sequence[str]) -> list[str]:
    """Names in the order the builds apply them: sorted byte by byte, as `ls` and the
    shell's glob sort under `LC_ALL=C` (Buildroot and OpenWrt both set it)."""
    return sorted(names, key=lambda n: n.encode("utf-8", "surrogateescape"))


def from_folder(
    entries: Sequence[tuple[str, str]],
    read: Callable[[str], bytes],
    where: str,
    existing: Sequence[str],
) -> tuple[list[Incoming], list[Skipped]]:
    """The patches of a folder that has no `series` file, in sorted name order.

    `entries` are the folder's (name, kind) pairs, kind being `file`, `folder` or
    `other`; `where` is the folder as the user named it. Files ending in `.patch` or
    `.diff` are patches, read at -p1 (as OpenWrt and Buildroot apply them) and kept under
    their own names, since the names are the order; everything else is skipped and named
    with why (a README, a compressed patch, a sub-folder that no such build descends
    into). A name in use, or one a series line cannot hold, is an error naming it.
    """
    taken = _Taken(existing)
    lines: dict[str, int] = {}
    out: list[Incoming] = []
    skipped: list[Skipped] = []
    kinds = dict(entries)
    for name in folder_order(list(kinds)):
        kind = kinds[name]
        source = posixpath.join(where, name)
        reason = _not_a_patch(name, kind)
        if reason is not None:
            skipped.append(Skipped(source, None, reason))
            continue
        if any(c in " \t" for c in name) or name.startswith("#"):
            raise BadInputError(
                f"patch file {name!r} cannot be named in a series line",
                source,
                "rename it (no spaces, no leading #)",
            )
        data = _take(name, source, len(out) + 1, taken=taken, lines=lines, read=read, folder=where)
        _parse(data, source, 1)
        out.append(Incoming(name, data, None, (), source))
    return out, skipped


def _not_a_patch(name: str, kind: str) -> str | None:
    """Why a folder entry is not taken as a patch, or None when it is one."""
    if kind == "folder":
        return "a folder: only the files directly in the patch folder are applied"
    if kind != "file":
        return "not a regular file"
    if name.endswith(PATCH_SUFFIXES):
        return None
    if name.endswith(_COMPRESSED) and name.rsplit(".", 1)[0].endswith(PATCH_SUFFIXES):
        return "a compressed patch: decompress it and import it as a file"
    return "not a patch (only *.patch and *.diff are)"
