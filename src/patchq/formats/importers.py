"""Bring patches in: loose patch files, an mbox (`git format-patch --stdout`), a quilt series.

Everything here is pure: it takes bytes and names and returns `Incoming` values saying
what to write where, or raises `BadInputError` before anything is decided. The caller
(the `import` operation) then writes every file atomically and appends the series
entries in one transaction, so a bad patch in the middle of an import changes nothing.

It also reads patch headers (`header_info`) — mail headers from `git format-patch`,
DEP-3 fields, `hg export` and `git show` headers, or free text — so `push` can author
each stack commit as the patch says.

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

import calendar
import datetime
import email.policy
import email.utils
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from patchq.core import patch as patchmod
from patchq.core.errors import BadInputError
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


@dataclass(frozen=True, slots=True)
class HeaderInfo:
    """What a patch header says about the change; anything it does not say is None."""

    author_name: str | None
    author_email: str | None
    date: int | None
    tz: str | None
    subject: str | None
    body: str


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

_FIELD_RE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):[ \t]*(.*)$")
_IN_BODY_RE = re.compile(r"(From|Date|Subject):[ \t]*(.*)$")
_GIT_SHOW_RE = re.compile(r"commit [0-9a-f]{7,64}\b")
_PREFIX_RE = re.compile(r"\s*\[[^\]]*(?<![A-Za-z])(?:PATCH|RFC)[^\]]*\]", re.I)
_BRACKET_RE = re.compile(r"\s*\[([^\]]*)\]")
_COVER_RE = re.compile(r"(?<![\d/])0+/\d+$")
_NO_ZONE_RE = re.compile(r"\d:\d\d(?::\d\d)?\s*$")
_ISO_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\b")

_ENVELOPE_RE = re.compile(
    rb"From \S* +(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +"
    rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} +"
    rb"\d{1,2}:\d\d(?::\d\d)? +(?:[A-Za-z]{1,5} +|[+-]\d{4} +)?\d{4}\b")
_ENVELOPE_TEXT_RE = re.compile(_ENVELOPE_RE.pattern.decode())
_MAIL_ONLY = frozenset({"date", "message-id", "mime-version", "content-type",
                        "content-transfer-encoding", "to", "cc", "in-reply-to", "references"})
_DEP3_ONLY = frozenset({"description", "author", "origin", "forwarded", "applied-upstream",
                        "last-update", "reviewed-by", "acked-by", "bug"})


@dataclass(frozen=True, slots=True)
class _Header:
    info: HeaderInfo
    kind: str  # "mail", "dep3", "hg", "git" (git show) or "text"
    raw_subject: str | None = None
    encoding: str | None = None


def header_info(header: bytes) -> HeaderInfo:
    """Author, date, subject and body from a patch header; never raises."""
    return _read_header(header).info


def _read_header(header: bytes) -> _Header:
    lines = [line.rstrip("\r") for line in _decode(header).split("\n")]
    first = lines[0] if lines else ""
    if first.startswith("# HG changeset patch"):
        return _Header(_hg_header(lines), "hg")
    if _GIT_SHOW_RE.match(first):
        return _Header(_git_show_header(lines), "git")
    # An mbox envelope line; "From now on, …" in free text is not one.
    envelope = _ENVELOPE_TEXT_RE.match(first) is not None or (
        first.startswith("From ") and len(lines) > 1 and _FIELD_RE.match(lines[1]) is not None)
    start = 1 if envelope else 0
    fields, end = _field_block(lines, start)
    names = {name.lower() for name, _ in fields}
    dep3 = names & _DEP3_ONLY or any(n.startswith("bug-") for n in names)
    if envelope or names & _MAIL_ONLY or (not dep3 and names & {"from", "subject"}):
        return _mail_header(fields, lines[end:])
    if dep3:
        return _Header(_dep3_header(fields, lines, end), "dep3")
    return _Header(_free_text(lines), "text")


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Old patches carry Latin-1 names; every byte decodes, so nothing is lost.
        return data.decode("latin-1")


def _field_block(lines: list[str], start: int) -> tuple[list[tuple[str, list[str]]], int]:
    """`Name: value` lines (with continuation lines) from `start` to the first other line."""
    fields: list[tuple[str, list[str]]] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if line[:1] in (" ", "\t") and line.strip() and fields:
            fields[-1][1].append(line)
        elif (m := _FIELD_RE.match(line)) is not None:
            fields.append((m.group(1), [m.group(2)]))
        else:
            break
        i += 1
    return fields, i


def _until_break(lines: Sequence[str]) -> list[str]:
    """The message text: everything before the `---` line that opens the diffstat."""
    out = []
    for line in lines:
        if line.rstrip() == "---":
            break
        out.append(line)
    return out


def _clean_body(lines: Sequence[str]) -> str:
    """Trailing spaces and surrounding blank lines dropped, as `git commit` would."""
    text = [line.rstrip() for line in lines]
    first = next((i for i, line in enumerate(text) if line), len(text))
    last = len(text)
    while last > first and not text[last - 1]:
        last -= 1
    return "\n".join(text[first:last])


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clean_subject(raw: str) -> str:
    """Drop `[PATCH v2 3/7]`/`[RFC]` prefixes as `git am -b` does; keep `[media]` and the like."""
    text = _one_line(raw)
    while (m := _PREFIX_RE.match(text)) is not None:
        text = text[m.end():].lstrip()
    return text


def _split_free(lines: Sequence[str]) -> tuple[str | None, str]:
    """Free text: the first non-empty line is the subject, the rest the body."""
    text = list(_until_break(lines))
    for i, line in enumerate(text):
        if line.strip():
            return _one_line(line), _clean_body(text[i + 1 :])
    return None, ""


def _free_text(lines: list[str]) -> HeaderInfo:
    subject, body = _split_free(lines)
    return HeaderInfo(None, None, None, None, subject, body)


def _mail_header(fields: list[tuple[str, list[str]]], rest: list[str]) -> _Header:
    values = _mail_values(fields)
    body = _until_break(rest[1:] if rest and not rest[0].strip() else rest)
    # git am honours `From:`/`Date:`/`Subject:` at the top of the body (a patch sent on
    # someone else's behalf); they override the mail's own headers.
    i = 0
    while i < len(body) and not body[i].strip():
        i += 1
    in_body: list[tuple[str, list[str]]] = []
    j = i
    while j < len(body) and (m := _IN_BODY_RE.match(body[j])) is not None:
        in_body.append((m.group(1), [m.group(2)]))
        j += 1
    if in_body and (j == len(body) or not body[j].strip()):
        values.update(_mail_values(in_body))
        body = body[j:]
    raw_subject = _mail_subject(values["subject"]) if "subject" in values else None
    name, addr = _mail_from(values.get("from"))
    date, tz = _mail_date(values.get("date"))
    subject = _clean_subject(raw_subject) if raw_subject is not None else None
    enc = values.get("content-transfer-encoding")
    info = HeaderInfo(name, addr, date, tz, subject or None, _clean_body(body))
    return _Header(info, "mail", raw_subject, enc.strip().lower() if enc else None)


def _mail_values(fields: list[tuple[str, list[str]]]) -> dict[str, str]:
    """Raw, unfolded values of From, Subject, Date, Content-Transfer-Encoding (first of each)."""
    wanted = ("from", "subject", "date", "content-transfer-encoding")
    out: dict[str, str] = {}
    for name, lines in fields:
        key = name.lower()
        if key in wanted and key not in out:
            # RFC 5322 unfolding: drop the line breaks, keep the whitespace after them.
            out[key] = "".join(lines)
    return out


def _decoded(name: str, value: str) -> Any:
    """The email package's parsed header (RFC 2047 decoded), or None if it chokes."""
    try:
        return email.policy.default.header_factory(name, value)
    except Exception:  # the email package has had parser crashes on odd input
        return None


def _mail_subject(value: str) -> str:
    if "=?" in value:
        header = _decoded("subject", value)
        if header is not None:
            return _one_line(str(header))
    return _one_line(value)


def _mail_from(value: str | None) -> tuple[str | None, str | None]:
    if value and "=?" in value:
        header = _decoded("from", value)
        try:
            addr = header.addresses[0] if header is not None and header.addresses else None
            if addr is not None:
                return _name_addr(str(addr.display_name), str(addr.addr_spec))
        except Exception:  # an undecodable group or address: fall back to the raw text
            pass
    return _address(value)


def _address(value: str | None) -> tuple[str | None, str | None]:
    """`Name <email>` (or a bare address) split into its parts."""
    if not value:
        return None, None
    try:
        name, addr = email.utils.parseaddr(value)
    except Exception:  # parseaddr is lenient, but be sure
        return value.strip() or None, None
    if not name and not addr:
        return value.strip() or None, None
    return _name_addr(name, addr)


def _name_addr(name: str, addr: str) -> tuple[str | None, str | None]:
    addr = addr.strip()
    if any(c in addr for c in "<> \t\n"):
        addr = ""
    return _one_line(name) or None, addr or None


def _format_tz(offset: int) -> str | None:
    if abs(offset) >= 24 * 3600 or offset % 60:
        return None
    sign = "-" if offset < 0 else "+"
    minutes = abs(offset) // 60
    return f"{sign}{minutes // 60:02d}{minutes % 60:02d}"


def _mail_date(value: str | None) -> tuple[int | None, str | None]:
    """An RFC 2822 date (or git's default format) as unix seconds and `+hhmm`."""
    if not value:
        return None, None
    try:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None, None
        offset = parsed[9] or 0
        tz = _format_tz(offset)
        if tz is None:
            return None, None
        stamp = calendar.timegm(tuple(parsed[:6]) + (0, 0, 0)) - offset
    except (ValueError, OverflowError, TypeError, IndexError):
        return None, None
    # Python reads a date without a zone as UTC; say the zone is unknown instead.
    return stamp, None if _NO_ZONE_RE.search(value) else tz


def _iso_date(value: str) -> int | None:
    m = _ISO_DATE_RE.match(value.strip())
    if m is None:
        return None
    try:
        day = datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
    return calendar.timegm(day.timetuple())


def _dep3_header(fields: list[tuple[str, list[str]]], lines: list[str], end: int) -> HeaderInfo:
    # DEP-3 fields may come in several paragraphs; text after them is more description.
    i = end
    while True:
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        more, k = _field_block(lines, j)
        known = [n for n, _ in more if n.lower() in _DEP3_ONLY | {"from", "subject"}
                 or n.lower().startswith("bug-")]
        if not more or not known or k == j:
            break
        fields.extend(more)
        i = k
    first: dict[str, list[str]] = {}
    for field_name, value in fields:
        first.setdefault(field_name.lower(), value)
    desc = first.get("description") or first.get("subject")
    subject: str | None = None
    body_lines: list[str] = []
    if desc is not None:
        for cont in desc[1:]:
            text = cont[1:] if cont[:1] in (" ", "\t") else cont
            body_lines.append("" if text.strip() == "." else text)
        subject = _one_line(desc[0]) or None
        if subject is None:  # `Description:` alone, the summary on the next line
            subject, rest = _split_free(body_lines)
            body_lines = rest.split("\n") if rest else []
    extra = _clean_body(_until_break(lines[i:]))
    if extra:
        if subject is None:
            subject, rest = _split_free(extra.split("\n"))
            extra = rest
        if extra:
            body_lines.extend(["", *extra.split("\n")] if body_lines else extra.split("\n"))
    author = first.get("author") or first.get("from")
    name: str | None
    addr: str | None
    name, addr = _address(_one_line(" ".join(author))) if author else (None, None)
    date: int | None
    tz: str | None
    date, tz = _mail_date(_one_line(" ".join(first["date"]))) if "date" in first else (None, None)
    if date is None and "last-update" in first:
        date = _iso_date(first["last-update"][0])
        tz = "+0000" if date is not None else None
    return HeaderInfo(name, addr, date, tz, subject, _clean_body(body_lines))


def _hg_header(lines: list[str]) -> HeaderInfo:
    """`hg export`: `# User`, `# Date <unix> <offset west>` lines, then the message."""
    name = addr = None
    date: int | None = None
    tz: str | None = None
    i = 1
    while i < len(lines) and lines[i].startswith("#"):
        line = lines[i]
        if line.startswith("# User "):
            name, addr = _address(line[len("# User "):])
        elif line.startswith("# Date "):
            parts = line.split()
            try:
                stamp, west = int(float(parts[2])), int(parts[3])
                tz = _format_tz(-west)
                date = stamp if tz is not None else None
            except (IndexError, ValueError, OverflowError):
                pass
        i += 1
    subject, body = _split_free(lines[i:])
    return HeaderInfo(name, addr, date, tz, subject, body)


def _git_show_header(lines: list[str]) -> HeaderInfo:
    """`git show`/`git log -p`: `Author:`/`Date:` lines, then the message indented by 4."""
    fields, end = _field_block(lines, 1)
    values = {n.lower(): _one_line(" ".join(v)) for n, v in reversed(fields)}
    name, addr = _address(values.get("author"))
    date, tz = _mail_date(values.get("date") or values.get("authordate"))
    message: list[str] = []
    for line in lines[end:]:
        if line.strip() and not line.startswith("    "):
            break
        message.append(line[4:])
    subject, body = _split_free(message)
    return HeaderInfo(name, addr, date, tz, subject, body)


def commit_message(info: HeaderInfo, fallback_subject: str) -> str:
    """The commit message for a patch: `subject\\n\\nbody\\n`, or `subject\\n` without a body."""
    subject = _one_line(info.subject or "") or _one_line(fallback_subject)
    body = info.body.strip("\n")
    return f"{subject}\n\n{body}\n" if body else f"{subject}\n"


# --- names ------------------------------------------------------------------------------

_SLUG_MAX = 52


def slug(text: str) -> str:
    """A file-name slug like `git format-patch` makes from a subject (case kept)."""
    s = re.sub(r"[^A-Za-z0-9._]+", "-", text)
    s = re.sub(r"\.{2,}", ".", s).strip("-.")
    # git keeps a trailing `-` left by the cut; we drop it, `0001-foo-.patch` helps nobody.
    return s[:_SLUG_MAX].rstrip("-.")


def check_name(name: str, where: str) -> None:
    """Refuse a patch name that could escape `patches/` or hide there; `where` names its source."""
    problem = None
    if not name:
        problem = "is empty"
    elif name.startswith("/"):
        problem = "is absolute"
    elif "\\" in name:
        problem = "contains a backslash"
    elif any(ord(c) < 32 or ord(c) == 127 for c in name):
        problem = "contains a control character or NUL"
    elif any(part in ("", ".", "..") for part in name.split("/")):
        problem = "has an empty, `.` or `..` component"
    elif any(part.startswith(".") for part in name.split("/")):
        problem = "starts with `.` (a hidden file)"
    if problem is not None:
        raise BadInputError(f"unsafe patch name {name!r}: it {problem}", where,
                            "patch names are relative paths under patches/")


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


def _refuse_encoded(head: _Header, where: str) -> None:
    if head.encoding in ("base64", "quoted-printable"):
        raise BadInputError(
            f"the mail is {head.encoding}-encoded; patchq keeps patch bytes as they are", where,
            "save the message decoded (8bit), or apply it with `git am` and use `import --git`")


# --- loose files ------------------------------------------------------------------------


def from_files(paths_and_data: Sequence[tuple[str, bytes]], existing: Sequence[str],
               start_number: int) -> list[Incoming]:
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
        head = _read_header(parsed.header)
        if not parsed.sections and head.kind == "text":
            raise BadInputError("no diff in this file", path,
                                "patchq imports unified diffs (`git diff`, `diff -u`, quilt)")
        _refuse_encoded(head, path)
        base = posixpath.basename(path)
        name: str | None = None
        if base.lower().endswith((".patch", ".diff")):
            check_name(base, path)
            if not any(c.isspace() for c in base) and not base.startswith("#") \
                    and taken.clash(base) is None:
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
        if _ENVELOPE_RE.match(m.group()):
            starts.append(pos)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = starts + [len(data)]
    line = 1
    for start, end in zip(bounds, bounds[1:], strict=False):
        yield start, end, line
        line += data.count(b"\n", start, end)


def from_mbox(data: bytes, where: str, existing: Sequence[str],
              start_number: int) -> MboxImport:
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
        top = _read_header(_top_block(message))
        if _is_cover(top.raw_subject):
            skipped.append(Skipped(source, top.info.subject, "cover letter"))
            continue
        parsed = _parse(message, where, 1, line)
        head = _read_header(parsed.header)
        _refuse_encoded(head, source)
        if not parsed.sections:
            skipped.append(Skipped(source, head.info.subject, "no diff in this message"))
            continue
        name = taken.free_name(start_number + len(patches), head.info.subject or "")
        taken.add(name)
        patches.append(Incoming(name, message, None, (), source))
    return MboxImport(tuple(patches), tuple(skipped))


def _is_cover(raw_subject: str | None) -> bool:
    """`[PATCH 0/N]`, `[PATCH v2 00/12]`, `[RFC 0/3]`: the series' cover letter."""
    pos = 0
    while raw_subject is not None and (m := _BRACKET_RE.match(raw_subject, pos)) is not None:
        if _COVER_RE.search(m.group(1).strip()):
            return True
        pos = m.end()
    return False


def _top_block(message: bytes) -> bytes:
    """A message's header block: up to its first blank line."""
    m = re.search(rb"\n\r?\n", message)
    return message if m is None else message[: m.start() + 1]


# --- quilt ------------------------------------------------------------------------------


def from_quilt(series_text: str, read: Callable[[str], bytes], where: str,
               existing: Sequence[str]) -> list[Incoming]:
    """The patches of a quilt series, in order, keeping names, `-pN` and guards.

    `where` is the series file as the user named it (`../debian/patches/series`); errors
    say `<where>:<line>`, or `<its folder>/<patch>:<line>` for a malformed patch, which is
    also each patch's `source`. `read(name)` returns a patch file's bytes and raises
    OSError (or KeyError) when it is missing, so the error can name the series line.
    Names keep their subfolders (the caller creates them); a name in use is an error
    naming both. Patches without a `-pN` are parsed at quilt's default, -p1, and keep
    `strip=None`. Header-only patches are kept, as quilt keeps them.
    """
    series_where = where
    folder = posixpath.dirname(where)
    series = Series.parse(series_text, series_where)
    taken = _Taken(existing)
    lines: dict[str, int] = {}  # names imported so far, with their series lines
    out: list[Incoming] = []
    for entry in series.patches:
        name = entry.name
        assert name is not None
        line_where = f"{series_where}:{entry.lineno}"
        check_name(name, line_where)
        other = taken.clash(name)
        if other is not None:
            if other in lines:
                what = f"clashes with {other!r} on line {lines[other]} of this series"
            elif other == name:
                what = "is already in the patch repo"
            else:
                what = f"clashes with {other!r} already in the patch repo"
            raise BadInputError(f"patch {name!r} {what}", line_where,
                                "rename or delete one of them first")
        file_where = posixpath.join(folder, name)
        try:
            data = read(name)
        except (OSError, KeyError):
            raise BadInputError(f"patch file {name!r} listed here is missing", line_where,
                                f"expected it at {file_where}") from None
        _parse(data, file_where, entry.strip_level(1))
        taken.add(name)
        lines[name] = entry.lineno
        out.append(Incoming(name, data, entry.strip, entry.guards, file_where))
    return out
