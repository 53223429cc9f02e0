"""The pinned pre-images a check or rebase merges against: read from the applied stack's
commits where they are the pinned series' re-application (no second application of the
series), else re-applied."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from patchq.git.objects import parse_tree, render_tree, tree_entry
from patchq.git.repo import GitRepo
from patchq.stack.apply import OldStack, preimages
from patchq.stack.context import Context

from ..conftest import Queue, Runner, Upstream

NAMES = st.binary(min_size=1, max_size=12).filter(lambda b: b"\0" not in b and b"/" not in b)
MODES = st.sampled_from(["100644", "100755", "40000", "120000", "160000"])


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(NAMES, st.tuples(MODES, st.binary(min_size=20, max_size=20)), max_size=30),
    NAMES,
)
def test_tree_entry_finds_what_parse_tree_decodes(
    entries: dict[bytes, tuple[str, bytes]], probe: bytes
) -> None:
    # Ids full of NULs, spaces and digits: the lookup must not mistake them for names.
    data = render_tree((mode, name, oid.hex()) for name, (mode, oid) in entries.items())
    decoded = {name: (mode, oid) for mode, name, oid in parse_tree(data)}
    for name in [*decoded, probe]:
        assert tree_entry(data, name) == decoded.get(name)


def _series(upstream: Upstream, n: int) -> str:
    """A base and n patches each editing two of four files (so pre-images differ)."""
    rng = random.Random(7)
    files = {f"d{i % 2}/f{i}.txt": [f"{i} line {k}\n" for k in range(40)] for i in range(4)}
    for path, lines in files.items():
        upstream.write(path, "".join(lines))
    base = upstream.commit("base")
    for p in range(n):
        for path in rng.sample(sorted(files), 2):
            k = rng.randrange(40)
            files[path][k] = f"patch {p} was here\n"
            upstream.write(path, "".join(files[path]))
        upstream.commit(f"change {p}")
    return base


def _setup(upstream: Upstream, queue: Queue, patchq: Runner, n: int = 6) -> tuple[str, Context]:
    base = _series(upstream, n)
    assert patchq("import", "--git", f"{base}..main").code == 0
    r = patchq("apply", "--onto", base)
    assert r.code == 0, r.err
    return base, Context(dir=queue.path, target=upstream.path)


def _asked(ctx: Context) -> list[tuple[str, str]]:
    repo = ctx.repo()
    entries = repo.series.active(())
    return [(e.name or "", f"d{i % 2}/f{i}.txt") for e in entries for i in range(4)] + [
        (entries[0].name or "", "no/such.txt")
    ]


def test_preimages_from_the_stack_are_the_reapplied_ones(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    base, ctx = _setup(upstream, queue, patchq)
    g, repo = ctx.git(), ctx.repo()
    entries = repo.series.active(())
    fast = preimages(g, repo, base, entries)
    slow = OldStack(GitRepo(upstream.path), repo, base, entries)  # no stack: re-applied
    assert isinstance(fast, OldStack)
    touched = [(n, p) for n, p in _asked(ctx) if slow(n, p) is not None]
    assert len(touched) >= 2 * len(entries)
    for name, path in touched:
        assert fast(name, path) == slow(name, path), (name, path)
    assert fast.commits is not None and fast.state is None  # nothing was re-applied
    assert slow.state is not None
    for name, path in _asked(ctx):  # a file the patch does not name: as re-applied
        assert fast(name, path) == slow(name, path), (name, path)


def test_a_patch_edited_since_it_was_applied_is_reapplied(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    base, ctx = _setup(upstream, queue, patchq)
    g, repo = ctx.git(), ctx.repo()
    entries = repo.series.active(())
    third = queue.path / "patches" / (entries[2].name or "")
    third.write_bytes(third.read_bytes().replace(b"patch 2 was here", b"patch 2 WAS here"))
    fast = preimages(g, repo, base, entries)
    assert isinstance(fast, OldStack)
    last = entries[-1].name or ""
    got = fast(last, "d0/f0.txt")
    assert fast.commits is None and fast.state is not None  # the stack is not the series
    assert got == OldStack(GitRepo(upstream.path), repo, base, entries)(last, "d0/f0.txt")
    # The edit is in the re-applied pre-image (where patch 2 touched d0/f0.txt or d0/f2.txt).
    texts = [fast(last, p) or b"" for p in ("d0/f0.txt", "d0/f2.txt", "d1/f1.txt", "d1/f3.txt")]
    stacked = [
        upstream.git("show", f"patchq/main~1:{p}").encode()
        for p in ("d0/f0.txt", "d0/f2.txt", "d1/f1.txt", "d1/f3.txt")
    ]
    assert any(b"patch 2 WAS here" in t for t in texts)
    assert texts != stacked


def test_a_stack_that_is_not_the_locks_result_is_not_read(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    base, ctx = _setup(upstream, queue, patchq)
    # A commit made on the stack branch: the record's commits still name the old top,
    # but amend the top so its tree is not the lock's result.
    upstream.write("d0/f0.txt", "someone else's text\n")
    upstream.git("commit", "-q", "-a", "--amend", "--no-edit")
    new_top = upstream.git("rev-parse", "HEAD").strip()
    state = upstream.path / ".git" / "patchq" / "main.json"
    text = state.read_text()
    old_top = upstream.git("rev-parse", "HEAD@{1}").strip()
    state.write_text(text.replace(old_top, new_top))
    g, repo = ctx.git(), ctx.repo()
    entries = repo.series.active(())
    fast = preimages(g, repo, base, entries)
    assert isinstance(fast, OldStack)
    last = entries[-1].name or ""
    assert fast(last, "d0/f0.txt") == OldStack(GitRepo(upstream.path), repo, base, entries)(
        last, "d0/f0.txt"
    )
    assert fast.commits is None
