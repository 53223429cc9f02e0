"""The in-process three-way merge gives git merge-file's answer, byte for byte.

Each case runs both `patchq.core.merge3.merge` and the real `git merge-file -p --diff3` on the
same three files; the merged bytes and the conflict count (git caps its exit code at 127)
must agree. Generated cases cover small alphabets (many repeated lines, so the diff has
choices to make), blank and brace lines (git's many-match discarding), CRLF lines, files
without a final newline, and large heavily edited files (git's cost heuristics).
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from patchq.core.merge3 import merge

LABELS = ("upstream", "base", "0001-fix.patch")


def git_merge(tmp: Path, ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, int]:
    paths = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        p = tmp / name
        p.write_bytes(data)
        paths.append(str(p))
    proc = subprocess.run(
        [
            "git",
            "merge-file",
            "-p",
            "--diff3",
            "-L",
            LABELS[0],
            "-L",
            LABELS[1],
            "-L",
            LABELS[2],
            *paths,
        ],
        capture_output=True,
    )
    assert 0 <= proc.returncode <= 127, proc.stderr
    return proc.stdout, proc.returncode


def ours_merge(ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, int]:
    got = merge(ours, base, theirs, LABELS)
    assert got is not None
    return got[0], min(got[1], 127)


def _mutate(
    rng: random.Random, lines: list[bytes], alphabet: list[bytes], edits: int, width: int
) -> list[bytes]:
    out = list(lines)
    for _ in range(edits):
        pos = rng.randint(0, len(out))
        op = rng.random()
        if op < 0.35 and out:
            del out[pos : pos + rng.randint(1, width)]
        elif op < 0.7:
            out[pos:pos] = [rng.choice(alphabet) for _ in range(rng.randint(1, width))]
        elif out:
            out[min(pos, len(out) - 1)] = rng.choice(alphabet)
    return out


def _join(rng: random.Random, lines: list[bytes]) -> bytes:
    data = b"".join(lines)
    if data and rng.random() < 0.15:
        data = data[:-1]  # no newline at the end
    return data


def _small(rng: random.Random) -> tuple[bytes, bytes, bytes]:
    k = rng.choice([3, 5, 10, 40])
    alphabet = [b"l%d\n" % i for i in range(k)] + [b"\n", b"}\n", b"x\r\n"]
    base = [rng.choice(alphabet) for _ in range(rng.choice([0, 1, 3, 10, 30, 100, 300]))]
    ours = _mutate(rng, base, alphabet, rng.randint(0, 4), 3)
    theirs = _mutate(rng, base, alphabet, rng.randint(0, 4), 3)
    return _join(rng, ours), _join(rng, base), _join(rng, theirs)


def _large(rng: random.Random) -> tuple[bytes, bytes, bytes]:
    k = rng.choice([50, 500, 5000])
    alphabet = [b"line %d\n" % i for i in range(k)] + [b"\n"] * 20 + [b"}\n"] * 10
    base = [rng.choice(alphabet) for _ in range(rng.choice([1000, 3000]))]
    ours = _mutate(rng, base, alphabet, rng.choice([5, 50, 400]), 20)
    theirs = _mutate(rng, base, alphabet, rng.choice([2, 50, 400]), 20)
    return b"".join(ours), b"".join(base), b"".join(theirs)


@pytest.mark.parametrize("seed", range(4))
def test_generated_small_merges_match_git(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(150):
        ours, base, theirs = _small(rng)
        assert ours_merge(ours, base, theirs) == git_merge(tmp_path, ours, base, theirs), (
            seed,
            i,
            ours,
            base,
            theirs,
        )


def test_generated_large_merges_match_git(tmp_path: Path) -> None:
    """Thousands of lines, hundreds of edits: git's Myers gives up on the minimal diff
    past its cost limits, and so must the port."""
    rng = random.Random(7)
    for i in range(6):
        ours, base, theirs = _large(rng)
        assert ours_merge(ours, base, theirs) == git_merge(tmp_path, ours, base, theirs), i


def _moves(rng: random.Random) -> tuple[bytes, bytes, bytes]:
    """20,000 distinct lines, hundreds of them moved: past git's cost limit (mxcost is
    256 here), so the split point is the furthest-reaching path, not the middle snake."""
    base = [b"line %d\n" % i for i in range(20000)]

    def move(lines: list[bytes], k: int, width: int) -> list[bytes]:
        out = list(lines)
        for _ in range(k):
            i = rng.randrange(len(out))
            block = out[i : i + width]
            del out[i : i + width]
            j = rng.randrange(len(out))
            out[j:j] = block
        return out

    return (
        b"".join(move(base, 400, rng.choice([1, 3]))),
        b"".join(base),
        b"".join(move(base, 300, 1)),
    )


def _blank_runs(rng: random.Random) -> tuple[bytes, bytes, bytes]:
    """Blank and brace lines inside rewritten blocks: git discards such many-match lines
    when they sit among lines with no match (xdl_clean_mmatch), which moves changes."""
    base: list[bytes] = []
    for i in range(rng.choice([100, 400])):
        base.append(b"code %d\n" % i)
        if rng.random() < 0.3:
            base.append(b"\n")
        if rng.random() < 0.1:
            base.append(b"}\n")

    def rewrite(lines: list[bytes]) -> list[bytes]:
        out = list(lines)
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(out))
            tag = rng.randrange(10**6)
            out[i : i + rng.randint(1, 12)] = [
                rng.choice([b"\n", b"}\n", b"new %d %d\n" % (tag, k), b"new %d %d\n" % (tag, k)])
                for k in range(rng.randint(1, 12))
            ]
        return out

    return b"".join(rewrite(base)), b"".join(base), b"".join(rewrite(base))


def test_merges_past_the_cost_limit_match_git(tmp_path: Path) -> None:
    rng = random.Random(1)
    for i in range(2):
        ours, base, theirs = _moves(rng)
        assert ours_merge(ours, base, theirs) == git_merge(tmp_path, ours, base, theirs), i


def test_merges_with_discarded_blank_runs_match_git(tmp_path: Path) -> None:
    rng = random.Random(1)
    for i in range(200):
        ours, base, theirs = _blank_runs(rng)
        assert ours_merge(ours, base, theirs) == git_merge(tmp_path, ours, base, theirs), i


CASES = {
    "clean, apart": (b"a\nB\nc\nd\ne\n", b"a\nb\nc\nd\ne\n", b"a\nb\nc\nd\nE\n"),
    "touching changes conflict": (b"A\nb\nc\n", b"a\nb\nc\n", b"a\nB\nc\n"),
    "identical changes merge": (b"a\nX\nc\n", b"a\nb\nc\n", b"a\nX\nc\n"),
    "crlf markers": (b"a\r\nB\r\nc\r\n", b"a\r\nb\r\nc\r\n", b"a\r\nBB\r\nc\r\n"),
    "no final newline": (b"a\nb\nC", b"a\nb\nc", b"a\nB\nc"),
    "conflict at the last line": (b"a\nX", b"a\nb", b"a\nY"),
    "empty base": (b"one\n", b"", b"two\n"),
    "emptied on one side": (b"", b"a\nb\n", b"a\nB\n"),
    "only ours changed": (b"a\nB\n", b"a\nb\n", b"a\nb\n"),
    "only theirs changed": (b"a\nb\n", b"a\nb\n", b"a\nB\n"),
    "non-UTF-8 bytes": (b"\xff\xfe\n1\n", b"\xff\n1\n", b"\xff\n2\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crafted_merges_match_git(tmp_path: Path, name: str) -> None:
    ours, base, theirs = CASES[name]
    assert ours_merge(ours, base, theirs) == git_merge(tmp_path, ours, base, theirs)


def test_many_conflicts_are_all_counted() -> None:
    """git's exit code stops at 127; the port reports every conflict."""
    base = b"".join(b"%d\nkeep\nkeep2\n" % i for i in range(200))
    ours = base.replace(b"\nkeep\n", b"\nours\n")
    theirs = base.replace(b"\nkeep\n", b"\ntheirs\n")
    got = merge(ours, base, theirs, LABELS)
    assert got is not None and got[1] == 200


def test_binary_input_is_left_to_git() -> None:
    assert merge(b"a\0b\n", b"a\n", b"a\n", LABELS) is None


def test_a_diff_past_the_budget_is_left_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file rewritten wholesale would keep Python busy for long: past merge3.BUDGET
    merge3 alone gives up (None), and GitRepo gets git's answer from one git process —
    its diff server, which also serves every later long diff."""
    from patchq.core import merge3
    from patchq.git.repo import GitRepo

    rng = random.Random(3)
    ours, base, theirs = _moves(rng)
    with pytest.raises(merge3.TooCostly):
        merge3.diff(list(range(50)), list(range(50))[::-1], budget=10)
    monkeypatch.setattr(merge3, "BUDGET", 10)
    assert merge(ours, base, theirs, LABELS) is None
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    g = GitRepo(tmp_path / "repo")
    before = g.processes
    got = g.merge_file(ours, base, theirs, LABELS)
    assert g.processes == before + 1
    assert (got[0], min(got[1], 127)) == git_merge(tmp_path, ours, base, theirs)


def test_common_ends_is_the_plain_scan() -> None:
    """The halving search for the shared head and tail agrees with walking line by line."""
    from patchq.core.merge3 import common_ends

    def plain(a: list[int], b: list[int]) -> tuple[int, int]:
        lim = min(len(a), len(b))
        i = 0
        while i < lim and a[i] == b[i]:
            i += 1
        j = 0
        while j < lim - i and a[len(a) - 1 - j] == b[len(b) - 1 - j]:
            j += 1
        return i, j

    rng = random.Random(8)
    for _ in range(3000):
        a = [rng.randint(0, 3) for _ in range(rng.randint(0, 12))]
        b = _mutate(rng, [bytes([x]) for x in a], [b"\0", b"\1", b"\2"], rng.randint(0, 3), 2)
        bi = [x[0] for x in b]
        assert common_ends(a, bi) == plain(a, bi), (a, bi)
