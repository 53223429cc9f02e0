"""Reading and writing the JSON records patchq keeps in `.git/patchq/`: typed fields, a
version, one error.

A state file is patchq's own, but it outlives the process that wrote it: a newer patchq,
a crash or a person may have changed it. Each record's deserialiser reads every field
through these helpers, which check its type as they read it, so a damaged file fails in
one place with one `StateFormatError` (which the store turns into exit 5 naming the
file) instead of a KeyError or a wrong value deep inside a rebase.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from patchq.core.errors import UnsafeStateError

T = TypeVar("T")

# The record version this patchq writes. A file without one was written before records
# were versioned, in the shape of version 1.
VERSION = 1


class StateFormatError(ValueError):
    """A record this patchq cannot read: bad JSON, a key missing or mistyped, a newer
    version."""


def dumps(doc: Mapping[str, Any]) -> bytes:
    """The bytes of a record: indented JSON in the serialiser's key order, one newline."""
    # Key order is the serialiser's, not sorted: mappings kept as tuples of pairs then
    # read back in the order they were written, so a round trip gives an equal value.
    return (json.dumps(doc, indent=2) + "\n").encode()


def loads(data: str | bytes) -> dict[str, Any]:
    """The top-level object of a record, its version checked."""
    try:
        doc = json.loads(data)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError alike
        raise StateFormatError(f"not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise StateFormatError("not a JSON object")
    version = doc.get("version", 1)
    if type(version) is not int or version < 1:
        raise StateFormatError(f"'version' is {version!r}, not a version")
    if version > VERSION:
        raise StateFormatError(
            f"written by a newer patchq (version {version}; this one reads up to {VERSION})"
        )
    return doc


def read(path: Path, parse: Callable[[dict[str, Any]], T], what: str, hint: str) -> T | None:
    """The record at `path` read by `parse`, or None when there is no file; a damaged one
    is exit 5 naming the file: `the <what> is damaged (<why>)` — <hint>."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return parse(loads(data))
    except StateFormatError as e:
        raise UnsafeStateError(f"the {what} is damaged ({e})", str(path), hint) from None


def _get(doc: Mapping[str, Any], key: str) -> Any:
    if key not in doc:
        raise StateFormatError(f"{key!r} is missing")
    return doc[key]


def _wrong(key: str, value: Any, kind: str) -> StateFormatError:
    return StateFormatError(f"{key!r} is {type(value).__name__}, not {kind}")


def obj(doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A nested object."""
    v = _get(doc, key)
    if not isinstance(v, dict):
        raise _wrong(key, v, "an object")
    return v


def obj_or_none(doc: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """A nested object or null."""
    v = _get(doc, key)
    if v is not None and not isinstance(v, dict):
        raise _wrong(key, v, "an object or null")
    return v


def text(doc: Mapping[str, Any], key: str) -> str:
    """A string."""
    v = _get(doc, key)
    if not isinstance(v, str):
        raise _wrong(key, v, "a string")
    return v


def text_or_none(doc: Mapping[str, Any], key: str, required: bool = True) -> str | None:
    """A string or null; with `required=False` an absent key is null too."""
    if not required and key not in doc:
        return None
    v = _get(doc, key)
    if v is not None and not isinstance(v, str):
        raise _wrong(key, v, "a string or null")
    return v


def integer(doc: Mapping[str, Any], key: str) -> int:
    """An integer (JSON's true and false are not)."""
    v = _get(doc, key)
    if type(v) is not int:
        raise _wrong(key, v, "an integer")
    return v


def flag(doc: Mapping[str, Any], key: str) -> bool:
    """A boolean."""
    v = _get(doc, key)
    if not isinstance(v, bool):
        raise _wrong(key, v, "a boolean")
    return v


def flag_or_none(doc: Mapping[str, Any], key: str) -> bool | None:
    """A boolean, or None where the key is absent."""
    return flag(doc, key) if key in doc else None


def items(doc: Mapping[str, Any], key: str) -> list[Any]:
    """A list, its items for the caller to read."""
    v = _get(doc, key)
    if not isinstance(v, list):
        raise _wrong(key, v, "a list")
    return v


def objects(doc: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """A list of objects."""
    out = items(doc, key)
    if not all(isinstance(x, dict) for x in out):
        raise StateFormatError(f"{key!r} holds something that is not an object")
    return out


def texts(doc: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A list of strings."""
    out = items(doc, key)
    if not all(isinstance(x, str) for x in out):
        raise StateFormatError(f"{key!r} holds something that is not a string")
    return tuple(out)


def pairs(doc: Mapping[str, Any], key: str) -> tuple[tuple[str, str], ...]:
    """An object of strings, as (key, value) pairs in the file's order."""
    out = obj(doc, key)
    if not all(isinstance(v, str) for v in out.values()):
        raise StateFormatError(f"{key!r} holds something that is not a string")
    return tuple(out.items())
