"""docs/design.md is the design the code cites: every "DESIGN §N" or
"DESIGN §N.M" in the sources, docs, tests, bench and README names a section heading of
docs/design.md, and so does every bare "§N" inside docs/design.md itself."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..conftest import ROOT

DESIGN = ROOT / "docs" / "design.md"
# A numbered heading: `## 4. Application semantics`, `### 4.7 Remembered resolutions`.
HEADING = re.compile(r"^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s", re.M)
# "DESIGN §4", "DESIGN §4.7", "DESIGN §2–§4", "DESIGN §4, §5", "DESIGN §3's".
CITATION = re.compile(r"DESIGN\s+((?:§\d+(?:\.\d+)*(?:'s)?(?:\s*(?:–|-|,|and|or)\s*)?)+)")
SECTION = re.compile(r"§(\d+(?:\.\d+)*)")
# Where the design is cited: the code, the contract, the tests, the benchmarks.
CITING = ("src/", "docs/", "tests/", "bench/", "README.md", "ARCHITECTURE.md")


def sections(text: str) -> set[str]:
    return set(HEADING.findall(text))


def citations(text: str) -> list[tuple[int, str]]:
    """Each section a "DESIGN §…" citation in `text` names, with its line number."""
    found = []
    for m in CITATION.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        found += [(line, n) for n in SECTION.findall(m.group(1))]
    return found


def dangling(text: str, known: set[str], bare: bool = False) -> list[str]:
    """The citations in `text` (every `§N` if `bare`) that name no known section."""
    if bare:
        refs = [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in SECTION.finditer(text)]
    else:
        refs = citations(text)
    return [f"{line}: §{n}" for line, n in refs if n not in known]


def tracked_text_files() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "-z", "--", *CITING],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    out = []
    for name in filter(None, names):
        path = ROOT / name.decode()
        if path.suffix in (".py", ".md", ".toml", ".txt", ".sh") and path.is_file():
            out.append(path)
    return out


def test_design_is_in_the_repository_with_its_sections() -> None:
    known = sections(DESIGN.read_text(encoding="utf-8"))
    assert {"1", "2", "3", "4", "4.1", "4.7", "5", "6"} <= known, sorted(known)


def test_every_design_citation_names_a_section() -> None:
    known = sections(DESIGN.read_text(encoding="utf-8"))
    files = tracked_text_files()
    assert any(p.is_relative_to(ROOT / "src") for p in files)
    bad, cited = [], 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        cited += len(citations(text))
        bad += [f"{path.relative_to(ROOT)}:{b}" for b in dangling(text, known)]
    assert bad == [], "\n" + "\n".join(bad)
    assert cited > 20  # the code does cite it: the scan is not looking at nothing


def test_the_design_cites_only_its_own_sections() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    assert dangling(text, sections(text), bare=True) == []


def test_the_scan_catches_a_dangling_citation() -> None:
    known = sections("## 3. Contract\n### 3.1 Exit codes\n## 4. Semantics\n")
    assert known == {"3", "3.1", "4"}
    d = "DESIGN"  # spelled apart, so that this file's own scan does not read the samples
    text = (
        f"exit codes ({d} §3.1); the ladder ({d} §4 step 2);\n"
        f"see {d} §2–§4, {d} §4.7 and {d} §3's JSON, {d} §9.\n"
    )
    assert [n for _, n in citations(text)] == ["3.1", "4", "2", "4", "4.7", "3", "9"]
    assert dangling(text, known) == ["2: §2", "2: §4.7", "2: §9"]
    assert dangling("as §4 and §5 say", known, bare=True) == ["1: §5"]
