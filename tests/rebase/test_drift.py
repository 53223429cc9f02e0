"""Drift history: one `git log` for every drifted file, whatever their names."""

from __future__ import annotations

import pytest

from patchq.core.errors import GitError
from patchq.git import history as repo_mod
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
    attribution (git works on it meanwhile): the answer is `histories`' own,
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


def test_history_of_many_files_is_one_log_without_pathspecs(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past PATHSPEC_MAX files, the log is asked for the whole range and each wanted
    file's history kept (git matched every tree entry against every pathspec: 17 s for
    1,757 of curl's files). The answer is the pathspec query's: the same
    commits and ranges per file, renames and names git quotes included, the files no
    one asked for left out."""
    names = [f"d{i % 7}/f{i}.txt" for i in range(repo_mod.PATHSPEC_MAX + 6)]
    names += ["new\nline", "tab\there.txt", "old name.txt"]
    body = "".join(f"line {k}\n" for k in range(40))
    for n in names:
        upstream.write(n, body)
    upstream.write("not-asked.txt", body)
    old = upstream.commit("base")
    upstream.write("d1/f1.txt", body.replace("line 3\n", "LINE 3\n"))
    upstream.write("not-asked.txt", "changed\n")
    upstream.git("mv", "old name.txt", "renamed.txt")
    upstream.write("renamed.txt", body.replace("line 30\n", "LINE 30\n"))
    upstream.write("new\nline", body + "more\n")
    mid = upstream.commit("drift")
    upstream.write("d1/f1.txt", "top\n" + body.replace("line 3\n", "LINE 3\n"))
    upstream.write("tab\there.txt", body[:-8])
    new = upstream.commit("more drift")
    wanted = [n for n in names if n != "old name.txt"] + ["renamed.txt"]
    renames = {"old name.txt": "renamed.txt"}
    g = GitRepo(upstream.path)
    runs: list[tuple[str, ...]] = []
    run = g._run

    def spy(
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> bytes:
        runs.append(args)
        return run(*args, input=input, check=check, env=env)

    monkeypatch.setattr(g, "_run", spy)
    assert len(wanted) > repo_mod.PATHSPEC_MAX
    whole = histories(g, old, new, wanted, renames)
    assert len(runs) == 1 and runs[0][-1] == f"{old}..{new}", runs  # no pathspec at all
    monkeypatch.setattr(repo_mod, "PATHSPEC_MAX", 10_000)
    by_pathspec = histories(g, old, new, wanted, renames)
    assert "--stdin" in runs[1]
    assert whole == by_pathspec
    assert set(whole) == set(wanted)
    assert [c.commit for c in whole["d1/f1.txt"]] == [mid, new]
    assert [c.commit for c in whole["renamed.txt"]] == [mid]
    assert [c.commit for c in whole["new\nline"]] == [mid]
    assert [c.commit for c in whole["tab\there.txt"]] == [new]
    assert whole["d2/f2.txt"] == []


def test_range_evidence_of_many_files_is_the_pathspec_querys(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Provenance's log of the range, past PATHSPEC_MAX files, is read whole and the
    commits that touched none of them are left out: the same commits, subjects, files and
    patch-ids as the pathspec query — a binary-only change, a deletion and a name git
    quotes counted as touching, a commit beside the files not."""
    names = [f"d{i % 5}/f{i}.txt" for i in range(repo_mod.PATHSPEC_MAX + 4)]
    names += ["tab\there.txt", "gone.txt", "pic.bin"]
    body = "".join(f"line {k}\n" for k in range(20))
    for n in names:
        upstream.write(n, body)
    upstream.write("pic.bin", b"\0\1\2")
    upstream.write("beside.txt", body)
    old = upstream.commit("base")
    upstream.write("d3/f3.txt", body.replace("line 4\n", "LINE 4\n"))
    first = upstream.commit("touch one")
    upstream.write("beside.txt", "other\n")
    upstream.commit("beside the series")
    upstream.write("pic.bin", b"\0\3\4")
    upstream.commit("binary only")
    upstream.write("tab\there.txt", body + "x\n")
    upstream.commit("quoted name")
    upstream.remove("gone.txt")
    new = upstream.commit("delete one")
    g = GitRepo(upstream.path)
    diffs = [upstream.diff(old, first)]
    whole = g.range_evidence(old, new, names, diffs)
    monkeypatch.setattr(repo_mod, "PATHSPEC_MAX", 10_000)
    by_pathspec = g.range_evidence(old, new, names, diffs)
    assert whole == by_pathspec
    ids, commits, own = whole
    assert [subject for _, subject, _ in commits] == [
        "delete one",
        "quoted name",
        "binary only",
        "touch one",
    ]
    assert own[0] is not None and ids[own[0]] == [first]
