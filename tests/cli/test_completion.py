"""Shell completion of patch names and refs, asked the way bash asks
it: `_PATCHQ_COMPLETE=bash_complete` with COMP_WORDS/COMP_CWORD, in a real process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import Queue, Result, Upstream

P = "--- a/f.txt\n+++ b/f.txt\n@@ -{n},1 +{n},1 @@\n-line {n}\n+LINE {n}\n"


def complete(cwd: Path, line: str, extra: dict[str, str] | None = None) -> list[str]:
    """What bash would offer after typing `line` (a trailing space: a new word)."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    env = dict(os.environ, COMP_WORDS=line, COMP_CWORD=str(cword), _PATCHQ_COMPLETE="bash_complete")
    env.update(extra or {})
    proc = subprocess.run(
        [sys.executable, "-m", "patchq"], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    # bash_complete answers one "type,value" line per item.
    return [ln.split(",", 1)[1] for ln in proc.stdout.splitlines() if ln.startswith("plain,")]


@pytest.fixture
def stacked(upstream: Upstream, queue: Queue, patchq: Callable[..., Result]) -> Path:
    upstream.write("f.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    base = upstream.commit("base")
    upstream.git("tag", "v1.0")
    upstream.git("branch", "release")
    names = ("0001-fix-build.patch", "0002-fix-docs.patch", "0003-sm120.patch")
    for n, name in zip((2, 5, 8), names, strict=True):
        queue.add(name, P.format(n=n))
    assert patchq("apply", "--onto", base).code == 0
    assert patchq("pop").code == 0
    return queue.path


def test_patch_names_complete_by_what_the_command_takes(stacked: Path) -> None:
    everything = ["0001-fix-build.patch", "0002-fix-docs.patch", "0003-sm120.patch"]
    assert complete(stacked, "patchq push ") == ["0003-sm120.patch"]
    assert complete(stacked, "patchq pop ") == everything[:2]
    assert complete(stacked, "patchq refresh 0002") == ["0002-fix-docs.patch"]
    assert complete(stacked, "patchq goto 0001-fix") == ["0001-fix-build.patch"]
    assert complete(stacked, "patchq fold ") == ["0003-sm120.patch"]
    for verb in ("delete", "rename", "header", "diff", "files", "sink", "float"):
        assert complete(stacked, f"patchq {verb} ") == everything, verb
    assert complete(stacked, "patchq delete 0002-") == ["0002-fix-docs.patch"]
    assert complete(stacked, "patchq import --after 0003") == ["0003-sm120.patch"]
    assert complete(stacked, "patchq push zzz") == []


def test_refs_complete_after_onto(stacked: Path) -> None:
    refs = complete(stacked, "patchq rebase --onto ")
    assert {"HEAD", "main", "release", "v1.0", "patchq/main"} <= set(refs)
    assert complete(stacked, "patchq check --onto re") == ["release"]
    assert complete(stacked, "patchq apply --onto v") == ["v1.0"]


def test_global_options_are_honoured_and_nothing_fails(stacked: Path, tmp_path: Path) -> None:
    """--dir given before the command is read; outside any patch repo, or with a target
    that is no checkout, completion offers nothing and prints no error."""
    assert complete(tmp_path, f"patchq --dir {stacked} push ") == ["0003-sm120.patch"]
    assert complete(tmp_path, "patchq push ") == []
    assert complete(tmp_path, "patchq --target /nonexistent rebase --onto ") == []
    # No target to read the stack from: the whole series stands in.
    names = complete(stacked, "patchq --target /nonexistent pop ")
    assert names == ["0001-fix-build.patch", "0002-fix-docs.patch", "0003-sm120.patch"]


def test_the_bash_script_is_generated(stacked: Path) -> None:
    env = dict(os.environ, _PATCHQ_COMPLETE="bash_source")
    proc = subprocess.run(
        [sys.executable, "-m", "patchq"], env=env, capture_output=True, text=True, check=True
    )
    assert "_patchq_completion()" in proc.stdout
    assert "complete -o nosort -F _patchq_completion patchq" in proc.stdout


def git_logging(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose `git` on PATH logs each call before running the real one."""
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "git-calls.log"
    log.write_text("")
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)
    return {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}, log


def test_patch_names_complete_without_starting_git(stacked: Path, tmp_path: Path) -> None:
    """A TAB on a patch name reads the series and the stack record, and starts no git
    (a TAB must answer at once): a `git` on PATH that logs its calls sees none. `--onto` does ask
    git for refs, which shows the logging `git` is the one patchq would run."""
    env, log = git_logging(tmp_path)
    assert complete(stacked, "patchq push ", env) == ["0003-sm120.patch"]
    assert complete(stacked, "patchq pop ", env) == ["0001-fix-build.patch", "0002-fix-docs.patch"]
    assert complete(stacked, "patchq delete 000", env) == [
        "0001-fix-build.patch",
        "0002-fix-docs.patch",
        "0003-sm120.patch",
    ]
    assert complete(stacked, "patchq refresh 0002", env) == ["0002-fix-docs.patch"]
    assert log.read_text() == ""
    assert "release" in complete(stacked, "patchq rebase --onto ", env)
    assert log.read_text() != ""


def test_during_a_rebase_names_complete_as_status_says_without_git(
    stacked: Path, upstream: Upstream, tmp_path: Path
) -> None:
    upstream.git("checkout", "-q", "main")
    upstream.write("f.txt", "".join(f"line {i}\n" for i in range(1, 11)).replace("line 5", "L5"))
    upstream.commit("upstream edits line 5")
    upstream.git("checkout", "-q", "patchq/main")
    r = subprocess.run(
        [sys.executable, "-m", "patchq", "rebase", "--onto", "main"],
        cwd=stacked,
        capture_output=True,
    )
    assert r.returncode == 3, r.stderr
    env, log = git_logging(tmp_path)
    assert complete(stacked, "patchq pop ", env) == ["0001-fix-build.patch"]
    assert complete(stacked, "patchq push ", env) == ["0002-fix-docs.patch", "0003-sm120.patch"]
    assert log.read_text() == ""

    # The same as `applied`/`unapplied` say (these run git).
    def names(verb: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "patchq", verb], cwd=stacked, capture_output=True, text=True
        )
        return out.stdout.split()

    assert names("applied") == ["0001-fix-build.patch"]
    assert names("unapplied") == ["0002-fix-docs.patch", "0003-sm120.patch"]
