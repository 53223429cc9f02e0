"""The flagship series at the repository root: sglang's sgl-kernel built for SM120.

Checked without upstream's source (only the patches' context lines are in this
repository): it lints clean, the lock matches the patch files and the pin, every patch
parses and carries a full DEP-3 header, the guards are as intended, and the patches'
`index` blob ids chain from the lock's base blob to its result blob.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from patchq.core.header import header_info
from patchq.core.lock import Lock, sha256
from patchq.core.patch import parse
from patchq.ops import lint
from patchq.store.patchrepo import PatchRepo

from ..conftest import ROOT, run_inprocess

PIN = "00390b8633f913f53d98d3acdbc1ab8f0d62da1b"
FILE = "sgl-kernel/CMakeLists.txt"
NAMES = (
    "0001-cmake-policy-guards.patch",
    "0002-cuda13-cccl-include.patch",
    "0003-fa3-optional.patch",
    "0004-sm120a-fp4.patch",
    "0005-sm120a-without-fa3.patch",
)
SM120_ONLY = {"0004-sm120a-fp4.patch", "0005-sm120a-without-fa3.patch"}
DEP3 = ("Description", "Author", "Origin", "Forwarded", "Last-Update")


@pytest.fixture(scope="module")
def repo() -> PatchRepo:
    return PatchRepo.open(ROOT)


@pytest.fixture(scope="module")
def lock(repo: PatchRepo) -> Lock:
    got = repo.read_lock()
    assert got is not None, "series.lock is missing at the repository root"
    return got


def test_lint_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert lint.lint(ROOT) == []
    r = run_inprocess(capsys, "--dir", str(ROOT), "lint")
    assert r.code == 0, r.out + r.err


def test_config(repo: PatchRepo) -> None:
    c = repo.config
    assert c.upstream == "https://github.com/sgl-project/sglang"
    assert c.branch == "main" and c.pin == PIN and c.target == "../sglang"
    assert c.guards == ("sm120",)


def test_lock_pins_the_configured_commit(repo: PatchRepo, lock: Lock) -> None:
    assert lock.base == repo.config.pin == PIN
    assert lock.guards == repo.config.guards
    # Written from a stand-in holding only the file: its tree is not sglang's.
    assert lock.result_tree is None
    assert set(lock.files) == {FILE}
    before, after = lock.files[FILE]
    assert before is not None and after is not None and before != after
    assert all(re.fullmatch(r"[0-9a-f]{40}", x) for x in (before, after))


def test_lock_hashes_match_every_patch_file(repo: PatchRepo, lock: Lock) -> None:
    assert tuple(p.name for p in lock.patches) == NAMES
    for rec in lock.patches:
        assert rec.sha256 == sha256(repo.read_patch(rec.name)), rec.name
        assert rec.rebase == "new" and rec.drift == ()


def test_series_and_guards(repo: PatchRepo) -> None:
    entries = repo.series.patches
    assert tuple(e.name for e in entries) == NAMES
    for e in entries:
        assert e.guards == (("+sm120",) if e.name in SM120_ONLY else ()), e.name
    assert tuple(e.name for e in repo.series.active(())) == NAMES[:3]
    assert tuple(e.name for e in repo.series.active(("sm120",))) == NAMES
    # Nothing in patches/ that the series does not name.
    assert sorted(p.name for p in repo.patches_dir.iterdir()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_patch_parses_with_a_dep3_header(repo: PatchRepo, name: str) -> None:
    data = repo.read_patch(name)
    patch = parse(data, f"patches/{name}")
    assert [s.path for s in patch.sections] == [FILE]
    assert all(s.hunks for s in patch.sections)
    header = patch.header.decode()
    fields = {m.group(1): m.group(2) for m in re.finditer(r"^([A-Z][\w-]*): (.*)$", header, re.M)}
    for f in DEP3:
        assert fields.get(f, "").strip(), f"{name}: DEP-3 field {f} missing"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", fields["Last-Update"])
    assert re.fullmatch(r".+ <[^@\s]+@[^>\s]+>", fields["Author"])
    # The Description explains why, at length: several continuation lines.
    desc = re.search(r"^Description: .*\n((?: .*\n)+)", header, re.M)
    assert desc is not None and len(desc.group(1).splitlines()) >= 8, name
    info = header_info(patch.header)
    assert info.author_name and info.subject and info.date is not None


def test_index_ids_chain_from_base_to_result(repo: PatchRepo, lock: Lock) -> None:
    """Each patch starts from the blob the previous one left: the series was made as one
    stack on the pinned file, and its end is the lock's result."""
    before, after = lock.files[FILE]
    assert before is not None and after is not None
    current = before
    for name in NAMES:
        (section,) = parse(repo.read_patch(name), name).sections
        assert section.old_id and section.new_id
        assert current.startswith(section.old_id), name
        current = section.new_id
    assert after.startswith(current)


def test_no_upstream_source_beyond_the_patches() -> None:
    assert not (ROOT / "sgl-kernel").exists()
    tracked_like = [p for p in ROOT.rglob("CMakeLists.txt") if ".venv" not in p.parts]
    assert tracked_like == [], tracked_like


def test_readme_documents_the_lock(repo: PatchRepo) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert PIN in text and '"result_tree": null' in text
    assert "git clone https://github.com/sgl-project/sglang ../sglang" in text
    assert Path(ROOT / "examples" / "github-workflow.yml").is_file()
