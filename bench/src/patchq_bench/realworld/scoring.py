"""Scoring rules of the refresh corpus (patchq-bench realworld): the split, the cost, and the
precision of each placement method. Standard library only; no patchq import.

**Split.** Every case is in the `tuning` part (70%) or the `validation` part (30%), decided
once by its name alone — the rule patchq-bench harvest writes into a harvested manifest too:

    first = sha256(name.encode("utf-8")).digest()[0]      # the first byte, 0..255
    tuning  if  first < int(0.7 * 256)  (= 179)  else  validation

The rule holds for every case file (the shared cases.toml, bench/realworld-cases.toml and any
harvested manifest given with `--cases`): the same name is always in the same part.
Per-patch and per-case results are shown for the tuning part only; the validation part is
reported as totals.

**Verdict of a tool on one old-series patch** (peers.py's `status` and `same_as_human`;
for patchq its own log says whether it stopped):

- `same`: handled the maintainer's way (peers.py's "same": the refreshed patch's removed and
  added lines are the maintainer's, or the patch was left out where the maintainer dropped it);
- `wrong`: applied (the tool changed something) but not the maintainer's result;
- `dropped-wrong`: left out *without a stop or a failure* (the tool judged it already applied
  or upstream) although the maintainer kept it: a silent wrong result, counted as wrong;
- `stop`: patchq stopped at it (a conflict or a proposal to review; the driver skips it);
- `failed`: the tool could not apply it (or patchq refused it on the old release).

A miss is `stop` or `failed`. A patch that stops in patchq's default mode and that the
`--accept all` run handles the maintainer's way (`stop` there, `same` here) is half a miss
(a look, not a resolution). **cost = misses + 3 × wrong**, wrong counting `wrong` and
`dropped-wrong` (DESIGN §4.1: a wrong result costs three stops).

**Region of a hunk, and when a method's use is right.** For each hunk patchq placed on the
new release with a method (exact, offset, fuzz, merge, zealous, word, anchored, moved,
delete-wins, reused, upstreamed) in a patch it kept (or recorded `upstreamed`):

- patchq's file: the file the hunk lands in, in the tree Y + patchq's refreshed series up to
  and including this patch (the tree the refreshed patch's line numbers describe);
- the region: the lines of that file covered by the hunk's post-image (context and added
  lines), i.e. lines new_start … new_start + new_len − 1 of the refreshed patch's hunk paired
  with this hunk (pairing by file and order, by likeness where a file's hunk count changed).
  A hunk with no refreshed counterpart (an `upstreamed` hunk) is located in patchq's file
  by its old post-image (context and added lines), else the span from its first to its last
  change, each the exact occurrence nearest its old line; else the span from its leading
  to its trailing context (both found exactly); else the window as long as its post-image
  most like it (difflib ratio ≥ 0.6). Not found: the use is *unscored*;
- the maintainer's file, in two readings: (1) the same path in Y + the maintainer's new
  series (added patches left out) applied in order up to the successor of this patch (up
  to the last successor of an earlier patch when the maintainer dropped this one); (2) the
  maintainer's refreshed patch applied with GNU patch to patchq's own tree just before this
  patch (that tree itself when the maintainer dropped the patch) — peers.py's "same" at
  the scale of a hunk, so that a difference another patch made (one patchq stopped at, or
  one the maintainer folded in) is not charged to this hunk;
- aligned place: patchq's file and a maintainer's file are aligned by a line diff (git's
  histogram diff); the region matches when no difference of the alignment touches it: no
  line of the region is changed or deleted, and nothing is inserted strictly inside it (an
  insertion at either edge lies outside the region). An empty region (a zero-context pure
  deletion) matches when no difference touches its point. A file missing on one side only
  does not match; missing on both matches;
- the use is **right** when the region matches reading (1) or (2), **wrong** when it
  matches neither of those that could be built, *unscored* when neither could be built
  (the maintainer's series or patch does not apply there) or the region is not found.

precision = right / (right + wrong). A method acts alone only at ≥ 97% precision over ≥ 30
scored validation uses (DESIGN §4.1), besides the methods that are automatic always.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TUNING_BELOW = int(0.7 * 256)  # 179: first sha256 bytes 0..178 tune, 179..255 validate
SPLITS = ("tuning", "validation")
METHODS = (
    "exact",
    "offset",
    "fuzz",
    "merge",
    "zealous",
    "word",
    "anchored",
    "moved",
    "delete-wins",
    "reused",
    "upstreamed",
)
# DESIGN §4.1: automatic whatever their measured precision.
ALWAYS_AUTOMATIC = ("exact", "offset", "merge", "reused", "upstreamed")
EARN_PRECISION = 0.97
EARN_USES = 30
WRONG_WEIGHT = 3
VERDICTS = ("same", "wrong", "dropped-wrong", "stop", "failed")
NOT_APPLIED = ("failed", "already")


# ------------------------------------------------------------------------- split
def split_of(name: str) -> str:
    """`validation` or `tuning`, from the sha256 of the case name (see the module doc)."""
    first = hashlib.sha256(name.encode("utf-8")).digest()[0]
    return "tuning" if first < TUNING_BELOW else "validation"


def select(names: Iterable[str], split: str) -> list[str]:
    """The names of one part (`tuning`, `validation`) or all of them (`all`), in order."""
    return [n for n in names if split == "all" or split_of(n) == split]


# ------------------------------------------------------------------------- verdicts and cost
def verdict(status: str, same: bool, kept: bool, patchq_on_new: str | None = None) -> str:
    """One tool's verdict on one patch (module doc). `status` and `same` are peers.py's;
    `kept`: the maintainer kept the patch; `patchq_on_new`: patchq's own outcome on Y from
    its log (`stopped, skipped`, `upstreamed`, `not reached`, …), None for a peer."""
    if same:
        return "same"
    if status not in NOT_APPLIED:
        return "wrong"
    if patchq_on_new is not None:
        if patchq_on_new.startswith("stopped"):
            return "stop"
        if patchq_on_new == "upstreamed" and kept:
            return "dropped-wrong"
        return "failed"
    if status == "already" and kept:
        return "dropped-wrong"
    return "failed"


@dataclass
class Tally:
    """A tool's totals over some patches."""

    patches: int = 0
    same: int = 0
    wrong: int = 0
    dropped_wrong: int = 0
    stops: int = 0
    failed: int = 0
    half: int = 0  # stops that the --accept all run got right: half a miss each

    def add(self, v: str, accept_right: bool = False) -> None:
        self.patches += 1
        if v == "same":
            self.same += 1
        elif v == "wrong":
            self.wrong += 1
        elif v == "dropped-wrong":
            self.dropped_wrong += 1
        elif v == "stop":
            self.stops += 1
            self.half += accept_right
        elif v == "failed":
            self.failed += 1
        else:
            raise ValueError(f"unknown verdict {v!r}")

    @property
    def wrong_total(self) -> int:
        return self.wrong + self.dropped_wrong

    @property
    def misses(self) -> float:
        return self.stops + self.failed - 0.5 * self.half

    @property
    def cost(self) -> float:
        return self.misses + WRONG_WEIGHT * self.wrong_total


def tally(verdicts: Iterable[str], accept_right: Iterable[bool] | None = None) -> Tally:
    t = Tally()
    flags = list(accept_right) if accept_right is not None else None
    for i, v in enumerate(verdicts):
        t.add(v, bool(flags[i]) if flags is not None else False)
    return t


def case_verdicts(
    case: Mapping[str, Any], tool: str, per_patch: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """Every old patch's verdict for TOOL in one peers.py case record; PER_PATCH (patchq's
    log `per_patch`) makes the stops known."""
    t = case["tools"][tool]
    out = {}
    for n in case["human_change"]:
        on_new = None
        if per_patch is not None:
            e = per_patch.get(n, {})
            on_new = "refused on X" if e.get("on_old") == "refused" else str(e.get("on_new"))
        out[n] = verdict(
            t["status"][n], bool(t["same_as_human"][n]), bool(case["successor"][n]), on_new
        )
    return out


def fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


# ------------------------------------------------------------------------- unified diffs
HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[tuple[str, bytes]] = field(default_factory=list)  # (" "|"-"|"+", text)

    def post_image(self) -> list[bytes]:
        return [c for t, c in self.lines if t != "-"]

    def changed(self) -> list[tuple[str, bytes]]:
        return [(t, c) for t, c in self.lines if t != " "]

    def core(self) -> list[bytes]:
        """The post-image from the first to the last changed line (no outer context)."""
        idx = [i for i, (t, _) in enumerate(self.lines) if t != " "]
        if not idx:
            return []
        return [c for t, c in self.lines[idx[0] : idx[-1] + 1] if t != "-"]


@dataclass
class FileDiff:
    old: str  # path after stripping, "" for /dev/null
    new: str
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new or self.old


def strip_path(raw: bytes, strip: int) -> str:
    """A diff header's path as GNU patch -pSTRIP reads it ("" for /dev/null): STRIP leading
    components go (`./src/x.c` -p1 is `src/x.c`), then `.` components."""
    name = raw.split(b"\t")[0].strip().decode("utf-8", "replace")
    if name == "/dev/null":
        return ""
    parts = [p for p in name.split("/") if p != ""][strip:]
    return "/".join(p for p in parts if p != ".")


def _header(raw_old: bytes, raw_new: bytes, strip: int) -> FileDiff:
    """A file section from its two header names; a name with a `..` component is ignored
    in favour of the other, as GNU patch does (Termux's `--- ../build/…/src/x.c`)."""
    old, new = strip_path(raw_old, strip), strip_path(raw_new, strip)

    def dotdot(raw: bytes) -> bool:
        return b".." in raw.split(b"\t")[0].strip().split(b"/")

    if dotdot(raw_old) and new:
        old = new
    if dotdot(raw_new) and old:
        new = old
    return FileDiff(old, new)


def parse_unified(data: bytes, strip: int = 1) -> list[FileDiff]:
    """The files and hunks of a unified diff (quilt or git style; a lone `+++` header, as
    GNU patch takes it, counts). Hunk bodies are read by their counts."""
    lines = data.split(b"\n")
    files: list[FileDiff] = []
    cur: FileDiff | None = None
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith(b"--- ") and i + 1 < len(lines) and lines[i + 1].startswith(b"+++ "):
            cur = _header(ln[4:], lines[i + 1][4:], strip)
            files.append(cur)
            i += 2
            continue
        if ln.startswith(b"+++ ") and i + 1 < len(lines) and HUNK_HEADER.match(lines[i + 1]):
            name = strip_path(ln[4:], strip)
            cur = FileDiff(name, name)
            files.append(cur)
            i += 1
            continue
        m = HUNK_HEADER.match(ln)
        if m and cur is not None:
            oc = int(m.group(2)) if m.group(2) is not None else 1
            nc = int(m.group(4)) if m.group(4) is not None else 1
            h = Hunk(int(m.group(1)), oc, int(m.group(3)), nc)
            i += 1
            while (oc > 0 or nc > 0) and i < len(lines):
                b = lines[i]
                kind = chr(b[0]) if b else " "
                if kind == "\\":
                    i += 1
                    continue
                if kind not in " -+":
                    break
                h.lines.append((kind, b[1:]))
                if kind != "+":
                    oc -= 1
                if kind != "-":
                    nc -= 1
                i += 1
            cur.hunks.append(h)
            continue
        i += 1
    return files


def pair_hunks(olds: Sequence[Hunk], news: Sequence[Hunk]) -> dict[int, int]:
    """Old hunk index -> refreshed hunk index, for one file: by order when the counts are
    equal, else each old hunk to the refreshed hunk whose changed lines are likest."""
    if len(olds) == len(news):
        return {i: i for i in range(len(olds))}
    out: dict[int, int] = {}
    for i, o in enumerate(olds):
        mine = [t.encode() + c for t, c in o.changed()]
        best, score = None, 0.0
        for j, n in enumerate(news):
            theirs = [t.encode() + c for t, c in n.changed()]
            r = difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio()
            if r > score:
                best, score = j, r
        if best is not None:
            out[i] = best
    return out


# ------------------------------------------------------------------------- regions
Block = tuple[
    int, int, int, int
]  # a_start, a_len, b_start, b_len (0-based, a_len 0 = insert before a_start)


def blocks_of(a: Sequence[bytes], b: Sequence[bytes]) -> list[Block]:
    """The differences between two line lists (difflib), as blocks."""
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        (i1, i2 - i1, j1, j2 - j1) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal"
    ]


def blocks_from_u0(diff: bytes) -> list[Block]:
    """The differences in a `diff -U0` text, as blocks (0-based; a zero length at line L
    means "after line L", i.e. before 0-based index L)."""
    out = []
    for ln in diff.split(b"\n"):
        m = HUNK_HEADER.match(ln)
        if not m:
            continue
        a1, al = int(m.group(1)), int(m.group(2)) if m.group(2) is not None else 1
        b1, bl = int(m.group(3)), int(m.group(4)) if m.group(4) is not None else 1
        out.append((a1 if al == 0 else a1 - 1, al, b1 if bl == 0 else b1 - 1, bl))
    return out


def region_right(blocks: Iterable[Block], start: int, end: int) -> bool:
    """Is the region [start, end) of file A (0-based lines) the same in file B, under the
    alignment whose differences are BLOCKS? (Module doc: no difference touches the region.)"""
    for a0, alen, _, _ in blocks:
        if start == end:  # an empty region: a point before line `start`
            if a0 <= start <= a0 + alen and (alen > 0 or a0 == start):
                return False
            continue
        if alen > 0 and a0 < end and a0 + alen > start:
            return False
        if alen == 0 and start < a0 < end:
            return False
    return True


def region_of(h: Hunk) -> tuple[int, int]:
    """The 0-based [start, end) of a hunk's post-image in the file it produced."""
    if h.new_len == 0:
        return h.new_start, h.new_start
    return h.new_start - 1, h.new_start - 1 + h.new_len


def locate(needle: Sequence[bytes], hay: Sequence[bytes], near: int) -> tuple[int, int] | None:
    """Where NEEDLE occurs as a block in HAY, the occurrence nearest line NEAR (0-based)."""
    n = len(needle)
    if n == 0 or n > len(hay):
        return None
    first = needle[0]
    hits = [
        i
        for i in range(len(hay) - n + 1)
        if hay[i] == first and list(hay[i : i + n]) == list(needle)
    ]
    if not hits:
        return None
    i = min(hits, key=lambda k: (abs(k - near), k))
    return i, i + n


def locate_between(h: Hunk, hay: Sequence[bytes], near: int) -> tuple[int, int] | None:
    """The span of HAY from the hunk's leading context to its trailing context (each found
    exactly, the leading one nearest NEAR, the trailing one the first after it within the
    hunk's length plus 50 lines): where the hunk stood, whatever upstream put between."""
    idx = [i for i, (t, _) in enumerate(h.lines) if t != " "]
    if not idx:
        return None
    lead = [c for _, c in h.lines[: idx[0]]]
    trail = [c for _, c in h.lines[idx[-1] + 1 :]]
    if not lead or not trail:
        return None
    at = locate(lead, hay, near)
    if at is None:
        return None
    limit = min(len(hay), at[1] + len(h.lines) + 50 + len(trail))
    after = locate(trail, hay[at[1] : limit], 0)
    if after is None:
        return None
    return at[0], at[1] + after[1]


def locate_like(
    needle: Sequence[bytes], hay: Sequence[bytes], near: int, min_ratio: float = 0.6
) -> tuple[int, int] | None:
    """The window of HAY, as long as NEEDLE, most like it (difflib ratio at least
    MIN_RATIO; ties to the one nearest NEAR): where a hunk's text stands after upstream
    edited it."""
    n = len(needle)
    if n == 0 or n > len(hay):
        return None
    wanted = set(needle)
    best: tuple[float, int, int] | None = None
    for i in range(len(hay) - n + 1):
        if hay[i] not in wanted and hay[i + n - 1] not in wanted:
            continue
        sm = difflib.SequenceMatcher(None, needle, hay[i : i + n], autojunk=False)
        if sm.real_quick_ratio() < min_ratio or sm.quick_ratio() < min_ratio:
            continue
        r = sm.ratio()
        if r >= min_ratio and (
            best is None or (r, -abs(i - near)) > (best[0], -abs(best[1] - near))
        ):
            best = (r, i, i + n)
    return None if best is None else (best[1], best[2])


# ------------------------------------------------------------------------- precision
@dataclass
class MethodRow:
    uses: int = 0
    right: int = 0
    wrong: int = 0
    unscored: int = 0

    @property
    def precision(self) -> float | None:
        scored = self.right + self.wrong
        return self.right / scored if scored else None


def precision_rows(uses: Iterable[Mapping[str, Any]]) -> dict[str, MethodRow]:
    """Per method: uses, right, wrong, unscored, from use records {method, verdict}."""
    rows: dict[str, MethodRow] = {}
    for u in uses:
        r = rows.setdefault(str(u["method"]), MethodRow())
        r.uses += 1
        v = u["verdict"]
        if v == "right":
            r.right += 1
        elif v == "wrong":
            r.wrong += 1
        else:
            r.unscored += 1
    return rows


def tier(method: str, validation: MethodRow | None) -> str:
    """What DESIGN §4.1 makes of a method given its validation row."""
    if method in ALWAYS_AUTOMATIC:
        return "automatic (always)"
    if validation is None:
        return "proposed (no use)"
    p = validation.precision
    scored = validation.right + validation.wrong
    if p is not None and scored >= EARN_USES and p >= EARN_PRECISION:
        return "automatic (earned)"
    if scored < EARN_USES:
        return f"proposed ({scored} < {EARN_USES} uses)"
    return f"proposed ({100 * (p or 0):.1f}% < {100 * EARN_PRECISION:.0f}%)"


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def precision_table(
    rows: Mapping[str, MethodRow], tiers: Mapping[str, str] | None = None
) -> list[str]:
    head = "| method | uses | right | wrong | unscored | precision |"
    sep = "|---|---:|---:|---:|---:|---:|"
    if tiers is not None:
        head += " tier (§4.1) |"
        sep += "---|"
    lines = [head, sep]
    order = [m for m in METHODS if m in rows] + sorted(m for m in rows if m not in METHODS)
    tot = MethodRow()
    for m in order:
        r = rows[m]
        tot.uses += r.uses
        tot.right += r.right
        tot.wrong += r.wrong
        tot.unscored += r.unscored
        cells = [m, r.uses, r.right, r.wrong, r.unscored, pct(r.precision)]
        if tiers is not None:
            cells.append(tiers.get(m, ""))
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    cells = ["**all**", tot.uses, tot.right, tot.wrong, tot.unscored, pct(tot.precision)]
    if tiers is not None:
        cells.append("")
    lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return lines


# ------------------------------------------------------------------------- the region pass (git)
def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="realworld",
        GIT_AUTHOR_EMAIL="realworld@invalid",
        GIT_COMMITTER_NAME="realworld",
        GIT_COMMITTER_EMAIL="realworld@invalid",
        GIT_AUTHOR_DATE="2000-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
        LC_ALL="C",
    )
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True)
    if check and r.returncode != 0:
        raise RuntimeError("git {}: {}".format(" ".join(args), r.stderr.decode(errors="replace")))
    return r


def _apply(tree: Path, patch: Path, strip: int, git_first: bool) -> bool:
    """Apply PATCH in TREE (git apply, then GNU patch; GNU patch only when not GIT_FIRST),
    commit the result; on failure put the tree back and return False."""
    tries = []
    if git_first:
        tries.append(["git", "apply", f"-p{strip}", "--whitespace=nowarn", str(patch)])
    tries.append(
        ["patch", f"-p{strip}", "-N", "--batch", "--no-backup-if-mismatch", "-i", str(patch)]
    )
    for cmd in tries:
        r = subprocess.run(cmd, cwd=tree, capture_output=True)
        if r.returncode == 0:  # (a patch that applied leaves no .rej; no backups asked)
            _git(tree, "add", "-A", "-f")
            _git(tree, "commit", "-q", "--allow-empty", "--no-verify", "-m", patch.name)
            return True
        _git(tree, "reset", "-q", "--hard")
        _git(tree, "clean", "-q", "-f", "-d", "-x")
    return False


def _lines(tree: Path, commit: str, path: str) -> list[bytes] | None:
    r = _git(tree, "cat-file", "blob", f"{commit}:{path}", check=False)
    return r.stdout.split(b"\n") if r.returncode == 0 else None


def _blocks(tree: Path, a: str, b: str, path: str) -> list[Block]:
    r = _git(
        tree,
        "diff",
        "-U0",
        "--histogram",
        "--no-color",
        "--no-ext-diff",
        "--text",
        f"{a}:{path}",
        f"{b}:{path}",
    )
    return blocks_from_u0(r.stdout)


def predecessor_stage(
    old_series: Sequence[str],
    new_series: Sequence[str],
    successor: Mapping[str, str | None],
    added: Iterable[str],
    name: str,
) -> str | None:
    """The maintainer's patch after which patch NAME's region is compared: the last patch of
    the new series (added patches left out) that succeeds NAME or an earlier old patch; None:
    the new release itself."""
    i = list(old_series).index(name)
    succ_of = {s: k for k, s in successor.items() if s}
    upto = None
    skip = set(added)
    for m in new_series:
        if m in skip or m not in succ_of:
            continue
        if list(old_series).index(succ_of[m]) <= i:
            upto = m
    return upto


def score_uses(
    case_dir: Path,
    cand_dir: Path,
    hunks: Mapping[str, Sequence[Mapping[str, Any]]],
    outcomes: Mapping[str, str | None],
    work: Path,
) -> list[dict[str, Any]]:
    """Every placement method's use in one finished patchq rebase, with its verdict (right,
    wrong, unscored) by the region rule of the module doc."""
    case = json.loads((case_dir / "case.json").read_text())
    strip = int(case["strip"])
    old_series: list[str] = list(case["old_series"])
    if not (cand_dir / "series").is_file():
        return []
    kept = [ln.split()[0] for ln in (cand_dir / "series").read_text().splitlines() if ln.strip()]
    tree = work / "regions"
    if tree.exists():
        shutil.rmtree(tree)
    _git(
        work, "clone", "-q", "--shared", "--no-checkout", str(case_dir / "upstream.git"), str(tree)
    )
    for k, v in (("core.autocrlf", "false"), ("gc.auto", "0"), ("commit.gpgsign", "false")):
        _git(tree, "config", k, v)
    (tree / ".git" / "info").mkdir(exist_ok=True)
    (tree / ".git" / "info" / "attributes").write_text("* -text -eol -ident -filter\n")
    _git(tree, "checkout", "-q", "-f", "--detach", "origin/case-new")
    y = _git(tree, "rev-parse", "HEAD").stdout.decode().strip()

    # patchq's trees: Y + its refreshed series up to each patch
    stage: dict[str, str | None] = {}
    before: dict[str, str | None] = {}
    last: str | None = y
    for n in old_series:
        before[n] = last
        if n in kept and last is not None:
            ok = _apply(tree, cand_dir / n, strip, git_first=True)
            last = _git(tree, "rev-parse", "HEAD").stdout.decode().strip() if ok else None
        stage[n] = last
    # the maintainer's trees: Y + the new series up to each of its patches
    _git(tree, "checkout", "-q", "-f", "--detach", y)
    mstage: dict[str, str] = {}
    for m in case["new_series"]:
        if m in case["added"]:
            continue
        if not _apply(tree, case_dir / "new-series" / m, strip, git_first=False):
            break
        mstage[m] = _git(tree, "rev-parse", "HEAD").stdout.decode().strip()

    uses: list[dict[str, Any]] = []
    for n in old_series:
        outcome = outcomes.get(n)
        finished = outcome == "upstreamed" or (n in kept and outcome != "dropped")
        recs = [h for h in hunks.get(n, []) if (h.get("method") or "") not in ("", "conflict")]
        if not finished or not recs:
            continue
        old = parse_unified((case_dir / "old-series" / n).read_bytes(), strip)
        new = parse_unified((cand_dir / n).read_bytes(), strip) if n in kept else []
        upto = predecessor_stage(
            old_series, case["new_series"], case["successor"], case["added"], n
        )
        mine = stage.get(n)
        theirs = [y if upto is None else mstage.get(upto)]
        theirs.append(_theirs_on_mine(tree, case_dir, case["successor"].get(n), before[n], strip))
        for h in recs:
            u = {"patch": n, "file": h.get("file"), "index": h.get("index"), "method": h["method"]}
            ups = {
                int(r.get("index") or 0)
                for r in recs
                if r.get("file") == h.get("file") and r.get("method") == "upstreamed"
            }
            u.update(_judge_all(tree, h, ups, old, new, mine=mine, theirs=theirs))
            uses.append(u)
    shutil.rmtree(tree, ignore_errors=True)
    return uses


def _theirs_on_mine(
    tree: Path, case_dir: Path, successor: str | None, base: str | None, strip: int
) -> str | None:
    """The maintainer's refreshed patch applied (GNU patch) to patchq's tree just before
    this patch (that tree itself when the maintainer dropped the patch); None if it does
    not apply."""
    if base is None:
        return None
    if not successor:
        return base
    _git(tree, "checkout", "-q", "-f", "--detach", base)
    if not _apply(tree, case_dir / "new-series" / successor, strip, git_first=False):
        return None
    return _git(tree, "rev-parse", "HEAD").stdout.decode().strip()


def _judge_all(
    tree: Path,
    h: Mapping[str, Any],
    upstreamed: set[int],
    old: Sequence[FileDiff],
    new: Sequence[FileDiff],
    *,
    mine: str | None,
    theirs: Sequence[str | None],
) -> dict[str, str]:
    """Right when the region equals either maintainer's file (the maintainer's own tree, or
    the maintainer's patch on patchq's tree); wrong when it equals neither of those that
    could be built; else unscored."""
    verdicts = [_judge(tree, h, upstreamed, old, new, mine=mine, theirs=t) for t in theirs]
    for i, v in enumerate(verdicts):
        if v["verdict"] == "right":
            return {"verdict": "right", "why": "" if i == 0 else "on patchq's tree"}
    for v in verdicts:
        if v["verdict"] == "wrong":
            return v
    return verdicts[0]


def _judge(
    tree: Path,
    h: Mapping[str, Any],
    upstreamed: set[int],
    old: Sequence[FileDiff],
    new: Sequence[FileDiff],
    *,
    mine: str | None,
    theirs: str | None,
) -> dict[str, str]:
    """One use's verdict (module doc); UPSTREAMED: the indexes of the file's hunks judged
    upstream, which have no refreshed counterpart."""
    if mine is None:
        return {"verdict": "unscored", "why": "patchq's refreshed series does not apply"}
    if theirs is None:
        return {"verdict": "unscored", "why": "the maintainer's series does not apply this far"}
    file = str(h.get("file") or "")
    idx = int(h.get("index") or 0)
    sec = next((f for f in old if f.path == file or f.old == file), None)
    if sec is None or idx >= len(sec.hunks):
        return {"verdict": "unscored", "why": "hunk not found in the old patch"}
    oh = sec.hunks[idx]
    moved = h.get("moved_to") or {}
    path = str(moved.get("file") or file) if h["method"] == "moved" else file
    region: tuple[int, int] | None = None
    a = _lines(tree, mine, path)
    if h["method"] != "upstreamed":
        nsec = next((f for f in new if f.path == path or f.old == path), None)
        if nsec is None:
            return {"verdict": "unscored", "why": "no refreshed hunk for it"}
        ups = upstreamed - {idx}
        olds = [r for i, r in enumerate(sec.hunks) if i not in ups]
        pos = [i for i in range(len(sec.hunks)) if i not in ups].index(idx)
        j = pair_hunks(olds, nsec.hunks).get(pos)
        if j is None:
            return {"verdict": "unscored", "why": "no refreshed hunk for it"}
        nh = nsec.hunks[j]
        region = region_of(nh)
        if a is not None and list(a[region[0] : region[1]]) != nh.post_image():
            region = locate(nh.post_image(), a, region[0])
    elif a is not None:
        near = max(oh.new_start - 1, 0)
        region = (
            locate(oh.post_image(), a, near)
            or locate(oh.core(), a, near)
            or locate_between(oh, a, near)
            or locate_like(oh.post_image(), a, near)
        )
    b = _lines(tree, theirs, path)
    if a is None or b is None:
        right = a is None and b is None
        return {"verdict": "right" if right else "wrong", "why": "file missing on one side"}
    if region is None:
        return {"verdict": "unscored", "why": "region not found in patchq's file"}
    right = region_right(_blocks(tree, mine, theirs, path), *region)
    return {"verdict": "right" if right else "wrong", "why": ""}
