"""The tests mirror the package: every test module sits in a folder
named for what it tests, never at the top of tests/, and every folder is a package so
its relative imports of the shared fixtures (`from ..conftest import …`) resolve."""

from __future__ import annotations

from ..conftest import ROOT

TESTS = ROOT / "tests"
# Folders of tests that are not a folder of src/patchq.
OWN = {"hostile": "hostile inputs, through the CLI", "project": "the repository as a whole"}
# What the top of tests/ holds besides folders: the shared fixtures and strategies.
TOP = {"__init__.py", "conftest.py", "strategies.py"}


def test_no_test_module_at_the_top_of_tests() -> None:
    top = {p.name for p in TESTS.glob("*.py")}
    assert top <= TOP, f"move {sorted(top - TOP)} into the folder of what they test"


def test_every_test_folder_is_a_package_named_for_what_it_tests() -> None:
    package = {p.name for p in (ROOT / "src" / "patchq").iterdir() if (p / "__init__.py").is_file()}
    folders = {p.parent for p in TESTS.rglob("test_*.py")} - {TESTS}
    assert folders, "no test folders found"
    for folder in folders:
        assert (folder / "__init__.py").is_file(), f"{folder} is not a package"
        assert folder.parent == TESTS, f"{folder}: one level of folders"
    names = {f.name for f in folders}
    # The rebase and the stack have their own tests before their folders exist in src.
    assert names - package - set(OWN) <= {"stack", "rebase"}, sorted(names - package - set(OWN))
    assert {"core", "git", "store", "stack", "rebase", "commands", "cli", "hostile"} <= names
