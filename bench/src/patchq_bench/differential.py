#!/usr/bin/env python3
"""Differential testing at scale: patchq's hunk engine against `git apply` and GNU patch.

    patchq-bench differential [--cases 5000] [--seed 1] [--jobs 2] [--show 3]

Not run in CI (a few minutes for 5,000 cases). Standard library, patchq (imported from
src/), git and GNU patch. Each case is made like tests/core/test_differential.py's: a file of
3–30 lines (unique `line N`, or lines repeated from a small vocabulary, as in code),
a downstream edit of 1–3 insertions, deletions or changes, diffed by `git diff` into the
patch, and upstream drift of 0–3 edits elsewhere. The patch is then applied to the
drifted file by patchq (exact or offset; no fuzz), by `git apply` and by GNU patch
(`--fuzz=0`), and the results compared byte for byte.

Where patchq refuses a hunk as ambiguous and git applies it, we judge git's placement
against the truth. Every line is tagged with an identity invisible to the tools (kept
aside, not in the bytes they see); the same patch made and applied on the tagged lines
can only go where the patched lines really are, so it gives the right answer — or none,
when upstream changed the lines the hunk needs (then no placement is right).

The contract (issue #6, point 5): wherever both apply, the bytes agree; patchq never
applies where git refuses; where git applies and patchq does not, patchq said
"ambiguous" — or a hunk failed where git's placement was not the right one (git places
hunks out of order and on look-alike lines; patchq keeps hunks in order, so a hunk
after one placed by offset can find no place left). Any case breaking it is printed
(first --show of each kind) and the script exits 1.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from patchq.core import hunks as engine
from patchq.core.errors import BadInputError
from patchq.core.patch import parse
from patchq.core.status import Status

WORDS = ["int a;", "int b;", "}", "{", "", "return 0;", "x++;", "// note"]
TAG = re.compile(rb"\x01\d+\x01")


def make_case(rnd: random.Random) -> tuple[list[tuple[int, str]], ...]:
    """(old, new, drifted old), each line (identity, text); new lines get fresh ids.

    Half the files are tests/core/test_differential.py's (unique lines, or lines drawn from a
    small vocabulary); the other half repeat one block of code several times, as
    generated code, tables and test files do, so that a hunk moved by upstream drift can
    match equally well in two places."""
    ids = iter(range(10**6))
    if rnd.random() < 0.5:
        uniq = rnd.random() < 0.5
        n = rnd.randint(3, 30)
        old = [(next(ids), f"line {i}" if uniq else rnd.choice(WORDS)) for i in range(n)]
    else:
        block = [rnd.choice(WORDS) for _ in range(rnd.randint(2, 6))]
        copies = rnd.randint(2, 6)
        old = [(next(ids), t) for _ in range(copies) for t in block]
        if rnd.random() < 0.5:  # a distinct heading before each copy, sometimes
            old = [
                (next(ids), f"case {k}:") if j % (len(block) + 1) == 0 else old.pop(0)
                for k in range(copies)
                for j in range(len(block) + 1)
            ]

    def edit(lines: list[tuple[int, str]], tag: str, k: int) -> list[tuple[int, str]]:
        out = list(lines)
        for j in range(k):
            op = rnd.choice(["ins", "del", "chg"])
            i = rnd.randint(0, max(len(out) - 1, 0))
            if op == "ins" or not out:
                text = f"{tag} {j}" if rnd.random() < 0.5 else rnd.choice(WORDS)
                out.insert(i, (next(ids), text))
            elif op == "del":
                del out[i]
            else:
                out[i] = (next(ids), f"{out[i][1]} {tag}")
        return out

    new = edit(old, "ours", rnd.randint(1, 3))
    drift = edit(old, "theirs", rnd.randint(0, 3))
    return old, new, drift


def body(lines: list[tuple[int, str]], tagged: bool = False) -> bytes:
    if tagged:
        return b"".join(b"%s\x01%d\x01\n" % (t.encode(), i) for i, t in lines)
    return "".join(t + "\n" for _, t in lines).encode()


def truth(
    old: list[tuple[int, str]], new: list[tuple[int, str]], drift: list[tuple[int, str]]
) -> bytes | None:
    """The right result, or None where upstream changed what the patch needs."""
    hunks = engine.diff(body(old, True), body(new, True), 3)
    res = engine.apply_hunks(body(drift, True), hunks)
    return TAG.sub(b"", res.content) if res.ok else None


def run(cmd: list[str], work: Path, content: bytes, patch: bytes) -> bytes | None:
    (work / "f").write_bytes(content)
    (work / "p.diff").write_bytes(patch)
    proc = subprocess.run(cmd + [str(work / "p.diff")], cwd=work, capture_output=True)
    if proc.returncode != 0:
        return None
    return (work / "f").read_bytes()


def one(seed: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="patchq-differential-") as tmp:
        return _one(seed, Path(tmp))


def _one(seed: int, work: Path) -> dict[str, object]:
    rnd = random.Random(seed)
    old, new, drift = make_case(rnd)
    (work / "a").mkdir(parents=True, exist_ok=True)
    (work / "b").mkdir(exist_ok=True)
    (work / "a" / "f").write_bytes(body(old))
    (work / "b" / "f").write_bytes(body(new))
    patch = subprocess.run(
        ["git", "diff", "--no-index", "--no-prefix", "a/f", "b/f"], cwd=work, capture_output=True
    ).stdout
    out: dict[str, object] = {"seed": seed}
    if not patch:
        out["kind"] = "no-diff"
        return out
    target = body(drift)
    try:
        hunks = parse(patch, "gen.diff", strip=1).sections[0].hunks
    except BadInputError as e:
        out["kind"], out["error"] = "parse-error", str(e)
        return out
    ours = engine.apply_hunks(target, hunks)
    pq = (
        "applied"
        if ours.ok
        else "ambiguous"
        if any(h.status == Status.AMBIGUOUS for h in ours.hunks)
        else "failed"
    )
    git = run(["git", "apply", "-p1"], work, target, patch)
    gnu = run(
        ["patch", "-s", "-p1", "--fuzz=0", "--no-backup-if-mismatch", "-r", "-", "-i"],
        work,
        target,
        patch,
    )
    # GNU placement (apply/push of a series on its own base): GNU patch's tree wherever
    # GNU patch applies, at fuzz 0 and at its default fuzz 2.
    gnu2 = run(
        ["patch", "-s", "-p1", "--fuzz=2", "--no-backup-if-mismatch", "-r", "-", "-i"],
        work,
        target,
        patch,
    )
    mode0 = engine.apply_hunks(target, hunks, gnu=True)
    mode2 = engine.apply_hunks(target, hunks, fuzz=2, gnu=True)
    out["gnu_mode"] = [
        gnu is None or (mode0.ok and mode0.content == gnu),
        gnu2 is None or (mode2.ok and mode2.content == gnu2),
        gnu2 is not None,
        mode2.ok,
    ]
    right = truth(old, new, drift)
    out.update(
        kind="case",
        patchq=pq,
        git=git is not None,
        gnu=gnu is not None,
        status=engine.worst(h.status for h in ours.hunks),
        agree=ours.ok and git is not None and ours.content == git,
        gnu_agree=ours.ok and gnu is not None and ours.content == gnu,
        git_gnu_agree=git is not None and gnu is not None and git == gnu,
        right=None
        if right is None
        else {
            "patchq": ours.ok and ours.content == right,
            "git": git is not None and git == right,
            "gnu": gnu is not None and gnu == right,
        },
    )
    if not all(out["gnu_mode"][:2]):  # type: ignore[index]
        out["gnu_detail"] = {
            "patch": patch.decode(errors="replace"),
            "target": target.decode(errors="replace"),
            "gnu": gnu.decode(errors="replace") if gnu is not None else None,
            "patchq gnu": mode0.content.decode(errors="replace") if mode0.ok else None,
            "gnu fuzz 2": gnu2.decode(errors="replace") if gnu2 is not None else None,
            "patchq gnu fuzz 2": mode2.content.decode(errors="replace") if mode2.ok else None,
        }
    if (
        (ours.ok and git is not None and ours.content != git)
        or (ours.ok and git is None)
        or (pq == "failed" and git is not None and git == right)
        or (ours.ok and right is not None and ours.content != right)
    ):
        out["detail"] = {
            "patch": patch.decode(errors="replace"),
            "target": target.decode(errors="replace"),
            "patchq": ours.content.decode(errors="replace") if ours.ok else None,
            "git": git.decode(errors="replace") if git is not None else None,
            "right": right.decode(errors="replace") if right else None,
            "hunks": [f"{h.status} {h.offset} {h.reason}" for h in ours.hunks],
        }
    return out


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--show", type=int, default=3, help="cases of each violation to print")
    args = ap.parse_args(argv)
    for tool in ("git", "patch"):
        if shutil.which(tool) is None:
            sys.exit(f"patchq-bench differential needs `{tool}` on PATH")
    t0 = time.monotonic()
    seeds = [args.seed * 1_000_003 + i for i in range(args.cases)]
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(one, seeds, chunksize=50)
    took = time.monotonic() - t0
    c, bad = tally(results)
    rows = summary(args, c, bad, took)
    width = max(len(a) for a, _ in rows)
    print(f"| {'':{width}} | |\n|{'-' * (width + 2)}|---|")
    for a, b in rows:
        print(f"| {a:{width}} | {b} |")
    failed = False
    for kind, cases in bad.items():
        print(f"\n{kind}: {len(cases)}")
        for r in cases[: args.show]:
            print(f"  seed {r['seed']}: {r.get('detail') or r.get('error')}")
        # A look-alike copy nearer than the real block is not something a patch alone
        # can tell apart (git and GNU patch take it too); check/rebase doubt such moves
        # against the pinned base. Everything else breaks the contract.
        if kind != "patchq applied, but not where the lines are":
            failed = True
    return 1 if failed else 0


def tally(
    results: list[dict[str, object]],
) -> tuple[Counter[str], dict[str, list[dict[str, object]]]]:
    """The counts over every case, and the cases of each violation of the contract."""
    c: Counter[str] = Counter()
    bad: dict[str, list[dict[str, object]]] = {}
    for r in results:
        c[str(r["kind"])] += 1
        if r["kind"] != "case":
            if r["kind"] == "parse-error":
                bad.setdefault("patchq could not parse git's diff", []).append(r)
            continue
        c["cases"] += 1
        c["git applied"] += bool(r["git"])
        c["gnu applied"] += bool(r["gnu"])
        c[f"patchq {r['patchq']}"] += 1
        c[f"patchq {r['status']}"] += 1 if r["patchq"] == "applied" else 0
        c["agreed"] += bool(r["agree"])
        c["both refused"] += not r["git"] and r["patchq"] != "applied"
        c["gnu agreed"] += bool(r["gnu_agree"])
        c["git and gnu both applied"] += bool(r["git"] and r["gnu"])
        c["git and gnu differ"] += bool(r["git"] and r["gnu"] and not r["git_gnu_agree"])
        same0, same2, gnu2, pq2 = cast(tuple[bool, bool, bool, bool], r["gnu_mode"])
        c["gnu placement same, fuzz 0"] += bool(r["gnu"] and same0)
        c["gnu fuzz 2 applied"] += bool(gnu2)
        c["gnu placement same, fuzz 2"] += bool(gnu2 and same2)
        c["gnu placement fuzz 2 applied where GNU refused"] += bool(pq2 and not gnu2)
        if not (same0 and same2):
            bad.setdefault("GNU placement differs from GNU patch", []).append(
                {"seed": r["seed"], "detail": r.get("gnu_detail")}
            )
        right = r["right"]
        if r["patchq"] == "applied" and isinstance(right, dict):
            c["patchq applied, truth known"] += 1
            c["patchq applied right"] += bool(right["patchq"])
        if r["git"] and isinstance(right, dict):
            c["git applied, truth known"] += 1
            c["git applied right"] += bool(right["git"])
        if r["git"] and r["patchq"] != "applied":
            why = r["patchq"]
            c[f"{why}, git applied"] += 1
            if right is None:
                c[f"{why}, git applied, no right answer"] += 1
            elif isinstance(right, dict) and right["git"]:
                c[f"{why}, git applied, git right"] += 1
            else:
                c[f"{why}, git applied, git WRONG"] += 1
        if r["patchq"] == "applied" and r["git"] and not r["agree"]:
            bad.setdefault("patchq applied differently from git", []).append(r)
        if r["patchq"] == "applied" and not r["git"]:
            c["patchq applied where git refused"] += 1
            if isinstance(right, dict) and right["patchq"]:
                # Hunks without context (a small file changed whole): git anchors them
                # to both ends of the file, patchq reads them as -U0 hunks (README).
                c["patchq applied where git refused, right"] += 1
            else:
                bad.setdefault("patchq applied where git refused", []).append(r)
        if r["patchq"] == "failed" and r["git"] and isinstance(right, dict) and right["git"]:
            # A refusal is a violation only where git's placement was the right one.
            bad.setdefault("patchq refused (not ambiguous) where git applied right", []).append(r)
        if r["patchq"] == "applied" and isinstance(right, dict) and not right["patchq"]:
            c["patchq wrong"] += 1
            c["patchq wrong, git the same"] += bool(r["agree"])
            c["patchq wrong, gnu the same"] += bool(r["gnu_agree"])
            bad.setdefault("patchq applied, but not where the lines are", []).append(r)
    return c, bad


def summary(
    args: argparse.Namespace,
    c: Counter[str],
    bad: dict[str, list[dict[str, object]]],
    took: float,
) -> list[tuple[str, str]]:
    """The report's rows: what each tool did, and how often it was right."""
    n = c["cases"]

    def pct(k: int, of: int) -> str:
        return f"{k:,} ({100 * k / of:.1f}%)" if of else f"{k:,}"

    rows = [
        ("cases generated", f"{args.cases:,} (seed {args.seed}; {c['no-diff']} made no diff)"),
        ("cases", f"{n:,}"),
        ("git apply applied", pct(c["git applied"], n)),
        (
            "patchq applied",
            pct(c["patchq applied"], n)
            + f" — exact {c['patchq exact']:,}, offset {c['patchq offset']:,}",
        ),
        ("agreed byte for byte (both applied, same bytes)", pct(c["agreed"], n)),
        (
            "patchq applied differently from git",
            str(len(bad.get("patchq applied differently from git", []))),
        ),
        (
            "patchq applied where git refused",
            f"{c['patchq applied where git refused']} "
            f"(placed right: {c['patchq applied where git refused, right']})",
        ),
        ("patchq refused as ambiguous where git applied", pct(c["ambiguous, git applied"], n)),
        ("… git's placement right", str(c["ambiguous, git applied, git right"])),
        ("… git's placement wrong", str(c["ambiguous, git applied, git WRONG"])),
        (
            "… no right placement (upstream changed the hunk's lines)",
            str(c["ambiguous, git applied, no right answer"]),
        ),
        (
            "patchq refused, not ambiguous (a hunk failed), where git applied",
            pct(c["failed, git applied"], n),
        ),
        ("… git's placement right", str(c["failed, git applied, git right"])),
        ("… git's placement wrong", str(c["failed, git applied, git WRONG"])),
        (
            "… no right placement (upstream changed the hunk's lines)",
            str(c["failed, git applied, no right answer"]),
        ),
        ("both refused", pct(c["both refused"], n)),
        (
            "patchq applied where the truth is known: right",
            f"{c['patchq applied right']:,} of {c['patchq applied, truth known']:,}",
        ),
        (
            "… wrong: the nearest look-alike copy, not the real one",
            f"{c['patchq wrong']} (git put it there too: {c['patchq wrong, git the same']}, "
            f"GNU patch: {c['patchq wrong, gnu the same']})",
        ),
        (
            "git applied where the truth is known: right",
            f"{c['git applied right']:,} of {c['git applied, truth known']:,}",
        ),
        ("GNU patch (--fuzz=0) applied", pct(c["gnu applied"], n)),
        ("GNU patch agreed with patchq", pct(c["gnu agreed"], n)),
        ("GNU patch and git both applied but differ", str(c["git and gnu differ"])),
        (
            "patchq with GNU placement (apply/push), fuzz 0: GNU patch's bytes",
            f"{c['gnu placement same, fuzz 0']:,} of {c['gnu applied']:,}",
        ),
        ("GNU patch --fuzz=2 applied", pct(c["gnu fuzz 2 applied"], n)),
        (
            "patchq with GNU placement, --fuzz 2: GNU patch's bytes",
            f"{c['gnu placement same, fuzz 2']:,} of {c['gnu fuzz 2 applied']:,}",
        ),
        (
            "… applied where GNU patch --fuzz=2 refused (patchq's own rules)",
            str(c["gnu placement fuzz 2 applied where GNU refused"]),
        ),
        ("time", f"{took:.1f} s on {args.jobs} processes"),
    ]
    return rows
