"""`rebase --exec CMD` and `--exec-each CMD`: the person's build or
test runs in the target once the series is rebased (or with each rebased patch applied),
each run is recorded in series.lock, the report and `status`, and a failure makes the
rebase exit 1 with the rebased series written — a rebase that does not build is not done.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Queue, Runner, Upstream

A = "".join(f"line {i}\n" for i in range(1, 41))


def one_line(n: int, new: str) -> str:
    return (
        f"--- a/f.txt\n+++ b/f.txt\n@@ -{n - 1},3 +{n - 1},3 @@\n"
        f" line {n - 1}\n-line {n}\n+{new}\n line {n + 1}\n"
    )


def moved_upstream(up: Upstream, q: Queue, patchq, edit_20: bool = False) -> str:  # type: ignore[no-untyped-def]
    """Three patches applied on a base; upstream adds a header (and, with `edit_20`,
    edits the line p2 changes, so the rebase stops there)."""
    up.write("f.txt", A)
    base = up.commit("base")
    q.add("p1.patch", one_line(5, "LINE 5"))
    q.add("p2.patch", one_line(20, "LINE 20"))
    q.add("p3.patch", one_line(35, "LINE 35"))
    assert patchq("apply", "--onto", base).code == 0
    up.git("checkout", "-q", "main")
    text = "header\n" + A
    if edit_20:
        text = text.replace("line 20\n", "Line twenty\n")
    up.write("f.txt", text)
    return up.commit("upstream moves")


def lock(q: Queue) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(q.lock())
    return doc


def test_exec_passes_and_is_recorded(upstream: Upstream, queue: Queue, patchq: Runner) -> None:
    onto = moved_upstream(upstream, queue, patchq)
    r = patchq("rebase", "--onto", "main", "--exec", "test $(grep -c LINE f.txt) -eq 3")
    assert r.code == 0, r.err
    assert "patchq: running `test $(grep -c LINE f.txt) -eq 3` on the rebased series\n" in r.err
    assert r.err.endswith(
        f"rebased 3 patches onto {onto[:12]}; see `patchq report`\n"
        "    passed `test $(grep -c LINE f.txt) -eq 3` on the series (exit 0)\n"
    )
    doc = lock(queue)
    assert doc["base"] == onto
    assert doc["exec"] == {"command": "test $(grep -c LINE f.txt) -eq 3", "ok": True, "code": 0}
    assert all("exec" not in p for p in doc["patches"])
    assert "last rebase --exec: 1 run passed (series.lock)\n" in patchq("status").out
    assert patchq("report").out.endswith(
        "exec passed: test $(grep -c LINE f.txt) -eq 3 on the series (exit 0)\n"
    )
    report = json.loads(patchq("report", "--format", "json").out)
    assert report["exec"] == [
        {
            "command": "test $(grep -c LINE f.txt) -eq 3",
            "ok": True,
            "code": 0,
            "patch": None,
            "note": "",
        }
    ]
    # Applying the same series onto the same base again keeps the record: no churn.
    before = queue.lock()
    assert patchq("apply").code == 0
    assert queue.lock() == before


def test_a_failing_command_exits_1_with_the_rebase_written(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    onto = moved_upstream(upstream, queue, patchq)
    r = patchq("rebase", "--onto", "main", "--exec", "grep -q 'LINE 6' f.txt")
    assert r.code == 1
    assert r.err.splitlines()[-1] == (
        f"patchq: {upstream.path.resolve()}: `grep -q 'LINE 6' f.txt` failed on the series "
        "(exit 1) — the rebased series is written; fix it (`patchq refresh`), see "
        "`patchq status` and `patchq report`"
    )
    doc = lock(queue)
    assert doc["base"] == onto and doc["exec"]["ok"] is False and doc["exec"]["code"] == 1
    assert upstream.git("rev-parse", "patchq/main~3").strip() == onto
    st = patchq("status")
    assert "last rebase --exec: 1 run of 1 failed (series.lock)\n" in st.out
    assert "    FAILED `grep -q 'LINE 6' f.txt` on the series (exit 1)\n" in st.out
    assert json.loads(patchq("status", "--json").out)["exec"][0]["ok"] is False
    md = patchq("report", "--format", "md").out
    assert "- `FAILED: grep -q 'LINE 6' f.txt on the series (exit 1)`" in md
    # A rebase onto the same upstream without --exec keeps no stale record of it.
    upstream.git("checkout", "-q", "main")
    upstream.write("g.txt", "more\n").commit("more upstream")
    assert patchq("rebase", "--onto", "main").code == 0
    assert "exec" not in lock(queue)


def test_exec_each_runs_with_each_patch_applied(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    moved_upstream(upstream, queue, patchq)
    log = tmp_path / "runs.log"
    # Fails where fewer than two patches are applied: with p1 alone.
    cmd = f'echo "$PATCHQ_PATCH $(grep -c LINE f.txt)" >> {log}; test $(grep -c LINE f.txt) -ge 2'
    r = patchq("rebase", "--onto", "main", "--exec-each", cmd, "--exec", "true")
    assert r.code == 1
    assert log.read_text() == "p1.patch 1\np2.patch 2\np3.patch 3\n"
    assert r.err.splitlines()[-1].startswith(
        f"patchq: {upstream.path.resolve()}: `{cmd}` failed with p1.patch applied (exit 1) — "
    )
    doc = lock(queue)
    assert [p["exec"]["ok"] for p in doc["patches"]] == [False, True, True]
    assert doc["exec"] == {"command": "true", "ok": True, "code": 0}
    # The stack is back at its top, whole, and the working tree clean.
    assert patchq("applied").out == "p1.patch\np2.patch\np3.patch\n"
    assert upstream.git("status", "--porcelain") == ""
    assert upstream.git("rev-parse", "HEAD") == upstream.git("rev-parse", "patchq/main")


def test_a_command_that_leaves_changes_fails_and_stays_where_it_was(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    moved_upstream(upstream, queue, patchq)
    r = patchq(
        "rebase",
        "--onto",
        "main",
        "--exec-each",
        'test "$PATCHQ_PATCH" = p1.patch || echo x >> f.txt',
    )
    assert r.code == 1
    assert "failed with p2.patch applied (left changes in f.txt)" in r.err.splitlines()[-1]
    # The runs stop there, the stack at p2 with the command's change left for a person.
    assert patchq("applied").out == "p1.patch\np2.patch\n"
    assert upstream.git("status", "--porcelain") == " M f.txt\n"
    doc = lock(queue)
    assert [p.get("exec", {}).get("ok") for p in doc["patches"]] == [True, False, None]


def test_the_config_command_its_opt_out_and_the_users_environment(
    upstream: Upstream, queue: Queue, patchq: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved_upstream(upstream, queue, patchq)
    monkeypatch.setenv("BUILD_FLAVOUR", "debug")
    (queue.path / "patchq.toml").write_text(
        'target = "../upstream"\nexec = "test \\"$BUILD_FLAVOUR\\" = debug && pwd > ../where"\n'
    )
    assert patchq("rebase", "--onto", "main", "--dry-run").code == 0
    assert not (upstream.path.parent / "where").exists()  # a dry run runs nothing
    assert patchq("trust").code == 0  # a command from patchq.toml runs once trusted
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert (upstream.path.parent / "where").read_text().strip() == str(upstream.path.resolve())
    assert lock(queue)["exec"]["ok"] is True
    upstream.git("checkout", "-q", "main")
    upstream.write("g.txt", "more\n").commit("more upstream")
    (upstream.path.parent / "where").unlink()
    assert patchq("rebase", "--onto", "main", "--no-exec").code == 0
    assert not (upstream.path.parent / "where").exists()
    assert "exec" not in lock(queue)


def test_a_stopped_rebase_runs_its_commands_after_continue(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    moved_upstream(upstream, queue, patchq, edit_20=True)
    log = tmp_path / "ran"
    r = patchq("rebase", "--onto", "main", "--exec", f"echo ran >> {log}")
    assert r.code == 3 and not log.exists()
    for opts in (("--continue", "--exec", "true"), ("--skip", "--no-exec")):
        bad = patchq("rebase", *opts)
        assert bad.code == 2 and "a stopped rebase runs the commands it was started with" in bad.err
    text = (upstream.path / "f.txt").read_text()
    start, end = text.index("<<<<<<<"), text.index(">>>>>>>")
    (upstream.path / "f.txt").write_text(
        text[:start] + "LINE TWENTY\n" + text[text.index("\n", end) + 1 :]
    )
    r = patchq("rebase", "--continue")
    assert r.code == 0, r.err
    assert log.read_text() == "ran\n"
    assert lock(queue)["exec"]["ok"] is True


def test_a_patch_cannot_choose_the_command(upstream: Upstream, capsys) -> None:  # type: ignore[no-untyped-def]
    """A queue inside its target: a patch of the series changing the queue's own
    patchq.toml could name what runs. patchq refuses to run the configured command then."""
    from ..conftest import run_inprocess

    upstream.write("f.txt", A)
    upstream.write("patchq.toml", 'exec = "touch ran"\n')
    upstream.write(
        "patches/evil.patch",
        '--- a/patchq.toml\n+++ b/patchq.toml\n@@ -1 +1 @@\n-exec = "touch ran"\n'
        '+exec = "touch evil"\n',
    )
    upstream.write("series", "evil.patch\n")
    base = upstream.commit("base with its queue")
    assert run_inprocess(capsys, "--dir", str(upstream.path), "apply", "--onto", base).code == 0
    assert (upstream.path / "patchq.toml").read_text() == 'exec = "touch evil"\n'
    # Untrusted, it would not run anyway; trusted (as the patched text), still refused.
    assert run_inprocess(capsys, "--dir", str(upstream.path), "trust").code == 0
    r = run_inprocess(capsys, "--dir", str(upstream.path), "rebase", "--onto", "main")
    assert r.code == 4
    assert r.err == (
        "patchq: patches/evil.patch: evil.patch changes patchq.toml, which names the command "
        "to run after the rebase: patchq runs no command a patch can choose — give it with "
        "--exec/--exec-each, or --no-exec\n"
    )
    assert not (upstream.path / "ran").exists() and not (upstream.path / "evil").exists()
