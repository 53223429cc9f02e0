"""`push --continue` at a `push --merge` stop: it leaves the next patches pushable —
the stopped patch, refreshed on the new upstream, no longer applies on the lock's base,
yet the patches after it keep their pre-images there (the bytes the lock pins for it are
kept, store/pinned.py) and git's 3-way merge places them, now and in a later push — and,
killed between its two steps (the refresh, the push on), it is said unfinished and goes
on. End to end through the CLI on real repositories."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from ..conftest import Queue, Runner, Upstream, git
from .test_push_tiers import CALLS, CLASH, OTHER, P

# n.patch changes line 22; upstream changed line 20, next to its context: GNU patch's
# placement needs fuzz, git's 3-way merge (with n's pre-image) places it cleanly.
NEXT = (
    "Touch line 22\n\n--- a/f.txt\n+++ b/f.txt\n@@ -23,7 +23,7 @@\n line 19\n line 20\n"
    " line 21\n-line 22\n+LINE 22\n line 23\n line 24\n line 25\n"
)
NEAR = ("line 20\n", "line 20 upstream\n")
RESOLVED = CALLS.replace(*NEAR).replace("-O2 -g)", "-O3 -g)")


def _stopped_at_p(upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    """o, p and n pinned on the old base by a colleague's clone; upstream since changed
    p's line (a conflict) and the line next to n's; `push -a --merge` stops at p."""
    upstream.write("f.txt", CALLS).write("g.txt", "g\n")
    old = upstream.commit("base")
    upstream.write("f.txt", CLASH.replace(*NEAR))
    upstream.commit("optimise for size")
    queue.add("o.patch", OTHER).add("p.patch", P).add("n.patch", NEXT)
    assert patchq("push").code == 0
    colleague = tmp_path / "colleague"
    git(tmp_path, "clone", "-q", str(upstream.path), str(colleague))
    r = patchq("--target", str(colleague), "apply", "--onto", old, "--force")
    assert r.code == 0, r.err
    r = patchq("push", "-a", "--merge")
    assert r.code == 3 and "push --continue" in r.err, r.err
    assert patchq("applied").out == "o.patch\np.patch\n"


def test_push_continue_merges_the_next_patch_against_its_pinned_preimage(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    _stopped_at_p(upstream, queue, patchq, tmp_path)
    lock = queue.lock()
    upstream.write("f.txt", RESOLVED.replace("-Os", "-O3"))
    r = patchq("push", "--continue")
    # Before, n lost its pre-image (p's refreshed file does not apply on the old base)
    # and stopped as a fuzz proposal: the clean 3-way merge is what git would do.
    assert r.code == 0, r.err
    assert patchq("applied").out == "o.patch\np.patch\nn.patch\n"
    assert upstream.read("f.txt").decode() == RESOLVED.replace("line 22\n", "LINE 22\n")
    assert upstream.git("status", "--porcelain") == ""
    assert queue.lock() == lock  # pinned on the old base, as refresh leaves it
    # And a later push of n (popped, pushed again) still finds its pre-image.
    assert patchq("pop").code == 0
    r = patchq("push", "--merge", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["applied"][-1] == "n.patch"


def test_the_kept_copy_is_the_pinned_file_by_its_lock_hash(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    _stopped_at_p(upstream, queue, patchq, tmp_path)
    pinned = (queue.path / "patches/p.patch").read_bytes()
    upstream.write("f.txt", RESOLVED)
    assert patchq("push", "--continue").code == 0
    assert (queue.path / "patches/p.patch").read_bytes() != pinned
    record = upstream.path / ".git" / "patchq" / "main.pinned.json"
    copies = json.loads(record.read_text())["copies"]
    sha = hashlib.sha256(pinned).hexdigest()
    assert sha in json.loads(queue.lock())["patches"][1].values()
    assert {k: base64.b64decode(v) for k, v in copies.items()} == {sha: pinned}
    # A damaged record is named (exit 5), not read as no pre-images.
    record.write_text("{")
    assert patchq("pop").code == 0
    r = patchq("push", "--merge")
    assert r.code == 5 and "record of pinned patch copies is damaged" in r.err, r.err


def test_a_push_continue_killed_after_its_refresh_is_said_unfinished_and_goes_on(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    _stopped_at_p(upstream, queue, patchq, tmp_path)
    upstream.write("f.txt", RESOLVED)
    env = {**os.environ, "PATCHQ_CRASH_AT": "push:continued"}
    proc = subprocess.run(
        [sys.executable, "-m", "patchq", "--dir", str(queue.path), "push", "--continue"],
        env=env,
        capture_output=True,
    )
    assert proc.returncode == -9, proc.stderr
    # p.patch was refreshed; n.patch is not pushed, and status says the push is unfinished.
    assert patchq("applied").out == "o.patch\np.patch\n"
    st = patchq("status")
    said = (
        "push --continue unfinished: it took the tree into p.patch, then stopped before "
        "pushing on to n.patch: `patchq push --continue` pushes on"
    )
    assert said in st.out, st.out
    doc = json.loads(patchq("status", "--json").out)
    assert doc["push_continue"] == {"patch": "p.patch", "target": "n.patch"}
    assert doc["push_stop"] is None
    # --abort has nothing of the push's left to put back: it says what is.
    r = patchq("push", "--abort")
    assert r.code == 4 and "only the push on to n.patch is left" in r.err, r.err
    # --continue goes on, without a second refresh.
    r = patchq("push", "--continue")
    assert r.code == 0, r.err
    assert "refreshed" not in r.err
    assert patchq("applied").out == "o.patch\np.patch\nn.patch\n"
    assert json.loads(patchq("status", "--json").out)["push_continue"] is None
    assert not (upstream.path / ".git/patchq/main.push-continue.json").exists()
    # And a stale record (the stack moved since) is never taken for a push under way.
    assert patchq("pop").code == 0
    assert "push --continue unfinished" not in patchq("status").out
