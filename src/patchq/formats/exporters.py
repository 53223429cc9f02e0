"""Taking the series out: an mbox for `git am`, a quilt folder for `quilt push -a`.

Only active patches (guards honoured) are exported: quilt reads MQ guards as comments
and would apply a guarded-out patch.
"""

from __future__ import annotations

import email.utils
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from email.header import Header

from patchq.core.header import fallback_subject, header_info
from patchq.core.patch import Patch

_ENVELOPE = b"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"


@dataclass(frozen=True, slots=True)
class Outgoing:
    name: str
    data: bytes
    patch: Patch
    strip: int


def _subject_line(subject: str, n: int, total: int) -> str:
    prefix = "[PATCH]" if total == 1 else f"[PATCH {n}/{total}]"
    text = f"{prefix} {subject}"
    if text.isascii():
        return text
    return Header(text, "utf-8").encode()


def _mail_date(when: int, tz: str | None) -> str:
    """An RFC 2822 date in the patch's own zone, so `git am` records the very author date."""
    offset = 0
    if tz and len(tz) == 5 and tz[0] in "+-" and tz[1:].isdigit():
        offset = (-1 if tz[0] == "-" else 1) * (int(tz[1:3]) * 3600 + int(tz[3:]) * 60)
    zone = timezone(timedelta(seconds=offset))
    return email.utils.format_datetime(datetime.fromtimestamp(when, zone))


def to_mail(
    item: Outgoing,
    n: int,
    total: int,
    fallback_date: int,
    *,
    fallback_tz: str = "+0000",
    who: tuple[str, str] | None = None,
) -> bytes:
    """One patch as a mail message `git am` takes; a mail-format patch keeps its bytes.

    A patch without an author is sent from `who` (the user's git identity, as `push`
    commits it), else from `patchq <patchq@invalid>`."""
    if item.data.startswith(b"From ") and item.strip == 1:
        data = item.data
        return data if data.endswith(b"\n") else data + b"\n"
    info = header_info(item.patch.header)
    subject = info.subject or fallback_subject(item.name)
    name, address = who or ("patchq", "patchq@invalid")
    author = email.utils.formataddr((info.author_name or name, info.author_email or address))
    when = info.date if info.date is not None else fallback_date
    date = _mail_date(when, info.tz if info.date is not None else fallback_tz)
    head = f"From: {author}\nDate: {date}\nSubject: {_subject_line(subject, n, total)}\n\n"
    body = info.body.strip("\n")
    out = _ENVELOPE + head.encode()
    if body:
        out += body.encode() + b"\n"
    out += b"---\n"
    # git am takes -p1 only; a -p0 patch's section headers are re-rendered with a/ b/.
    sections = b"".join(
        (s if item.strip == 1 else replace(s, raw_header=None)).render()
        for s in item.patch.sections
    )
    return out + sections + b"\n"


def mbox(
    items: Sequence[Outgoing],
    fallback_date: int,
    fallback_tz: str = "+0000",
    who: tuple[str, str] | None = None,
) -> bytes:
    """The whole active series as one mbox, in series order; a patch whose header has no
    date is dated `fallback_date` (patchq passes the base's, as `push` dates its commit)
    and one without an author is sent from `who`."""
    return b"".join(
        to_mail(it, i, len(items), fallback_date, fallback_tz=fallback_tz, who=who)
        for i, it in enumerate(items, 1)
    )


def quilt_series(items: Sequence[Outgoing]) -> str:
    """A quilt `series` naming the exported patches with their strip levels."""
    return "".join(f"{it.name}{'' if it.strip == 1 else f' -p{it.strip}'}\n" for it in items)
