"""Drift history: one `git log` for every drifted file, whatever their names."""

from __future__ import annotations

from patchq.git.repo import GitRepo
from patchq.ops.drift import histories

from ..conftest import Upstream


def test_history_covers_names_stdin_cannot_carry(upstream: Upstream) -> None:
    """Paths go to `git log --stdin`; a name with a newline, or ending in CR (git drops a
    CR before the LF of a stdin line), goes as an argument instead — found by review."""
    names = ["plain.txt", "cr\r", "new\nline", "a b/c.txt"]
    for n in names:
        upstream.write(n, "one\ntwo\n")
    old = upstream.commit("base")
    for n in names:
        upstream.write(n, "one\nTWO\n")
    new = upstream.commit("drift")
    got = histories(GitRepo(upstream.path), old, new, names, {})
    assert {n: [c.commit for c in got[n]] for n in names} == {n: [new] for n in names}
    assert all(c.ranges for n in names for c in got[n])
