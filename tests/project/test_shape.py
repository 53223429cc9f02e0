"""No god modules, no long functions, no wide signatures (issue 23, point 3).

Every module under src/patchq holds at most 1,300 lines; every function (methods and
nested functions too) at most 120, from its `def` line to its last; and no function
takes six or more positional parameters besides `self`/`cls`: a longer list is made
keyword-only (`*,`) or a small value. The rules are read from the source with `ast`.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "patchq"
MAX_MODULE_LINES = 1_300
MAX_FUNCTION_LINES = 120
MAX_POSITIONAL = 5


def _positional(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    return names[1:] if names and names[0] in ("self", "cls") else names


def shape_faults(source: str, where: str) -> list[str]:
    """What in `source` (the module at `where`, relative to src/patchq) breaks the rules:
    one `where:line name: what` a fault."""
    faults: list[str] = []
    n = len(source.splitlines())
    if n > MAX_MODULE_LINES:
        faults.append(f"{where}:1 module: {n} lines (at most {MAX_MODULE_LINES})")

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
                continue
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, prefix)
                continue
            name = f"{prefix}{child.name}"
            length = (child.end_lineno or child.lineno) - child.lineno + 1
            if length > MAX_FUNCTION_LINES:
                faults.append(
                    f"{where}:{child.lineno} {name}: {length} lines (at most {MAX_FUNCTION_LINES})"
                )
            wide = _positional(child)
            if len(wide) > MAX_POSITIONAL:
                faults.append(
                    f"{where}:{child.lineno} {name}: {len(wide)} positional parameters "
                    f"({', '.join(wide)}; at most {MAX_POSITIONAL}, make the rest "
                    "keyword-only or a value)"
                )
            visit(child, f"{name}.")

    visit(ast.parse(source), "")
    return faults


def test_no_god_module_long_function_or_wide_signature() -> None:
    faults: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        faults += shape_faults(path.read_text(encoding="utf-8"), path.relative_to(SRC).as_posix())
    assert faults == [], "\n" + "\n".join(faults)


def _function(name: str, params: str, lines: int) -> str:
    """A function of exactly `lines` lines, from its `def` line to its last."""
    body = "".join(f"    x{k} = {k}\n" for k in range(lines - 2))
    return f"def {name}({params}):\n{body}    return None\n"


def test_the_scanner_finds_a_long_function_and_a_wide_one() -> None:
    sample = (
        "import functools\n\n\n"  # lines 1-3
        + _function("long", "a", 121)  # line 4
        + _function("just_fits", "a", 120)
        + "def wide(a, b, c, d, e, f):\n    return a\n"
        + "def narrow(a, b, c, d, e, *, f, g):\n    return a\n"
        + "class Box:\n"
        + "    def method(self, a, b, c, d, e):\n        return a\n"
        + "    @classmethod\n"
        + "    def also(cls, a, b, c, d, e, f):\n        return a\n"
        + "def outer():\n"
        + "    def inner(a, b, /, c, d, e, f):\n        return a\n"
        + "    return inner\n"
    )
    found = shape_faults(sample, "core/sample.py")
    at = {f.split(" ", 2)[1].rstrip(":"): f.split(" ", 1)[0] for f in found}
    assert at == {
        "long": "core/sample.py:4",
        "wide": "core/sample.py:245",
        "Box.also": "core/sample.py:253",
        "outer.inner": "core/sample.py:256",
    }, found
    assert "long: 121 lines (at most 120)" in found[0]
    assert any("wide: 6 positional parameters (a, b, c, d, e, f;" in f for f in found)


def test_the_scanner_finds_a_god_module() -> None:
    fits = "x = 1\n" * MAX_MODULE_LINES
    assert shape_faults(fits, "core/big.py") == []
    assert shape_faults(fits + "y = 2\n", "core/big.py") == [
        f"core/big.py:1 module: {MAX_MODULE_LINES + 1} lines (at most {MAX_MODULE_LINES})"
    ]
