"""Patch headers: who wrote a patch, when, and what it says — and the commit message made
of it.

A header is whatever stands before the first diff: mail headers from `git format-patch`,
DEP-3 fields (Debian), `hg export` and `git show` headers, or free text. `header_info`
reads all of them and never raises; `commit_message` makes git's message of it, and a
header-less patch takes its subject from its file name (`fallback_subject`), the same
for the commits `apply` makes and the messages `export --mbox` writes.
"""

from __future__ import annotations

import calendar
import datetime
import email.policy
import email.utils
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class HeaderInfo:
    """What a patch header says about the change; anything it does not say is None."""

    author_name: str | None
    author_email: str | None
    date: int | None
    tz: str | None
    subject: str | None
    body: str


_FIELD_RE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):[ \t]*(.*)$")


_IN_BODY_RE = re.compile(r"(From|Date|Subject):[ \t]*(.*)$")


_GIT_SHOW_RE = re.compile(r"commit [0-9a-f]{7,64}\b")


_BRACKET_RE = re.compile(r"\s*\[([^\]]*)\]")
# What makes a bracket a prefix `_clean_subject` drops: PATCH or RFC, not inside a word.
_TAG_RE = re.compile(r"(?<![A-Za-z])(?:PATCH|RFC)", re.I)


_COVER_RE = re.compile(r"(?<![\d/])0+/\d+$")


_NO_ZONE_RE = re.compile(r"\d:\d\d(?::\d\d)?\s*$")


_ISO_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\b")


ENVELOPE_RE = re.compile(
    rb"From \S* +(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +"
    rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} +"
    rb"\d{1,2}:\d\d(?::\d\d)? +(?:[A-Za-z]{1,5} +|[+-]\d{4} +)?\d{4}\b"
)


_ENVELOPE_TEXT_RE = re.compile(ENVELOPE_RE.pattern.decode())


_MAIL_ONLY = frozenset(
    {
        "date",
        "message-id",
        "mime-version",
        "content-type",
        "content-transfer-encoding",
        "to",
        "cc",
        "in-reply-to",
        "references",
    }
)


_DEP3_ONLY = frozenset(
    {
        "description",
        "author",
        "origin",
        "forwarded",
        "applied-upstream",
        "last-update",
        "reviewed-by",
        "acked-by",
        "bug",
    }
)


@dataclass(frozen=True, slots=True)
class Header:
    info: HeaderInfo
    kind: str  # "mail", "dep3", "hg", "git" (git show) or "text"
    raw_subject: str | None = None
    encoding: str | None = None


def header_info(header: bytes) -> HeaderInfo:
    """Author, date, subject and body from a patch header; never raises."""
    return read_header(header).info


def read_header(header: bytes) -> Header:
    lines = [line.rstrip("\r") for line in _decode(header).split("\n")]
    first = lines[0] if lines else ""
    if first.startswith("# HG changeset patch"):
        return Header(_hg_header(lines), "hg")
    if _GIT_SHOW_RE.match(first):
        return Header(_git_show_header(lines), "git")
    # An mbox envelope line; "From now on, …" in free text is not one.
    envelope = _ENVELOPE_TEXT_RE.match(first) is not None or (
        first.startswith("From ") and len(lines) > 1 and _FIELD_RE.match(lines[1]) is not None
    )
    start = 1 if envelope else 0
    fields, end = _field_block(lines, start)
    names = {name.lower() for name, _ in fields}
    dep3 = names & _DEP3_ONLY or any(n.startswith("bug-") for n in names)
    if envelope or names & _MAIL_ONLY or (not dep3 and names & {"from", "subject"}):
        return _mail_header(fields, lines[end:])
    if dep3:
        return Header(_dep3_header(fields, lines, end), "dep3")
    return Header(_free_text(lines), "text")


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Old patches carry Latin-1 names; every byte decodes, so nothing is lost.
        return data.decode("latin-1")


def _field_block(lines: list[str], start: int) -> tuple[list[tuple[str, list[str]]], int]:
    """`Name: value` lines (with continuation lines) from `start` to the first other line.
    A line of nothing but spaces inside a value (a paragraph break written as " "
    rather than DEP-3's " .") continues it when more of the block follows: it must not
    end the block and hide the `Author:` below."""
    fields: list[tuple[str, list[str]]] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if line[:1] in (" ", "\t") and line.strip() and fields:
            fields[-1][1].append(line)
        elif line[:1] in (" ", "\t") and fields:
            # Spaces only: the run of such lines continues the value if the block goes on
            # after it (one pass over the run, however long).
            j = i
            while j < len(lines) and lines[j][:1] in (" ", "\t") and not lines[j].strip():
                j += 1
            if not _block_goes_on(lines, j):
                break
            fields[-1][1].extend(lines[i:j])
            i = j
            continue
        elif (m := _FIELD_RE.match(line)) is not None:
            fields.append((m.group(1), [m.group(2)]))
        else:
            break
        i += 1
    return fields, i


def _block_goes_on(lines: list[str], i: int) -> bool:
    """Whether a field block goes on at line `i`: a continuation line, or a field DEP-3
    knows."""
    if i >= len(lines):
        return False
    line = lines[i]
    if line[:1] in (" ", "\t"):
        return bool(line.strip())
    m = _FIELD_RE.match(line)
    return m is not None and _is_dep3_name(m.group(1))


def _is_dep3_name(name: str) -> bool:
    key = name.lower()
    return key in _DEP3_ONLY | {"from", "subject", "date"} or key.startswith("bug-")


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
    """Drop `[PATCH v2 3/7]`/`[RFC]` prefixes as `git am -b` does; keep `[media]` and the like.

    Linear in the subject: each prefix is found by its closing `]` (one `find`), then its
    content alone is searched for the tag, so a `[` never closed followed by `PATCH` a
    hundred thousand times costs one pass, not a backtrack per `PATCH` (as a regular
    expression matching the whole prefix does; tests/core/test_subject.py holds this to
    that definition)."""
    text = _one_line(raw)
    pos = 0
    while True:
        start = pos + 1 if text[pos : pos + 1].isspace() else pos  # one space: _one_line
        if text[start : start + 1] != "[":
            break
        end = text.find("]", start + 1)
        if end < 0 or _TAG_RE.search(text, start + 1, end) is None:
            break
        pos = end + 1
    return text[pos:].lstrip()


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


def _mail_header(fields: list[tuple[str, list[str]]], rest: list[str]) -> Header:
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
    return Header(info, "mail", raw_subject, enc.strip().lower() if enc else None)


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


# The longest header value handed to the email package: its RFC 2047 decoding takes time
# growing with the square of the encoded words; a longer value is kept as it is written.
DECODE_MAX = 4096


def _decoded(name: str, value: str) -> Any:
    """The email package's parsed header (RFC 2047 decoded), or None if it chokes or the
    value is too long to decode in bounded time."""
    if len(value) > DECODE_MAX:
        return None
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


# `Name Surname <local@domain>` of plain words: what parseaddr answers for it, without
# its tokenizer (a thousand-patch series spent 0.05 s there).
_PLAIN_FROM = re.compile(
    r"([^\W\d_](?:[\w'-]*\w)?(?: +[^\W\d_](?:[\w'-]*\w)?)*) *"
    r"<([\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)>"
)


def _address(value: str | None) -> tuple[str | None, str | None]:
    """`Name <email>` (or a bare address) split into its parts."""
    if not value:
        return None, None
    plain = _PLAIN_FROM.fullmatch(value)
    if plain is not None:
        return _name_addr(" ".join(plain.group(1).split()), plain.group(2))
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
        known = [
            n
            for n, _ in more
            if n.lower() in _DEP3_ONLY | {"from", "subject"} or n.lower().startswith("bug-")
        ]
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
            body_lines.append("" if text.strip() in (".", "") else text)
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
    author = first.get("author") or first.get("from") or _stray_author(lines[end:])
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


_AUTHOR_LINE_RE = re.compile(r"(Author|From):[ \t]*(\S.*)$", re.I)


def _stray_author(lines: Sequence[str]) -> list[str] | None:
    """An `Author:`/`From:` line further down a DEP-3 header than its fields reach (after
    a description that a blank line interrupted): still the patch's author."""
    for line in _until_break(lines):
        m = _AUTHOR_LINE_RE.match(line)
        if m is not None and "@" in m.group(2):
            return [m.group(2)]
    return None


def _hg_header(lines: list[str]) -> HeaderInfo:
    """`hg export`: `# User`, `# Date <unix> <offset west>` lines, then the message."""
    name = addr = None
    date: int | None = None
    tz: str | None = None
    i = 1
    while i < len(lines) and lines[i].startswith("#"):
        line = lines[i]
        if line.startswith("# User "):
            name, addr = _address(line[len("# User ") :])
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


def fallback_subject(name: str) -> str:
    """A header-less patch's commit subject: its file name without .patch/.diff."""
    stem = name.rsplit("/", 1)[-1]
    for suffix in (".patch", ".diff"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem


def is_cover(raw_subject: str | None) -> bool:
    """`[PATCH 0/N]`, `[PATCH v2 00/12]`, `[RFC 0/3]`: the series' cover letter."""
    pos = 0
    while raw_subject is not None and (m := _BRACKET_RE.match(raw_subject, pos)) is not None:
        if _COVER_RE.search(m.group(1).strip()):
            return True
        pos = m.end()
    return False


# Where a patch says which upstream commit it came from (DESIGN §4, provenance). Each
# pattern's group is a commit id or a text holding one.
_ORIGIN_RES = (
    re.compile(r"^From ([0-9a-f]{40}) ", re.M),  # git format-patch's mbox line
    re.compile(r"\(cherry[ -]picked from commit ([0-9a-f]{7,40})\)", re.I),
    re.compile(r"\bcommit ([0-9a-f]{7,40}) upstream\b", re.I),  # stable kernels
    re.compile(r"\[ ?Upstream commit ([0-9a-f]{7,40}) ?\]", re.I),
    re.compile(r"^Origin:[ \t]*(?:upstream|backport)\b[, \t]*(.*)$", re.M | re.I),
    re.compile(r"^Applied-Upstream:[ \t]*(.*)$", re.M | re.I),
    re.compile(r"^Upstream-Status:[ \t]*Backport[ \t]*\[([^\]]*)\]", re.M | re.I),
)
_SHA_IN_TEXT = re.compile(
    r"(?:/commit/|/commits/|/-/commit/|[?;&]id=|[?;&]h=|commit[: ]|\b)([0-9a-f]{7,40})\b"
)


def origins(header: bytes) -> tuple[str, ...]:
    """The upstream commit ids a patch header names as its origin, in the order of the
    evidence they are (DESIGN §4): an mbox `From <sha>` line, `(cherry picked from commit
    …)`, `commit <sha> upstream.`, DEP-3 `Origin: upstream, <url>/commit/<sha>`,
    `Applied-Upstream: <url or sha>`, `Upstream-Status: Backport [<sha or url>]`. A
    version (`Applied-Upstream: 2.4`) names no commit and is left out."""
    text = _decode(header)
    out: list[str] = []
    for pattern in _ORIGIN_RES:
        for m in pattern.finditer(text):
            value = m.group(1)
            if value.isdigit():
                found = []  # a date or a version, not a commit
            elif re.fullmatch(r"[0-9a-f]{7,40}", value):
                found = [value]
            else:
                found = [s for s in _SHA_IN_TEXT.findall(value) if not s.isdigit()]
            out.extend(x for x in found if x not in out)
    return tuple(out)


def folded_header(top: bytes, folded: bytes) -> bytes:
    """The header of a patch `fold` made: the top patch's header with the folded patch's
    description (its subject and body) added as a paragraph, as `stg squash` keeps both
    messages. It goes before a mail's or DEP-3's `---` line (after it, `git am` would
    drop it as notes), else at the end; a folded patch without a description adds
    nothing, and no description is ever dropped."""
    info = read_header(folded).info
    desc = "\n\n".join(p for p in (_one_line(info.subject or ""), info.body.strip("\n")) if p)
    if not desc:
        return top
    para = desc.encode("utf-8", "surrogateescape") + b"\n"
    lines = top.splitlines(keepends=True)
    cut = next(
        (i for i in range(len(lines) - 1, -1, -1) if lines[i].rstrip(b"\r\n") == b"---"),
        None,
    )
    if cut is None:
        cut = len(lines)
    # The blank lines that end the top's description stay where they are, after it.
    end = cut
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    head, blank, tail = b"".join(lines[:end]), b"".join(lines[end:cut]), b"".join(lines[cut:])
    if head and not head.endswith(b"\n"):
        head += b"\n"
    if head:
        head += b"\n"  # a blank line between the two descriptions
    elif not tail:
        blank = b"\n"  # a description of its own, apart from the diff below
    return head + para + blank + tail


def mails(data: bytes) -> list[str]:
    """The subjects of the mails a patch file holds, one per mbox envelope line (`From
    <id> Mon Sep 17 …`); [] for a file that is not an mbox. A file holding several (a
    `git format-patch --stdout` of a range) is several patches in one file."""
    starts = [m.start() for m in re.finditer(rb"(?m)^" + ENVELOPE_RE.pattern, data)]
    out = []
    for i, at in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(data)
        out.append(_one_line(read_header(data[at:end]).info.subject or "") or "(no subject)")
    return out
