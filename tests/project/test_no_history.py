"""The code explains itself without the project's history: no source or test cites an
issue by its number, which no file in the repository explains. A comment says what a rule
protects against (a lost edit, a hostile input's cost, a killed run), not which issue
asked for it; a commit message may name the issue."""

from __future__ import annotations

import re
import subprocess

from ..conftest import ROOT

# The word, singular or plural, any case, then a number, with or without `#`.
CITATION = re.compile(r"\bissues?\s+#?\d", re.IGNORECASE)

# Files allowed to cite issues for a while (a restructure in flight): empty, and to stay
# so. A file listed here fails the test once it has no citation left.
NOT_YET: frozenset[str] = frozenset()


def citations() -> dict[str, list[str]]:
    """Each tracked text file under src/ and tests/ that cites an issue, with its lines."""
    names = subprocess.run(
        ["git", "ls-files", "-z", "--", "src/", "tests/"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    found: dict[str, list[str]] = {}
    for name in filter(None, names):
        path = ROOT / name.decode()
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        lines = [
            f"{name.decode()}:{i}: {line.strip()}"
            for i, line in enumerate(text.splitlines(), 1)
            if CITATION.search(line)
        ]
        if lines:
            found[name.decode()] = lines
    return found


def test_no_source_or_test_cites_an_issue_number() -> None:
    found = citations()
    new = [line for name in sorted(found.keys() - NOT_YET) for line in found[name]]
    assert new == [], "say what the rule protects against instead:\n" + "\n".join(new)


def test_the_list_of_files_not_yet_cleaned_only_shrinks() -> None:
    cleaned = sorted(NOT_YET - citations().keys())
    assert cleaned == [], "no citation left (or gone): remove from NOT_YET: " + ", ".join(cleaned)


def test_the_pattern_finds_each_spelling_of_a_citation() -> None:
    word = "issue"  # joined to its numbers only here, so this file cites no issue itself
    cited = (f"({word} 27, class 3)", f"{word.title()} 24 point 6", f"{word}s 12 and 23")
    assert all(CITATION.search(text) for text in (*cited, f"{word} #6"))
    assert not any(CITATION.search(t) for t in ("an issue N citation", "tissues 3", "issue"))
