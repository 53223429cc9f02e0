"""A time-boxed fuzz target for the patch parser.

Inputs are mostly byte- and line-level mutations of real samples (tests/data/patches,
tests/data/malformed, tests/data/hostile), with some random bytes and some soup of the lines
that confuse diff parsers. For every input and a random strip level, `parse` must either
refuse it with one `BadInputError` whose message is one line naming the input, or return
a patch that renders back to the very same bytes — and whose sections the path checks
and the hunk engine then take without any other exception.

It runs twice, each for half of PATCHQ_FUZZ_SECONDS (default 12): once from a fixed seed
(the same inputs on every machine) and once from a random seed, printed; a failure is
shrunk and reported with its seed. Replay one with
`PATCHQ_FUZZ_SEED=<seed> pytest tests/core/test_fuzz_parser.py -k random`.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from patchq.core import hunks as engine
from patchq.core.errors import BadInputError, UnsafePathError
from patchq.core.patch import parse
from patchq.core.paths import check_path

HERE = Path(__file__).parent.parent
SAMPLES = [
    p.read_bytes()
    for d in (HERE / "data" / "patches", HERE / "data" / "malformed", HERE / "data" / "hostile")
    for p in sorted(d.glob("*.patch"))
    if p.stat().st_size < 20_000
]
BUDGET = float(os.environ.get("PATCHQ_FUZZ_SECONDS", "12"))
FIXED_SEED = 6_2024

# Bytes and lines that sit on the parser's decisions.
TOKENS = [
    b"\n",
    b"\r\n",
    b"\r",
    b"\0",
    b"\\",
    b'"',
    b"\t",
    b" ",
    b"-",
    b"+",
    b"@@",
    b"/",
    b"..",
    b"a/",
    b"b/",
    b"\xff",
    b"\xc3\xa9",
    b"0",
    b"1",
    b",",
    b"\\ ",
    b"--- ",
    b"+++ ",
    b"@@ -1 +1 @@",
    b"\\000",
    b"\\377",
    b"\\n",
    b"/dev/null",
]
LINES = [
    b"\\ No newline at end of file\n",
    b"diff --git a/x b/x\n",
    b"diff --git a/x y b/x y\n",
    b'diff --git "a/x\\ty" "b/x\\ty"\n',
    b"--- /dev/null\n",
    b"+++ /dev/null\n",
    b"--- a/f.txt\n",
    b"+++ b/f.txt\n",
    b"+++ b/../x\n",
    b"--- a/.git/config\n",
    b"@@ -1 +1 @@\n",
    b"@@ -0,0 +1,2 @@\n",
    b"@@ -1,3 +1,3 @@ heading\n",
    b"@@ -5 +5,0 @@\n",
    b"new file mode 120000\n",
    b"new file mode 100644\n",
    b"deleted file mode 100755\n",
    b"old mode 100644\n",
    b"new mode 100755\n",
    b"rename from a\n",
    b"rename to ../b\n",
    b"copy from x\n",
    b"copy to y\n",
    b"similarity index 90%\n",
    b"index 0123456..89abcde 100644\n",
    b"GIT binary patch\n",
    b"literal 0\n",
    b"Binary files a/x and b/x differ\n",
    b"-- \n",
    b"2.39.5\n",
    b"Index: x\n",
    b"===================================================================\n",
    b"***************\n",
    b"*** 1,3 ****\n",
    b"--- 1,3 ----\n",
    b"1c1\n",
    b"< a\n",
    b"> b\n",
    b".\n",
    b"From 0123456789abcdef Mon Sep 17 00:00:00 2001\n",
    b"Subject: [PATCH] x\n",
    b"---\n",
    b"\n",
    b" context\n",
    b"-removed\n",
    b"+added\n",
    b"diff --cc x\n",
    b"base-commit: 0123456789abcdef0123456789abcdef01234567\n",
]
NUMBERS = [b"0", b"1", b"2", b"3", b"7", b"65535", b"2147483648", b"99999999999999999999"]


def mutate(rnd: random.Random, data: bytes) -> bytes:
    """One random edit of `data`: bytes flipped, inserted, cut or repeated, lines
    dropped, repeated, swapped or inserted, numbers changed, another sample spliced in."""
    op = rnd.randrange(11)
    n = len(data)
    if op == 0 and n:
        i = rnd.randrange(n)
        return data[:i] + bytes([rnd.randrange(256)]) + data[i + 1 :]
    if op == 1:
        i = rnd.randrange(n + 1)
        return data[:i] + rnd.choice(TOKENS) + data[i:]
    if op == 2 and n:
        i = rnd.randrange(n)
        return data[:i] + data[i + rnd.randrange(1, 20) :]
    if op == 3 and n:
        i = rnd.randrange(n)
        j = min(n, i + rnd.randrange(1, 80))
        return data[:j] + data[i:j] + data[j:]
    if op == 4:
        return data[: rnd.randrange(n + 1)]
    if op == 5:
        other = rnd.choice(SAMPLES)
        i, j = rnd.randrange(n + 1), rnd.randrange(len(other) + 1)
        return data[:i] + other[j : j + rnd.randrange(1, 400)]
    lines = data.splitlines(keepends=True)
    if not lines:
        return rnd.choice(LINES)
    i = rnd.randrange(len(lines))
    if op == 6:
        del lines[i]
    elif op == 7:
        lines.insert(i, lines[i])
    elif op == 8:
        j = rnd.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 9:
        lines.insert(i, rnd.choice(LINES))
    else:
        digits = [k for k, c in enumerate(lines[i]) if 48 <= c <= 57]
        if digits:
            k = rnd.choice(digits)
            end = k
            while end < len(lines[i]) and 48 <= lines[i][end] <= 57:
                end += 1
            lines[i] = lines[i][:k] + rnd.choice(NUMBERS) + lines[i][end:]
        else:
            lines[i] = lines[i].replace(b"\n", b"\r\n")
    return b"".join(lines)


def make_input(rnd: random.Random) -> bytes:
    kind = rnd.random()
    if kind < 0.05:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(200)))
    if kind < 0.15:
        return b"".join(rnd.choice(LINES) for _ in range(rnd.randrange(1, 30)))
    data = rnd.choice(SAMPLES)
    for _ in range(rnd.randrange(1, 5)):
        data = mutate(rnd, data)
    return data


CONTENT = b"".join(b"line %d\n" % i for i in range(1, 40)) + b"last"


def check(data: bytes, strip: int) -> None:
    """The target: refused with one BadInputError naming the input, or parsed to a patch
    that renders back to `data` and that the path checks and the engine take calmly."""
    try:
        p = parse(data, "fuzz.patch", strip)
    except BadInputError as e:
        line = e.line()
        assert (e.where or "").startswith("fuzz.patch"), line
        assert "\n" not in line and "\r" not in line, line
        return
    assert p.render() == data, "render(parse(data)) != data"
    for s in p.sections:
        for path in s.paths:
            try:
                check_path(path, "fuzz.patch")
            except UnsafePathError:
                pass
        if not s.binary:
            engine.apply_hunks(b"", s.hunks)
            engine.apply_hunks(CONTENT, s.hunks, fuzz=2)
            engine.apply_hunks(CONTENT, s.hunks, reverse=True)


def failure(data: bytes, strip: int) -> str | None:
    try:
        check(data, strip)
    except Exception as e:  # noqa: BLE001 - the point: anything but BadInputError
        return f"{type(e).__name__}: {e}"
    return None


def shrink(data: bytes, strip: int) -> bytes:
    """Drop lines, then bytes, while it still fails: a short input to look at."""
    for unit in ("lines", "bytes"):
        changed = True
        while changed:
            changed = False
            parts = (
                data.splitlines(keepends=True)
                if unit == "lines"
                else [data[i : i + 1] for i in range(len(data))]
            )
            size = max(len(parts) // 2, 1)
            while size >= 1:
                i = 0
                while i < len(parts):
                    cand = b"".join(parts[:i] + parts[i + size :])
                    if cand != data and failure(cand, strip) is not None:
                        data, parts, changed = cand, parts[:i] + parts[i + size :], True
                    else:
                        i += size
                size //= 2
    return data


def run(seed: int, seconds: float) -> int:
    """Fuzz from `seed` for `seconds`; raise on the first failure. Returns inputs tried."""
    rnd = random.Random(seed)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        for _ in range(50):
            data = make_input(rnd)
            strip = rnd.choice((0, 1, 1, 1, 2))
            why = failure(data, strip)
            if why is not None:
                small = shrink(data, strip)
                pytest.fail(
                    f"parser fuzz seed {seed}, input {n}, strip {strip}: "
                    f"{failure(small, strip)}\nshrunk input: {small!r}\n"
                    f"replay: PATCHQ_FUZZ_SEED={seed} pytest "
                    "tests/core/test_fuzz_parser.py -k random",
                    pytrace=False,
                )
            n += 1
    return n


def test_samples_all_pass_the_target() -> None:
    for data in SAMPLES:
        for strip in (0, 1, 2):
            assert failure(data, strip) is None


@pytest.mark.parametrize("which", ["fixed", "random"])
def test_fuzz_the_parser(which: str, capsys: pytest.CaptureFixture[str]) -> None:
    seed = (
        FIXED_SEED
        if which == "fixed"
        else int(os.environ.get("PATCHQ_FUZZ_SEED") or random.SystemRandom().randrange(2**32))
    )
    with capsys.disabled():
        print(
            f"\nparser fuzz: {which} seed {seed} (replay: PATCHQ_FUZZ_SEED={seed})",
            end=" ",
            flush=True,
        )
    t0 = time.monotonic()
    n = run(seed, BUDGET / 2)
    with capsys.disabled():
        print(f"— {n} inputs in {time.monotonic() - t0:.1f} s", flush=True)
