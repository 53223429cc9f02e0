"""A patch repo's files are untrusted input.

A stranger's patch repo, cloned, names `exec`/`exec-each` in its patchq.toml: a plain
`patchq rebase --onto REF` must not run it. It runs only when the person gave it on the
command line, or trusted it with `patchq trust` (a mark in their own configuration: the
patch repo root's absolute path and the sha256 of the exact text) — a pulled change to
the text, the same text in another folder, or a mark the patch repo ships itself trusts
nothing. The rebase still completes, says what it did not run and the one command that
allows it, and exits 1. `lint` and `check` name the configured commands. A journal the
clone ships in `.patchq/` cannot make `recover` write outside the files patchq owns.

Every run is `python -m patchq` in a subprocess against real git repos, with HOME and
XDG_CONFIG_HOME sealed by conftest (the real home's tripwire stays armed).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ..conftest import Result, git, home_print, home_touched, run_patchq

TEXT = "".join(f"line {i}\n" for i in range(1, 31))
PATCH = (
    "From: A U Thor <a@example.org>\nSubject: [PATCH] change line 10\n\n---\n"
    "--- a/f.txt\n+++ b/f.txt\n@@ -9,3 +9,3 @@\n line 9\n-line 10\n+LINE 10\n line 11\n"
)


class Setup:
    """An upstream checkout, a patch repo `origin` (a git repo) and its clone `q`, whose
    commands would each leave a marker file in `markers/` if they ran."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.up = tmp / "upstream"
        self.up.mkdir()
        git(self.up, "init", "-q", "-b", "main")
        (self.up / "f.txt").write_text(TEXT)
        git(self.up, "add", "-A")
        git(self.up, "commit", "-q", "-m", "base")
        self.base = git(self.up, "rev-parse", "HEAD").strip()
        self.markers = tmp / "markers"
        self.markers.mkdir()
        self.origin = tmp / "origin"
        (self.origin / "patches").mkdir(parents=True)
        (self.origin / "patches" / "p.patch").write_text(PATCH)
        (self.origin / "series").write_text("p.patch\n")
        self.configure("exec-ran", "each-ran")
        git(self.origin, "init", "-q", "-b", "main")
        git(self.origin, "add", "-A")
        git(self.origin, "commit", "-q", "-m", "the queue")
        git(tmp, "clone", "-q", str(self.origin), "q")
        self.q = tmp / "q"

    def configure(self, exec_marker: str, each_marker: str) -> None:
        (self.origin / "patchq.toml").write_text(
            f'target = "../upstream"\nexec = "touch {self.markers}/{exec_marker}"\n'
            f'exec-each = "touch {self.markers}/{each_marker}"\n'
        )

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())

    def patchq(self, *args: str, cwd: Path | None = None) -> Result:
        return run_patchq(*args, cwd=cwd or self.q)

    def upstream_moves(self, n: int) -> str:
        """A new upstream commit (line 1 edited, so the patch is refreshed)."""
        git(self.up, "checkout", "-q", "main")
        (self.up / "f.txt").write_text(TEXT.replace("line 1\n", f"line one v{n}\n", 1))
        git(self.up, "commit", "-q", "-am", f"upstream {n}")
        return git(self.up, "rev-parse", "HEAD").strip()


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    setup = Setup(tmp_path)
    r = setup.patchq("apply", "--onto", setup.base)
    assert r.code == 0, r.err
    return setup


def trust_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "patchq" / "trusted.json"


def lock_base(s: Setup) -> str:
    return str(json.loads((s.q / "series.lock").read_text())["base"])


def test_a_cloned_command_runs_only_once_trusted(s: Setup) -> None:
    onto = s.upstream_moves(1)
    r = s.patchq("rebase", "--onto", "main")
    # The rebase is done and written, but the configured build did not run: exit 1.
    assert r.code == 1, r.err
    assert s.ran() == []
    assert lock_base(s) == onto
    assert f"NOT RUN `touch {s.markers}/exec-ran` (exec: not trusted)" in r.err
    last = r.err.splitlines()[-1]
    assert last.startswith(f"patchq: {s.q.resolve()}/patchq.toml: did not run ")
    assert f"`touch {s.markers}/exec-ran` (exec in patchq.toml)" in last
    assert f"`touch {s.markers}/each-ran` (exec-each in patchq.toml)" in last
    assert last.endswith("— `patchq trust` allows it")
    assert not trust_file().exists()

    t = s.patchq("trust")
    assert t.code == 0, t.err
    assert t.out == (
        f"trusted exec = `touch {s.markers}/exec-ran`\n"
        f"trusted exec-each = `touch {s.markers}/each-ran`\n"
    )
    marks = json.loads(trust_file().read_text())["marks"]
    assert {(m["root"], m["key"], m["sha256"]) for m in marks} == {
        (str(s.q.resolve()), "exec", _sha(f"touch {s.markers}/exec-ran")),
        (str(s.q.resolve()), "exec-each", _sha(f"touch {s.markers}/each-ran")),
    }
    onto = s.upstream_moves(2)
    r = s.patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert s.ran() == ["each-ran", "exec-ran"] and lock_base(s) == onto
    assert "NOT RUN" not in r.err


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def test_a_pulled_change_to_the_command_needs_a_new_mark(s: Setup) -> None:
    assert s.patchq("trust").code == 0
    s.configure("evil-exec", "evil-each")  # the origin changes what runs; the clone pulls
    git(s.origin, "commit", "-q", "-am", "a new build command")
    git(s.q, "pull", "-q", "--ff-only")
    s.upstream_moves(1)
    r = s.patchq("rebase", "--onto", "main")
    assert r.code == 1 and s.ran() == []
    assert f"did not run `touch {s.markers}/evil-exec`" in r.err
    listed = s.patchq("trust", "--list")
    assert listed.code == 0
    assert f"exec = `touch {s.markers}/exec-ran` (stale: " in listed.out
    assert f"exec = `touch {s.markers}/evil-exec` (NOT trusted: " in listed.out
    # lint and check name the commands and say they are not trusted (lint: a note only).
    lint = s.patchq("lint", "--json")
    assert lint.code == 0, lint.out
    notes = [f for f in json.loads(lint.out)["findings"] if f["level"] == "note"]
    assert [n["where"] for n in notes] == ["patchq.toml", "patchq.toml"]
    assert all("not trusted" in n["what"] and "evil" in n["what"] for n in notes)
    check = s.patchq("check", "--onto", "main", "--json")
    assert json.loads(check.out)["commands"] == [
        {"key": "exec", "command": f"touch {s.markers}/evil-exec", "trusted": False},
        {"key": "exec-each", "command": f"touch {s.markers}/evil-each", "trusted": False},
    ]
    text = s.patchq("check", "--onto", "main")
    assert f"command: exec = `touch {s.markers}/evil-exec` (NOT trusted: " in text.out
    # Trusted again, the new text runs, and lint says so.
    assert s.patchq("trust").code == 0
    assert "trusted, `rebase` runs it" in s.patchq("lint").out
    s.upstream_moves(2)
    assert s.patchq("rebase", "--onto", "main").code == 0
    assert s.ran() == ["evil-each", "evil-exec"]


def test_a_mark_trusts_one_folder_only(s: Setup) -> None:
    assert s.patchq("trust").code == 0
    copy = s.tmp / "copy"
    shutil.copytree(s.q, copy)  # the same text, another folder: not trusted
    s.upstream_moves(1)
    r = s.patchq("rebase", "--onto", "main", cwd=copy)
    assert r.code == 1 and s.ran() == []
    assert "`patchq trust` allows it" in r.err
    # Run from elsewhere, the one command names the patch repo.
    s.upstream_moves(2)
    r = run_patchq("--dir", str(copy), "rebase", "--onto", "main", cwd=s.tmp)
    assert r.code == 1 and s.ran() == []
    assert r.err.endswith(f"`patchq --dir {copy.resolve()} trust` allows it\n")


def test_the_command_line_and_no_exec(s: Setup) -> None:
    s.upstream_moves(1)
    # A command given on the command line is the person's: it runs untrusted. The other
    # configured one (exec-each) is still untrusted, and said so.
    r = s.patchq("rebase", "--onto", "main", "--exec", f"touch {s.markers}/given")
    assert r.code == 1, r.err
    assert s.ran() == ["given"]
    assert "each-ran` (exec-each in patchq.toml)" in r.err.splitlines()[-1]
    assert "exec-ran" not in r.err.splitlines()[-1]
    s.upstream_moves(2)
    j = s.patchq("rebase", "--onto", "main", "--json")
    assert j.code == 1
    assert [c["key"] for c in json.loads(j.out)["untrusted"]] == ["exec", "exec-each"]
    s.upstream_moves(3)
    r = s.patchq("rebase", "--onto", "main", "--no-exec")
    assert r.code == 0, r.err
    assert "NOT RUN" not in r.err and s.ran() == ["given"]


def test_a_stopped_rebase_says_it_at_the_end(s: Setup) -> None:
    git(s.up, "checkout", "-q", "main")
    (s.up / "f.txt").write_text(TEXT.replace("line 10\n", "Line ten\n"))
    git(s.up, "commit", "-q", "-am", "upstream edits the same line")
    r = s.patchq("rebase", "--onto", "main")
    assert r.code == 3
    text = (s.up / "f.txt").read_text()
    start, end = text.index("<<<<<<<"), text.index(">>>>>>>")
    (s.up / "f.txt").write_text(text[:start] + "LINE TEN\n" + text[text.index("\n", end) + 1 :])
    r = s.patchq("rebase", "--continue")
    assert r.code == 1, r.err
    assert "did not run" in r.err.splitlines()[-1] and s.ran() == []


def test_a_mark_inside_a_patch_repo_is_never_written_nor_read(
    s: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = s.q / "conf"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(inside))
    r = s.patchq("trust")
    assert r.code == 5
    assert "the configuration folder is inside a patch repo" in r.err
    assert not inside.exists()
    # A clone that ships a trust file for itself (and points the config there) gains
    # nothing: marks inside a patch repo count for nothing.
    (inside / "patchq").mkdir(parents=True)
    doc = {
        "version": 1,
        "marks": [
            {"root": str(s.q.resolve()), "key": k, "sha256": _sha(c), "command": c}
            for k, c in (
                ("exec", f"touch {s.markers}/exec-ran"),
                ("exec-each", f"touch {s.markers}/each-ran"),
            )
        ],
    }
    (inside / "patchq" / "trusted.json").write_text(json.dumps(doc))
    s.upstream_moves(1)
    r = s.patchq("rebase", "--onto", "main")
    assert r.code == 1 and s.ran() == []


def test_revoke_and_list(s: Setup) -> None:
    first = s.patchq("trust", "--list")
    assert first.code == 0 and first.out.count("(NOT trusted: `patchq trust` allows it)") == 2
    # Outside any patch repo, --list shows the marks alone (none yet).
    assert s.patchq("trust", "--list", cwd=s.markers).err.startswith("no trusted commands (")
    assert s.patchq("trust").code == 0
    j = json.loads(s.patchq("trust", "--list", "--json").out)
    assert j["action"] == "listed" and len(j["marks"]) == 2
    assert all(c["trusted"] for c in j["configured"])
    r = s.patchq("trust", "--revoke")
    assert r.code == 0
    assert "2 marks removed" in r.err
    assert json.loads(trust_file().read_text())["marks"] == []
    s.upstream_moves(1)
    assert s.patchq("rebase", "--onto", "main").code == 1 and s.ran() == []
    assert s.patchq("trust", "--list", "--revoke").code == 2


def test_the_home_tripwire_sees_a_mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """conftest's tripwire guards the real home with `home_print`: a `patchq trust` run
    against a home must show up in it (so a test that forgot to seal HOME would fail)."""
    s = Setup(tmp_path)
    home = tmp_path / "a-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME")
    before = home_print(home)
    assert s.patchq("trust").code == 0
    assert (home / ".config" / "patchq" / "trusted.json").is_file()
    assert ".config/patchq/trusted.json" in home_touched(before, home_print(home))


def test_a_journal_from_a_clone_cannot_write_outside(tmp_path: Path) -> None:
    """A `.patchq/` journal shipped in a clone, naming `../../.bashrc` (and a copy of a
    file reached through a symlink): `recover` refuses it and writes nothing."""
    s = Setup(tmp_path)
    victim = tmp_path.parent / f"{tmp_path.name}-bashrc"
    home = s.q / ".patchq"
    (home / "op" / "abc").mkdir(parents=True)
    (home / "op" / "abc" / "payload").write_text("echo owned\n")
    rel = os.path.relpath(victim, s.q)
    for files in ({rel: {"before": False, "after": True}}, {"series": {"after": True}}):
        if "series" in files:
            (home / "op" / "abc" / "files" / "after").mkdir(parents=True)
            (home / "op" / "abc" / "files" / "after" / "series").symlink_to("/etc/passwd")
        doc = {"op": "import", "id": "abc", "home": "patch-repo", "files": files, "state": {}}
        (home / "op.json").write_text(json.dumps(doc))
        r = s.patchq("recover", "--continue")
        assert r.code == 5, r.err
        assert "a journal patchq did not write here" in r.err and "never replays" in r.err
        assert not victim.exists()
        assert (s.q / "series").read_text() == "p.patch\n"


def test_a_cloned_quilt_style_repo_runs_nothing_through_git(tmp_path: Path) -> None:
    """A patch repo inside its target, cloned: its tracked `.gitattributes` names drivers
    the person's own global config defines (as git-lfs does), it ships a husky hooks
    folder the global config points at, and the global config names an fsmonitor and a
    pager. Plain git in the clone runs them; no git child of patchq does, through a
    whole workflow — and its `exec` stays unrun."""
    from .test_hostile_config import marker

    log = tmp_path / "ran.log"
    bin_ = tmp_path / "bin"
    for name in ("clean", "smudge", "textconv", "fsmonitor", "pager"):
        marker(bin_ / name, name, log)
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "f.txt").write_text(TEXT)
    (origin / ".gitattributes").write_text("*.txt filter=lfsish diff=lfsish\n")
    marker(origin / ".husky" / "post-checkout", "husky post-checkout", log)
    marker(origin / ".husky" / "reference-transaction", "husky reference-transaction", log)
    (origin / "patches").mkdir()
    (origin / "patches" / "p.patch").write_text(PATCH)
    (origin / "series").write_text("p.patch\n")
    (origin / "patchq.toml").write_text(f'exec = "touch {tmp_path}/exec-ran"\n')
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "upstream with its queue")
    for key, value in (
        ("filter.lfsish.clean", bin_ / "clean"),
        ("filter.lfsish.smudge", bin_ / "smudge"),
        ("diff.lfsish.textconv", bin_ / "textconv"),
        ("core.fsmonitor", bin_ / "fsmonitor"),
        ("core.pager", bin_ / "pager"),
        ("core.hooksPath", ".husky"),
    ):
        git(tmp_path, "config", "--global", key, str(value))
    git(tmp_path, "clone", "-q", str(origin), "q")
    q = tmp_path / "q"
    (q / "f.txt").write_text(TEXT + "x\n")
    git(q, "status", "--porcelain")
    git(q, "diff", "--textconv")
    git(q, "checkout", "-q", "--", "f.txt")
    got = " ".join(log.read_text().splitlines())
    for what in ("clean", "smudge", "textconv", "fsmonitor", "husky post-checkout"):
        assert what in got, (what, got)  # armed: plain git runs them
    log.unlink()
    head = git(q, "rev-parse", "HEAD").strip()
    for args in (
        ("apply", "--onto", head),
        ("status",),
        ("diff",),
        ("check", "--onto", head),
        ("pop", "-a"),
        ("push", "-a"),
        ("rebase", "--onto", "main"),
        ("lint",),
    ):
        r = run_patchq(*args, cwd=q)
        assert r.code in (0, 1), (args, r.err)
    assert not log.exists(), log.read_text()
    assert not (tmp_path / "exec-ran").exists()
    assert "LINE 10" in (q / "f.txt").read_text()
