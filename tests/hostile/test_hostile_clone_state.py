"""A clone's state is untrusted: the patch repo's `.patchq/` (the journal of a command with
no target, `op.json`, and its hidden before/after copies) can arrive with a clone or a
tarball.

A journal patchq did not write in this folder on this machine is never replayed: every
command that writes refuses (exit 5) and names it, `recover` too, and `lint` and
`status` name it. A `.patchq` that is a symlink, or an `op.json` that is a symlink, a
FIFO, a device or far too large, is refused with exit 4 from its `lstat`, without being
opened, and nothing is written or deleted through it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..conftest import Result, new_repo, run_patchq

PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n-one\n+ONE\n two\n three\n"
TEXT = "one\ntwo\nthree\nfour\n"


def make_queue(tmp: Path) -> Path:
    """A patch repo with one reviewed patch and a target beside it."""
    new_repo(tmp / "upstream", {"f.txt": TEXT})
    q = tmp / "q"
    (q / "patches").mkdir(parents=True)
    (q / "patches" / "p.patch").write_text(PATCH)
    (q / "series").write_text("p.patch\n")
    (q / "patchq.toml").write_text('target = "../upstream"\n')
    return q


def shipped_journal(q: Path, evil: str) -> None:
    """What a clone can carry: a journal of an `import` whose hidden `before` copy of the
    reviewed patch holds other text, as if a kill had cut the import short."""
    home = q / ".patchq"
    before = home / "op" / "abc" / "files" / "before" / "patches"
    before.mkdir(parents=True)
    (before / "p.patch").write_text(evil)
    after = home / "op" / "abc" / "files" / "after" / "patches"
    after.mkdir(parents=True)
    (after / "p.patch").write_text(PATCH)
    doc = {
        "op": "import",
        "id": "abc",
        "home": "patch-repo",
        "files": {"patches/p.patch": {"before": True, "after": True}},
        "state": {},
        "before": {"branch_ref": None, "head_branch": None, "head": None, "stack": None},
        "after": {"head": None, "stack": None, "worktree": "checkout", "overlay": None},
    }
    (home / "op.json").write_text(json.dumps(doc))


def _cli(q: Path, *args: str) -> Result:
    return run_patchq("--dir", str(q), *args)


def test_a_shipped_journal_is_never_replayed(tmp_path: Path) -> None:
    q = make_queue(tmp_path)
    evil = PATCH.replace("+ONE", "+PWNED")
    shipped_journal(q, evil)
    for mode in ("--abort", "--continue"):
        r = _cli(q, "recover", mode)
        assert r.code == 5, r.err
        assert "a journal patchq did not write here" in r.err and "never replays it" in r.err
        assert (q / "patches" / "p.patch").read_text() == PATCH
    # Every command that writes refuses over it; nothing of it is removed.
    (tmp_path / "more.patch").write_text(PATCH.replace("one", "uno").replace("ONE", "UNO"))
    r = _cli(q, "import", str(tmp_path / "more.patch"))
    assert r.code == 5 and "did not write here" in r.err
    assert (q / "series").read_text() == "p.patch\n" and (q / ".patchq" / "op.json").is_file()
    # lint and status name it.
    r = _cli(q, "lint")
    assert r.code == 4 and ".patchq/op.json" in r.out + r.err
    assert "did not write here" in r.out + r.err
    r = _cli(q, "status")
    assert "unusable journal" in r.out and "did not write here" in r.out
    st = json.loads(_cli(q, "status", "--json").out)
    assert st["operation"].startswith("unusable journal ")


def test_a_copied_journal_is_foreign_where_the_original_is_ours(tmp_path: Path) -> None:
    """A real interrupted import, then the patch repo copied (as a tarball would carry
    it): the copy refuses to replay it; the original recovers as before."""
    q = make_queue(tmp_path)
    (tmp_path / "more.patch").write_text(PATCH.replace("one", "uno").replace("ONE", "UNO"))
    env = dict(os.environ, PATCHQ_CRASH_AT="journal:recorded")
    proc = subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(q), "import", str(tmp_path / "more.patch")],
        env=env,
        capture_output=True,
    )
    assert proc.returncode == -9, proc.stderr
    assert (q / ".patchq" / "op.json").is_file()
    copy = tmp_path / "copy"
    shutil.copytree(q, copy, symlinks=True)
    r = _cli(copy, "recover", "--abort")
    assert r.code == 5 and "did not write here" in r.err
    r = _cli(q, "recover", "--abort")
    assert r.code == 0, r.err
    assert (q / "series").read_text() == "p.patch\n" and not (q / ".patchq").exists()


def test_a_patchq_folder_that_is_a_link_is_never_used(tmp_path: Path) -> None:
    """`.patchq -> ../outside`: import refused (exit 4), and the folder it points at, with
    what it holds, is left alone."""
    q = make_queue(tmp_path)
    outside = tmp_path / "outside"
    (outside / "op").mkdir(parents=True)
    (outside / "op" / "keep.txt").write_text("mine\n")
    (q / ".patchq").symlink_to("../outside")
    (tmp_path / "more.patch").write_text(PATCH.replace("one", "uno").replace("ONE", "UNO"))
    for args in (("import", str(tmp_path / "more.patch")), ("recover", "--abort"), ("lint",)):
        r = _cli(q, *args)
        assert r.code == 4, (args, r.err)
        assert ".patchq is a symlink" in r.out + r.err
    assert (outside / "op" / "keep.txt").read_text() == "mine\n"
    assert (q / "series").read_text() == "p.patch\n"


def test_an_op_json_that_is_no_file_is_refused_without_being_opened(tmp_path: Path) -> None:
    """A FIFO would hang every command, a link to an endless file exhaust memory, a huge
    file cost its size: each is refused from its lstat (exit 4), never opened (the suite's
    hang guard ends a test that waits on the FIFO)."""
    q = make_queue(tmp_path)
    home = q / ".patchq"
    home.mkdir()
    big = tmp_path / "big.json"
    big.write_bytes(b"{" + b" " * (2 << 20) + b"}")

    def fifo(p: Path) -> None:
        os.mkfifo(p)

    def link(p: Path) -> None:
        p.symlink_to(big)

    def huge(p: Path) -> None:
        shutil.copyfile(big, p)

    cases: dict[str, Callable[[Path], None]] = {"fifo": fifo, "link": link, "huge": huge}
    more = tmp_path / "more.patch"
    more.write_text(PATCH.replace("one", "uno").replace("ONE", "UNO"))
    for name, make in cases.items():
        path = home / "op.json"
        make(path)
        for args in (("import", str(more)), ("recover", "--abort"), ("lint",)):
            r = _cli(q, *args)
            assert r.code == 4, (name, args, r.err)
            assert "op.json" in r.out + r.err
        assert (q / "series").read_text() == "p.patch\n"
        path.unlink()


def test_a_nul_in_a_configured_command_is_bad_input_before_anything(tmp_path: Path) -> None:
    q = make_queue(tmp_path)
    (q / "patchq.toml").write_text('target = "../upstream"\nexec = "make\\u0000; rm -rf x"\n')
    series = (q / "series").read_bytes()
    for args in (("trust",), ("apply",), ("rebase", "--onto", "main")):
        r = _cli(q, *args)
        assert r.code == 4, (args, r.err)
        assert "`exec` holds a NUL byte" in r.err and r.err.count("\n") == 1
    assert (q / "series").read_bytes() == series and not (q / "series.lock").exists()


def test_trust_changes_take_turns(tmp_path: Path) -> None:
    """A `trust --revoke` waits while another change of the marks holds the folder, then
    reads what that one wrote: the revoke is never undone by a write made from older
    marks."""
    q = make_queue(tmp_path)
    (q / "patchq.toml").write_text('target = "../upstream"\nexec = "true"\n')
    assert _cli(q, "trust").code == 0
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "patchq"
    marks = (config / "trusted.json").read_text()
    assert str(q) in marks
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys\n"
            f"fd = os.open({str(config)!r}, os.O_RDONLY)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        revoke = subprocess.Popen(
            [sys.executable, "-m", "patchq", "--dir", str(q), "trust", "--revoke"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        _wait_blocked(revoke)
        # Meanwhile the holder (a `trust` that read before) writes its marks again.
        (config / "trusted.json").write_text(marks)
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert revoke.wait(timeout=60) == 0
    finally:
        holder.kill()
        holder.wait()
    assert str(q) not in (config / "trusted.json").read_text()


def _wait_blocked(proc: subprocess.Popen[bytes]) -> None:
    """Until the kernel lists `proc` as waiting for a flock (/proc/locks: `->`), or it
    ends (then the lock did not hold it: the test fails)."""
    for _ in range(6000):
        if proc.poll() is not None:
            raise AssertionError(f"pid {proc.pid} did not wait for the lock")
        blocked = [x for x in Path("/proc/locks").read_text().splitlines() if "->" in x]
        if any(f" {proc.pid} " in f" {x} " for x in blocked):
            return
        time.sleep(0.01)
    raise AssertionError("trust --revoke never reached the folder's lock")


def two_patches(tmp: Path) -> Path:
    """`make_queue` with a second patch, q.patch, after p.patch."""
    q = make_queue(tmp)
    (q / "patches" / "q.patch").write_text(PATCH.replace("one", "uno").replace("ONE", "UNO"))
    (q / "series").write_text("p.patch\nq.patch\n")
    return q


def paused_guard(q: Path, point: str, *args: str) -> subprocess.Popen[str]:
    """`patchq guard ARGS` on `q`, paused at crash point `point` (SIGUSR1 lets it go on)."""
    env = dict(os.environ, PATCHQ_CRASH_AT=point, PATCHQ_CRASH_SIGNAL="PAUSE")
    proc = subprocess.Popen(
        [sys.executable, "-m", "patchq", "--dir", str(q), "guard", *args],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == f"paused at {point}\n"
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc


def test_a_command_never_writes_over_a_series_changed_after_it_read_it(
    tmp_path: Path,
) -> None:
    """A writer reads `series` holding the patch repo's lock, so another patchq waits or
    is busy; an edit made meanwhile by something that takes no lock (an editor) is not
    written over either: the command refuses (exit 5), and run again it reads afresh."""
    q = two_patches(tmp_path)
    late = paused_guard(q, "patchrepo:read", "q.patch", "+b")
    try:
        assert late.stderr is not None
        busy = _cli(q, "guard", "p.patch", "+a")
        assert busy.code == 5 and "busy:" in busy.err
        (q / "series").write_text("p.patch #+a\nq.patch\n")  # an editor's change
        late.send_signal(signal.SIGUSR1)
        err = late.stderr.read()
        assert late.wait(timeout=60) == 5, err
        assert "series changed since this command read it" in err
    finally:
        late.kill()
        late.wait()
    assert (q / "series").read_text() == "p.patch #+a\nq.patch\n"
    again = _cli(q, "guard", "q.patch", "+b")
    assert again.code == 0, again.err
    assert (q / "series").read_text() == "p.patch #+a\nq.patch #+b\n"


def test_a_second_writer_says_who_is_busy_or_waits(tmp_path: Path) -> None:
    """While one `guard` holds the patch repo, a second writer says at once which command
    holds it (exit 5, nothing written); with --wait it waits for its turn."""
    q = two_patches(tmp_path)
    first = paused_guard(q, "journal:recorded", "p.patch", "+a")
    try:
        r = _cli(q, "series")  # read-only: no lock, no wait
        assert r.code == 0, r.err
        r = _cli(q, "guard", "q.patch", "+b")
        assert r.code == 5 and r.err.count("\n") == 1
        assert f"busy: patchq --dir {q} guard p.patch +a (pid {first.pid}) holds {q}" in r.err
        # With --wait it waits for its turn, then reads series afresh: both changes stay.
        waiting = subprocess.Popen(
            [sys.executable, "-m", "patchq", "--dir", str(q), "--wait=60"]
            + ["guard", "q.patch", "+b"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        _wait_blocked(waiting)
        first.send_signal(signal.SIGUSR1)
        assert first.wait(timeout=60) == 0
        _, err = waiting.communicate(timeout=60)
        assert waiting.returncode == 0, err
    finally:
        first.kill()
        first.wait()
    assert (q / "series").read_text() == "p.patch #+a\nq.patch #+b\n"
