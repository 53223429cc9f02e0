"""`target` in a cloned patch repo's patchq.toml points patchq at a checkout.

It needs no trust (patchq runs nothing there, refuses to move over uncommitted work, and
journals every change), but a stranger's choice is named: `lint` notes a target outside
the patch repo's folder and beside it, and `check` names the target every time.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..conftest import Queue, Result, Upstream

Run = Callable[..., Result]
PATCH = (
    "From: A Person <a@example.org>\nSubject: p\n\n"
    "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+two\n"
)


def test_lint_names_a_target_far_from_the_patch_repo(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    upstream.write("f.txt", "one\n")
    upstream.commit("base")
    queue.add("p.patch", PATCH)
    # Beside the patch repo, as `init --target` makes it: no note.
    assert "target" not in patchq("lint").out
    far = upstream.path.resolve()
    (queue.path / "patchq.toml").write_text(f"target = {json.dumps(str(far) + '/../upstream')}\n")
    r = patchq("lint")
    assert "target = " not in r.out  # the same sibling, spelled absolute
    (queue.path / "patchq.toml").write_text('target = "/tmp/../etc"\n')
    r = patchq("lint")
    assert "note: target = '/tmp/../etc': stack commands change the git checkout at /etc" in r.out
    assert r.code == 0, r.out  # a note, not a fault


def test_check_names_the_configured_target(upstream: Upstream, queue: Queue, patchq: Run) -> None:
    upstream.write("f.txt", "one\n")
    base = upstream.commit("base")
    queue.add("p.patch", PATCH)
    (queue.path / "patchq.toml").write_text('target = "../upstream"\n')
    assert patchq("apply", "--onto", base).code == 0
    r = patchq("check", "--onto", base)
    assert r.code == 0, r.err
    assert f"target: {upstream.path.resolve()} (chosen by `target` in patchq.toml)" in r.out
    doc = json.loads(patchq("check", "--onto", base, "--json").out)
    assert doc["target"] == str(upstream.path.resolve())
