"""Killing patchq (SIGKILL) or pressing Ctrl-C at every step where it changes things.

Each scenario is built twice, identically (fixed dates make identical commits): once to
run the command undisturbed (the reference end state), once to run it with
PATCHQ_CRASH_AT set to one of its crash points. After a kill, `status` must explain the
state, `--abort` must give back the exact starting state (target and patch repo, byte
for byte), and after a second kill `--continue` must give exactly the reference state.
Ctrl-C at the same points must roll back on the spot and exit 130.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import git

BASE = "".join(f"line {i}\n" for i in range(1, 41))
P1 = (
    "Subject: one\n\n--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n"
    " line 6\n"
)
P2 = (
    "Subject: two\n\n--- a/f.txt\n+++ b/f.txt\n@@ -19,3 +19,3 @@\n line 19\n-line 20\n"
    "+LINE 20\n line 21\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new file\n"
)
P3 = (
    "Subject: three\n\n--- a/f.txt\n+++ b/f.txt\n@@ -34,3 +34,3 @@\n line 34\n-line 35\n"
    "+LINE 35\n line 36\n"
)


def run(
    queue: Path, *args: str, crash: str | None = None, signal: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["EDITOR"] = "sed -i s/^Subject:/Subject:edited/"  # for `header -e`
    if crash:
        env["PATCHQ_CRASH_AT"] = crash
    if signal:
        env["PATCHQ_CRASH_SIGNAL"] = signal
    return subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(queue), *args],
        env=env,
        capture_output=True,
        text=True,
    )


def build(root: Path) -> tuple[Path, Path, str]:
    """An upstream with a base and a later commit, and a queue of three patches."""
    up, q = root / "upstream", root / "queue"
    up.mkdir(parents=True)
    git(up, "init", "-q", "-b", "main")
    (up / "f.txt").write_text(BASE)
    git(up, "add", "-A")
    git(up, "commit", "-q", "-m", "base")
    base = git(up, "rev-parse", "HEAD").strip()
    (up / "f.txt").write_text("header 1\nheader 2\n" + BASE)
    git(up, "commit", "-q", "-am", "upstream adds two lines on top")
    (q / "patches").mkdir(parents=True)
    (q / "patchq.toml").write_text('target = "../upstream"\n')
    for name, body in (("p1.patch", P1), ("p2.patch", P2), ("p3.patch", P3)):
        (q / "patches" / name).write_text(body)
    (q / "series").write_text("p1.patch\np2.patch\np3.patch\n")
    git(up, "checkout", "-q", "--detach", base)
    return up, q, base


def snapshot(up: Path, q: Path) -> dict[str, str]:
    """Everything a person could see: refs, HEAD, index status, files, the stack record."""
    out = {
        "HEAD": git(up, "symbolic-ref", "-q", "HEAD", check=False).strip()
        or git(up, "rev-parse", "HEAD").strip(),
        "refs": git(up, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"),
        "status": git(up, "status", "--porcelain=v1", "--untracked-files=all"),
    }
    for root, skip in ((up, ".git"), (q, None)):
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(root)
            if (skip and rel.parts[0] == skip) or not p.is_file():
                continue
            out[f"{root.name}/{rel}"] = hashlib.sha256(p.read_bytes()).hexdigest()
    for p in sorted((up / ".git" / "patchq").glob("*.json")):
        out[f"state/{p.name}"] = p.read_text()
    return out


Setup = Callable[[Path, Path, str], None]


def nothing(up: Path, q: Path, base: str) -> None:
    del up, q, base


def applied_two(up: Path, q: Path, base: str) -> None:
    assert run(q, "apply", "--onto", base).returncode == 0
    assert run(q, "pop").returncode == 0


def edited_top(up: Path, q: Path, base: str) -> None:
    assert run(q, "apply", "--onto", base).returncode == 0
    (up / "f.txt").write_text((up / "f.txt").read_text().replace("LINE 35", "LINE 35 edited"))


def applied_all(up: Path, q: Path, base: str) -> None:
    assert run(q, "apply", "--onto", base).returncode == 0


def applied_one(up: Path, q: Path, base: str) -> None:
    assert run(q, "apply", "--onto", base).returncode == 0
    assert run(q, "pop", "-a").returncode == 0
    assert run(q, "push").returncode == 0


CASES: list[tuple[str, Setup, list[str], list[str]]] = [
    (
        "apply",
        nothing,
        ["apply", "--onto", "{base}"],
        ["journal:recorded", "journal:target-moved", "journal:file-written", "journal:done"],
    ),
    (
        "push",
        applied_two,
        ["push", "-a"],
        ["journal:recorded", "journal:target-moved", "journal:done"],
    ),
    ("pop", applied_two, ["pop", "-a"], ["journal:recorded", "journal:target-moved"]),
    (
        "refresh",
        edited_top,
        ["refresh"],
        ["journal:recorded", "journal:target-moved", "journal:file-written", "journal:done"],
    ),
    ("goto", applied_all, ["goto", "p1.patch"], ["journal:recorded", "journal:target-moved"]),
    (
        "new",
        applied_all,
        ["new", "p4.patch", "-m", "four"],
        ["journal:recorded", "journal:target-moved", "journal:file-written", "journal:done"],
    ),
    (
        "delete",
        applied_two,
        ["delete", "p3.patch"],
        ["journal:recorded", "journal:file-written", "journal:done"],
    ),
    (
        "rename",
        applied_two,
        ["rename", "p3.patch", "p3-renamed.patch"],
        ["journal:recorded", "journal:file-written", "journal:done"],
    ),
    (
        "fold",
        applied_two,
        ["fold", "p3.patch"],
        ["journal:recorded", "journal:target-moved", "journal:file-written", "journal:done"],
    ),
    (
        "header",
        applied_all,
        ["header", "-e", "p1.patch"],
        ["journal:recorded", "journal:file-written", "journal:done"],
    ),
    (
        "sink",
        applied_all,
        ["sink", "p3.patch"],
        ["journal:recorded", "journal:target-moved", "journal:file-written", "journal:done"],
    ),
    (
        "float",
        applied_two,
        ["float", "p1.patch"],
        ["journal:recorded", "journal:file-written"],
    ),
]
# Ctrl-C and injected errors: every point for the first four verbs; the journal code that
# rolls back is the same for the rest, so each of those is stopped at its first point.
STOPPED = CASES[:4] + [(op, setup, args, points[:1]) for op, setup, args, points in CASES[4:]]
# Verbs with their own --continue/--abort; the others recover through `patchq recover`.
OWN_RECOVERY = ("apply", "push", "pop", "goto", "refresh")


@pytest.mark.parametrize("op,setup,args,points", CASES, ids=[c[0] for c in CASES])
def test_killed_commands_can_be_undone_or_finished(
    tmp_path: Path, op: str, setup: Setup, args: list[str], points: list[str]
) -> None:
    up, q, base = build(tmp_path / "ref")
    setup(up, q, base)
    argv = [a.replace("{base}", base) for a in args]
    assert run(q, *argv).returncode == 0
    reference = snapshot(up, q)
    for i, point in enumerate(points):
        up, q, base2 = build(tmp_path / f"{i}")
        assert base2 == base
        setup(up, q, base)
        before = snapshot(up, q)
        killed = run(q, *argv, crash=point)
        assert killed.returncode == -9, (point, killed.stderr)
        st = run(q, "status")
        assert f"interrupted {op}" in st.stdout, (point, st.stdout)
        refused = run(q, "push")
        assert refused.returncode == 5 and f"interrupted `patchq {op}`" in refused.stderr
        verb = op if op in OWN_RECOVERY else "recover"
        undo = run(q, verb, "--abort")
        assert undo.returncode == 0, (point, undo.stderr)
        assert snapshot(up, q) == before, point
        assert run(q, *argv, crash=point).returncode == -9
        done = run(q, verb, "--continue")
        assert done.returncode == 0, (point, done.stderr)
        assert snapshot(up, q) == reference, point


# Ctrl-C, or any error while changing things (git refusing, a full disk): rolled back on
# the spot, with the exit code and message each gives.
# An OSError is a fault of the environment, not a bug of patchq: exit 5, not 70.
STOPS = [("INT", 130, "interrupted"), ("ERR", 5, "injected failure at {point}")]


@pytest.mark.parametrize("signal,code,phrase", STOPS, ids=["ctrl-c", "error"])
@pytest.mark.parametrize("op,setup,args,points", STOPPED, ids=[c[0] for c in STOPPED])
def test_ctrl_c_or_a_failure_rolls_back_on_the_spot(
    tmp_path: Path,
    op: str,
    setup: Setup,
    args: list[str],
    points: list[str],
    signal: str,
    code: int,
    phrase: str,
) -> None:
    for i, point in enumerate(points):
        up, q, base = build(tmp_path / f"{i}")
        setup(up, q, base)
        argv = [a.replace("{base}", base) for a in args]
        before = snapshot(up, q)
        r = run(q, *argv, crash=point, signal=signal)
        assert r.returncode == code, (point, r.stderr)
        assert phrase.format(point=point) in r.stderr
        assert snapshot(up, q) == before, point
        assert "interrupted" not in run(q, "status").stdout


# The finishing writes of a rebase are one journal transaction.
REBASE_POINTS = [
    "journal:recorded",
    "journal:target-moved",
    "journal:file-written",
    "journal:state-written",
    "journal:done",
]


def test_killed_rebase_can_be_aborted_or_continued(tmp_path: Path) -> None:
    up, q, base = build(tmp_path / "ref")
    assert run(q, "apply", "--onto", base).returncode == 0
    assert run(q, "rebase", "--onto", "main").returncode == 0
    reference = snapshot(up, q)
    for i, point in enumerate(REBASE_POINTS):
        up, q, _ = build(tmp_path / f"{i}")
        assert run(q, "apply", "--onto", base).returncode == 0
        before = snapshot(up, q)
        assert run(q, "rebase", "--onto", "main", crash=point).returncode == -9, point
        assert "interrupted rebase" in run(q, "status").stdout
        refused = run(q, "push")
        assert refused.returncode == 5 and "`patchq rebase --continue`" in refused.stderr
        assert run(q, "rebase", "--abort").returncode == 0, point
        assert snapshot(up, q) == before, point
        assert run(q, "rebase", "--onto", "main", crash=point).returncode == -9
        done = run(q, "rebase", "--continue")
        assert done.returncode == 0, (point, done.stderr)
        assert snapshot(up, q) == reference, point
        # `recover` is the same journal: it finishes or undoes a killed rebase too.
        up, q, _ = build(tmp_path / f"r{i}")
        assert run(q, "apply", "--onto", base).returncode == 0
        assert run(q, "rebase", "--onto", "main", crash=point).returncode == -9
        assert run(q, "recover", "--continue").returncode == 0, point
        assert snapshot(up, q) == reference, point


def _conflicting(up: Path, q: Path, base: str) -> None:
    """The series applied, and upstream editing the line p2 changes: a rebase stops."""
    assert run(q, "apply", "--onto", base).returncode == 0
    git(up, "checkout", "-q", "main")
    (up / "f.txt").write_text((up / "f.txt").read_text().replace("line 20", "Line twenty"))
    git(up, "commit", "-q", "-am", "upstream edits line 20")
    git(up, "checkout", "-q", "patchq/main")


def _resolve(up: Path) -> None:
    text = (up / "f.txt").read_text()
    start, end = text.index("<<<<<<<"), text.index(">>>>>>>")
    end = text.index("\n", end) + 1
    (up / "f.txt").write_text(text[:start] + "LINE TWENTY\n" + text[end:])


STOP_POINTS = ["journal:recorded", "journal:target-moved", "journal:state-written"]


def test_rebase_killed_while_showing_its_conflict(tmp_path: Path) -> None:
    for i, point in enumerate(STOP_POINTS):
        up, q, base = build(tmp_path / f"{i}")
        _conflicting(up, q, base)
        before = snapshot(up, q)
        assert run(q, "rebase", "--onto", "main", crash=point).returncode == -9, point
        again = run(q, "rebase", "--continue")
        assert again.returncode == 3 and "now in the working tree" in again.stderr, point
        assert "<<<<<<<" in (up / "f.txt").read_text()
        assert run(q, "rebase", "--abort").returncode == 0
        assert snapshot(up, q) == before, point
        assert run(q, "rebase", "--onto", "main", crash=point).returncode == -9, point
        assert run(q, "rebase", "--abort").returncode == 0
        assert snapshot(up, q) == before, point


def test_rebase_killed_while_taking_a_resolution_or_aborting(tmp_path: Path) -> None:
    up, q, base = build(tmp_path / "ref")
    _conflicting(up, q, base)
    assert run(q, "rebase", "--onto", "main").returncode == 3
    _resolve(up)
    assert run(q, "rebase", "--continue").returncode == 0
    reference = snapshot(up, q)
    # The resolution is remembered in the same transaction (resolutions/).
    assert any(k.startswith("queue/resolutions/") for k in reference)
    for i, point in enumerate(
        [
            "journal:recorded",
            "journal:target-moved",
            "journal:file-written",
            "journal:state-written",
        ]
    ):
        up, q, base = build(tmp_path / f"{i}")
        _conflicting(up, q, base)
        before = snapshot(up, q)
        assert run(q, "rebase", "--onto", "main").returncode == 3
        _resolve(up)
        assert run(q, "rebase", "--continue", crash=point).returncode == -9, point
        # Undoing the killed step leaves the rebase stopped at the same patch.
        assert run(q, "rebase", "--abort").returncode == 0, point
        assert snapshot(up, q) == before, point
        assert run(q, "rebase", "--onto", "main").returncode == 3
        _resolve(up)
        assert run(q, "rebase", "--continue", crash=point).returncode == -9, point
        done = run(q, "rebase", "--continue")
        assert done.returncode == 0, (point, done.stderr)
        assert snapshot(up, q) == reference, point
    # A killed --abort is finished by --abort or --continue alike (it only goes back).
    for mode in ("--abort", "--continue"):
        up, q, base = build(tmp_path / f"abort{mode}")
        _conflicting(up, q, base)
        before = snapshot(up, q)
        assert run(q, "rebase", "--onto", "main").returncode == 3
        assert run(q, "rebase", "--abort", crash="journal:recorded").returncode == -9
        assert "interrupted rebase --abort" in run(q, "status").stdout
        assert run(q, "rebase", mode).returncode == 0, mode
        assert snapshot(up, q) == before, mode


def test_a_second_rebase_after_a_killed_one_replays_nothing_of_it(tmp_path: Path) -> None:
    up, q, base = build(tmp_path / "ref")
    assert run(q, "apply", "--onto", base).returncode == 0
    assert run(q, "rebase", "--onto", "main").returncode == 0
    reference = snapshot(up, q)
    up, q, base = build(tmp_path / "run")
    assert run(q, "apply", "--onto", base).returncode == 0
    before = snapshot(up, q)
    assert run(q, "rebase", "--onto", "main", crash="journal:file-written").returncode == -9
    refused = run(q, "rebase", "--onto", "main")
    assert refused.returncode == 5 and "interrupted `patchq rebase`" in refused.stderr
    assert run(q, "recover", "--abort").returncode == 0
    assert snapshot(up, q) == before
    # A stray copy where a journal keeps its files (from some older run) is never read.
    stray = up / ".git" / "patchq" / "op" / "0000" / "files" / "after"
    (stray / "patches").mkdir(parents=True)
    (stray / "series").write_text("bogus.patch\n")
    (stray / "patches" / "p1.patch").write_text("not a patch\n")
    assert run(q, "rebase", "--onto", "main").returncode == 0
    assert snapshot(up, q) == reference
    assert not (up / ".git" / "patchq" / "op").exists()


def test_killed_import_is_undone_or_finished_without_a_target(tmp_path: Path) -> None:
    """`import` needs no target: its journal lives in the patch repo's `.patchq/`."""

    def fresh(name: str) -> Path:
        q = tmp_path / name / "queue"
        (q / "patches").mkdir(parents=True)
        (q / "patches" / "p1.patch").write_text(P1)
        (q / "series").write_text("p1.patch\n")
        return q

    def files(q: Path) -> dict[str, bytes]:
        return {str(p.relative_to(q)): p.read_bytes() for p in q.rglob("*") if p.is_file()}

    incoming = tmp_path / "two.patch"
    incoming.write_text(P2)
    ref = fresh("ref")
    assert run(ref, "import", str(incoming)).returncode == 0
    reference = files(ref)
    for i, point in enumerate(["journal:recorded", "journal:file-written"]):
        q = fresh(str(i))
        before = files(q)
        assert run(q, "import", str(incoming), crash=point).returncode == -9, point
        assert (q / ".patchq" / "op.json").is_file()
        again = run(q, "import", str(incoming))
        assert again.returncode == 5 and "interrupted `patchq import`" in again.stderr
        assert run(q, "recover", "--abort").returncode == 0, point
        assert files(q) == before, point
        assert run(q, "import", str(incoming), crash=point).returncode == -9, point
        done = run(q, "recover", "--continue")
        assert done.returncode == 0, (point, done.stderr)
        assert files(q) == reference, point


def test_killed_undo_is_finished_by_recover_and_ctrl_c_keeps_the_record(tmp_path: Path) -> None:
    """`undo` is a back-only journal: a kill is finished by `recover --continue` and
    `--abort` alike; Ctrl-C puts the operation's state back and keeps it undoable."""
    up, q, base = build(tmp_path / "ref")
    applied_all(up, q, base)
    before_pop = snapshot(up, q)
    assert run(q, "pop", "-a").returncode == 0
    assert run(q, "undo").returncode == 0
    assert snapshot(up, q) == before_pop
    for i, mode in enumerate(("--continue", "--abort")):
        up, q, base = build(tmp_path / f"{i}")
        applied_all(up, q, base)
        assert run(q, "pop", "-a").returncode == 0
        assert run(q, "undo", crash="journal:recorded").returncode == -9
        assert "interrupted undo pop" in run(q, "status").stdout
        assert run(q, "recover", mode).returncode == 0, mode
        assert snapshot(up, q) == before_pop, mode
        assert run(q, "undo").returncode == 4  # done: nothing left to undo
    up, q, base = build(tmp_path / "int")
    applied_all(up, q, base)
    assert run(q, "pop", "-a").returncode == 0
    popped = snapshot(up, q)
    r = run(q, "undo", crash="journal:recorded", signal="INT")
    assert r.returncode == 130 and "interrupted" in r.stderr
    assert snapshot(up, q) == popped
    assert "interrupted" not in run(q, "status").stdout
    assert run(q, "undo").returncode == 0
    assert snapshot(up, q) == before_pop


# --- what another process leaves: a dead git's index.lock, `git gc` during a stop -------


def test_a_stale_index_lock_of_patchq_s_killed_git_is_named_and_removed(
    tmp_path: Path,
) -> None:
    """patchq killed while its git held the index's lock (the process group killed during
    the checkout): recovery names the lock and removes it, then finishes or undoes."""
    up, q, base = build(tmp_path / "ref")
    assert run(q, "apply", "--onto", base).returncode == 0
    reference = snapshot(up, q)
    for mode, verb in (("--abort", "apply"), ("--continue", "recover")):
        up, q, _ = build(tmp_path / mode)
        before = snapshot(up, q)
        killed = run(q, "apply", "--onto", base, crash="git:index-locked")
        assert killed.returncode == -9, killed.stderr
        lock = up / ".git" / "index.lock"
        assert lock.exists()
        r = run(q, verb, mode)
        assert r.returncode == 0, r.stderr
        assert "removed" in r.stderr and "index.lock" in r.stderr
        assert not lock.exists()
        assert snapshot(up, q) == (before if mode == "--abort" else reference)


def test_an_index_lock_a_live_git_holds_is_never_removed(tmp_path: Path) -> None:
    up, q, base = build(tmp_path / "run")
    assert run(q, "apply", "--onto", base, crash="git:index-locked").returncode == -9
    lock = up / ".git" / "index.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"f = open({str(lock)!r}, 'rb'); print('held', flush=True)\n"
            "import time; time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        r = run(q, "recover", "--continue")
        assert r.returncode == 5 and f"pid {holder.pid}" in r.stderr, r.stderr
        assert lock.exists()
    finally:
        holder.kill()
        holder.wait()
    # A lock no patchq git took (the person's git died earlier) is left to the person:
    # git refuses it, exit 6 naming git's command.
    up, q, base = build(tmp_path / "theirs")
    assert run(q, "apply", "--onto", base, crash="journal:recorded").returncode == -9
    (up / ".git" / "index.lock").write_bytes(b"")
    r = run(q, "recover", "--continue")
    assert r.returncode == 6 and "`git checkout" in r.stderr, r.stderr
    assert (up / ".git" / "index.lock").exists()


def test_git_gc_during_a_stopped_rebase_breaks_nothing(tmp_path: Path) -> None:
    """The stop's objects (conflict tree, the snapshot) are kept by refs/patchq/…: a real
    `git gc --prune=now` with every reflog expired loses none of them."""
    up, q, base = build(tmp_path / "ref")
    _conflicting(up, q, base)
    assert run(q, "rebase", "--onto", "main").returncode == 3
    _resolve(up)
    assert run(q, "rebase", "--continue").returncode == 0
    reference = snapshot(up, q)

    def gc(up: Path) -> None:
        git(up, "reflog", "expire", "--expire=now", "--all")
        git(up, "gc", "-q", "--prune=now")
        assert git(up, "count-objects").startswith("0 objects")

    for mode in ("--continue", "--abort", "--skip"):
        up, q, base = build(tmp_path / mode)
        _conflicting(up, q, base)
        before = snapshot(up, q)
        assert run(q, "rebase", "--onto", "main").returncode == 3
        assert "refs/patchq/main/rebase" in git(up, "for-each-ref", "refs/patchq")
        gc(up)
        if mode == "--continue":
            _resolve(up)
        r = run(q, "rebase", mode)
        assert r.returncode == 0, (mode, r.stderr)
        if mode == "--continue":
            assert snapshot(up, q) == reference
        elif mode == "--abort":
            assert snapshot(up, q) == before
        assert git(up, "for-each-ref", "refs/patchq") == ""
        assert "error" not in git(up, "fsck", "--no-dangling")
    # A stop left by a kill before its record was written keeps no stray ref either.
    up, q, base = build(tmp_path / "killed")
    _conflicting(up, q, base)
    before = snapshot(up, q)
    assert run(q, "rebase", "--onto", "main", crash="journal:target-moved").returncode == -9
    gc(up)
    assert run(q, "rebase", "--abort").returncode == 0
    assert snapshot(up, q) == before
    assert git(up, "for-each-ref", "refs/patchq") == ""


def test_a_dead_git_s_lock_outside_any_journal_is_cleared_by_the_next_step(
    tmp_path: Path,
) -> None:
    """`rebase --abort` killed in its first git step (clearing the conflict, before its
    journal): the next `rebase --abort` removes the stale lock, names it, and aborts."""
    up, q, base = build(tmp_path / "run")
    _conflicting(up, q, base)
    before = snapshot(up, q)
    assert run(q, "rebase", "--onto", "main").returncode == 3
    assert run(q, "rebase", "--abort", crash="git:index-locked").returncode == -9
    assert (up / ".git" / "index.lock").exists()
    r = run(q, "rebase", "--abort")
    assert r.returncode == 0, r.stderr
    assert "removed" in r.stderr and "index.lock" in r.stderr
    assert snapshot(up, q) == before
    assert not list((up / ".git" / "patchq").glob("git-step*"))


def test_recovering_a_half_done_checkout_stashes_nothing_of_patchq_s(tmp_path: Path) -> None:
    """A checkout killed halfway leaves files of both sides: recovery forces the checkout
    without a stash of them (the target ends byte for byte as it should, no refs/stash),
    but a file of the person's that neither side holds is still saved."""
    up, q, base = build(tmp_path / "ref")
    assert run(q, "apply", "--onto", base).returncode == 0
    reference = snapshot(up, q)
    for mode in ("--abort", "--continue"):
        up, q, _ = build(tmp_path / mode)
        before = snapshot(up, q)
        assert run(q, "apply", "--onto", base, crash="journal:recorded").returncode == -9
        # What the killed checkout had got to: p2's new file written, and f.txt as the
        # whole series leaves it (git writes each file whole).
        (up / "new.txt").write_text("new file\n")
        done = BASE
        for n in (5, 20, 35):
            done = done.replace(f"line {n}\n", f"LINE {n}\n")
        (up / "f.txt").write_text(done)
        r = run(q, "apply", mode)
        assert r.returncode == 0, r.stderr
        assert "stash" not in r.stderr
        assert git(up, "rev-parse", "-q", "--verify", "refs/stash", check=False) == ""
        assert snapshot(up, q) == (before if mode == "--abort" else reference)
    up, q, _ = build(tmp_path / "mine")
    assert run(q, "apply", "--onto", base, crash="journal:recorded").returncode == -9
    (up / "f.txt").write_text(BASE + "a line of mine\n")
    r = run(q, "apply", "--abort")
    assert r.returncode == 0 and "stash" in r.stderr, r.stderr
    assert "a line of mine" in git(up, "stash", "show", "-p")


def test_a_file_torn_by_patchq_s_killed_checkout_is_not_stashed(tmp_path: Path) -> None:
    """The kill study's find: git killed while writing a file leaves its first bytes.
    With that git's stale lock as the evidence, a file that is the start of what the
    checkout was writing is patchq's, not the person's: no stash, exact state."""
    up, q, base = build(tmp_path / "run")
    before = snapshot(up, q)
    assert run(q, "apply", "--onto", base, crash="git:index-locked").returncode == -9
    done = BASE
    for n in (5, 20, 35):
        done = done.replace(f"line {n}\n", f"LINE {n}\n")
    (up / "f.txt").write_text(done[: len(done) // 2])  # cut short mid-write
    r = run(q, "apply", "--abort")
    assert r.returncode == 0, r.stderr
    assert "stash" not in r.stderr and "removed" in r.stderr
    assert snapshot(up, q) == before


def test_copies_a_killed_clearing_left_are_tidied_by_the_next_recovery(tmp_path: Path) -> None:
    """A kill between removing the journal and removing its copies leaves `op/<id>/`:
    never read again (named by its id), and removed by the next recovery attempt, which
    finds nothing to recover, so `.git/patchq/` is as an undisturbed run leaves it."""
    up, q, base = build(tmp_path / "t")
    assert run(q, "apply", "--onto", base).returncode == 0
    clean = snapshot(up, q)
    for verb in (("recover", "--continue"), ("rebase", "--abort")):
        left = up / ".git" / "patchq" / "op" / "0123456789abcdef" / "files" / "after"
        left.mkdir(parents=True)
        (left / "series").write_bytes(b"x.patch\n")
        r = run(q, *verb)
        assert r.returncode == 4, r.stderr
        assert "nothing to recover" in r.stderr or "no rebase" in r.stderr, r.stderr
        assert not (up / ".git" / "patchq" / "op").exists(), verb
        assert snapshot(up, q) == clean, verb


# Made on top of p1.patch: it rewrites the line p1 wrote, so without p1 below it (after
# `float p1.patch`) it conflicts.
P4 = (
    "Subject: four\n\n--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n line 4\n-LINE 5\n"
    "+rewritten entirely\n line 6\n"
)


def _stopped_float(up: Path, q: Path, base: str) -> None:
    """`float p1.patch` stopped at p4.patch, which conflicts without p1 below it."""
    (q / "patches" / "p4.patch").write_text(P4)
    (q / "series").write_text("p1.patch\np2.patch\np3.patch\np4.patch\n")
    assert run(q, "apply", "--onto", base).returncode == 0


def test_a_reorder_killed_while_stopping_or_finishing_is_recovered(tmp_path: Path) -> None:
    up, q, base = build(tmp_path / "ref")
    _stopped_float(up, q, base)
    assert run(q, "float", "p1.patch").returncode == 3
    assert run(q, "rebase", "--skip").returncode == 0
    reference = snapshot(up, q)
    series = (q / "series").read_text()
    assert series.startswith("p2.patch\np3.patch\n# dropped in ")
    assert series.endswith(": p4.patch\np1.patch\n")
    # Killed while the stop reaches the target: --abort gives back the start, byte for byte.
    for i, point in enumerate(STOP_POINTS):
        up, q, base = build(tmp_path / f"stop{i}")
        _stopped_float(up, q, base)
        before = snapshot(up, q)
        assert run(q, "float", "p1.patch", crash=point).returncode == -9, point
        again = run(q, "rebase", "--continue")
        assert again.returncode == 3 and "now in the working tree" in again.stderr, point
        assert run(q, "rebase", "--abort").returncode == 0, point
        assert snapshot(up, q) == before, point
    # Killed in its finishing writes: --continue ends where an undisturbed run ends, and
    # --abort goes back to before the float.
    for i, point in enumerate(
        ["rebase:finishing", "journal:recorded", "journal:target-moved", "journal:state-written"]
    ):
        for mode in ("--continue", "--abort"):
            up, q, base = build(tmp_path / f"finish{i}{mode}")
            _stopped_float(up, q, base)
            before = snapshot(up, q)
            assert run(q, "float", "p1.patch").returncode == 3
            assert run(q, "rebase", "--skip", crash=point).returncode == -9, point
            done = run(q, "rebase", mode)
            assert done.returncode == 0, (point, mode, done.stderr)
            assert snapshot(up, q) == (reference if mode == "--continue" else before), (
                point,
                mode,
            )
