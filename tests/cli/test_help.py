"""`patchq --help` lists every command under a task heading; every command has an example."""

from __future__ import annotations

import re

import click
import pytest

from patchq.cli.main import TASKS, cli

from ..conftest import run_inprocess

# The command-line contract, DESIGN §3.
DESIGN_COMMANDS = (
    "init",
    "series",
    "applied",
    "unapplied",
    "top",
    "push",
    "pop",
    "goto",
    "new",
    "refresh",
    "delete",
    "rename",
    "fold",
    "header",
    "import",
    "export",
    "diff",
    "files",
    "status",
    "check",
    "rebase",
    "report",
    "apply",
    "verify",
    "lint",
)
HEADINGS = tuple(h for h, _ in TASKS)


def _sections(text: str) -> dict[str, list[str]]:
    """The command names under each heading of a group's help."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = re.fullmatch(r"(\S.*):", line)
        if m:
            current = m.group(1)
            out[current] = []
        elif current is not None and (m := re.match(r"  (\S+)\s", line + " ")):
            out[current].append(m.group(1))
    return out


def test_every_design_command_exists_under_a_heading(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_inprocess(capsys, "--help")
    assert r.code == 0
    sections = _sections(r.out)
    listed = {
        name: heading
        for heading, names in sections.items()
        if heading in HEADINGS
        for name in names
    }
    for name in DESIGN_COMMANDS:
        assert name in cli.commands, f"DESIGN §3 command {name!r} does not exist"
        assert name in listed, f"{name!r} is not listed under a task heading"
    # Every command is listed exactly once, none falls through to "Other".
    every = [n for heading in HEADINGS for n in sections.get(heading, [])]
    assert sorted(every) == sorted(cli.commands)
    assert "Other" not in sections and "Commands" not in sections
    assert [h for h in sections if h in HEADINGS] == list(HEADINGS)


def test_headings_group_by_task(capsys: pytest.CaptureFixture[str]) -> None:
    sections = _sections(run_inprocess(capsys, "--help").out)
    assert sections["Set up"] == ["init", "import", "export", "lint", "trust"]
    assert sections["Upstream"] == ["check", "rebase", "report", "codemod"]
    assert sections["Reproduce"] == ["apply", "verify"]
    assert sections["Recover"] == ["recover"] and sections["Tour"] == ["demo"]


def test_an_unknown_command_is_still_listed() -> None:
    group = type(cli)(
        commands={
            "zzz": click.Command("zzz", help="New."),
            "apply": click.Command("apply", help="Apply."),
        }
    )
    ctx = click.Context(group)
    text = group.get_help(ctx)
    assert "Reproduce:" in text and "Other:" in text and "zzz" in text
    assert group.list_commands(ctx) == ["apply", "zzz"]


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_help_has_an_example(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_inprocess(capsys, name, "--help")
    assert r.code == 0, r.err
    assert "Example" in r.out, f"`patchq {name} --help` has no example"
    assert f"patchq {name}" in r.out.split("Example", 1)[1]
