"""The recipe kept in step: every command that changes the series' list or order
rewrites the build's own list (an RPM spec, a BitBake recipe, a vcpkg portfile, a conda
meta.yaml, a PKGBUILD) in the same transaction, touching nothing else; one it cannot
rewrite safely is refused before anything is written. The recipes in tests/data/recipes/
were written by hand from each format's own documentation."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from patchq.formats import recipes
from patchq.stack.recipe import prefix
from tests.conftest import DATA, Queue, Runner, Upstream

RECIPES = ("hello.spec", "hello_1.0.bb", "portfile.cmake", "meta.yaml", "PKGBUILD")
NAMES = ("0001-fix-build.patch", "0002-greeting.patch", "0003-locale.patch")
# What a rewrite may touch: lines naming a patch, applying one (`%patch -P 1`), its sum.
LISTED = re.compile(r"\.patch|%patch|SKIP|[0-9a-f]{64}")


def patch_for(line: int, word: str) -> str:
    return f"--- a/f.txt\n+++ b/f.txt\n@@ -{line},1 +{line},1 @@\n-line {line}\n+{word}\n"


def setup(upstream: Upstream, queue: Queue, recipe: str) -> str:
    upstream.write("f.txt", "".join(f"line {i}\n" for i in range(1, 40)))
    base = upstream.commit("base")
    for k, name in enumerate(NAMES):
        queue.add(
            name, f"From: Dev <dev@example.org>\nSubject: {name}\n\n" + patch_for(5 + 10 * k, name)
        )
    (queue.path / recipe).write_bytes((DATA / "recipes" / recipe).read_bytes())
    with (queue.path / "patchq.toml").open("a") as f:
        f.write(f'recipe = "{recipe}"\n')
    return base


def listed(queue: Queue, recipe: str) -> tuple[str, ...]:
    text = (queue.path / recipe).read_text()
    return recipes.read(recipe, text, prefix(queue.path, recipe)).names


def active(queue: Queue) -> tuple[str, ...]:
    out = []
    for line in queue.series().splitlines():
        words = line.split("#", 1)[0].split()
        if words and "#+" not in line:
            out.append(words[0])
    return tuple(out)


def only_the_list_changed(queue: Queue, recipe: str) -> None:
    """Every line that names no patch, applies none and is no checksum is as it was."""
    before = (DATA / "recipes" / recipe).read_text().splitlines()
    after = (queue.path / recipe).read_text().splitlines()
    assert [x for x in before if not LISTED.search(x)] == [x for x in after if not LISTED.search(x)]


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_list_change_rewrites_the_recipe(
    upstream: Upstream, queue: Queue, patchq: Runner, recipe: str
) -> None:
    setup(upstream, queue, recipe)
    assert listed(queue, recipe) == NAMES
    assert patchq("lint").code == 0, patchq("lint").out
    assert patchq("push", "-a").code == 0
    steps = [
        ("rename", "0002-greeting.patch", "0002-hello.patch"),
        ("pop",),
        ("move", "0003-locale.patch", "--before", "0001-fix-build.patch"),
        ("new", "0004-new.patch"),
        ("pop",),
        ("guard", "0004-new.patch", "+docs"),
        ("guard", "0004-new.patch", "--none"),
        ("delete", "0004-new.patch", "-r"),
        ("pop", "-a"),
        ("push",),
        ("fold", "0001-fix-build.patch"),
    ]
    for step in steps:
        r = patchq(*step)
        assert r.code == 0, (step, r.err)
        assert listed(queue, recipe) == active(queue), step
        only_the_list_changed(queue, recipe)
        lint = patchq("lint")
        assert recipe not in lint.out, (step, lint.out)
    assert listed(queue, recipe) == ("0003-locale.patch", "0002-hello.patch")
    # `undo` puts the recipe back with the series (here: before the fold).
    assert patchq("undo").code == 0
    assert listed(queue, recipe) == (
        "0003-locale.patch",
        "0001-fix-build.patch",
        "0002-hello.patch",
    )


@pytest.mark.parametrize("recipe", RECIPES)
def test_a_rebase_that_upstreams_a_patch_drops_it_from_the_recipe(
    upstream: Upstream, queue: Queue, patchq: Runner, recipe: str
) -> None:
    setup(upstream, queue, recipe)
    assert patchq("apply").code == 0
    upstream.git("checkout", "-q", "main")
    text = (upstream.path / "f.txt").read_text().replace("line 15\n", "0002-greeting.patch\n")
    upstream.write("f.txt", text)
    upstream.commit("take the greeting")
    upstream.git("checkout", "-q", "patchq/main")
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    assert queue.series().count("# upstreamed in ") == 1
    assert listed(queue, recipe) == ("0001-fix-build.patch", "0003-locale.patch")
    only_the_list_changed(queue, recipe)
    assert patchq("lint").code == 0


@pytest.mark.parametrize("recipe", RECIPES)
def test_import_adds_to_the_recipe(
    upstream: Upstream, queue: Queue, patchq: Runner, recipe: str, tmp_path: Path
) -> None:
    setup(upstream, queue, recipe)
    new = tmp_path / "0009-extra.patch"
    new.write_text("From: Dev <dev@example.org>\nSubject: extra\n\n" + patch_for(30, "extra"))
    r = patchq("import", str(new))
    assert r.code == 0, r.err
    assert listed(queue, recipe) == (*NAMES, "0009-extra.patch")
    if recipe == "PKGBUILD":  # the new source's checksum is its file's
        import hashlib

        digest = hashlib.sha256((queue.path / "patches" / "0009-extra.patch").read_bytes())
        assert digest.hexdigest() in (queue.path / recipe).read_text()


# Each recipe again, with a list patchq must not rewrite: the line, and what is there.
UNSAFE = {
    "hello.spec": (
        "Patch2:         0003-locale.patch\n",
        "%if 0%{?fedora}\nPatch2:         0003-locale.patch\n%endif\n",
        "%if",
    ),
    "hello_1.0.bb": (
        "           file://0003-locale.patch \\\n",
        "           file://${BPN}-locale.patch \\\n",
        "variable",
    ),
    "portfile.cmake": ("        0003-locale.patch\n", "        ${LOCALE_PATCH}\n", "variable"),
    "meta.yaml": ("    - 0003-locale.patch\n", "    - 0003-locale.patch  # [win]\n", "conditional"),
    "PKGBUILD": (
        '  patch -p1 < "$srcdir/0003-locale.patch"\n',
        '  for p in "$srcdir"/*.patch; do\n    patch -p1 < "$p"\n  done\n',
        "loop",
    ),
}


@pytest.mark.parametrize("recipe", RECIPES)
def test_a_list_patchq_cannot_rewrite_safely_is_refused(
    upstream: Upstream, queue: Queue, patchq: Runner, recipe: str
) -> None:
    setup(upstream, queue, recipe)
    old, new, word = UNSAFE[recipe]
    path = queue.path / recipe
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    line = path.read_text()[: path.read_text().index(new)].count("\n") + 1
    before = (
        queue.series(),
        path.read_bytes(),
        sorted(p.name for p in (queue.path / "patches").iterdir()),
    )
    r = patchq("rename", "0001-fix-build.patch", "0001-fixed.patch")
    assert r.code == 4, r.err
    assert f"{recipe}:" in r.err and word in r.err, r.err
    assert (
        queue.series(),
        path.read_bytes(),
        sorted(p.name for p in (queue.path / "patches").iterdir()),
    ) == before
    lint = patchq("lint")
    assert lint.code == 1 and f"{recipe}:" in lint.out, lint.out
    del line


@pytest.mark.parametrize("recipe", RECIPES)
def test_lint_names_a_recipe_out_of_step(
    upstream: Upstream, queue: Queue, patchq: Runner, recipe: str
) -> None:
    setup(upstream, queue, recipe)
    (queue.path / "series").write_text(
        "0002-greeting.patch\n0001-fix-build.patch\n0003-locale.patch\n"
    )
    r = patchq("lint")
    assert r.code == 1
    assert re.search(rf"{re.escape(recipe)}:\d+: warning: .*order", r.out), r.out
    (queue.path / "series").write_text("0001-fix-build.patch\n0003-locale.patch\n")
    r = patchq("lint")
    assert r.code == 1
    assert re.search(rf"{re.escape(recipe)}:\d+: warning: .*0002-greeting.patch", r.out), r.out


@pytest.mark.parametrize("recipe", RECIPES)
def test_init_adopts_patches_in_the_recipes_order(
    tmp_path: Path, patchq: Runner, recipe: str
) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "patches").mkdir(parents=True)
    for k, name in enumerate(NAMES):
        (pkg / "patches" / name).write_text(
            f"From: Dev <dev@example.org>\nSubject: {name}\n\n" + patch_for(5 + 10 * k, name)
        )
    text = (DATA / "recipes" / recipe).read_text()
    listing = recipes.read(recipe, text)
    # The recipe applies them 3, 1, 2: not their name order.
    order = ("0003-locale.patch", "0001-fix-build.patch", "0002-greeting.patch")
    moved = recipes.rewrite(recipe, text, recipes.Change(order, {}))
    assert listing.names == NAMES and recipes.read(recipe, moved).names == order
    (pkg / recipe).write_text(moved)
    r = patchq("--dir", str(pkg), "init")
    assert r.code == 0, r.err
    assert (pkg / "series").read_text().split() == list(order)
    assert f'recipe = "{recipe}"' in (pkg / "patchq.toml").read_text()
    assert patchq("--dir", str(pkg), "lint").code == 0


def test_a_killed_rename_recovers_the_recipe_with_the_series(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    """The recipe is written in the series' own transaction: a kill after one file is
    written leaves both to `recover --abort` (back, byte for byte) or `--continue`."""
    recipe = "hello.spec"
    setup(upstream, queue, recipe)
    assert patchq("push", "-a").code == 0
    files = ("series", recipe)
    before = [(queue.path / f).read_bytes() for f in files]
    env = {**os.environ, "PATCHQ_CRASH_AT": "journal:file-written"}
    argv = [sys.executable, "-m", "patchq", "--dir", str(queue.path)]
    rename = [*argv, "rename", "0002-greeting.patch", "0002-hello.patch"]
    assert subprocess.run(rename, env=env, capture_output=True).returncode == -9
    assert patchq("recover", "--abort").code == 0
    assert [(queue.path / f).read_bytes() for f in files] == before
    assert subprocess.run(rename, env=env, capture_output=True).returncode == -9
    assert patchq("recover", "--continue").code == 0
    assert listed(queue, recipe) == (NAMES[0], "0002-hello.patch", NAMES[2])
    assert "0002-hello.patch" in queue.series()


@pytest.mark.parametrize("recipe", RECIPES)
def test_sink_and_float_reorder_the_recipe(
    upstream: Upstream, queue: Queue, patchq: Runner, recipe: str
) -> None:
    setup(upstream, queue, recipe)
    assert patchq("push", "-a").code == 0
    assert patchq("sink", "0003-locale.patch").code == 0
    assert listed(queue, recipe) == (NAMES[2], NAMES[0], NAMES[1])
    assert patchq("float", "0001-fix-build.patch").code == 0
    assert listed(queue, recipe) == (NAMES[2], NAMES[1], NAMES[0])
    only_the_list_changed(queue, recipe)


def test_debians_series_is_the_recipe_and_in_step_by_itself(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    setup(upstream, queue, "meta.yaml")
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nrecipe = "series"\n')
    assert patchq("rename", "0002-greeting.patch", "0002-hello.patch").code == 0
    assert "0002-hello.patch" in queue.series()
    assert patchq("lint").code == 0


def test_a_recipe_beside_patches_names_them_with_the_folder(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    setup(upstream, queue, "meta.yaml")
    path = queue.path / "meta.yaml"
    path.write_text(path.read_text().replace("    - 0", "    - patches/0"))
    assert listed(queue, "meta.yaml") == NAMES
    assert patchq("new", "0004-new.patch").code == 0
    assert "    - patches/0004-new.patch\n" in path.read_text()
    assert listed(queue, "meta.yaml") == active(queue)
    assert "meta.yaml" not in patchq("lint").out


def test_a_recipe_outside_the_patch_repo_is_refused(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    setup(upstream, queue, "meta.yaml")
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nrecipe = "../meta.yaml"\n')
    r = patchq("rename", "0002-greeting.patch", "0002-hello.patch")
    assert r.code == 4 and "recipe" in r.err, r.err
    assert "0002-greeting.patch" in queue.series()


def test_undo_keeps_an_edit_of_the_recipe_made_since(
    upstream: Upstream, queue: Queue, patchq: Runner
) -> None:
    setup(upstream, queue, "meta.yaml")
    assert patchq("rename", "0002-greeting.patch", "0002-hello.patch").code == 0
    path = queue.path / "meta.yaml"
    path.write_text(path.read_text() + "# edited by hand\n")
    r = patchq("undo")
    assert r.code == 5, r.err
    assert path.read_text().endswith("# edited by hand\n")
