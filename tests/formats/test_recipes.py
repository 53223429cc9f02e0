"""formats.recipes on bytes: each recipe format's list read and rewritten in its own
formatting, and every construct that cannot be rewritten safely named at its line. The
recipes (tests/data/recipes/) were written by hand from each format's documentation:
rpm's spec file reference, the BitBake user manual, vcpkg's and conda-build's docs,
PKGBUILD(5); each holds a conditional, a variable and a comment."""

from __future__ import annotations

import re

import pytest

from patchq.core.errors import BadInputError
from patchq.formats import recipes
from patchq.formats.recipes import Change
from tests.conftest import DATA

RECIPES = ("hello.spec", "hello_1.0.bb", "portfile.cmake", "meta.yaml", "PKGBUILD")
NAMES = ("0001-fix-build.patch", "0002-greeting.patch", "0003-locale.patch")
LISTED = re.compile(r"\.patch|%patch|SKIP|[0-9a-f]{64}")


def text_of(recipe: str) -> str:
    return (DATA / "recipes" / recipe).read_text()


def rest(text: str) -> list[str]:
    return [x for x in text.splitlines() if not LISTED.search(x)]


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_recipe_reads_and_round_trips(recipe: str) -> None:
    text = text_of(recipe)
    found = recipes.read(recipe, text)
    assert found.names == NAMES and not found.problems
    assert recipes.rewrite(recipe, text, Change(NAMES, {})) == text
    assert recipes.disagreements(found, NAMES) == []


LISTS = [
    (NAMES[1:], {}),
    ((NAMES[2], NAMES[0], NAMES[1]), {}),
    ((NAMES[0], "0002-hi.patch", NAMES[2]), {NAMES[1]: "0002-hi.patch"}),
    ((*NAMES, "0004-new.patch", "0005-more.patch"), {}),
    (("0009-only.patch",), {}),
    ((), {}),
]


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("names,renames", LISTS)
def test_each_recipe_rewrites_to_any_list(
    recipe: str, names: tuple[str, ...], renames: dict[str, str]
) -> None:
    text = text_of(recipe)
    out = recipes.rewrite(recipe, text, Change(names, renames, read=lambda _n: b"x\n"))
    assert recipes.read(recipe, out).names == names
    if names or recipe != "PKGBUILD":  # emptied, an array's `)` joins its first line
        assert rest(out) == rest(text)
    if names:  # and back again (an emptied list has no entry left to spell new ones after)
        assert recipes.read(recipe, recipes.rewrite(recipe, out, Change(NAMES, {}))).names == NAMES


def test_a_rename_keeps_its_entrys_own_spelling() -> None:
    change = Change(NAMES[:1] + ("0002-hi.patch",) + NAMES[2:], {NAMES[1]: "0002-hi.patch"})
    bb = recipes.rewrite("hello_1.0.bb", text_of("hello_1.0.bb"), change)
    assert "file://0002-hi.patch;striplevel=1 \\\n" in bb
    cmake = recipes.rewrite("portfile.cmake", text_of("portfile.cmake"), change)
    assert "        0002-hi.patch # keeps the old greeting\n" in cmake
    spec = recipes.rewrite("hello.spec", text_of("hello.spec"), change)
    assert "Patch1:         0002-hi.patch\n" in spec and "%patch -P 1 -p1\n" in spec


def test_a_new_entry_takes_the_last_ones_layout_not_its_comment_or_parameters() -> None:
    change = Change((*NAMES, "0004-new.patch"), {})
    bb = recipes.rewrite("hello_1.0.bb", text_of("hello_1.0.bb"), change)
    assert "           file://0003-locale.patch \\\n           file://0004-new.patch \\\n" in bb
    yaml = recipes.rewrite("meta.yaml", text_of("meta.yaml"), change)
    assert "    - 0003-locale.patch\n    - 0004-new.patch\n" in yaml
    spec = recipes.rewrite("hello.spec", text_of("hello.spec"), change)
    assert "Patch3:         0004-new.patch\n" in spec
    assert "%patch -P 2 -p1\n%patch -P 3 -p1\n" in spec
    pkg = recipes.rewrite(
        "PKGBUILD", text_of("PKGBUILD"), Change(change.names, {}, read=lambda _n: b"x\n")
    )
    assert "'0003-locale.patch'\n        '0004-new.patch')" in pkg
    assert "'SKIP'\n            '" in pkg and '"$srcdir/0004-new.patch"' in pkg


AUTOSETUP = """\
Name: hello
Version: 1.0
# numbered in the order they apply
Patch0: a.patch
Patch1: b.patch
Patch: c.patch

%prep
%autosetup -p1
"""


def test_an_autosetup_spec_applies_in_number_order_and_is_renumbered() -> None:
    found = recipes.read("x.spec", AUTOSETUP)
    assert found.names == ("a.patch", "b.patch", "c.patch")
    out = recipes.rewrite("x.spec", AUTOSETUP, Change(("c.patch", "a.patch", "d.patch"), {}))
    assert "Patch0: c.patch\nPatch: a.patch\nPatch3: d.patch\n" in out
    assert recipes.read("x.spec", out).names == ("c.patch", "a.patch", "d.patch")


def test_old_style_patch_macros_are_read() -> None:
    spec = "Patch0: a.patch\nPatch1: b.patch\n%prep\n%setup -q\n%patch1 -p1\n%patch0 -p1\n"
    assert recipes.read("x.spec", spec).names == ("b.patch", "a.patch")
    out = recipes.rewrite("x.spec", spec, Change(("a.patch", "b.patch"), {}))
    assert out.endswith("%patch0 -p1\n%patch1 -p1\n")


def test_bitbake_appends_come_last_and_apply_no_is_no_patch() -> None:
    bb = (
        'SRC_URI:append = " file://late.patch"\n'
        'SRC_URI = "file://a.patch file://notes.patch;apply=no file://b.diff"\n'
        'SRC_URI += "file://c.patch"\n'
    )
    assert recipes.read("x.bb", bb).names == ("a.patch", "b.diff", "c.patch", "late.patch")


UNSAFE = [
    (
        "hello.spec",
        "Patch2:         0003-locale.patch\n",
        "%ifarch x86_64\nPatch2:         0003-locale.patch\n%endif\n",
        "%if",
    ),
    (
        "hello.spec",
        "Patch2:         0003-locale.patch\n",
        "Patch2:         %{name}-locale.patch\n",
        "macro",
    ),
    (
        "hello_1.0.bb",
        "SRC_URI[sha256sum]",
        'SRC_URI:append:qemuarm = " file://arm.patch"\nSRC_URI[sha256sum]',
        "override",
    ),
    (
        "hello_1.0.bb",
        "SRC_URI[sha256sum]",
        'SRC_URI_append_foo = " file://foo.patch"\nSRC_URI[sha256sum]',
        "override",
    ),
    (
        "hello_1.0.bb",
        "           file://hello.conf \\\n",
        "  ${@bb.utils.contains('DISTRO_FEATURES', 'x11', 'file://x11.patch', '', d)} \\\n",
        "inline Python",
    ),
    ("hello_1.0.bb", "file://0003-locale.patch", "file://${PN}-locale.patch", "variable"),
    ("portfile.cmake", "        0003-locale.patch\n", "        ${LOCALE_PATCH}\n", "variable"),
    (
        "portfile.cmake",
        "vcpkg_from_github(",
        "if(VCPKG_TARGET_IS_LINUX)\nendif()\nif(1)\nvcpkg_from_github(",
        "if()",
    ),
    ("meta.yaml", "    - 0003-locale.patch\n", "    - 0003-locale.patch  # [win]\n", "selector"),
    (
        "meta.yaml",
        "    - 0003-locale.patch\n",
        "    {% if unix %}\n    - 0003-locale.patch\n    {% endif %}\n",
        "{% if %}",
    ),
    ("meta.yaml", "    - 0003-locale.patch\n", "    - {{ name }}-locale.patch\n", "variable"),
    (
        "PKGBUILD",
        '  patch -p1 < "$srcdir/0003-locale.patch"\n',
        '  for p in "$srcdir"/*.patch; do\n    patch -p1 < "$p"\n  done\n',
        "loop",
    ),
    ("PKGBUILD", "'0003-locale.patch'", '"$pkgname-$pkgver-locale.patch"', "variable"),
    (
        "PKGBUILD",
        '  patch -p1 < "$srcdir/0003-locale.patch"\n',
        '  if [[ $CARCH == x86_64 ]]; then\n    patch -p1 < "$srcdir/0003-locale.patch"\n  fi\n',
        "conditional",
    ),
    ("PKGBUILD", "sha256sums=(", "source_x86_64=('x86.patch')\nsha256sums=(", "conditional"),
]


@pytest.mark.parametrize("recipe,old,new,word", UNSAFE)
def test_what_cannot_be_rewritten_safely_is_refused_at_its_line(
    recipe: str, old: str, new: str, word: str
) -> None:
    text = text_of(recipe)
    assert old in text
    changed = text.replace(old, new, 1)
    found = recipes.read(recipe, changed)
    assert found.problems, found
    problem = found.problems[0]
    assert word in problem.what, problem
    assert changed.splitlines()[problem.line - 1].strip()
    with pytest.raises(BadInputError) as err:
        recipes.rewrite(recipe, changed, Change(NAMES[1:2], {}))
    assert err.value.exit_code == 4
    assert err.value.where == f"{recipe}:{problem.line}"


def test_the_list_is_refused_only_where_it_must_change() -> None:
    text = text_of("meta.yaml").replace(
        "    - 0003-locale.patch\n", "    - 0003-locale.patch  # [win]\n"
    )
    assert recipes.rewrite("meta.yaml", text, Change(NAMES, {})) == text


def test_renames_between_pairs_names_replaced_in_place() -> None:
    assert recipes.renames_between(["a", "b", "c"], ["a", "x", "c"]) == {"b": "x"}
    assert recipes.renames_between(["a", "b"], ["b", "a"]) == {}
    assert recipes.renames_between(["a", "b", "c"], ["a", "c"]) == {}


def test_detect_wants_exactly_one_recipe() -> None:
    assert recipes.detect(["README", "hello.spec", "series"]) == "hello.spec"
    assert recipes.detect(["PKGBUILD", "hello.spec"]) is None
    assert recipes.detect(["series", "README"]) is None


def test_disagreements_name_the_line() -> None:
    found = recipes.read("meta.yaml", text_of("meta.yaml"))
    got = recipes.disagreements(found, [NAMES[1], NAMES[0], NAMES[2], "x.patch"])
    whats = [p.what for p in got]
    assert any("does not apply x.patch" in w for w in whats)
    assert any("order" in w for w in whats)
    assert recipes.disagreements(found, NAMES[:2])[0].line == 14


PATCHLIST = """\
Name: hello
Version: 1.0

%description
Says hello.

%patchlist
# numbered in the order listed
a.patch
b.patch

%prep
%autosetup -p1
"""


def test_an_rpm_patchlist_is_read_and_rewritten_in_place() -> None:
    assert recipes.read("x.spec", PATCHLIST).names == ("a.patch", "b.patch")
    out = recipes.rewrite("x.spec", PATCHLIST, Change(("b.patch", "a.patch", "c.patch"), {}))
    assert "# numbered in the order listed\nb.patch\na.patch\nc.patch\n\n%prep" in out
    assert recipes.read("x.spec", out).names == ("b.patch", "a.patch", "c.patch")


def test_an_autopatch_range_is_not_rewritten() -> None:
    spec = AUTOSETUP.replace("%autosetup -p1", "%autosetup -N\n%autopatch -p1 -M 1")
    found = recipes.read("x.spec", spec)
    assert found.problems and "part of the list" in found.problems[0].what
    with pytest.raises(BadInputError):
        recipes.rewrite("x.spec", spec, Change(("a.patch",), {}))


def test_a_prepare_loop_over_the_sources_is_refused_as_a_loop() -> None:
    loop = (
        '  local src\n  for src in "${source[@]}"; do\n    src="${src%%::*}"\n'
        '    [[ $src = *.patch ]] || continue\n    patch -Np1 < "../$src"\n  done\n'
    )
    text = text_of("PKGBUILD")
    old = '  patch -p1 < "$srcdir/0003-locale.patch"\n'
    found = recipes.read("PKGBUILD", text.replace(old, loop))
    assert any("loop" in p.what for p in found.problems), found
