"""No git process patchq starts runs a hook or a command from the target's config.

The target is armed every way we know: a marker script for every hook name in
`.git/hooks/`, a tracked `.husky/` folder named by `core.hooksPath`, an fsmonitor, a
pager, editors, a signing program, a credential helper, an external diff, and filter,
textconv, diff and merge drivers named by a tracked `.gitattributes` — some defined in
`.git/config`, some in a tracked file that `.git/config` includes, and one that a patch
of the series defines there while it is applied. The inherited environment tries too
(`GIT_CONFIG_PARAMETERS`, `GIT_EXTERNAL_DIFF`, a `GIT_DIR` of another repository), and so
does the user's global config. Each test first proves the target is armed — plain git
runs the markers — and then drives a whole workflow through patchq: not one marker may
appear, and the workflow must still do its job.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ..conftest import Queue, Result, Runner, Upstream, git, run_patchq

HOOKS = (
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "reference-transaction",
    "pre-auto-gc",
    "post-rewrite",
    "post-index-change",
    "fsmonitor-watchman",
    "push-to-checkout",
)
LINES = "".join(f"line {i}\n" for i in range(1, 31))


def marker(path: Path, name: str, log: Path) -> Path:
    """An executable that records that it ran (and passes its input through, so a filter
    that does run leaves the content intact and only the log tells)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\ncat 2>/dev/null\nexit 0\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def arm(up: Upstream, tmp: Path) -> Path:
    """Arm the target; returns the log every marker appends to."""
    log = tmp / "ran.log"
    bin_ = tmp / "bin"
    for hook in HOOKS:
        marker(up.path / ".git" / "hooks" / hook, f"hook {hook}", log)
        marker(up.path / ".husky" / hook, f"husky {hook}", log)
    for name in (
        "fsmonitor",
        "pager",
        "editor",
        "seqeditor",
        "ssh",
        "gpg",
        "credential",
        "extdiff",
        "clean",
        "smudge",
        "process",
        "textconv",
        "diffcmd",
        "mergedrv",
        "inc-smudge",
        "late-smudge",
        "late-clean",
        "env-extdiff",
        "global-hook",
    ):
        marker(bin_ / name, name, log)
    cfg = {
        "core.fsmonitor": bin_ / "fsmonitor",
        "core.pager": bin_ / "pager",
        "core.editor": bin_ / "editor",
        "sequence.editor": bin_ / "seqeditor",
        "core.sshCommand": bin_ / "ssh",
        "gpg.program": bin_ / "gpg",
        "commit.gpgSign": "true",
        "credential.helper": bin_ / "credential",
        "diff.external": bin_ / "extdiff",
        "filter.evil.clean": bin_ / "clean",
        "filter.evil.smudge": bin_ / "smudge",
        "filter.evil.required": "true",
        "diff.evil.textconv": bin_ / "textconv",
        "diff.evil.command": bin_ / "diffcmd",
        "merge.evil.driver": bin_ / "mergedrv",
    }
    for key, value in cfg.items():
        git(up.path, "config", key, str(value))
    # A tracked config file the repository includes: a patch can edit what git reads.
    up.write("tracked.cfg", f'[filter "inc"]\n\tsmudge = {bin_ / "inc-smudge"}\n')
    git(up.path, "config", "include.path", "../tracked.cfg")
    up.write(".gitattributes", "*.txt filter=evil diff=evil merge=evil\n*.c filter=inc\n")
    return log


def ran(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def prove_armed(up: Upstream, log: Path, hooks: str) -> None:
    """Plain git in this target does run the markers: the test below is not vacuous."""
    git(up.path, "checkout", "-q", "-b", "armed")
    (up.path / "a.txt").write_text(LINES + "x\n")
    git(up.path, "status", "--porcelain")
    git(up.path, "diff")
    git(up.path, "checkout", "-q", "--", "a.txt")
    git(up.path, "checkout", "-q", "main")
    git(up.path, "branch", "-q", "-D", "armed")
    got = " ".join(ran(log))
    for what in (
        f"{hooks} post-checkout",
        f"{hooks} reference-transaction",
        "fsmonitor",
        "clean",
        "smudge",
        "diffcmd",
    ):
        assert what in got, (what, got)
    log.unlink()


@pytest.fixture
def armed(upstream: Upstream, queue: Queue, tmp_path: Path) -> tuple[Upstream, Path, str]:
    upstream.write("a.txt", LINES).write("b.c", "int b;\n")
    log = arm(upstream, tmp_path)
    git(upstream.path, "add", "-A")
    git(upstream.path, "-c", "commit.gpgSign=false", "commit", "-q", "-m", "base")
    base = upstream.head()
    prove_armed(upstream, log, "hook")
    git(upstream.path, "config", "core.hooksPath", ".husky")  # husky's layout
    prove_armed(upstream, log, "husky")
    return upstream, log, base


def hunk(path: str, old: int, before: str, new: str) -> str:
    return (
        f"--- a/{path}\n+++ b/{path}\n@@ -{old},3 +{old},3 @@\n"
        f" line {old}\n-{before}\n+{new}\n line {old + 2}\n"
    )


def ok(r: Result, *codes: int) -> Result:
    assert r.code in (codes or (0,)), (r.code, r.out, r.err)
    return r


def test_no_hook_or_configured_program_runs_through_a_whole_workflow(
    armed: tuple[Upstream, Path, str],
    queue: Queue,
    patchq: Runner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    up, log, base = armed
    # The environment tries too: a user-level override, an external diff, another repo.
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    hostile = {
        "GIT_CONFIG_PARAMETERS": f"'core.hookspath'='{up.path / '.husky'}'",
        "GIT_EXTERNAL_DIFF": str(tmp_path / "bin" / "env-extdiff"),
        "GIT_DIR": str(other / ".git"),
    }

    def patchq_(*args: str) -> Result:
        with monkeypatch.context() as m:
            for k, v in hostile.items():
                m.setenv(k, v)
            return patchq(*args)

    queue.add("0001-a.patch", hunk("a.txt", 4, "line 5", "LINE 5"))
    # This patch makes the included, tracked config define a new filter and the
    # attributes use it: every git process after it is applied must disarm it too.
    queue.add(
        "0002-late.patch",
        "--- a/tracked.cfg\n+++ b/tracked.cfg\n@@ -1,2 +1,4 @@\n"
        f' [filter "inc"]\n \tsmudge = {tmp_path / "bin" / "inc-smudge"}\n'
        f'+[filter "late"]\n+\tsmudge = {tmp_path / "bin" / "late-smudge"}\n'
        "--- a/.gitattributes\n+++ b/.gitattributes\n@@ -1,2 +1,3 @@\n"
        " *.txt filter=evil diff=evil merge=evil\n *.c filter=inc\n"
        "+*.c filter=late\n",
    )
    queue.add("0003-b.patch", "--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-int b;\n+int bb;\n")
    ok(patchq_("apply", "--onto", base))
    assert (up.path / "b.c").read_text() == "int bb;\n"
    ok(patchq_("status"))
    ok(patchq_("verify"))
    ok(patchq_("pop", "-a"))
    ok(patchq_("push", "-a"))
    (up.path / "b.c").write_text("int bbb;\n")
    ok(patchq_("refresh"))
    ok(patchq_("new", "0004-new.patch"))
    (up.path / "a.txt").write_text(
        (up.path / "a.txt").read_text().replace("line 25\n", "line 25 too\n")
    )
    ok(patchq_("refresh"))
    ok(patchq_("diff"))
    ok(patchq_("export", "--mbox", str(tmp_path / "out.mbox")))
    # Upstream moves: one line drifts, one conflicts with 0001.
    git(up.path, "checkout", "-q", "-b", "next", base)
    (up.path / "a.txt").write_text(
        LINES.replace("line 5\n", "Line five\n").replace("line 20\n", "line twenty\n")
    )
    git(up.path, "commit", "-q", "--no-verify", "--no-gpg-sign", "-am", "upstream edit")
    next_ = git(up.path, "rev-parse", "HEAD").strip()
    log.unlink(missing_ok=True)  # our own commit above ran the markers; patchq must not
    ok(patchq_("check", "--onto", next_, "--json"), 3)
    ok(patchq_("rebase", "--onto", next_), 3)
    ok(patchq_("status"), 0, 3)
    ok(patchq_("rebase", "--abort"))
    ok(patchq_("rebase", "--onto", next_), 3)
    ok(patchq_("rebase", "--skip"))
    ok(patchq_("report"))
    ok(patchq_("import", "--git", f"{base}..{next_}"))
    assert ran(log) == [], ran(log)


def test_global_config_hooks_and_templates_do_not_run_in_the_demo(tmp_path: Path) -> None:
    """`patchq demo` makes its own repositories: the user's templates and global hooks
    (a common way to install hooks everywhere) must not run in them either."""
    log = tmp_path / "ran.log"
    hooks = tmp_path / "global-hooks"
    templates = tmp_path / "templates"
    for hook in HOOKS:
        marker(hooks / hook, f"global {hook}", log)
        marker(templates / "hooks" / hook, f"template {hook}", log)
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(
        f"[core]\n\thooksPath = {hooks}\n"
        f"[init]\n\ttemplateDir = {templates}\n"
        "[user]\n\tname = Tester\n\temail = t@example.org\n"
    )
    git(tmp_path, "init", "-q", str(tmp_path / "probe"))  # armed: the template is copied
    assert (tmp_path / "probe" / ".git" / "hooks" / "post-checkout").exists()
    env = {k: v for k, v in os.environ.items() if k != "GIT_CONFIG_NOSYSTEM"}
    os.environ.update(env)
    r = run_patchq("demo", str(tmp_path / "tour"))
    assert r.code == 0, r.err
    assert ran(log) == [], ran(log)
    assert not list((tmp_path / "tour" / "sgl-kernel" / ".git" / "hooks").glob("*")), (
        "the demo's repository got the user's hook templates"
    )
