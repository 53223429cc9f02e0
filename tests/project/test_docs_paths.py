"""The README, docs/ and every `--help` text point only to files a clone has: each
relative Markdown link, each `*.md` file named, and each path into the repository's own
folders (`docs/`, `tests/`, `bench/`, `examples/`, `src/`, `.ci/`) must exist in this
repository. A reference to a file beside the clone (`../shared/…`) fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from patchq.cli.main import cli

from ..conftest import ROOT

OWN = ("docs/", "tests/", "bench/", "examples/", "src/", ".ci/")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A document named by its file (README.md, ../shared/DESIGN.md), not an output file a
# command is told to write (`-o review.md`).
MD_NAME = re.compile(r"(?<![\w/.~$}-])((?:\.\./)*(?:[\w.-]+/)*[A-Z][A-Z0-9_-]*\.md)\b")
OWN_PATH = re.compile(r"(?<![\w/.~-])((?:" + "|".join(map(re.escape, OWN)) + r")[\w./-]*)")


def help_texts() -> dict[str, str]:
    """`--help` of patchq and of every command, as a user sees it."""
    out = {}
    root = click.Context(cli, info_name="patchq")
    out["patchq --help"] = cli.get_help(root)
    for name, cmd in cli.commands.items():
        out[f"patchq {name} --help"] = cmd.get_help(click.Context(cmd, info_name=name, parent=root))
    return out


def documents() -> dict[str, tuple[Path, str]]:
    docs = {"README.md": ROOT / "README.md", "ARCHITECTURE.md": ROOT / "ARCHITECTURE.md"}
    docs.update({f"docs/{p.name}": p for p in sorted((ROOT / "docs").glob("*.md"))})
    return {k: (p.parent, p.read_text()) for k, p in docs.items()}


def references(text: str) -> set[str]:
    found = set()
    for m in LINK.finditer(text):
        target = m.group(1).split("#")[0]
        if target and not re.match(r"[a-z]+:", target):
            found.add(target)
    found.update(MD_NAME.findall(text))
    found.update(p.rstrip(".") for p in OWN_PATH.findall(text))
    return found


def missing(refs: set[str], here: Path) -> list[str]:
    bad = []
    for ref in sorted(refs):
        candidates = [here / ref, ROOT / ref]
        if not any(c.resolve().is_relative_to(ROOT) and c.exists() for c in candidates):
            bad.append(ref)
    return bad


def test_documents_reference_only_files_in_the_repository() -> None:
    docs = documents()
    assert {"docs/README.md", "docs/commands.md", "docs/formats.md", "docs/json.md"} <= set(docs)
    for name, (here, text) in docs.items():
        assert missing(references(text), here) == [], name


def test_help_texts_reference_only_files_in_the_repository() -> None:
    texts = help_texts()
    assert len(texts) > 20
    for name, text in texts.items():
        assert "DESIGN" not in text, name
        assert missing(references(text), ROOT) == [], name
    assert "docs/json.md" in texts["patchq check --help"]


def test_the_scan_catches_a_file_beside_the_clone() -> None:
    text = (
        "The contract is `../shared/DESIGN.md`; see [the docs](docs/nowhere.md) and "
        "tests/nope.py; `report -o review.md` writes a file."
    )
    assert missing(references(text), ROOT) == [
        "../shared/DESIGN.md",
        "docs/nowhere.md",
        "tests/nope.py",
    ]


def test_every_command_is_in_the_reference() -> None:
    commands = (ROOT / "docs" / "commands.md").read_text()
    for name in cli.commands:
        assert f"`{name}" in commands, name
