"""Where the bench reads and writes: the repository it belongs to, and the folders a person
names (an option, or an environment variable) for what a run produces.

Nothing a run produces — raw outputs, materialised cases, clones — defaults to a path of
one machine or to a folder inside the repository: an option without a value is required
unless its environment variable names the folder.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2]  # bench/: its case files, corpus and reports
REPO = BENCH.parent  # the patchq repository this bench belongs to
CORPUS = BENCH / "corpus"  # names and ids of the harvested corpora (no third-party text)

# The local git mirrors (OWNER+NAME/repo) the corpora are read from.
MIRRORS_ENV = "PATCHQ_BENCH_MIRRORS"
# The folder a person names for what the bench writes: raw run outputs, materialised
# cases, results JSON.
WORK_ENV = "PATCHQ_BENCH_WORK"


def env_default(var: str, *under: str) -> Path | None:
    """The folder the environment variable `var` names (joined with `under`), or None."""
    value = os.environ.get(var)
    return Path(value, *under) if value else None


def path_option(
    ap: argparse.ArgumentParser | argparse._ArgumentGroup,
    flag: str,
    var: str,
    what: str,
    *under: str,
    always: bool = True,
) -> None:
    """Add `flag`, a path (a folder or a file): required unless the environment variable
    `var` names one (then `$var/under...` is its default). With `always=False` the parser
    leaves it None and the command says when it needs it."""
    default = env_default(var, *under)
    shown = "/".join((f"${var}", *under))
    when = "required" if always else "needed to run cases"
    ap.add_argument(
        flag,
        type=Path,
        default=default,
        required=always and default is None,
        help=f"{what} (default: {shown}; {when} when {var} is unset)",
    )


def outside_repo(path: Path, what: str) -> Path:
    """`path`, refused (SystemExit with a one-line reason) when it lies inside the
    repository: run outputs and materialised cases are not the project's files."""
    if path.resolve().is_relative_to(REPO.resolve()) and (REPO / ".git").exists():
        raise SystemExit(f"{what} {path} is inside the repository {REPO}: name a folder outside it")
    return path
