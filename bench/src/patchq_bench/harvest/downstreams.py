"""What each downstream carries: its packages, their upstream (by rule), and the patch series
its build applies, read the way the build reads it (one adapter per downstream); and the
parity manifest built from them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchq_bench.harvest.mirrors import DOWNSTREAMS, Blobs, git, ls_tree, mirror_gitdir, tags_of


# ------------------------------------------------------------------------- the harvest
@dataclass
class Package:
    downstream: str
    package: str
    patch_dir: str
    patches: list[tuple[str, int]]  # (path in the downstream tree, strip level)
    version: str | None
    upstream_repo: str | None = None
    tag_hints: list[str] = field(default_factory=list)
    subst: str | None = None
    base_exclude: str | None = None  # a folder of the upstream tree left out (Debian: debian/)
    skip: str | None = None
    case_suffix: str | None = None  # several cases of one package (Spack: one per version)


GITHUB = re.compile(
    r"github\.com[/:]([A-Za-z0-9][A-Za-z0-9_.-]*)/([A-Za-z0-9_.-]+?)(?:\.git)?(?:[/#?]|$)"
)


def github_of(url: str) -> tuple[str | None, str | None]:
    """(owner/name, tag named in the URL or None) of a GitHub URL."""
    m = GITHUB.search(url)
    if not m:
        return None, None
    repo = f"{m.group(1)}/{m.group(2)}"
    rest = url[m.end() - 1 :] if url[m.end() - 1 : m.end()] in "/#?" else ""
    tag = None
    for pat in (
        r"/archive/refs/tags/(.+?)(?:\.tar\.\w+|\.zip|\.tgz)$",
        r"/archive/(.+?)(?:\.tar\.\w+|\.zip|\.tgz)$",
        r"/releases/download/([^/]+)/",
        r"#tag=(.+)$",
        r"#commit=([0-9a-f]{7,40})",
        r"/tarball/(.+)$",
    ):
        t = re.search(pat, rest)
        if t:
            tag = t.group(1)
            break
    return repo, tag


def tag_candidates(version: str, names: Iterable[str]) -> list[str]:
    v = version
    under = v.replace(".", "_")
    dash = v.replace(".", "-")
    out = [v, "v" + v, "V" + v, "release-" + v, "rel-" + v, "version-" + v, "v" + under, "r" + v]
    for n in names:
        if not n:
            continue
        for nn in dict.fromkeys([n, n.lower(), n.upper()]):
            out += [
                f"{nn}-{v}",
                f"{nn}_{v}",
                f"{nn}-v{v}",
                f"{nn}{v}",
                f"{nn}_{under}",
                f"{nn}-{under}",
                f"{nn}-{dash}",
                f"{nn}{under}",
                f"{nn}-release-{v}",
                f"{nn}-{v}-release",
            ]
    out += [under, dash, "release_" + under, "RELEASE_" + under, v + "-release"]
    return list(dict.fromkeys(out))


def resolve_upstream(
    mirrors: Path, pkg: Package, ds_gitdir: Path, ds_commit: str
) -> tuple[str | None, str | None, str | None]:
    """(upstream commit, tag, skip reason)."""
    if pkg.upstream_repo is None:
        return None, None, "upstream not on GitHub"
    if pkg.upstream_repo == "=":  # Debian: the packaging repo holds the source itself
        return ds_commit, "", None
    gd = mirror_gitdir(mirrors, pkg.upstream_repo)
    if gd is None:
        return None, None, "upstream mirror not fetched"
    tags = tags_of(gd)
    lower = {t.lower(): t for t in tags}
    repo_name = pkg.upstream_repo.split("/")[1]
    cands = [h for h in pkg.tag_hints if h]
    if pkg.version:
        cands += tag_candidates(pkg.version, [pkg.package, repo_name])
    for c in cands:
        if c in tags:
            return tags[c], c, None
        if c.lower() in lower:
            t = lower[c.lower()]
            return tags[t], t, None
    for c in [*pkg.tag_hints, pkg.version or ""]:
        if re.fullmatch(r"[0-9a-f]{7,40}", c or ""):
            r = git(gd, "rev-parse", "--verify", "-q", c + "^{commit}", check=False).strip()
            if r:
                return r.decode(), c, None
    if not pkg.version:
        return None, None, "no version"
    return None, None, "no tag matches the version"


# --- small expanders for the build files' variables --------------------------------------
def make_expand(text: str, env: dict[str, str], depth: int = 0) -> str:
    """Expand $(VAR) and a few make functions (call github/qstrip, subst, patsubst-free)."""
    if depth > 8 or "$" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text.startswith("$(", i):
            j, lvl = i + 2, 1
            while j < len(text) and lvl:
                lvl += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            inner = make_expand(text[i + 2 : j - 1], env, depth + 1)
            if inner.startswith("call github,"):
                a = inner[len("call github,") :].split(",")
                out.append("https://github.com/{}/{}/tarball/{}".format(*(a + ["", "", ""])[:3]))
            elif inner.startswith("call gitlab,"):
                out.append("https://gitlab.com/unsupported")
            elif inner.startswith("call qstrip,"):
                out.append(inner[len("call qstrip,") :].strip().strip('"'))
            elif inner.startswith("subst "):
                a = inner[6:].split(",", 2)
                out.append(a[2].replace(a[0], a[1]) if len(a) == 3 else "")
            elif inner.startswith(("firstword ", "strip ")):
                w = inner.split(None, 1)[1].split() if " " in inner else []
                out.append(w[0] if w and inner.startswith("firstword") else " ".join(w))
            else:
                out.append(make_expand(env.get(inner, ""), env, depth + 1))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def make_vars(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in re.sub(r"\\\n", " ", text).splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*(\+?[:?]?=)\s*(.*?)\s*$", line)
        if m and not line.lstrip().startswith("#"):
            name, op, value = m.groups()
            if op == "+=":
                env[name] = (env.get(name, "") + " " + value).strip()
            elif op == "?=":
                env.setdefault(name, value)
            else:
                env[name] = value
    return env


SH_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _glob_re(pat: str, longest: bool) -> str:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pat)
    return body if longest else body.replace(".*", ".*?")


def sh_expand(text: str, env: dict[str, str], depth: int = 0) -> str:
    """Expand $VAR, ${VAR}, ${VAR//a/b}, ${VAR/a/b}, ${VAR%x}, ${VAR%%x}, ${VAR#x},
    ${VAR##x}, ${VAR:o:n}, ${VAR,,}, ${VAR^^} as bash would (enough for build files)."""
    if depth > 6:
        return text

    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        op = m.group(2) or ""
        val = sh_expand(env.get(name, ""), env, depth + 1)
        if not op:
            return val
        if op.startswith("//") or op.startswith("/"):
            glob = op.startswith("//")
            a, _, b = op[2 if glob else 1 :].partition("/")
            a, b = sh_expand(a, env, depth + 1), sh_expand(b, env, depth + 1)
            return val.replace(a, b) if glob else val.replace(a, b, 1)
        if op.startswith("%%") or op.startswith("%"):
            longest = op.startswith("%%")
            pat = _glob_re(sh_expand(op[2 if longest else 1 :], env, depth + 1), longest)
            mm = re.match(r"(.*?)(" + pat + r")$" if longest else r"(.*)(" + pat + r")$", val, re.S)
            return mm.group(1) if mm else val
        if op.startswith("##") or op.startswith("#"):
            longest = op.startswith("##")
            pat = _glob_re(sh_expand(op[2 if longest else 1 :], env, depth + 1), longest)
            mm = re.match(r"(" + pat + r")", val, re.S)
            return val[mm.end() :] if mm else val
        if op == ",,":
            return val.lower()
        if op == "^^":
            return val.upper()
        if op.startswith(":") and re.fullmatch(r":\d+(:\d+)?", op):
            parts = [int(x) for x in op[1:].split(":")]
            return val[parts[0] : parts[0] + parts[1]] if len(parts) == 2 else val[parts[0] :]
        if op.startswith(":-") or op.startswith("-"):
            return val or sh_expand(op.split("-", 1)[1], env, depth + 1)
        return val

    return SH_VAR.sub(one, text)


def sh_vars(text: str) -> dict[str, str]:
    """Top-level assignments VAR=value / VAR="value" / VAR=(a b) (first element)."""
    env: dict[str, str] = {}
    for m in re.finditer(
        r"^(?:export\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\([^()]*\)|\"[^\"]*\"|'[^']*'|[^\s;#]*)",
        text,
        re.M,
    ):
        name, value = m.group(1), m.group(2)
        if value.startswith("("):
            items = re.findall(r"\"[^\"]*\"|'[^']*'|[^\s()]+", value[1:-1])
            items = [x for x in items if not x.startswith("#")]
            value = items[0] if items else ""
        if value[:1] in "\"'":
            value = value[1:-1]
        env.setdefault(name, value)
    return env


def clean_version(v: str) -> str:
    v = v.strip().strip("\"'")
    v = re.sub(r"^\d+:", "", v)  # an epoch
    return v


# --- one adapter per downstream -----------------------------------------------------------
PATCH_NAME = re.compile(r"\.(patch|diff)$")


def harvest_buildroot(
    files: dict[str, tuple[str, str]], blobs: Blobs, commit: str
) -> Iterator[Package]:
    by_pkg: dict[str, list[str]] = {}
    for p in files:
        parts = p.split("/")
        if parts[0] == "package" and p.endswith(".patch") and len(parts) in (3, 4):
            by_pkg.setdefault(parts[1], []).append(p)
    for name, paths in sorted(by_pkg.items()):
        mk = f"package/{name}/{name}.mk"
        text = blobs.text(f"{commit}:{mk}") if mk in files else None
        if text is None:
            yield Package("buildroot", name, f"package/{name}", [], None, skip="no .mk file")
            continue
        env = make_vars(text)
        var = name.upper().replace("-", "_").replace(".", "_")
        version = clean_version(make_expand(env.get(var + "_VERSION", ""), env))
        site = make_expand(env.get(var + "_SITE", ""), env)
        top = sorted(p for p in paths if p.count("/") == 2)
        sub = sorted(p for p in paths if p.count("/") == 3 and p.split("/")[2] == version)
        pkg = Package(
            "buildroot", name, f"package/{name}", [(p, 1) for p in top + sub], version or None
        )
        repo, tag = github_of(site)
        pkg.upstream_repo = repo
        pkg.tag_hints = [tag] if tag else []
        if not pkg.patches:
            pkg.skip = "patches only for other versions"
        yield pkg


def harvest_termux(
    files: dict[str, tuple[str, str]], blobs: Blobs, commit: str
) -> Iterator[Package]:
    by_pkg: dict[str, list[str]] = {}
    for p in files:
        parts = p.split("/")
        if (
            len(parts) == 3
            and parts[0] in ("packages", "x11-packages", "root-packages")
            and (parts[2].endswith(".patch") or parts[2].endswith(".patch64"))
        ):
            by_pkg.setdefault(f"{parts[0]}/{parts[1]}", []).append(p)
    for d, paths in sorted(by_pkg.items()):
        name = d.split("/")[1]
        text = blobs.text(f"{commit}:{d}/build.sh") if f"{d}/build.sh" in files else None
        if text is None:
            yield Package("termux", name, d, [], None, skip="no build.sh")
            continue
        env = sh_vars(text)
        version = clean_version(sh_expand(env.get("TERMUX_PKG_VERSION", ""), env))
        env["TERMUX_PKG_VERSION"] = version
        url = sh_expand(env.get("TERMUX_PKG_SRCURL", ""), env)
        pkg = Package(
            "termux", name, d, [(p, 1) for p in sorted(paths)], version or None, subst="termux"
        )
        repo, tag = github_of(url)
        if env.get("TERMUX_PKG_GIT_BRANCH"):
            tag = sh_expand(env["TERMUX_PKG_GIT_BRANCH"], env)
        pkg.upstream_repo = repo
        pkg.tag_hints = [tag] if tag else []
        yield pkg


def _pkgbuild_function(text: str, name: str) -> str:
    m = re.search(r"^\s*" + name + r"\s*\(\)\s*\{", text, re.M)
    if not m:
        return ""
    i, lvl = m.end(), 1
    while i < len(text) and lvl:
        lvl += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end() : i - 1]


def msys2_series(text: str, patch_names: set[str]) -> list[tuple[str, int]]:
    """The patches prepare() applies, in its order, with each command's -pN."""
    body = _pkgbuild_function(text, "prepare")
    helper = _pkgbuild_function(text, "apply_patch_with_msg")
    helper_strip = 1
    hm = re.search(r"patch\s+[^\n]*?-\w*p\s*(\d)", helper)
    if hm:
        helper_strip = int(hm.group(1))
    stmts = re.sub(r"\\\n", " ", body).splitlines()
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    names_re = re.compile(r"[A-Za-z0-9_.+@%{}$-]+\.(?:patch|diff)")
    for st in stmts:
        s = st.split("#", 1)[0] if not st.lstrip().startswith("#") else ""
        if not s:
            continue
        found = []
        for tok in names_re.findall(s):
            base = tok.rsplit("/", 1)[-1]
            if base in patch_names:
                found.append(base)
            elif "{" in base:  # brace lists: 0001-{a,b}.patch are rare; take exact names only
                continue
        if not found:
            continue
        sm = re.search(r"(?:^|\s)-\w*p\s*(\d)", s)
        strip = int(sm.group(1)) if sm else (helper_strip if "apply_patch_with_msg" in s else 1)
        if "git apply" in s or "git am" in s:
            strip = int(sm.group(1)) if sm else 1
        for n in found:
            if n not in seen:
                seen.add(n)
                out.append((n, strip))
    return out


def harvest_msys2(
    files: dict[str, tuple[str, str]], blobs: Blobs, commit: str, key: str
) -> Iterator[Package]:
    by_pkg: dict[str, list[str]] = {}
    for p in files:
        parts = p.split("/")
        if len(parts) == 2 and PATCH_NAME.search(parts[1]):
            by_pkg.setdefault(parts[0], []).append(parts[1])
    for d, names in sorted(by_pkg.items()):
        text = blobs.text(f"{commit}:{d}/PKGBUILD") if f"{d}/PKGBUILD" in files else None
        if text is None:
            yield Package(key, d, d, [], None, skip="no PKGBUILD")
            continue
        env = sh_vars(text)
        env.setdefault("MINGW_PACKAGE_PREFIX", "mingw-w64-x86_64")
        version = clean_version(sh_expand(env.get("pkgver", ""), env))
        env["pkgver"] = version
        series = msys2_series(text, set(names))
        pkg = Package(key, d, d, [(f"{d}/{n}", s) for n, s in series], version or None)
        srcm = re.search(r"^source=\(([^()]*)\)", text, re.M)
        urls = re.findall(r"[\"']?([^\s\"'()]+://[^\s\"'()]+)", srcm.group(1)) if srcm else []
        repo = tag = None
        for u in urls:
            r, t = github_of(sh_expand(u.split("::", 1)[-1], env))
            if r:
                repo, tag = r, t
                break
        if repo is None and env.get("msys2_repository_url"):
            repo, tag = github_of(sh_expand(env["msys2_repository_url"], env) + "/")
        pkg.upstream_repo = repo
        pkg.tag_hints = [tag] if tag else []
        name = env.get("_realname") or d
        pkg.tag_hints.append(f"{name}-{version}")
        if not series:
            pkg.skip = "prepare() applies none of its patch files"
        yield pkg


def harvest_libreelec(
    files: dict[str, tuple[str, str]], blobs: Blobs, commit: str
) -> Iterator[Package]:
    pkgdirs = {
        p.rsplit("/", 1)[0]
        for p in files
        if p.startswith("packages/") and p.endswith("/package.mk")
    }
    by_pkg: dict[str, list[str]] = {}
    for p in files:
        if not (p.startswith("packages/") and p.endswith(".patch")):
            continue
        head, _, rest = p.partition("/patches/")
        if head in pkgdirs and rest:
            by_pkg.setdefault(head, []).append(p)
    for d, paths in sorted(by_pkg.items()):
        name = d.rsplit("/", 1)[1]
        text = blobs.text(f"{commit}:{d}/package.mk") or ""
        env = sh_vars(text)
        version = clean_version(sh_expand(env.get("PKG_VERSION", ""), env))
        env["PKG_VERSION"] = version
        env["PKG_NAME"] = name
        url = sh_expand(env.get("PKG_URL", ""), env)
        top = sorted(p for p in paths if p.count("/") == d.count("/") + 2)
        sub = sorted(
            p
            for p in paths
            if p.startswith(f"{d}/patches/{version}/") and p.count("/") == d.count("/") + 3
        )
        pkg = Package("libreelec", name, d, [(p, 1) for p in top + sub], version or None)
        repo, tag = github_of(url)
        pkg.upstream_repo = repo
        pkg.tag_hints = [tag] if tag else []
        if not pkg.patches:
            pkg.skip = "patches only for other versions or arches"
        yield pkg


SPACK_PATCH = re.compile(
    r"^\s*patch\(\s*([\"'])([^\"']+)\1([^\n]*(?:\n(?!\s*(?:"
    r"patch|version|depends_on|variant|conflicts|def |@|resource)\b)[^\n]*)*)",
    re.M,
)


def _vkey(v: str) -> list[Any]:
    return [int(x) if x.isdigit() else x for x in re.split(r"[.\-_]", v)]


def _vle(a: str, b: str) -> bool:
    """a <= b, where b also admits every version it is a prefix of (Spack: @:1.2 takes 1.2.9)."""
    ka, kb = _vkey(a), _vkey(b)
    if ka[: len(kb)] == kb:
        return True
    try:
        return ka <= kb
    except TypeError:
        return str(ka) <= str(kb)


def _vge(a: str, b: str) -> bool:
    ka, kb = _vkey(a), _vkey(b)
    try:
        return ka >= kb
    except TypeError:
        return str(ka) >= str(kb)


def spack_when_matches(when: str | None, version: str) -> bool | None:
    """Does a `when=` spec hold for VERSION alone? None when it says more than a version
    (a compiler, variant, platform, dependency: not decided by the version)."""
    if not when:
        return True
    w = when.strip()
    if not re.fullmatch(r"@[A-Za-z0-9.:,_-]+", w):
        return None
    for rng in w[1:].split(","):
        if ":" in rng:
            lo, _, hi = rng.partition(":")
            if (not lo or _vge(version, lo)) and (not hi or _vle(version, hi)):
                return True
        elif _vkey(version)[: len(_vkey(rng))] == _vkey(rng):
            return True
    return False


@dataclass
class SpackRecipe:
    """What harvest reads of one Spack package.py: its versions (newest first as listed,
    deprecated and branch versions left out), its patch(...) calls on files of its folder
    (path, level, when) in package.py order, and the GitHub URL of its source."""

    name: str
    versions: list[str]
    patches: list[tuple[str, int, str | None]]
    url: str

    def series(self, version: str) -> list[tuple[str, int]]:
        """The patches whose `when=` is a version range that holds for VERSION, in order."""
        return [
            (p, lvl) for p, lvl, when in self.patches if spack_when_matches(when, version) is True
        ]


def spack_recipe(d: str, text: str, names: set[str]) -> SpackRecipe:
    name = d.rsplit("/", 1)[1].lstrip("_")
    versions = [
        m.group(1)
        for m in re.finditer(r"^\s*version\(\s*[\"']([^\"']+)[\"']([^\n]*)", text, re.M)
        if not re.search(r"deprecated\s*=\s*True|branch\s*=", m.group(2))
        and m.group(1) not in ("develop", "master", "main")
    ]
    patches: list[tuple[str, int, str | None]] = []
    for m in SPACK_PATCH.finditer(text):
        fname, rest = m.group(2), m.group(3)
        if fname not in names or "working_dir" in rest:
            continue
        wm = re.search(r"when\s*=\s*([\"'])([^\"']*)\1", rest)
        lm = re.search(r"level\s*=\s*(\d)", rest)
        patches.append((f"{d}/{fname}", int(lm.group(1)) if lm else 1, wm.group(2) if wm else None))
    url = ""
    for key in ("git", "url", "homepage"):
        um = re.search(r"^\s*" + key + r"\s*=\s*[\"']([^\"']+)[\"']", text, re.M)
        if um and github_of(um.group(1))[0]:
            url = um.group(1)
            break
    return SpackRecipe(name, versions, patches, url)


SPACK_PACKAGES = ["repos", "spack_repo", "builtin", "packages"]


def spack_patch_files(files: Iterable[str]) -> dict[str, set[str]]:
    """package folder -> the patch file names directly in it."""
    by_pkg: dict[str, set[str]] = {}
    for p in files:
        parts = p.split("/")
        if len(parts) == 6 and parts[:4] == SPACK_PACKAGES and PATCH_NAME.search(parts[5]):
            by_pkg.setdefault("/".join(parts[:5]), set()).add(parts[5])
    return by_pkg


def harvest_spack(
    files: dict[str, tuple[str, str]], blobs: Blobs, commit: str
) -> Iterator[Package]:
    for d, names in sorted(spack_patch_files(files).items()):
        rec = spack_recipe(d, blobs.text(f"{commit}:{d}/package.py") or "", names)
        name = rec.name
        # one case per distinct patch set, at the newest listed version that gets it
        seen_sets: set[tuple[str, ...]] = set()
        for version in rec.versions:
            series = rec.series(version)
            key_ = tuple(p for p, _ in series)
            if not series or key_ in seen_sets:
                continue
            seen_sets.add(key_)
            pkg = Package("spack", f"{name}@{version}", d, series, version)
            pkg.upstream_repo = github_of(rec.url)[0] if rec.url else None
            pkg.tag_hints = []
            pkg.package = name
            pkg.case_suffix = version
            yield pkg
        if not seen_sets:
            yield Package("spack", name, d, [], None, skip="no patch applies by version alone")


def debian_series(text: str | None) -> list[tuple[str, int]] | None:
    """debian/patches/series: (name, strip) a line, `-pN` read (default 1); None if absent."""
    if text is None:
        return None
    out: list[tuple[str, int]] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not line:
            continue
        parts = line.split()
        strip = 1
        for opt in parts[1:]:
            m = re.fullmatch(r"-p(\d+)", opt)
            if m:
                strip = int(m.group(1))
        out.append((parts[0], strip))
    return out


def harvest_debian(
    files: dict[str, tuple[str, str]], blobs: Blobs, commit: str, repo: str
) -> Iterator[Package]:
    name = repo.split("/")[1]
    listed = debian_series(blobs.text(f"{commit}:debian/patches/series"))
    if listed is None:
        return
    series = [(f"debian/patches/{n}", strip) for n, strip in listed]
    changelog = blobs.text(f"{commit}:debian/changelog") or ""
    m = re.match(r"\S+ \(([^)]+)\)", changelog)
    version = clean_version(m.group(1)) if m else None
    pkg = Package("debian", name, "debian/patches", series, version)
    pkg.upstream_repo = "="
    pkg.base_exclude = "debian"
    missing = [p for p, _ in series if p not in files]
    if missing:
        pkg.skip = "series names a patch file that is not there"
    elif not series:
        pkg.skip = "empty series"
    elif len([p for p in files if not p.startswith("debian/")]) == 0:
        pkg.skip = "packaging only (no upstream source in the tree)"
    yield pkg


def harvest_downstream(
    mirrors: Path, key: str, repo: str, commit: str
) -> tuple[list[Package], str, dict[str, tuple[str, str]]]:
    gd = mirror_gitdir(mirrors, repo)
    if gd is None:
        raise FileNotFoundError(repo)
    full = git(gd, "rev-parse", "--verify", commit + "^{commit}").decode().strip()
    files = ls_tree(gd, full)
    blobs = Blobs(gd)
    try:
        if key == "buildroot":
            pkgs = list(harvest_buildroot(files, blobs, full))
        elif key == "termux":
            pkgs = list(harvest_termux(files, blobs, full))
        elif key in ("msys2-mingw", "msys2-msys"):
            pkgs = list(harvest_msys2(files, blobs, full, key))
        elif key == "libreelec":
            pkgs = list(harvest_libreelec(files, blobs, full))
        elif key == "spack":
            pkgs = list(harvest_spack(files, blobs, full))
        elif key == "debian":
            pkgs = list(harvest_debian(files, blobs, full, repo))
        else:
            raise ValueError(key)
    finally:
        blobs.close()
    return pkgs, full, files


def case_name(prefix: str, pkg: Package) -> str:
    suffix = f"-{pkg.case_suffix}" if pkg.case_suffix else ""
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{prefix}-{pkg.package}{suffix}")


def snapshot_commits(gd: Path, dates: list[str]) -> list[tuple[str, str]]:
    """(label, commit): HEAD, then the last commit before each DATE (oldest history first)."""
    out = [("", "HEAD")]
    for d in dates:
        c = git(gd, "rev-list", "-1", f"--before={d}", "HEAD").decode().strip()
        if c:
            out.append((d[:7], c))
    return out


def build_manifest(
    mirrors: Path, debian_repos: list[str], only: list[str] | None, dates: list[str]
) -> dict[str, Any]:
    cases: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    skipped_patches: Counter[str] = Counter()
    missing_upstreams: Counter[str] = Counter()
    seen: set[str] = set()
    sources = [(k, r, p, dist) for k, (r, p, dist) in DOWNSTREAMS.items()]
    sources += [("debian", r, "deb", "Debian (GitHub)") for r in debian_repos]
    for key, repo, prefix, dist in sources:
        if only and key not in only:
            continue
        gd = mirror_gitdir(mirrors, repo)
        if gd is None:
            skipped[f"{dist}: downstream mirror not fetched"] += 1
            continue
        for label, at in snapshot_commits(gd, [] if key == "debian" else dates):
            try:
                pkgs, commit, files = harvest_downstream(mirrors, key, repo, at)
            except RuntimeError as e:
                skipped[f"{dist}: unreadable mirror ({str(e)[:60]})"] += 1
                continue
            for pkg in pkgs:
                reason = pkg.skip
                up_commit = tag = None
                if reason is None:
                    up_commit, tag, reason = resolve_upstream(mirrors, pkg, gd, commit)
                if reason is not None:
                    skipped[reason] += 1
                    skipped_patches[reason] += len(pkg.patches)
                    if reason == "upstream mirror not fetched" and pkg.upstream_repo:
                        missing_upstreams[pkg.upstream_repo] += len(pkg.patches)
                    continue
                ident = json.dumps([key, [(files[p][1], s) for p, s in pkg.patches], up_commit])
                if (
                    ident in seen
                ):  # the same series on the same upstream commit, seen at a later snapshot
                    skipped["same series as a later snapshot"] += 1
                    continue
                seen.add(ident)
                name = case_name(prefix, pkg) + (f"@{label}" if label else "")
                cases.append(
                    {
                        "name": name,
                        "downstream": key,
                        "distribution": dist,
                        "downstream_repo": repo,
                        "downstream_commit": commit,
                        "package": pkg.package,
                        "patch_dir": pkg.patch_dir,
                        "patches": [
                            {"path": p, "strip": s, "blob": files[p][1]} for p, s in pkg.patches
                        ],
                        "substitute": pkg.subst,
                        "version": pkg.version,
                        "upstream_repo": repo if pkg.upstream_repo == "=" else pkg.upstream_repo,
                        "upstream_commit": up_commit,
                        "upstream_tag": tag,
                        "base_exclude": pkg.base_exclude,
                    }
                )
    names = Counter(c["name"] for c in cases)
    for c in cases:  # the same package name in two places of one downstream
        if names[c["name"]] > 1:
            c["name"] += "-" + hashlib.sha256(c["patch_dir"].encode()).hexdigest()[:6]
    return {
        "format": 1,
        "about": "Patch series harvested by patchq-bench harvest: names and commit ids only.",
        "cases": cases,
        "skipped_packages": dict(sorted(skipped.items())),
        "skipped_patches": dict(sorted(skipped_patches.items())),
        "missing_upstreams": dict(missing_upstreams.most_common()),
    }
