"""`init`: create a patch queue (patchq.toml, series, patches/), or make one of a folder
that already holds a quilt `series` (a recipe's, Debian's): its series is kept."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.core.series import Series
from patchq.store.files import atomic_write, read_optional
from patchq.store.patchrepo import CONFIG, PATCHES, SERIES


@dataclass(frozen=True, slots=True)
class InitOutcome:
    """The patch repo folder, and the patches of the series found there (None: there was
    no series, an empty one was written)."""

    root: Path
    kept: int | None


def init(root: Path, upstream: str | None, branch: str | None, target: str | None) -> InitOutcome:
    """Create the queue's files; refuse if a queue (patchq.toml) is already there. A
    `series` already there (a file, or a link inside the folder) is kept as it is."""
    root = root.resolve()
    if (root / CONFIG).exists() or (root / CONFIG).is_symlink():
        raise BadInputError(
            f"a patch queue already exists here ({CONFIG})",
            str(root / CONFIG),
            "edit it instead, or choose another folder",
        )
    series_path = root / SERIES
    kept: int | None = None
    if series_path.exists() or series_path.is_symlink():
        data = read_optional(series_path)
        if data is None:
            raise BadInputError("series is a symlink to nothing", str(series_path))
        text = data.decode("utf-8", "surrogateescape")
        kept = len(Series.parse(text, str(series_path)).patches)
    lines = ["# patchq configuration: see README.md for every key", ""]
    for key, value in (("upstream", upstream), ("branch", branch), ("target", target)):
        if value:
            lines.append(f"{key} = {json.dumps(value)}")
    lines += ["strip = 1", "fuzz = 0", "guards = []", ""]
    root.mkdir(parents=True, exist_ok=True)
    (root / PATCHES).mkdir(exist_ok=True)
    if kept is None:
        atomic_write(series_path, b"", root)
    atomic_write(root / CONFIG, "\n".join(lines).encode(), root)
    return InitOutcome(root, kept)
