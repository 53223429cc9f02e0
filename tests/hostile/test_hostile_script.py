"""The exported script escapes what it embeds.

`export --script` writes a Python program holding strings from the patch repo (its
folder's name), the target (paths, the base) and the patches (names, edits). Each must
enter the program as a literal built by `repr`, never pasted into quotes or a docstring,
and the program must print every name escaped as patchq itself does (`core.text.shown`).
A hypothesis property feeds hostile names — quotes, triple quotes, backslashes, newlines,
ESC and C1 controls, bidi overrides, bytes that are not UTF-8, `{}`/`%`, the template's
own placeholders — through `patchq export --script` (a real CLI run on real git repos)
and runs the script on a plain folder: it must apply exactly, print only inert text,
and say each name as `shown` does.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from patchq.core.errors import BadInputError
from patchq.core.paths import check_name, check_path
from patchq.core.series import Series
from patchq.core.text import shown
from patchq.formats.script import render

from ..conftest import git, run_patchq

PIECES = (
    "a",
    "Z",
    "é",
    " ",
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\\n",
    "{}",
    "{0}",
    "%s",
    "%",
    "@NAME@",
    "@DATA@",
    "@BASE@",
    "\x1b[31m",
    "\x07",
    "\r",
    "\t",
    "\x85",
    "\u202e",
    "\u2028",
    "\udcfe",  # the byte 0xfe: not UTF-8 (the file system takes it)
    "$(id)",
    "`x`",
)
NEWLINE = ("\n",)

component = st.lists(st.sampled_from(PIECES + NEWLINE), min_size=1, max_size=5).map("".join)
name_piece = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join)


def fs(text: str) -> bytes:
    return os.fsencode(text)


def usable_path(parts: list[str]) -> str | None:
    path = "/".join(parts)
    try:
        check_path(path, "test")
    except BadInputError:
        return None
    if any(p in (".", "..") or p.startswith(".") for p in parts):
        return None
    return path


def usable_patch_name(piece: str) -> str:
    name = f"{piece}.patch"
    try:
        check_name(name, "test", new=True)
    except BadInputError:
        return "fallback.patch"
    try:
        if Series.parse(name + "\n", "series").names() == [name]:
            return name
    except BadInputError:
        pass
    return "fallback.patch"


def inert(text: str) -> bool:
    """Whether `text` holds nothing that drives a terminal (`shown` leaves it alone)."""
    return shown(text, lines=True) == text


def make_patch(up: Path, path: str) -> bytes:
    """The patch that edits `path` in `up`, as git writes it (quoted names and all)."""
    (up / fs(path).decode("utf-8", "surrogateescape")).write_bytes(b"one\nTWO\nthree\n")
    diff = subprocess.run(
        ["git", "-c", "core.quotePath=true", "diff"], cwd=up, capture_output=True, check=True
    ).stdout
    git(up, "checkout", "-q", "--", ".")
    header = b'From: A "Quote" <a@example.org>\nSubject: [PATCH] """ \\ %s {} @NAME@\n\n---\n'
    return header + diff


def run_script(script: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-S", str(script), *args],
        capture_output=True,
        env={"PATH": "/nonexistent"},
    )


def check_export(folder_name: str, parts: list[str], patch_piece: str) -> None:
    path = usable_path(parts)
    if path is None:
        path = "plain.txt"
    patch_name = usable_patch_name(patch_piece)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        up = tmp / "upstream"
        up.mkdir()
        git(up, "init", "-q", "-b", "main")
        target = up / fs(path).decode("utf-8", "surrogateescape")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"one\ntwo\nthree\n")
        git(up, "add", "-A")
        git(up, "commit", "-q", "-m", "base")
        base = git(up, "rev-parse", "HEAD").strip()
        q = tmp / folder_name
        (q / "patches").mkdir(parents=True)
        (q / "patches" / patch_name).write_bytes(make_patch(up, path))
        (q / "series").write_bytes(fs(patch_name) + b"\n")
        (q / "patchq.toml").write_text(f"target = {str(up)!r}\n".replace("'", '"'))
        r = run_patchq("--dir", str(q), "apply", "--onto", base)
        assert r.code == 0, r.err
        script = tmp / "apply.py"
        r = run_patchq("--dir", str(q), "export", "--script", str(script))
        assert r.code == 0, r.err

        source = script.read_text(encoding="ascii")  # every hostile string is escaped
        tree = ast.parse(source)
        consts = {
            t.id: n.value.value
            for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        assert consts["NAME"] == q.name and consts["BASE"] == base
        # The docstring is the template's own, whatever the names are.
        assert ast.get_docstring(tree) == ast.get_docstring(ast.parse(render("x", "0", [])))

        plain = tmp / "plain"
        dest = plain / fs(path).decode("utf-8", "surrogateescape")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(b"one\ntwo\nthree\n")
        first = run_script(script, str(plain))
        out, err = first.stdout.decode(), first.stderr.decode()  # UTF-8, strictly
        assert first.returncode == 0, err
        assert out == f"patched  {shown(path)}\n"
        assert dest.read_bytes() == b"one\nTWO\nthree\n"
        again = run_script(script, str(plain))
        assert again.returncode == 0
        assert again.stdout.decode() == "nothing to do: the 1 file is already patched\n"

        dest.write_bytes(b"someone else's\n")
        drift = run_script(script, str(plain))
        derr = drift.stderr.decode()
        assert drift.returncode == 1 and inert(derr)
        assert f"drift: {shown(path)} ({shown(patch_name)}) is neither" in derr
        assert dest.read_bytes() == b"someone else's\n"

        helped = run_script(script, "--help")
        text = helped.stdout.decode()
        assert helped.returncode == 0 and inert(text)
        assert f"Series: {shown(q.name)}. Upstream base: {base}." in text
        for output in (out, err, again.stdout.decode(), again.stderr.decode()):
            assert inert(output), output


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    folder=component.filter(lambda c: c not in (".", "..") and "/" not in c),
    parts=st.lists(component, min_size=1, max_size=2),
    patch_piece=name_piece,
)
@example(folder='q"""', parts=['a"""b'], patch_piece="x'''")
@example(folder="@DATA@", parts=["@NAME@", "%s{0}"], patch_piece="@BASE@")
@example(folder="q\n\x1b[2J", parts=["new\nline\x1b]0;title\x07"], patch_piece="\u202etxt")
@example(folder="q\\", parts=["\\", "b\\"], patch_piece="\\")
@example(folder="q\udcfe", parts=["bad\udcfe\udcff", "\x85\u2028"], patch_piece="é\udcfe")
def test_hostile_names_go_through_the_exported_script(
    folder: str, parts: list[str], patch_piece: str
) -> None:
    check_export(folder, parts, patch_piece)


def test_the_template_is_filled_in_one_pass() -> None:
    """A name holding another placeholder is not filled in again (one pass)."""
    from patchq.formats.script import ScriptFile

    f = ScriptFile("@DATA@", None, "0" * 40, "100644", ((0, 0, "@NAME@\n"),), ("@BASE@",))
    source = render("@BASE@@DATA@'''\"\"\"", "@NAME@", [f])
    tree = ast.parse(source)
    names = {
        t.id: n.value
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    name, base = names["NAME"], names["BASE"]
    assert isinstance(name, ast.Constant) and name.value == "@BASE@@DATA@'''\"\"\""
    assert isinstance(base, ast.Constant) and base.value == "@NAME@"
    files = names["FILES"]
    assert isinstance(files, ast.Call) and isinstance(files.args[0], ast.Constant)
    literal = files.args[0].value
    assert isinstance(literal, str)
    data = json.loads(literal)  # the data's literal, not filled in again
    assert data[0]["path"] == "@DATA@" and data[0]["patches"] == ["@BASE@"]
