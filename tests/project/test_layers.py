"""The layers ARCHITECTURE.md draws depend one way, and this test says so.

`RANK` is that drawing's order, `core` lowest; the drawing is checked against it, and no
other page of the documentation draws the layers again. Each module may import from its
own layer's folder and from the layers below it; the four peers above core do not import
each other; `stack` (the applied stack and its transactions) never imports `rebase` (the
whole rebase, engine to record); a verb in `commands` does not import another verb
(shared work lives in `stack` or `rebase`). Only `git` runs git: it alone may import a
git library, and no module outside it spells a git subcommand; besides it only `shell`
(the user's own `--exec` command, a peer of `git`) imports `subprocess`. Only `cli`
imports click. The rules are read from the source with `ast`, so a lazy import inside a
function counts as much as one at the top.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "patchq"
ARCHITECTURE = SRC.parents[1] / "ARCHITECTURE.md"
RANK = {
    "core": 0,
    "git": 1,
    "store": 1,
    "formats": 1,
    "shell": 1,
    "stack": 2,
    "rebase": 3,
    "commands": 4,
    "cli": 5,
}
# Commands that would be git's own, as they would be spelled in an argument list.
GIT_WORDS = (
    "add",
    "apply",
    "am",
    "branch",
    "cat-file",
    "checkout",
    "commit",
    "config",
    "diff",
    "diff-tree",
    "diff-index",
    "fetch",
    "format-patch",
    "hash-object",
    "init",
    "log",
    "ls-files",
    "ls-tree",
    "merge-file",
    "read-tree",
    "reset",
    "rev-list",
    "rev-parse",
    "show",
    "stash",
    "status",
    "symbolic-ref",
    "update-index",
    "update-ref",
    "worktree",
    "write-tree",
)
SPELLED = re.compile(r"""\.run\(\s*["'](""" + "|".join(map(re.escape, GIT_WORDS)) + ")[\"']")


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        out.append((".".join(p for p in parts if p != "__init__"), path))
    return out


def layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def imports(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from patchq.core import hunks` imports the module patchq.core.hunks
            found += [
                (node.lineno, f"{target}.{a.name}")
                for a in node.names
                if (SRC.parent / target.replace(".", "/") / f"{a.name}.py").exists()
            ]
    return found


def test_every_module_lives_in_a_layer() -> None:
    loose = [m for m, _ in modules() if layer(m) is None and m not in ("patchq", "patchq.__main__")]
    assert loose == [], f"modules outside the layer folders: {loose}"


def test_imports_run_one_way() -> None:
    wrong = []
    for module, path in modules():
        mine = layer(module)
        for line, target in imports(path, module):
            theirs = layer(target)
            where = f"{path.relative_to(SRC.parent)}:{line}: {module} imports {target}"
            if target == "git" or target.startswith("git."):
                if mine != "git":
                    wrong.append(f"{where} (only the git layer may use a git library)")
                continue
            if target in ("subprocess",) and mine not in ("git", "shell"):
                wrong.append(f"{where} (only the git and shell layers start processes)")
            if target == "click" and mine != "cli":
                wrong.append(f"{where} (only the cli uses click)")
            if mine is None or theirs is None:
                if mine is not None and target == "patchq.cli.main" and mine != "cli":
                    wrong.append(where)
                continue
            if theirs == mine:
                if mine == "commands" and target != module and not target.endswith("__init__"):
                    wrong.append(f"{where} (a verb imports a verb: share it in stack or rebase)")
                continue
            if RANK[theirs] >= RANK[mine]:
                wrong.append(f"{where} ({mine} may not import {theirs})")
    assert wrong == [], "\n" + "\n".join(wrong)


def test_no_git_command_is_spelled_outside_the_git_layer() -> None:
    spelled = []
    for module, path in modules():
        if layer(module) == "git":
            continue
        for i, text in enumerate(path.read_text().splitlines(), 1):
            if SPELLED.search(text) or re.search(r"""\[\s*["']git["']\s*,""", text):
                spelled.append(f"{path.relative_to(SRC.parent)}:{i}: {text.strip()}")
    assert spelled == [], "\n" + "\n".join(spelled)


def drawings(text: str) -> list[tuple[int, str]]:
    """The lines of `text` that draw the layers: arrows between three or more layer names."""
    return [
        (i, line)
        for i, line in enumerate(text.splitlines(), 1)
        if re.search("[→←]", line) and len(set(re.findall(r"\w+", line)) & set(RANK)) >= 3
    ]


def test_architecture_draws_the_layers_as_the_rules_rank_them() -> None:
    """ARCHITECTURE.md's one drawing reads "imports from" left to right: each arrow points
    to a lower rank, the peers in braces share one, and every layer is drawn once."""
    found = drawings(ARCHITECTURE.read_text())
    assert len(found) == 1, f"ARCHITECTURE.md draws the layers {len(found)} times: {found}"
    steps = [re.findall(r"\w+", part) for part in found[0][1].split("→")]
    ranks = [{RANK[name] for name in step} for step in steps]
    assert all(len(r) == 1 for r in ranks), f"peers of different ranks drawn together: {steps}"
    order = [r.pop() for r in ranks]
    assert order == sorted(order, reverse=True) and len(set(order)) == len(order), steps
    assert sorted(n for step in steps for n in step) == sorted(RANK)


def test_no_other_page_redraws_the_layers() -> None:
    """DESIGN §6, the README and docs/ link to ARCHITECTURE.md instead of a second drawing,
    which would drift from the first."""
    root = SRC.parents[1]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    redrawn = [
        f"{p.relative_to(root)}:{i}: {line}" for p in pages for i, line in drawings(p.read_text())
    ]
    assert redrawn == [], "\n" + "\n".join(redrawn)


def test_the_rules_catch_what_they_are_about() -> None:
    """The checks above are not vacuous: each finds its own kind of fault in a sample."""
    sample = SRC / "core" / "_layer_probe.py"
    sample.write_text(
        "from patchq.rebase import replay\nimport subprocess\n"
        'def f(g):\n    g.run("checkout", "-q")\n'
    )
    try:
        found = imports(sample, "patchq.core._layer_probe")
        assert "patchq.rebase.replay" in [t for _, t in found]
        assert layer("patchq.rebase.replay") == "rebase" and RANK["rebase"] > RANK["stack"]
        assert SPELLED.search(sample.read_text())
    finally:
        sample.unlink()


# What a click callback in cli/ may not do: the CLI only
# translates — options in, one command called, its result rendered by cli/render and
# printed by cli/output. A loop (over patches or anything), a dict or f-string (a JSON
# document or a message being built) or a direct print means work that belongs in a
# command's result or in cli/render.
BUILDS = {
    ast.For: "a for loop",
    ast.AsyncFor: "a for loop",
    ast.While: "a while loop",
    ast.comprehension: "a comprehension (a loop)",
    ast.Dict: "a dict literal (a JSON document?)",
    ast.JoinedStr: "an f-string (a message?)",
}
PRINTS = ("info", "data", "emit_json", "paint")


def callback_faults(source: str) -> list[str]:
    """Each thing a click callback in `source` builds or prints itself, as `name:line: what`."""
    faults = []
    for fn in ast.parse(source).body:
        if not isinstance(fn, ast.FunctionDef) or not any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr in ("command", "group")
            for d in fn.decorator_list
        ):
            continue
        for node in (n for stmt in fn.body for n in ast.walk(stmt)):
            what = next((w for t, w in BUILDS.items() if isinstance(node, t)), None)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "output"
                and node.func.attr in PRINTS
            ):
                what = f"output.{node.func.attr} (print via output.show(render…))"
            if what is not None:
                faults.append(f"{fn.name}:{getattr(node, 'lineno', fn.lineno)}: {what}")
    return faults


def test_click_callbacks_only_translate() -> None:
    faults = [
        f"{path.name}: {fault}"
        for path in sorted((SRC / "cli").glob("*.py"))
        for fault in callback_faults(path.read_text())
    ]
    assert any(p.name == "verbs_stack.py" for p in (SRC / "cli").glob("*.py"))
    assert faults == [], "\n" + "\n".join(faults)


def test_the_callback_tripwire_fires() -> None:
    sample = """
@cli.command()
@pass_ctx
def apply(ctx, as_json):
    out = apply_cmd.apply(ctx)
    for p in out.patches:
        output.info(p.name)
    output.emit_json({"n": len(out.patches)})
    output.show(render.applied(out, [p for p in out.patches], f"{out}"))


def _helper(items):
    return [i for i in items]
"""
    found = sorted(f.split(": ", 1)[1] for f in callback_faults(sample))
    assert found == sorted(
        [
            "a for loop",
            "output.info (print via output.show(render…))",
            "output.emit_json (print via output.show(render…))",
            "a dict literal (a JSON document?)",
            "a comprehension (a loop)",
            "an f-string (a message?)",
        ]
    ), found
