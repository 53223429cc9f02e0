"""A shallow clone's cut: the commits whose parents `git clone --depth` left out.

git lists them in `shallow` in the common git directory; `git log` shows each as a root
commit that adds every file, and the history before it is not there. Evidence read from
a range that crosses the cut (the commits that changed a hunk's lines, the range's
patch-ids) would name that commit for everything: the run goes without it instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from patchq.core.errors import MissingObjectError

_ID = re.compile(r"[0-9a-f]{40}")


def shallow_commits(common_dir: Path) -> frozenset[str]:
    """The commits of the clone's cut (none for a full clone): read when asked, twice a
    run at most (a fetch between two runs of one process may have deepened the clone)."""
    try:
        text = (common_dir / "shallow").read_text("ascii", "replace")
    except OSError:
        return frozenset()
    return frozenset(x for x in text.split() if _ID.fullmatch(x))


def refuse_cut(common_dir: Path, where: str, old: str, new: str, commits: Iterable[str]) -> None:
    """MissingObjectError where one of `commits`, read from `old..new`, is the cut."""
    cut = shallow_commits(common_dir)
    for c in commits if cut else ():
        if c in cut:
            raise MissingObjectError(
                f"the history of {old[:12]}..{new[:12]} is cut at {c[:12]} (a shallow clone)",
                where,
                oid=c,
            )
