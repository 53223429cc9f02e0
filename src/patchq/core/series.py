"""The `series` file: an ordered list of patches, quilt- and Mercurial-MQ-compatible.

One patch a line, path relative to `patches/`; an optional `-pN` strip level; guards in
MQ's spelling (`#+g`, `#-g`) after the name. Blank lines and comments are kept verbatim,
so `format(parse(text)) == text` for every input; only lines patchq itself adds or
changes are rendered anew.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from patchq.core.errors import BadInputError

_GUARD = re.compile(r"#([+-])([^\s#+-][^\s#]*)$")
_STRIP = re.compile(r"-p(\d+)$")
# The comment a rebase writes for a patch that left the series (docs/formats.md).
_GONE = re.compile(r"#[ \t]*(?:upstreamed|dropped) in [^ \t:]+:[ \t]*")


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of `series`: a patch entry, or (name None) a comment or blank line."""

    raw: str
    name: str | None = None
    strip: int | None = None
    guards: tuple[str, ...] = ()
    lineno: int = 0

    @property
    def is_patch(self) -> bool:
        return self.name is not None

    @property
    def positive_guards(self) -> tuple[str, ...]:
        return tuple(g[1:] for g in self.guards if g.startswith("+"))

    @property
    def negative_guards(self) -> tuple[str, ...]:
        return tuple(g[1:] for g in self.guards if g.startswith("-"))

    def strip_level(self, default: int = 1) -> int:
        return default if self.strip is None else self.strip

    def active(self, guards: Iterable[str]) -> bool:
        """MQ semantics: a `-g` guard excludes when g is active; `+g` guards need one active."""
        on = set(guards)
        if any(g in on for g in self.negative_guards):
            return False
        pos = self.positive_guards
        return not pos or any(g in on for g in pos)


# What separates words on a series line, as quilt's shell reads it: space and tab only
# (str.split() would also split on NBSP, U+2028 and other Unicode spaces).
_BLANKS = " \t"


def _lines(text: str) -> list[str]:
    """The lines of a series file, ends kept: only LF ends a line (CR LF is one end),
    not the Unicode separators str.splitlines also splits on, so no name holding one is
    read as two entries."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _parse_line(line: str, lineno: int, where: str) -> Entry:
    body = line[:-1] if line.endswith("\n") else line
    body = body[:-1] if line.endswith("\r\n") else body
    stripped = body.strip(_BLANKS)
    if not stripped or stripped.startswith("#"):
        return Entry(raw=line, lineno=lineno)
    # quilt: "name [-pN] [#comment]"; MQ guards live in the comment part.
    code, hashpart = stripped, ""
    if "#" in stripped:
        idx = stripped.index("#")
        code, hashpart = stripped[:idx].rstrip(_BLANKS), stripped[idx:]
    words = code.replace("\t", " ").split(" ")
    words = [w for w in words if w]
    name = words[0]
    strip: int | None = None
    for word in words[1:]:
        m = _STRIP.match(word)
        if m is None:
            raise BadInputError(
                f"unexpected option {word!r} after {name!r}",
                f"{where}:{lineno}",
                "series lines are `name [-pN] [#+guard ...]`",
            )
        strip = int(m.group(1))
    guards: list[str] = []
    for token in (t for t in hashpart.replace("\t", " ").split(" ") if t):
        m = _GUARD.match(token)
        if m is not None:
            guards.append(m.group(1) + m.group(2))
        elif token.startswith("#") and token[1:2] in ("+", "-"):
            raise BadInputError(
                f"malformed guard {token!r}", f"{where}:{lineno}", "guards are `#+name` or `#-name`"
            )
        else:
            break  # the rest is a free-text comment
    return Entry(raw=line, name=name, strip=strip, guards=tuple(guards), lineno=lineno)


@dataclass(frozen=True, slots=True)
class Series:
    """The parsed `series` file; entries include comments and blank lines."""

    entries: tuple[Entry, ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, text: str, where: str = "series") -> Series:
        """Parse series text; duplicate patch names are bad input."""
        lines = _lines(text)
        entries = tuple(_parse_line(line, i, where) for i, line in enumerate(lines, 1))
        seen: dict[str, int] = {}
        for e in entries:
            if e.name is None:
                continue
            if e.name in seen:
                raise BadInputError(
                    f"patch {e.name!r} is listed twice (first on line {seen[e.name]})",
                    f"{where}:{e.lineno}",
                    "remove one of the lines",
                )
            seen[e.name] = e.lineno
        return cls(entries)

    def format(self) -> str:
        """The file text; byte-identical to the parsed input where nothing changed."""
        out = []
        for i, e in enumerate(self.entries):
            raw = e.raw
            if i < len(self.entries) - 1 and not raw.endswith("\n"):
                raw += "\n"
            out.append(raw)
        return "".join(out)

    @property
    def patches(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.is_patch)

    def names(self) -> list[str]:
        return [e.name for e in self.entries if e.name is not None]

    def active(self, guards: Iterable[str]) -> tuple[Entry, ...]:
        g = tuple(guards)
        return tuple(e for e in self.patches if e.active(g))

    def find(self, name: str) -> Entry | None:
        for e in self.entries:
            if e.name == name:
                return e
        return None

    def commented(self, name: str) -> tuple[Entry, ...]:
        """The comment lines that stand for patch `name` commented out: what a rebase
        leaves (`# upstreamed in <commit>: name`, `# dropped in <commit>: name`) and a
        person's `#name` or `# name -p1 #+guard`; not free text that mentions it."""
        out = []
        for e in self.entries:
            body = e.raw.rstrip("\r\n").strip(_BLANKS)
            if e.name is not None or not body.startswith("#"):
                continue
            m = _GONE.match(body)
            rest = body[m.end() :] if m else body[1:].lstrip(_BLANKS)
            try:
                entry = _parse_line(rest, 0, "series")
            except BadInputError:
                continue  # prose, not a commented-out line
            if entry.name == name:
                out.append(e)
        return tuple(out)

    def with_appended(self, new: Sequence[Entry], after: str | None = None) -> Series:
        """A new Series with `new` entries appended, or inserted after patch `after`."""
        for e in new:
            if e.name is not None and self.find(e.name) is not None:
                raise BadInputError(f"patch {e.name!r} is already in the series", "series")
        entries = list(self.entries)
        if after is None:
            if entries and not entries[-1].raw.endswith("\n"):
                entries[-1] = replace(entries[-1], raw=entries[-1].raw + "\n")
            return Series(tuple(entries) + tuple(new))
        for i, e in enumerate(entries):
            if e.name == after:
                return Series(tuple(entries[: i + 1]) + tuple(new) + tuple(entries[i + 1 :]))
        raise BadInputError(f"no patch named {after!r} in the series", "series")


def valid_guard(token: str) -> bool:
    """Whether `token` is a guard as a series line spells it after `#`: `+name`, `-name`."""
    return _GUARD.match("#" + token) is not None


def with_guards(entry: Entry, guards: Sequence[str]) -> Entry:
    """`entry` with exactly `guards` (`+g`/`-g`): its name, strip level and free comment
    kept as written, the guards in MQ's spelling after them (`name -p1 #+g #-h`)."""
    assert entry.name is not None
    body = entry.raw.rstrip("\r\n")
    end = entry.raw[len(body) :]
    lead = body[: len(body) - len(body.lstrip(_BLANKS))]
    stripped = body.strip(_BLANKS)
    code, rest = stripped, ""
    if "#" in stripped:
        idx = stripped.index("#")
        code, rest = stripped[:idx].rstrip(_BLANKS), stripped[idx:]
        tokens = rest.replace("\t", " ").split(" ")
        while tokens and (not tokens[0] or _GUARD.match(tokens[0])):
            tokens.pop(0)  # the old guards go; a free-text comment after them stays
        rest = " ".join(tokens)
    words = [code, *(f"#{g}" for g in guards), *([rest] if rest else [])]
    return replace(entry, raw=lead + " ".join(words) + end, guards=tuple(guards))


def make_entry(name: str, strip: int | None = None, guards: Sequence[str] = ()) -> Entry:
    """An entry rendered in the canonical spelling: `name [-pN] [#+g ...]`."""
    if not name or any(c.isspace() for c in name) or name.startswith("#"):
        raise BadInputError(
            f"invalid patch name {name!r}", "series", "names may not contain spaces or start with #"
        )
    parts = [name]
    if strip is not None:
        parts.append(f"-p{strip}")
    parts.extend(f"#{g}" for g in guards)
    return Entry(raw=" ".join(parts) + "\n", name=name, strip=strip, guards=tuple(guards))
