"""Drift history: one `git log` for every drifted file, whatever their names."""

from __future__ import annotations

import pytest

from patchq.core.errors import GitError
from patchq.git.repo import GitRepo
from patchq.rebase.drift import histories, histories_later

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


def test_history_asked_early_is_the_same_and_raises_as_it_would(upstream: Upstream) -> None:
    """The rebase asks for the history at its start and reads it at the first
    attribution (issue 22: git works on it meanwhile): the answer is `histories`' own,
    and a git failure is raised where it is read, not lost in the background."""
    upstream.write("a.txt", "one\ntwo\n").write("b.txt", "x\n")
    old = upstream.commit("base")
    upstream.write("a.txt", "one\nTWO\n")
    mid = upstream.commit("drift a")
    upstream.write("b.txt", "y\n").write("a.txt", "ONE\nTWO\n")
    new = upstream.commit("drift both")
    g = GitRepo(upstream.path)
    later = histories_later(g, old, new, ["a.txt", "b.txt"], {})
    got = later()
    assert got == histories(g, old, new, ["a.txt", "b.txt"], {})
    assert [c.commit for c in got["a.txt"]] == [mid, new]
    assert [c.commit for c in got["b.txt"]] == [new]
    assert later() is got  # read twice, asked once
    broken = histories_later(g, old, "no-such-revision", ["a.txt"], {})
    with pytest.raises(GitError):
        broken()
