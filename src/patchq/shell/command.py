"""Run a command the user gave (`rebase --exec CMD`, `exec = "…"` in patchq.toml) in the
target, as they would run it themselves.

Unlike a git child (git/repo.py), whose environment is scrubbed and whose hooks and
configured programs are disarmed, this is the person's own build or test: it runs through
`/bin/sh -c` in the target's folder with their environment (plus the `extra` variables
patchq adds, such as `PATCHQ_PATCH`), their stdin, and its output on patchq's stderr —
stdout stays for patchq's data and `--json`. Nothing a patch or the target holds is ever
run from here: the command string comes only from the person.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path


def run(command: str, cwd: Path, extra: Mapping[str, str]) -> int:
    """Run `command` through the shell in `cwd`; its exit status (a signal: 128 + N, as
    the shell reports it)."""
    env = dict(os.environ)
    env.update(extra)
    proc = subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env=env, stdout=2, check=False)
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
