"""`export`: the active series as an mbox (for `git am`) or a quilt folder."""

from __future__ import annotations

from pathlib import Path

from .. import exporters
from ..application import load_patch
from ..context import Context
from ..errors import BadInputError
from ..fsutil import atomic_write
from .apply import active_entries


def _items(ctx: Context) -> list[exporters.Outgoing]:
    repo = ctx.repo()
    _, entries = active_entries(ctx, None)
    out = []
    for e in entries:
        data, patch = load_patch(repo, e)
        out.append(exporters.Outgoing(e.name or "", data, patch, e.strip_level(repo.config.strip)))
    return out


def export_mbox(ctx: Context, path: Path) -> int:
    items = _items(ctx)
    atomic_write(path, exporters.mbox(items, 0))
    return len(items)


def export_quilt(ctx: Context, folder: Path) -> int:
    """Write `folder/series` and the patch files; refuse to overwrite a different file."""
    items = _items(ctx)
    series = exporters.quilt_series(items).encode()
    # The series too: exporting into a patch repo must not replace its own series.
    for dest, data in [(folder / it.name, it.data) for it in items] + [(folder / "series",
                                                                        series)]:
        if dest.exists() and (not dest.is_file() or dest.read_bytes() != data):
            raise BadInputError(f"{dest} exists with other content", str(folder),
                                "export into an empty folder")
    for it in items:
        atomic_write(folder / it.name, it.data)
    atomic_write(folder / "series", series)
    return len(items)
