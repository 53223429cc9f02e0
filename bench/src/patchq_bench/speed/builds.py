"""Which patchq the speed bench measures (a snapshot, a `--baseline` build) and on what
machine, with which peers.
"""

from __future__ import annotations

import compileall
import hashlib
import io
import os
import platform
import shutil
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

from patchq_bench.paths import REPO as PROJECT
from patchq_bench.speed.rows import BASELINE, Ctx, Row
from patchq_bench.speed.workspace import TIME, BenchError, first_line, git, run


def snapshot_rev(rev: str, dest: Path) -> tuple[str, Path]:
    """src/patchq of this project as of `rev`, byte-compiled in `dest`: (its description,
    the folder to put on PYTHONPATH)."""
    sha = git(PROJECT, "rev-parse", "--verify", f"{rev}^{{commit}}")
    dest.mkdir(parents=True)
    archive = run(["git", "-C", str(PROJECT), "archive", "--format=tar", sha, "src/patchq"])
    if archive.rc != 0:
        raise BenchError(f"git archive {rev}: {first_line(archive.err)}")
    # Regular files under src/patchq only, written by hand: `extractall(filter=...)` is
    # missing from Python 3.11 before 3.11.4 (Debian 12's python3 is 3.11.2).
    with tarfile.open(fileobj=io.BytesIO(archive.out)) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if not member.isfile() or parts[:2] != ("src", "patchq") or ".." in parts:
                continue
            source = tar.extractfile(member)
            assert source is not None
            (dest / member.name).parent.mkdir(parents=True, exist_ok=True)
            (dest / member.name).write_bytes(source.read())
    compileall.compile_dir(str(dest / "src" / "patchq"), quiet=1)
    subject = git(PROJECT, "log", "-1", "--format=%h %s", sha)
    return subject, dest / "src"


def with_baseline(rows: list[Row], pythonpath: Path) -> list[Row]:
    """Each patchq row followed by its twin that runs the baseline build."""

    def twin(row: Row) -> Row:
        def on(cx: Ctx) -> Ctx:
            return replace(
                cx, patchq=[sys.executable, "-m", "patchq"], env={"PYTHONPATH": str(pythonpath)}
            )

        return Row(
            row.key + BASELINE,
            row.label + " [baseline]",
            row.onto,
            True,
            lambda s, cx: row.setup(s, on(cx)),
            lambda s, cx: row.fn(s, on(cx)),
            row.tree,
        )

    out: list[Row] = []
    for row in rows:
        out.append(row)
        if row.patchq:
            out.append(twin(row))
    return out


# --- machine and reporting -----------------------------------------------------------------


def machine() -> dict[str, object]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gv = run(["git", "--version"]).out.decode().strip()
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "git": gv.removeprefix("git version "),
        "os": platform.platform(),
    }


def fs_type(path: Path) -> str:
    p = run(["df", "--output=fstype", str(path)])
    lines = p.out.decode().split()
    return lines[-1] if p.rc == 0 and len(lines) > 1 else "unknown filesystem"


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def patchq_commit(snapshot: Path | None) -> str:
    p = run(["git", "-C", str(PROJECT), "rev-parse", "--short", "HEAD"])
    if p.rc != 0:
        return "unknown"
    rev = p.out.decode().strip()
    dirty = run(["git", "-C", str(PROJECT), "status", "--porcelain", "--", "src"])
    if dirty.rc == 0 and dirty.out.strip():
        rev += " (+ uncommitted changes in src/)"
    if snapshot is not None:
        rev += f"; run from a snapshot of src/patchq, sha256 {tree_digest(snapshot)[:12]}"
    return rev


def peers(install: bool) -> tuple[dict[str, str | None], list[str]]:
    """Where each peer is (None: missing); quilt installed with apt-get when asked."""
    notes = []
    quilt = shutil.which("quilt")
    if quilt is None and install:
        apt = shutil.which("apt-get")
        if apt:
            print("bench: quilt missing; apt-get install -y quilt", flush=True)
            p = run([apt, "install", "-y", "quilt"])
            if p.rc != 0:
                notes.append(f"apt-get install quilt failed: {first_line(p.err)}")
            quilt = shutil.which("quilt")
        else:
            notes.append("quilt missing and no apt-get to install it")
    found = {
        "git": shutil.which("git"),
        "git am": shutil.which("git"),
        "quilt": quilt,
        "GNU time (peak RSS)": TIME,
    }
    return found, notes
