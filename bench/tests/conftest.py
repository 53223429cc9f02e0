"""Every bench test runs sealed, as the product's tests do: its own HOME, no system or
global git config, a fixed identity and dates, and no bench folder from the environment
(only the shared realworld corpus, which the tests that need it read and skip without)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from patchq_bench.realworld.cli import CORPUS_ENV


@pytest.fixture(autouse=True)
def sealed_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(("GIT_", "PATCHQ_")) and name != CORPUS_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Up Stream")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "up@example.org")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Up Stream")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "up@example.org")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1700000000 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1700000000 +0000")
    monkeypatch.setenv("GIT_EDITOR", "false")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("LC_ALL", "C")
    yield
