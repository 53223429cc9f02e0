"""Three-way merges of file texts: `merge3` (git's algorithm, ported) in process, with
the long diffs it needs from one `git diff-tree --stdin` kept for the run (`diffserver`),
and `git merge-file` only for what it refuses as binary.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from patchq.core import merge3
from patchq.core.errors import GitError
from patchq.core.resolve import Region, Resolution
from patchq.git.diffserver import DiffServer
from patchq.git.environment import check_interrupt
from patchq.git.store import ObjectStore


class Merging(ObjectStore):
    """`git merge-file --diff3` of three texts, answered in process where it can be."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._merges: dict[tuple[bytes, bytes, bytes, tuple[str, str, str]], tuple[bytes, int]] = {}
        self._differ: DiffServer | None = None  # git's diff for merges, started on need
        self._differ_failed = False

    def merge_file(
        self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
    ) -> tuple[bytes, int]:
        """`git merge-file --diff3` of three versions: (merged bytes, number of conflicts).

        Computed in process by `merge3` (git's algorithm, ported), so a replay with many
        conflicting hunks starts no git process per hunk. A diff too long for Python goes
        to one `git diff-tree --stdin` kept for the run (diffserver), and `git merge-file`
        runs only for input it refuses as binary. The replay asks the same question twice
        for a moved hunk it doubts and then must merge; the last few answers are kept."""
        key = (
            hashlib.sha1(ours).digest(),
            hashlib.sha1(base).digest(),
            hashlib.sha1(theirs).digest(),
            labels,
        )
        hit = self._merges.get(key)
        if hit is not None:
            return hit
        result = merge3.merge(ours, base, theirs, labels, far=self._diff, split=self.lines.split)
        if result is None:  # binary: git says why it will not merge
            result = self._merge_file(ours, base, theirs, labels)
        self._merges[key] = result
        if len(self._merges) > 8:
            self._merges.pop(next(iter(self._merges)))
        return result

    def merge_resolving(
        self,
        ours: bytes,
        base: bytes,
        theirs: bytes,
        labels: tuple[str, str, str],
        *,
        remembered: merge3.Remembered | None = None,
        regions: list[Region] | None = None,
    ) -> tuple[bytes, int, list[Resolution]]:
        """`merge_file`, with each conflict region first offered to the finer methods of
        `core.resolve` (then to `remembered`): (merged bytes, conflicts left, the
        resolutions made); `regions`, if given, is filled with every conflict region."""
        resolved: list[Resolution] = []
        result = merge3.merge(
            ours,
            base,
            theirs,
            labels,
            far=self._diff,
            split=self.lines.split,
            resolved=resolved,
            regions=regions,
            remembered=remembered,
        )
        if result is None:  # binary: nothing finer than git's answer
            return (*self.merge_file(ours, base, theirs, labels), [])
        return result[0], result[1], resolved

    def _diff(self, a: bytes, b: bytes) -> Callable[[], merge3.Script]:
        """git's diff of two texts, from the diff server; if its store cannot be written
        (a small /dev/shm that is full) or git cannot start, this run diffs in Python."""
        if not self._differ_failed:
            try:
                if self._differ is None:
                    self._differ = DiffServer()
                    self.processes += 1
                return self._differ.ask(a, b)
            except OSError:
                self._differ_failed = True  # answers already asked for can still be read
        return partial(merge3.script, a, b)

    def _merge_file(
        self, ours: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]
    ) -> tuple[bytes, int]:
        with tempfile.TemporaryDirectory(prefix="patchq-merge-") as tmp:
            paths = []
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                p = Path(tmp) / name
                p.write_bytes(data)
                paths.append(str(p))
            self.processes += 1
            proc = subprocess.run(
                [
                    "git",
                    "merge-file",
                    "-p",
                    "--diff3",
                    "-L",
                    labels[0],
                    "-L",
                    labels[1],
                    "-L",
                    labels[2],
                    *paths,
                ],
                capture_output=True,
                env=self.env(),
            )
        check_interrupt(proc)
        if proc.returncode < 0 or proc.returncode > 127:
            raise GitError(
                f"git merge-file failed: {proc.stderr.decode(errors='replace')}", str(self.root)
            )
        return proc.stdout, proc.returncode

    def close(self) -> None:
        if self._differ is not None:
            self._differ.close()
            self._differ = None
        super().close()
