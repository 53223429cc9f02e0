"""Which commands a person trusts a patch repo to run: the marks, and the file holding them.

A patch repo's files are anyone's text — a clone, a tarball, a pull brings them — so a
command its `patchq.toml` names (`exec`, `exec-each`) is never run because it is there.
patchq draws the line git draws for hooks and config that come with a clone, and since it
cannot tell a clone from the person's own repo, it draws it for every patch repo: such a
command runs only when the person gave it on the command line (`rebase --exec`), or
trusted it in their own configuration, outside any patch repo (`patchq trust`).

A mark holds the patch repo root's absolute path and the sha256 of the exact command
text, so the same text in another folder, or a pulled change to the text, is not
trusted. The key (`exec`/`exec-each`) and the text are kept too, to be shown; only the
root and the hash decide. Pure: the file's bytes in, marks out (store/trust.py reads and
writes the file).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from patchq.core.errors import BadInputError

VERSION = 1
KEYS = ("exec", "exec-each")  # the patchq.toml keys that name a command patchq runs


def digest(command: str) -> str:
    """The sha256 of the exact command text (hex)."""
    return hashlib.sha256(command.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True, slots=True)
class Mark:
    """One trusted command: the patch repo root and the hash of its text decide."""

    root: str
    key: str
    sha256: str
    command: str

    def to_doc(self) -> dict[str, str]:
        return {"root": self.root, "key": self.key, "sha256": self.sha256, "command": self.command}


@dataclass(frozen=True, slots=True)
class Configured:
    """A command a patch repo's patchq.toml names, and whether the person trusts it."""

    key: str
    command: str
    trusted: bool

    def to_doc(self) -> dict[str, object]:
        return {"key": self.key, "command": self.command, "trusted": self.trusted}


def trusts(marks: tuple[Mark, ...], root: str, command: str) -> bool:
    """Whether a mark trusts `command` in the patch repo at `root`."""
    h = digest(command)
    return any(m.root == root and m.sha256 == h for m in marks)


def parse(data: bytes, where: str) -> tuple[Mark, ...]:
    """The marks of a trust file; a damaged file is bad input (exit 4) naming it."""
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise BadInputError(f"the trust file is not JSON ({e})", where) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("marks"), list):
        raise BadInputError("the trust file holds no list of marks", where)
    if doc.get("version", VERSION) != VERSION:
        raise BadInputError(f"the trust file's version {doc.get('version')!r} is unknown", where)
    out = []
    for m in doc["marks"]:
        fields = ("root", "key", "sha256", "command")
        if not isinstance(m, dict) or not all(isinstance(m.get(k), str) for k in fields):
            raise BadInputError("a mark of the trust file is damaged", where)
        out.append(Mark(m["root"], m["key"], m["sha256"], m["command"]))
    return tuple(out)


def render(marks: tuple[Mark, ...]) -> bytes:
    """The bytes of a trust file: sorted marks, indented JSON, one newline."""
    ordered = sorted(marks, key=lambda m: (m.root, m.key, m.sha256))
    doc = {"version": VERSION, "marks": [m.to_doc() for m in ordered]}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


def marked(marks: tuple[Mark, ...], root: str, commands: dict[str, str]) -> tuple[Mark, ...]:
    """`marks` with the patch repo at `root` trusting exactly `commands` (key: text): its
    earlier marks for those keys replaced."""
    kept = tuple(m for m in marks if not (m.root == root and m.key in commands))
    new = tuple(Mark(root, k, digest(c), c) for k, c in sorted(commands.items()))
    return kept + new


def revoked(marks: tuple[Mark, ...], root: str) -> tuple[Mark, ...]:
    """`marks` without any of the patch repo at `root`."""
    return tuple(m for m in marks if m.root != root)
