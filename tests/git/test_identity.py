"""Commits and exports of a patch without an author carry the user's git identity:
`user.name`/`user.email` as git resolves them — GIT_AUTHOR_* first, then the target's
config, then the global one — and `patchq <patchq@invalid>` only where git knows nobody.
The date policy does not change: the base's committer date, so one user gets the same
commit ids from `apply`, `push` and a second machine.
"""

from __future__ import annotations

import email
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import Queue, Result, Upstream, git, run_patchq

PLAIN = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
AUTHORED = (
    "From: Ann Author <ann@example.org>\nDate: Mon, 2 Oct 2023 10:00:00 +0200\n"
    "Subject: three\n\n---\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-three\n+THREE\n"
)


@pytest.fixture
def unsealed(upstream: Upstream, queue: Queue, monkeypatch: pytest.MonkeyPatch) -> str:
    """A base commit made, then no GIT_AUTHOR_* in the environment: git's config decides."""
    upstream.write("a.txt", "one\ntwo\n").write("b.txt", "three\n")
    base = upstream.commit("base")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GIT_COMMITTER_EMAIL", raising=False)
    queue.add("plain.diff", PLAIN).add("authored.patch", AUTHORED)
    return base


def authors(up: Upstream, base: str) -> list[str]:
    return up.git("log", "--reverse", "--format=%an <%ae> %ad|%s", "--date=raw", f"{base}..").split(
        "\n"
    )[:-1]


def test_the_targets_config_over_the_global_one(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], unsealed: str
) -> None:
    git(Path.home(), "config", "--global", "user.name", "Global Gwen")
    git(Path.home(), "config", "--global", "user.email", "gwen@example.org")
    upstream.git("config", "user.name", "Local Lou")
    upstream.git("config", "user.email", "lou@example.org")
    assert patchq("apply", "--onto", unsealed).code == 0
    # The base's committer date, as before; the header's author where it has one.
    assert authors(upstream, unsealed) == [
        "Local Lou <lou@example.org> 1700000000 +0000|plain",
        "Ann Author <ann@example.org> 1696233600 +0200|three",
    ]
    assert upstream.git("log", "-1", "--skip=1", "--format=%cn <%ce>").strip() == (
        "Local Lou <lou@example.org>"
    )
    upstream.git("config", "--unset", "user.name")
    upstream.git("config", "--unset", "user.email")
    assert patchq("apply", "--onto", unsealed).code == 0
    assert authors(upstream, unsealed)[0] == "Global Gwen <gwen@example.org> 1700000000 +0000|plain"


def test_git_author_variables_win_and_commits_stay_deterministic(
    upstream: Upstream,
    queue: Queue,
    patchq: Callable[..., Result],
    unsealed: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    upstream.git("config", "user.name", "Local Lou")
    upstream.git("config", "user.email", "lou@example.org")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Eve")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "eve@example.org")
    assert patchq("apply", "--onto", unsealed).code == 0
    applied = upstream.git("rev-parse", "patchq/main").strip()
    assert authors(upstream, unsealed)[0] == "Env Eve <eve@example.org> 1700000000 +0000|plain"
    # push -a gives the very commits apply gave, and so does another checkout (a
    # process of its own), for the same user.
    assert patchq("pop", "-a").code == 0
    assert patchq("push", "-a").code == 0
    assert upstream.git("rev-parse", "patchq/main").strip() == applied
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream.path), str(clone))
    r = run_patchq("--dir", str(queue.path), "--target", str(clone), "apply", "--onto", unsealed)
    assert r.code == 0, r.err
    assert git(clone, "rev-parse", "HEAD").strip() == applied


def test_nobody_known_falls_back_to_patchq(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], unsealed: str
) -> None:
    """Where git itself would refuse to commit ("Please tell me who you are"), patchq
    still applies: a build container has no identity, and needs none."""
    assert patchq("apply", "--onto", unsealed).code == 0
    assert authors(upstream, unsealed)[0] == "patchq <patchq@invalid> 1700000000 +0000|plain"


def test_new_and_mbox_export_use_the_identity(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], unsealed: str, tmp_path: Path
) -> None:
    upstream.git("config", "user.name", "Local Lou")
    upstream.git("config", "user.email", "lou@example.org")
    assert patchq("apply", "--onto", unsealed).code == 0
    assert patchq("new", "notes.patch", "-m", "Add notes").code == 0
    assert upstream.git("log", "-1", "--format=%an <%ae>|%s").strip() == (
        "Local Lou <lou@example.org>|Add notes"
    )
    # The empty patch has no diff for git am: take it out again, then export.
    assert (patchq("pop").code, patchq("delete", "notes.patch", "-r").code) == (0, 0)
    mbox = tmp_path / "out.mbox"
    r = patchq("export", "--mbox", str(mbox))
    assert r.code == 0, r.err
    mails = mbox.read_bytes().split(b"\nFrom 0000000000000000000000000000000000000000 ")
    froms = [email.message_from_bytes(m.split(b"\n", 1)[1]).get("From") for m in mails]
    assert froms == ["Local Lou <lou@example.org>", "Ann Author <ann@example.org>"]


def test_export_without_a_target_uses_the_global_identity(
    upstream: Upstream, queue: Queue, patchq: Callable[..., Result], unsealed: str, tmp_path: Path
) -> None:
    git(Path.home(), "config", "--global", "user.name", "Global Gwen")
    git(Path.home(), "config", "--global", "user.email", "gwen@example.org")
    (queue.path / "patchq.toml").write_text("")  # no target: the patch repo is not a checkout
    mbox = tmp_path / "out.mbox"
    r = patchq("export", "--mbox", str(mbox))
    assert r.code == 0, r.err
    assert b"\nFrom: Global Gwen <gwen@example.org>\n" in mbox.read_bytes()
