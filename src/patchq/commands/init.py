"""`init`: create an empty patch queue (patchq.toml, series, patches/)."""

from __future__ import annotations

import json
from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.store.files import atomic_write
from patchq.store.patchrepo import CONFIG, PATCHES, SERIES


def init(root: Path, upstream: str | None, branch: str | None, target: str | None) -> Path:
    """Create the queue's files; refuse if a queue is already there."""
    root = root.resolve()
    for name in (CONFIG, SERIES):
        if (root / name).exists():
            raise BadInputError(
                f"a patch queue already exists here ({name})",
                str(root / name),
                "edit it instead, or choose another folder",
            )
    lines = ["# patchq configuration: see README.md for every key", ""]
    for key, value in (("upstream", upstream), ("branch", branch), ("target", target)):
        if value:
            lines.append(f"{key} = {json.dumps(value)}")
    lines += ["strip = 1", "fuzz = 0", "guards = []", ""]
    root.mkdir(parents=True, exist_ok=True)
    (root / PATCHES).mkdir(exist_ok=True)
    atomic_write(root / SERIES, b"", root)
    atomic_write(root / CONFIG, "\n".join(lines).encode(), root)
    return root
