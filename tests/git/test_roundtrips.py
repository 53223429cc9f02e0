"""Requests to the persistent cat-file reader are round trips: a wait on another process
each. A whole-series run must not ask one object at a time per patch."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from patchq.cli.main import main
from patchq.git.catfile import CatFile

from .test_processes import _realistic


def _asked(monkeypatch: pytest.MonkeyPatch, *args: str) -> Counter[str]:
    """How many single requests (object data, object headers) one in-process run makes."""
    asked: Counter[str] = Counter()
    for name in ("read", "header"):
        real = getattr(CatFile, name)

        def counted(self: CatFile, ref: str, real=real, name=name) -> object:  # type: ignore[no-untyped-def]
            asked[name] += 1
            return real(self, ref)

        monkeypatch.setattr(CatFile, name, counted)
    assert main(list(args)) in (0, 1, 3)
    monkeypatch.undo()
    return asked


def test_check_and_rebase_ask_in_batches_not_per_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    got = {}
    for n in (12, 48):
        q, base, onto = _realistic(tmp_path / f"n{n}", n)
        names = q.series().split()
        binary = {x for x in names if b"GIT binary patch" in (q.path / "patches" / x).read_bytes()}
        (q.path / "series").write_text("".join(f"{x}\n" for x in names if x not in binary))
        d = str(q.path)
        got[n] = [
            _asked(monkeypatch, "--dir", d, "apply", "--onto", base),
            _asked(monkeypatch, "--dir", d, "check", "--onto", onto),
            _asked(monkeypatch, "--dir", d, "rebase", "--dry-run", "--onto", onto),
        ]
    capsys.readouterr()
    few, many = got[12], got[48]
    # Origins are resolved in one batch, not a header request each.
    assert [c["header"] for c in many] == [c["header"] for c in few]
    # The files the patches touch come in batches; what is left are the pinned
    # pre-images of the patches whose hunks conflict (a quarter of them here).
    for f, m in zip(few[1:], many[1:], strict=True):
        assert m["read"] - f["read"] <= (48 - 12) // 2, (few, many)
