"""The pinned copies: the bytes `series.lock` pins for a patch that `refresh` rewrote
while the stack stood on another base than the lock's.

`push --merge` onto a newer upstream merges each patch against its pre-image on the
lock's base: the old series re-applied there (stack/apply.py `OldStack`). Once a stopped
patch is refreshed on the new base its file no longer applies on the old one, and every
patch after it would lose its pre-image — the next one that needs the merge could never
be pushed. So `refresh` keeps, in `.git/patchq/<queue>.pinned.json`, the bytes the lock
pins for the patch it rewrites, keyed by their sha256 (the lock's own hash of them);
the re-application reads them where the file no longer holds what the lock pins. Only
copies the lock still pins are kept: each write drops the others.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from patchq.store import jsonrecord as jr


def pinned_path(state_dir: Path, queue: str) -> Path:
    """The record of `queue`'s pinned copies."""
    return state_dir / f"{queue}.pinned.json"


def _from_doc(doc: dict[str, Any]) -> dict[str, bytes]:
    copies = jr.obj(doc, "copies")
    out: dict[str, bytes] = {}
    for sha, text in copies.items():
        if not isinstance(text, str):
            raise jr.StateFormatError(f"the copy {sha!r} is {type(text).__name__}, not text")
        try:
            out[str(sha)] = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise jr.StateFormatError(f"the copy {sha!r} is not base64") from None
    return out


def read(path: Path) -> dict[str, bytes]:
    """The pinned copies at `path`, by sha256 (none when there is no record)."""
    got = jr.read(
        path,
        _from_doc,
        "record of pinned patch copies",
        "delete it: a `push --merge` after a refreshed patch then merges without "
        "the pinned pre-images",
    )
    return got or {}


def kept(copies: Mapping[str, bytes], sha: str, data: bytes, pinned: set[str]) -> bytes:
    """The record's bytes with `data` (whose sha256 is `sha`) kept, and of the others only
    those the lock still pins (`pinned`: the lock's hashes)."""
    out = {k: v for k, v in copies.items() if k in pinned} | {sha: data}
    return jr.dumps(
        {
            "version": jr.VERSION,
            "copies": {k: base64.b64encode(v).decode("ascii") for k, v in sorted(out.items())},
        }
    )
