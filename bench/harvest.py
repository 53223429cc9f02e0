#!/usr/bin/env python3
"""Harvest real patch series from downstream distributions' git history, by rule.

    python3 bench/harvest.py [--mirrors /work/.mirror] manifest [--out MANIFEST] [--at DATE ...]
    python3 bench/harvest.py fetch-list [--manifest ...]        # upstream mirrors still missing
    python3 bench/harvest.py materialize [--manifest ...] [--out /work/corpus/parity] [--jobs 2]
    python3 bench/harvest.py bumps [--out bench/corpus/refresh-cases.toml] [--since 2018-01-01]
        [--only KEY ...] [--debian-list FILE] [--debian-since DATE] [--at DATE ...]

For each downstream mirror (MIRRORS/OWNER+NAME/repo, as the `fetch` tool leaves them) and
one commit of it (default: the mirror's HEAD), every package that carries patch files is
read the way that distribution's own build reads it:

- Buildroot: package/X/*.patch sorted by name, then package/X/$(X_VERSION)/*.patch;
  `patch -p1`; version from X.mk `X_VERSION`, upstream from `X_SITE`
  (`$(call github,OWNER,REPO,TAG)` names the tag itself).
- Termux (packages/, x11-packages/, root-packages/): X/*.patch and X/*.patch64 in sorted
  order, `patch -p1` after the build's `sed` of @TERMUX_PREFIX@-style placeholders (the
  same substitution is applied here); version from build.sh `TERMUX_PKG_VERSION`,
  upstream and tag from `TERMUX_PKG_SRCURL`.
- MSYS2 (MINGW-packages and MSYS2-packages): the patch files named in PKGBUILD's
  `prepare()`, in the order it names them, with the `-pN` of the command naming them
  (`apply_patch_with_msg` is `patch -Np1`); `pkgver`; upstream from `source` or
  `msys2_repository_url`.
- LibreELEC: X/patches/*.patch sorted, then X/patches/$PKG_VERSION/*.patch, `patch -p1`;
  `PKG_VERSION`, `PKG_URL`.
- Debian packaging on GitHub (git-buildpackage layout: upstream source and debian/ in one
  tree): debian/patches/series in order with its `-pN` options (default -p1), applied to the
  same commit's tree without debian/; version from debian/changelog.

The upstream commit is found by rule: a GitHub URL in the package's source gives the
upstream repository; the tag comes from the URL when it names one that exists in the
mirror, else from the version: `v1.2.3`, `1.2.3`, `NAME-1.2.3`, `NAME_1_2_3`, `release-1.2.3`,
… (first that exists; a 7–40 digit hex version is a commit). Every package that cannot be
taken is counted under its reason in the manifest's `skipped`.

`manifest` writes names and commit ids only (no patch text); `materialize` re-extracts each
case into OUT/CASE/: `patches/` (substituted text), `series` (`NAME -pN` a line), `case.json`,
and `base/`, a git checkout holding the files of the upstream commit that any patch of the
series names (every name of every header, stripped, and any parent that is a symlink):
enough to apply the series as GNU patch and patchq would on the full tree, at a fraction of
its cost. `bumps` finds every commit where a package's version changed and its patch set
changed with it, and writes them in the realworld cases.toml format, split 70/30 into
tuning/validation by sha256 of the case name. Spack and Debian have their own bump rules
(find_bumps_spack: consecutive versions of one package.py whose version-range patch sets
differ; find_bumps_debian / debian_bumps_of: a change of the upstream version in
debian/changelog along the first-parent history, the upstream being the same tree without
debian/, `upstream_strip_dir = "debian"`).

Standard library and the git CLI only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_MANIFEST = HERE / "corpus" / "parity-manifest.json"
DEFAULT_BUMPS = HERE / "corpus" / "refresh-cases.toml"

# downstream key -> (mirror repo, case prefix, distribution)
DOWNSTREAMS: dict[str, tuple[str, str, str]] = {
    "buildroot": ("buildroot/buildroot", "br", "Buildroot"),
    "termux": ("termux/termux-packages", "tx", "Termux"),
    "msys2-mingw": ("msys2/MINGW-packages", "mw", "MSYS2"),
    "msys2-msys": ("msys2/MSYS2-packages", "ms", "MSYS2"),
    "libreelec": ("LibreELEC/LibreELEC.tv", "le", "LibreELEC"),
    "spack": ("spack/spack-packages", "sp", "Spack"),
}

TERMUX_SUBST = {
    "TERMUX_APP_PACKAGE": "com.termux",
    "TERMUX_BASE_DIR": "/data/data/com.termux/files",
    "TERMUX_CACHE_DIR": "/data/data/com.termux/cache",
    "TERMUX_HOME": "/data/data/com.termux/files/home",
    "TERMUX_PREFIX": "/data/data/com.termux/files/usr",
    "TERMUX_PREFIX_CLASSICAL": "/data/data/com.termux/files/usr",
    "TERMUX_ENV__S_TERMUX": "TERMUX__",
    "TERMUX_ENV__S_TERMUX_APP": "TERMUX_APP__",
    "TERMUX_ENV__S_TERMUX_API_APP": "TERMUX_API_APP__",
    "TERMUX_ENV__S_TERMUX_ROOTFS": "TERMUX__ROOTFS__",
    "TERMUX_ENV__S_TERMUX_EXEC": "TERMUX_EXEC__",
}


def substitute(text: bytes, rule: str | None) -> bytes:
    """The text the downstream build feeds to `patch` (Termux: its sed of placeholders)."""
    if rule == "termux":
        for key, value in TERMUX_SUBST.items():
            text = text.replace(b"@" + key.encode() + b"@", value.encode())
    return text


# ------------------------------------------------------------------------------ git access
def git(gitdir: str | Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["LC_ALL"] = "C"
    r = subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], input=input, capture_output=True, env=env
    )
    if check and r.returncode != 0:
        raise RuntimeError("git {}: {}".format(" ".join(args), r.stderr.decode(errors="replace")))
    return r.stdout


def mirror_gitdir(mirrors: Path, repo: str) -> Path | None:
    """'owner/name' -> the git dir of its local mirror (as materialize.py finds them)."""
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo" / ".git", base / "repo", base):
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            return cand
    return None


class Blobs:
    """One `git cat-file --batch` per mirror: read many objects cheaply."""

    def __init__(self, gitdir: Path):
        self.proc = subprocess.Popen(
            ["git", "--git-dir", str(gitdir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def read(self, spec: str) -> bytes | None:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        self.proc.stdin.flush()
        head = self.proc.stdout.readline().split()
        if len(head) < 3 or head[1] == b"missing":
            return None
        size = int(head[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        return data

    def text(self, spec: str) -> str | None:
        data = self.read(spec)
        return None if data is None else data.decode("utf-8", "replace")

    def tree(self, spec: str, prefix: str, depth: int = 3) -> dict[str, tuple[str, str]]:
        """path -> (mode, id) under the tree SPEC names (`COMMIT:DIR`), read through the
        same cat-file process (no process a call), DEPTH levels down."""
        data = self.read(spec)
        out: dict[str, tuple[str, str]] = {}
        if data is None:
            return out
        i = 0
        while i < len(data):
            sp = data.index(b" ", i)
            nul = data.index(b"\0", sp)
            mode = data[i:sp].decode()
            name = data[sp + 1 : nul].decode("utf-8", "surrogateescape")
            sha = data[nul + 1 : nul + 21].hex()
            i = nul + 21
            path = f"{prefix}/{name}"
            if mode == "40000":
                if depth > 1:
                    out.update(self.tree(sha, path, depth - 1))
            else:
                out[path] = (mode.rjust(6, "0"), sha)
        return out

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


def ls_tree(gitdir: Path, commit: str, under: str = "") -> dict[str, tuple[str, str]]:
    """path -> (mode, blob id) of every file (and symlink, gitlink) at COMMIT."""
    args = ["ls-tree", "-r", "-z", "--full-tree", commit]
    if under:
        args += ["--", under]
    out: dict[str, tuple[str, str]] = {}
    for rec in git(gitdir, *args).split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, _typ, sha = meta.decode().split()
        out[path.decode("utf-8", "surrogateescape")] = (mode, sha)
    return out


_TAGS: dict[str, dict[str, str]] = {}


def tags_of(gitdir: Path) -> dict[str, str]:
    """tag name -> commit id."""
    key = str(gitdir)
    if key not in _TAGS:
        out = git(
            gitdir,
            "for-each-ref",
            "--format=%(refname:short)\t%(objectname)\t%(*objectname)\t%(objecttype)",
            "refs/tags",
        ).decode("utf-8", "replace")
        tags: dict[str, str] = {}
        for line in out.splitlines():
            name, obj, peeled, typ = (line.split("\t") + ["", "", ""])[:4]
            if typ == "tag" and peeled:
                tags[name] = peeled
            elif typ == "commit":
                tags[name] = obj
        _TAGS[key] = tags
    return _TAGS[key]


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
) -> tuple[list[Package], str]:
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
        "about": "Patch series harvested by bench/harvest.py: names and commit ids only.",
        "cases": cases,
        "skipped_packages": dict(sorted(skipped.items())),
        "skipped_patches": dict(sorted(skipped_patches.items())),
        "missing_upstreams": dict(missing_upstreams.most_common()),
    }


# ---------------------------------------------------------------------- materialize
def header_names(text: bytes) -> set[str]:
    """Every file name a patch's headers give (---, +++, Index:, diff --git, rename/copy)."""
    out: set[str] = set()
    for raw in text.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape").rstrip("\r")
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].split("\t")[0].rstrip()
            if name.startswith('"') and name.endswith('"'):
                name = name[1:-1]
            if " " in name and re.search(r" \d{4}-\d\d-\d\d ", name):
                name = name.split(" ")[0]
            out.add(name)
            out.add(line[4:].split("\t")[0].split(" ")[0])
        elif line.startswith("Index: "):
            out.add(line[7:].strip())
        elif line.startswith("diff --git "):
            for part in line[11:].split(" "):
                out.add(part)
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            out.add("x/" + line.split(" ", 2)[2])
        elif line.startswith("diff ") and " -" in line:
            toks = line.split()
            out.update(toks[-2:])
    return out


def stripped(name: str, n: int) -> str | None:
    parts = [p for p in name.split("/") if p]
    if name.startswith("/"):
        parts = ["", *parts]
    if len(parts) <= n:
        return None
    return "/".join(parts[n:])


def materialize_case(mirrors: Path, case: dict[str, Any], out: Path) -> str:
    """Write OUT/NAME/; return 'ok' or a reason."""
    dest = out / case["name"]
    if (dest / "case.json").is_file():
        old = json.loads((dest / "case.json").read_text())
        if old.get("key") == case_key(case):
            return "ok"
    ds = mirror_gitdir(mirrors, case["downstream_repo"])
    up = mirror_gitdir(mirrors, case["upstream_repo"])
    if ds is None or up is None:
        return "mirror missing"
    tmp = out / (case["name"] + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "patches").mkdir(parents=True)
    blobs = Blobs(ds)
    wanted: set[str] = set()
    series_lines = []
    used: set[str] = set()
    try:
        for item in case["patches"]:
            data = blobs.read(f"{case['downstream_commit']}:{item['path']}")
            if data is None:
                return "patch file missing from the downstream mirror"
            data = substitute(data, case.get("substitute"))
            fname = item["path"].rsplit("/", 1)[1]
            if fname in used:  # the same name from two folders (Buildroot's version subdir)
                fname = item["path"].replace("/", "_")
            used.add(fname)
            (tmp / "patches" / fname).write_bytes(data)
            series_lines.append(fname + ("" if item["strip"] == 1 else f" -p{item['strip']}"))
            for n in header_names(data):
                s = stripped(n, item["strip"])
                if s:
                    wanted.add(s.lstrip("/"))
    finally:
        blobs.close()
    (tmp / "series").write_text("".join(x + "\n" for x in series_lines))
    files = ls_tree(up, case["upstream_commit"])
    excl = case.get("base_exclude")
    prefixes = set()
    for w in wanted:
        parts = w.split("/")
        for i in range(1, len(parts)):
            prefixes.add("/".join(parts[:i]))
    keep = {
        p: ms
        for p, ms in files.items()
        if (p in wanted or p in prefixes)
        and ms[0] != "160000"
        and not (excl and (p == excl or p.startswith(excl + "/")))
    }
    base = tmp / "base"
    base.mkdir()
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    (base / ".git" / "info").mkdir(exist_ok=True)
    (base / ".git" / "info" / "attributes").write_text(
        "* -text -eol -ident -filter -working-tree-encoding\n"
    )
    ublobs = Blobs(up)
    index_info = []
    missing = []
    try:
        for p, (mode, sha) in sorted(keep.items()):
            data = ublobs.read(sha)
            if data is None:
                missing.append(p)
                continue
            index_info.append(f"{mode} {sha}\t{p}")
            target = base / p
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                os.symlink(data, target)
            else:
                target.write_bytes(data)
                if mode == "100755":
                    target.chmod(0o755)
    finally:
        ublobs.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="harvest",
        GIT_AUTHOR_EMAIL="harvest@invalid",
        GIT_COMMITTER_NAME="harvest",
        GIT_COMMITTER_EMAIL="harvest@invalid",
        GIT_AUTHOR_DATE="2000-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
    )
    for args in (
        ["config", "core.autocrlf", "false"],
        ["config", "gc.auto", "0"],
        ["add", "-A", "-f", "."],
        [
            "commit",
            "-q",
            "--allow-empty",
            "--no-verify",
            "-m",
            "upstream " + str(case["upstream_commit"]),
        ],
    ):
        subprocess.run(["git", *args], cwd=base, check=True, env=env, capture_output=True)
    meta = dict(case)
    meta["key"] = case_key(case)
    meta["base_files"] = len(keep) - len(missing)
    meta["omitted_files"] = missing
    (tmp / "case.json").write_text(json.dumps(meta, indent=1) + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return "ok"


def case_key(case: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(
            {k: case[k] for k in ("patches", "downstream_commit", "upstream_commit", "substitute")},
            sort_keys=True,
        ).encode()
    ).hexdigest()[:16]


# ------------------------------------------------------------------------ version bumps
VERSION_FILE = {
    "buildroot": lambda d, name: f"{d}/{name}.mk",
    "termux": lambda d, name: f"{d}/build.sh",
    "msys2-mingw": lambda d, name: f"{d}/PKGBUILD",
    "msys2-msys": lambda d, name: f"{d}/PKGBUILD",
    "libreelec": lambda d, name: f"{d}/package.mk",
}


def package_at(
    mirrors: Path, key: str, gd: Path, blobs: Blobs, commit: str, pkgdir: str
) -> Package | None:
    """The one package in PKGDIR at COMMIT, read as its downstream reads it."""
    files = blobs.tree(f"{commit}:{pkgdir}", pkgdir)
    if not files:
        return None
    if key == "buildroot":
        pkgs = list(harvest_buildroot(files, blobs, commit))
    elif key == "termux":
        pkgs = list(harvest_termux(files, blobs, commit))
    elif key in ("msys2-mingw", "msys2-msys"):
        pkgs = list(harvest_msys2(files, blobs, commit, key))
    elif key == "libreelec":
        pkgs = list(harvest_libreelec(files, blobs, commit))
    else:
        return None
    return pkgs[0] if pkgs else None


def unversioned(name: str) -> str:
    """A patch file name without the version numbers in it (Spack names a patch for the
    versions it serves: bart_path-0.5.00.patch, makefile_12.patch): the base name with every
    run of digits and dots (with the separator before it) taken out."""
    base = PATCH_NAME.sub("", name.rsplit("/", 1)[-1])
    return re.sub(r"[-_.]?v?\d+(?:[._]\d+)*", "", base).lower()


def successor_map(
    old: list[str], new: list[str], texts: dict[str, bytes], versioned_names: bool = False
) -> dict[str, str]:
    """old patch -> the new patch that continues it (same name, same Subject:, same name
    without its number; with VERSIONED_NAMES also the same name without its version
    numbers), or '' when none does."""

    def subject(t: bytes) -> str | None:
        m = re.search(rb"^Subject: *(?:\[[^\]]*\] *)?(.+)$", t, re.M)
        return m.group(1).decode("utf-8", "replace").strip() if m else None

    def bare(n: str) -> str:
        return re.sub(r"^\d+[-_]", "", n.rsplit("/", 1)[-1])

    out: dict[str, str] = {}
    taken: set[str] = set()
    for o in old:
        cand = None
        if o in new:
            cand = o
        else:
            so = subject(texts.get("old:" + o, b""))
            for n in new:
                if n in taken:
                    continue
                if (so and so == subject(texts.get("new:" + n, b""))) or bare(n) == bare(o):
                    cand = n
                    break
        if cand is None and versioned_names:
            cand = next(
                (
                    n
                    for n in new
                    if n not in taken and n not in old and unversioned(n) == unversioned(o)
                ),
                None,
            )
        if cand and cand not in taken:
            taken.add(cand)
            out[o] = cand
        else:
            out[o] = ""
    return out


def find_bumps(
    mirrors: Path, key: str, since: str, limit: int | None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    repo, prefix, dist = DOWNSTREAMS[key]
    gd = mirror_gitdir(mirrors, repo)
    reasons: Counter[str] = Counter()
    if gd is None:
        reasons["downstream mirror not fetched"] += 1
        return [], reasons
    if key == "buildroot":
        specs = ["package/*/*.mk", "package/*/*.patch", "package/*/*/*.patch"]
        depth = 2
    elif key == "termux":
        specs = [f"{top}/*/*" for top in ("packages", "x11-packages", "root-packages")]
        depth = 2
    elif key == "libreelec":
        specs = ["packages/**/package.mk", "packages/**/*.patch"]
        depth = -1
    else:
        specs = ["*/PKGBUILD", "*/*.patch", "*/*.diff"]
        depth = 1
    log = git(
        gd,
        "log",
        "--no-merges",
        "--no-renames",  # rename detection reads blobs, and a snapshot may lack big ones
        f"--since={since}",
        "--format=@%H %P%x09%s",
        "--name-only",
        "HEAD",
        "--",
        *specs,
    ).decode("utf-8", "replace")
    commits: list[tuple[str, str, str, list[str]]] = []
    for block in log.split("\n@")[0:]:
        block = block.lstrip("@")
        if not block.strip():
            continue
        head, *paths = block.split("\n")
        ids, _, subj = head.partition("\t")
        idl = ids.split()
        if len(idl) != 2:
            continue
        commits.append((idl[0], idl[1], subj, [p for p in paths if p.strip()]))
    blobs = Blobs(gd)
    out: list[dict[str, Any]] = []
    try:
        for c, parent, subj, paths in commits:
            groups: dict[str, list[str]] = {}
            for p in paths:
                if key == "libreelec":
                    d = p.split("/patches/")[0] if "/patches/" in p else p.rsplit("/", 1)[0]
                else:
                    d = "/".join(p.split("/")[:depth])
                groups.setdefault(d, []).append(p)
            for d, ps in groups.items():
                name = d.rsplit("/", 1)[-1]
                vf = VERSION_FILE[key](d, name)
                if vf not in ps or not any(
                    PATCH_NAME.search(p) or p.endswith(".patch64") for p in ps
                ):
                    continue
                old = package_at(mirrors, key, gd, blobs, parent, d)
                new = package_at(mirrors, key, gd, blobs, c, d)
                if old is None or new is None or not old.patches or not new.patches:
                    reasons["no patches before or after"] += 1
                    continue
                if old.version == new.version or not old.version or not new.version:
                    reasons["version unchanged"] += 1
                    continue
                if old.upstream_repo is None or old.upstream_repo != new.upstream_repo:
                    reasons["upstream not on GitHub (or moved)"] += 1
                    continue
                oc, otag, r1 = resolve_upstream(mirrors, old, gd, parent)
                nc, ntag, r2 = resolve_upstream(mirrors, new, gd, c)
                if r1 or r2:
                    reasons[r1 or r2 or ""] += 1
                    continue
                strip = {s for _, s in old.patches + new.patches}
                if len(strip) != 1:
                    reasons["mixed strip levels"] += 1
                    continue
                cut = len(d) + 1
                old_series = [p[cut:] for p, _ in old.patches]
                new_series = [p[cut:] for p, _ in new.patches]
                texts = {}
                for p, _ in old.patches:
                    texts["old:" + p[cut:]] = blobs.read(f"{parent}:{p}") or b""
                for p, _ in new.patches:
                    texts["new:" + p[cut:]] = blobs.read(f"{c}:{p}") or b""
                succ = successor_map(old_series, new_series, texts)
                added = [n for n in new_series if n not in succ.values()]
                cname = re.sub(
                    r"[^A-Za-z0-9_.+-]", "_", f"{prefix}-{name}-{old.version}-to-{new.version}"
                )
                out.append(
                    {
                        "name": cname,
                        "split": split_of(cname),
                        "upstream_repo": old.upstream_repo,
                        "old_ref": otag,
                        "old_commit": oc,
                        "new_ref": ntag,
                        "new_commit": nc,
                        "downstream_repo": repo,
                        "downstream_old_commit": parent,
                        "downstream_new_commit": c,
                        "downstream_commit_subject": subj,
                        "patch_dir": d,
                        "series_rule": SERIES_RULE[key],
                        "strip": strip.pop(),
                        "substitute": old.subst or "",
                        "old_series": old_series,
                        "new_series": new_series,
                        "added": added,
                        "successor": succ,
                    }
                )
                if limit and len(out) >= limit:
                    return out, reasons
    finally:
        blobs.close()
    return out, reasons


def _vsort_key(v: str) -> tuple[Any, ...]:
    """Order versions numerically where they are numbers (1.10 after 1.9); a part that is
    not a number sorts before any number at that place (1.0rc1 before 1.0.1)."""
    return tuple((1, int(x), "") if x.isdigit() else (0, 0, x) for x in re.split(r"[.\-_+~]", v))


def bump_case(
    prefix: str,
    name: str,
    versions: tuple[str, str],
    up: tuple[str, str | None, str | None, str | None, str | None],
    ds: tuple[str, str, str, str],
    key: str,
    series: tuple[list[str], list[str]],
    strip: int,
    texts: dict[str, bytes],
) -> dict[str, Any]:
    """One bump as refresh-cases.toml writes it. UP = (repo, old ref, old commit, new ref,
    new commit); DS = (repo, old commit, new commit, subject); SERIES = (old, new) names
    relative to the patch folder; TEXTS = their bytes under "old:NAME" / "new:NAME"."""
    old_series, new_series = series
    succ = successor_map(old_series, new_series, texts, versioned_names=key == "spack")
    cname = re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{prefix}-{name}-{versions[0]}-to-{versions[1]}")
    return {
        "name": cname,
        "split": split_of(cname),
        "upstream_repo": up[0],
        "old_ref": up[1],
        "old_commit": up[2],
        "new_ref": up[3],
        "new_commit": up[4],
        "downstream_repo": ds[0],
        "downstream_old_commit": ds[1],
        "downstream_new_commit": ds[2],
        "downstream_commit_subject": ds[3],
        "series_rule": SERIES_RULE[key],
        "strip": strip,
        "substitute": "",
        "old_series": old_series,
        "new_series": new_series,
        "added": [n for n in new_series if n not in succ.values()],
        "successor": succ,
    }


def find_bumps_spack(
    mirrors: Path, since: str, limit: int | None, dates: Sequence[str] = ()
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Spack keeps every version's patches side by side in one package.py. At HEAD (and at
    the last commit before each of DATES, where the packages are in the same layout): for
    every two consecutive listed versions v_old < v_new of a package (deprecated and branch
    versions left out) where both get a non-empty set of the patch(...) calls whose `when=`
    is a pure version range, and the two sets differ, v_old -> v_new is a bump: the old
    series is v_old's patches in package.py order, the new one v_new's; both upstream
    commits are the tags of v_old and v_new (resolve_upstream). Successors as for the other
    downstreams, and also the same name without its version numbers (`unversioned`:
    bart_path-0.5.00.patch -> bart_path-0.6.00.patch). A bump seen at an earlier
    snapshot with the same patch files (blob ids) is counted once."""
    repo, prefix, _dist = DOWNSTREAMS["spack"]
    reasons: Counter[str] = Counter()
    gd = mirror_gitdir(mirrors, repo)
    if gd is None:
        reasons["downstream mirror not fetched"] += 1
        return [], reasons
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    blobs = Blobs(gd)
    try:
        for _label, at in snapshot_commits(gd, list(dates)):
            commit = git(gd, "rev-parse", "--verify", at + "^{commit}").decode().strip()
            subject = git(gd, "log", "-1", "--format=%s", commit).decode("utf-8", "replace")
            files = ls_tree(gd, commit, "/".join(SPACK_PACKAGES))
            for d, names in sorted(spack_patch_files(files).items()):
                rec = spack_recipe(d, blobs.text(f"{commit}:{d}/package.py") or "", names)
                ordered = sorted(dict.fromkeys(rec.versions), key=_vsort_key)
                for v_old, v_new in itertools.pairwise(ordered):
                    old, new = rec.series(v_old), rec.series(v_new)
                    if not old or not new:
                        continue
                    if [p for p, _ in old] == [p for p, _ in new]:
                        continue
                    ident = json.dumps([d, v_old, v_new, [files[p][1] for p, _ in old + new]])
                    if ident in seen:
                        reasons["same bump at a later snapshot"] += 1
                        continue
                    seen.add(ident)
                    strip = {lvl for _, lvl in old + new}
                    if len(strip) != 1:
                        reasons["mixed strip levels"] += 1
                        continue
                    up_repo = github_of(rec.url)[0] if rec.url else None
                    ends = []
                    for v, series in ((v_old, old), (v_new, new)):
                        pkg = Package("spack", rec.name, d, series, v, upstream_repo=up_repo)
                        ends.append(resolve_upstream(mirrors, pkg, gd, commit))
                    why = ends[0][2] or ends[1][2]
                    if why:
                        reasons[why] += 1
                        continue
                    cut = len(d) + 1
                    texts = {}
                    for side, series in (("old", old), ("new", new)):
                        for p, _ in series:
                            texts[f"{side}:{p[cut:]}"] = blobs.read(f"{commit}:{p}") or b""
                    case = bump_case(
                        prefix,
                        rec.name,
                        (v_old, v_new),
                        (str(up_repo), ends[0][1], ends[0][0], ends[1][1], ends[1][0]),
                        (repo, commit, commit, subject),
                        "spack",
                        ([p[cut:] for p, _ in old], [p[cut:] for p, _ in new]),
                        strip.pop(),
                        texts,
                    )
                    case["patch_dir"] = d
                    out.append(case)
                    if limit and len(out) >= limit:
                        return out, reasons
    finally:
        blobs.close()
    return out, reasons


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


def debian_version(changelog: str | None) -> tuple[str, str] | None:
    """(full version without epoch, upstream version) of debian/changelog's top entry; the
    upstream version is the full one without its Debian revision (after the last '-'). A
    native version (no revision) gives None."""
    m = re.match(r"\s*\S+ \(([^)\s]+)\)", changelog or "")
    if not m:
        return None
    full = clean_version(m.group(1))
    if "-" not in full:
        return None
    return full, full.rsplit("-", 1)[0]


@dataclass
class DebState:
    commit: str
    subject: str
    full: str | None  # top changelog version (no epoch), None: no changelog or native
    upstream: str | None  # its upstream part
    source: str  # id of the tree without debian/ (the upstream source)
    series: list[tuple[str, int]] | None
    patch_blobs: dict[str, str]  # patch name -> blob id


def _tree_entries(data: bytes) -> Iterator[tuple[str, str, str]]:
    i = 0
    while i < len(data):
        sp = data.index(b" ", i)
        nul = data.index(b"\0", sp)
        yield (
            data[i:sp].decode(),
            data[sp + 1 : nul].decode("utf-8", "surrogateescape"),
            data[nul + 1 : nul + 21].hex(),
        )
        i = nul + 21


def debian_states(gd: Path, blobs: Blobs, since: str) -> list[DebState]:
    """Every commit of HEAD's first-parent history since SINCE, oldest first, as harvest
    reads it: the changelog's top version, the upstream tree's identity, the series."""
    log = git(gd, "log", "--first-parent", "--reverse", f"--since={since}", "--format=%H%x09%s")
    cache: dict[str, Any] = {}
    out: list[DebState] = []
    for line in log.decode("utf-8", "replace").splitlines():
        c, _, subj = line.partition("\t")
        top = blobs.read(f"{c}^{{tree}}") or b""
        entries = list(_tree_entries(top))
        source = hashlib.sha1(
            b"".join(f"{m} {n} {h}\n".encode() for m, n, h in entries if n != "debian")
        ).hexdigest()
        deb = next((h for m, n, h in entries if n == "debian" and m == "40000"), None)
        full = up = None
        series = None
        pblobs: dict[str, str] = {}
        if deb is not None:
            dfiles = blobs.tree(deb, "debian", depth=3)
            ch = dfiles.get("debian/changelog")
            if ch:
                if ch[1] not in cache:
                    cache[ch[1]] = debian_version(
                        (blobs.read(ch[1]) or b"")[:4096].decode("utf-8", "replace")
                    )
                v = cache[ch[1]]
                if v:
                    full, up = v
            se = dfiles.get("debian/patches/series")
            if se:
                series = debian_series((blobs.read(se[1]) or b"").decode("utf-8", "replace"))
            pblobs = {
                p[len("debian/patches/") :]: ms[1]
                for p, ms in dfiles.items()
                if p.startswith("debian/patches/")
            }
        out.append(DebState(c, subj, full, up, source, series, pblobs))
    return out


def debian_bumps_of(
    states: Sequence[DebState], reasons: Counter[str]
) -> list[tuple[DebState, DebState]]:
    """The (old, new) states of every bump in one repository's first-parent history.

    The history is cut into runs of commits whose top changelog entry has the same upstream
    version. Where a run of version A is followed by a run of version B (A != B, neither
    native nor without a changelog):
    - old = the last commit of A's run whose tree without debian/ is still the one the run
      began with (gbp merges the new upstream source before the changelog names it: the
      commits after that merge hold B's source under A's changelog);
    - new = the last commit of B's run whose top changelog entry is still B's first one
      (B's first Debian revision: the series as first released for B) and whose tree
      without debian/ is still the one B's run began with (the same rule: the next
      version's source may be merged before the changelog names it).
    It is a bump when the tree without debian/ differs between old and new, both have
    debian/patches/series, old's series is not empty, every patch it names is there,
    and the series or a patch file of it differs between them."""
    runs: list[list[DebState]] = []
    for st in states:
        if runs and runs[-1][0].upstream == st.upstream:
            runs[-1].append(st)
        else:
            runs.append([st])
    out: list[tuple[DebState, DebState]] = []
    for a, b in itertools.pairwise(runs):
        if a[0].upstream is None or b[0].upstream is None:
            reasons["no changelog version (or a native one) before or after"] += 1
            continue
        old = [s for s in a if s.source == a[0].source][-1]
        new = b[0]
        for s in b:
            if s.full != b[0].full:
                break
            if s.source == b[0].source:
                new = s
        if old.source == new.source:
            reasons["upstream source unchanged"] += 1
            continue
        if not old.series or new.series is None:
            reasons["no patches before or after"] += 1
            continue
        if any(n not in st.patch_blobs for st in (old, new) for n, _ in st.series or []):
            reasons["series names a patch file that is not there"] += 1
            continue
        if old.series == new.series and all(
            old.patch_blobs[n] == new.patch_blobs[n] for n, _ in old.series
        ):
            reasons["series and patches unchanged"] += 1
            continue
        out.append((old, new))
    return out


def find_bumps_debian(
    mirrors: Path, repos: Sequence[str], since: str, limit: int | None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Debian packaging on GitHub: every bump of debian_bumps_of in each repository's
    first-parent history. The upstream is the same repository: both "upstream commits"
    are the old and new commits themselves, with `upstream_strip_dir = "debian"` (the
    materializer builds case-old/case-new from their trees without debian/)."""
    reasons: Counter[str] = Counter()
    out: list[dict[str, Any]] = []
    for repo in repos:
        gd = mirror_gitdir(mirrors, repo)
        if gd is None:
            reasons["downstream mirror not fetched"] += 1
            continue
        blobs = Blobs(gd)
        try:
            states = debian_states(gd, blobs, since)
            for old, new in debian_bumps_of(states, reasons):
                series = [n for n, _ in old.series or []], [n for n, _ in new.series or []]
                strip = {s for _, s in (old.series or []) + (new.series or [])}
                if len(strip) != 1:
                    reasons["mixed strip levels"] += 1
                    continue
                texts = {}
                for side, st, names in (("old", old, series[0]), ("new", new, series[1])):
                    for n in names:
                        texts[f"{side}:{n}"] = blobs.read(st.patch_blobs[n]) or b""
                case = bump_case(
                    "db",
                    repo.split("/")[1],
                    (str(old.upstream), str(new.upstream)),
                    (repo, old.commit, old.commit, new.commit, new.commit),
                    (repo, old.commit, new.commit, new.subject),
                    "debian",
                    series,
                    strip.pop(),
                    texts,
                )
                case["patch_dir"] = "debian/patches"
                case["upstream_strip_dir"] = "debian"
                out.append(case)
                if limit and len(out) >= limit:
                    return out, reasons
        finally:
            blobs.close()
    return out, reasons


_MSYS2_RULE = "msys2: the patch files PKGBUILD prepare() names, in that order, with its -pN"
SERIES_RULE = {
    "buildroot": "buildroot: every *.patch in patch_dir (then in its $(VERSION) folder) "
    "in file-name order, patch -p1",
    "termux": "termux: every *.patch and *.patch64 in patch_dir in sorted order, after sed "
    "of @TERMUX_...@ placeholders, patch -p1",
    "msys2-mingw": _MSYS2_RULE,
    "msys2-msys": _MSYS2_RULE,
    "libreelec": "libreelec: patches/*.patch then patches/$PKG_VERSION/*.patch in file-name "
    "order, patch -p1",
    "spack": "spack: the patch(...) calls of package.py on files of patch_dir whose when= is "
    "a pure version range holding for the version, in package.py order, level= as -pN",
    "debian": "debian: debian/patches/series in order with its -pN, on the same commit's "
    "tree without debian/",
}


def split_of(name: str) -> str:
    return "tuning" if hashlib.sha256(name.encode()).digest()[0] < int(0.7 * 256) else "validation"


def toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def write_cases_toml(cases: list[dict[str, Any]], path: Path, header: str) -> None:
    lines = [header.rstrip() + "\n"]
    for c in cases:
        lines.append("\n[[case]]\n")
        for k in (
            "name",
            "split",
            "upstream_repo",
            "old_ref",
            "old_commit",
            "new_ref",
            "new_commit",
            "downstream_repo",
            "downstream_old_commit",
            "downstream_new_commit",
            "downstream_commit_subject",
            "patch_dir",
            "series_rule",
        ):
            lines.append(f"{k} = {toml_str(str(c[k]))}\n")
        lines.append(f"strip = {int(c['strip'])}\n")
        if c.get("substitute"):
            lines.append(f"substitute = {toml_str(c['substitute'])}\n")
        if c.get("upstream_strip_dir"):
            lines.append(f"upstream_strip_dir = {toml_str(c['upstream_strip_dir'])}\n")
        for k in ("old_series", "new_series", "added"):
            lines.append(f"{k} = [" + ", ".join(toml_str(x) for x in c[k]) + "]\n")
        lines.append("[case.successor]\n")
        for o, n in c["successor"].items():
            lines.append(f"{toml_str(o)} = {toml_str(n)}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))


# ---------------------------------------------------------------------------------- CLI
SNAPSHOT_DATES = [
    "2025-07-01",
    "2025-01-01",
    "2024-01-01",
    "2023-01-01",
    "2022-01-01",
    "2021-01-01",
    "2020-01-01",
    "2019-01-01",
]
BUMP_KEYS = [*VERSION_FILE, "spack", "debian"]


def load_debian_list(path: Path | None) -> list[str]:
    if path is None or not path.is_file():
        return []
    return [
        ln.split("#")[0].strip() for ln in path.read_text().splitlines() if ln.split("#")[0].strip()
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("manifest")
    m.add_argument("--out", type=Path, default=DEFAULT_MANIFEST)
    m.add_argument("--debian-list", type=Path, default=HERE / "corpus" / "debian-repos.txt")
    m.add_argument("--only", nargs="*")
    m.add_argument(
        "--at",
        nargs="*",
        default=SNAPSHOT_DATES,
        help="also harvest each downstream at its last commit before these dates",
    )
    f = sub.add_parser("fetch-list")
    f.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    f.add_argument("--top", type=int, default=0)
    f.add_argument(
        "--needed",
        action="store_true",
        help="every mirror the cases need (missing ones marked), not the missing upstreams",
    )
    z = sub.add_parser("materialize")
    z.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    z.add_argument("--out", type=Path, default=Path("/work/corpus/parity"))
    z.add_argument("--jobs", type=int, default=2)
    z.add_argument("--only", nargs="*")
    b = sub.add_parser("bumps")
    b.add_argument("--out", type=Path, default=DEFAULT_BUMPS)
    b.add_argument("--since", default="2018-01-01")
    b.add_argument("--only", nargs="*")
    b.add_argument("--limit", type=int, default=0)
    b.add_argument("--debian-list", type=Path, default=HERE / "corpus" / "debian-repos.txt")
    b.add_argument(
        "--debian-since",
        default="1970-01-01",
        help="Debian: first-parent history read from this date (default: all of it; the "
        "repositories are small and most of their history is older than --since)",
    )
    b.add_argument(
        "--at",
        nargs="*",
        default=SNAPSHOT_DATES,
        help="Spack: also read package.py at the last commit before these dates",
    )
    args = ap.parse_args(argv)
    if args.cmd == "manifest":
        man = build_manifest(args.mirrors, load_debian_list(args.debian_list), args.only, args.at)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(man, indent=1) + "\n")
        n = sum(len(c["patches"]) for c in man["cases"])
        print(f"{len(man['cases'])} series, {n} patches -> {args.out}")
        for k, v in man["skipped_packages"].items():
            print(f"  skipped {v} packages ({man['skipped_patches'].get(k, 0)} patches): {k}")
        return 0
    if args.cmd == "fetch-list":
        man = json.loads(args.manifest.read_text())
        if args.needed:
            need = Counter()
            for c in man["cases"]:
                need[c["downstream_repo"]] += 0
                need[c["upstream_repo"]] += len(c["patches"])
            for repo in sorted(need, key=str.lower):
                gone = "" if mirror_gitdir(args.mirrors, repo) else "\tmissing"
                print(f"github:{repo}{gone}")
            return 0
        items = list(man["missing_upstreams"].items())
        for repo, n in items[: args.top or None]:
            print(f"github:{repo}\t{n}")
        return 0
    if args.cmd == "materialize":
        man = json.loads(args.manifest.read_text())
        cases = [c for c in man["cases"] if not args.only or c["name"] in args.only]
        args.out.mkdir(parents=True, exist_ok=True)
        t = time.time()
        res: Counter[str] = Counter()
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            for r in ex.map(lambda c: materialize_case(args.mirrors, c, args.out), cases):
                res[r] += 1
        names = [c["name"] for c in cases]
        (args.out / "index.json").write_text(json.dumps(names, indent=0) + "\n")
        print(
            f"materialized {res['ok']} of {len(cases)} cases in {time.time() - t:.0f}s; {dict(res)}"
        )
        return 0 if res["ok"] == len(cases) else 1
    if args.cmd == "bumps":
        keys = [k for k in BUMP_KEYS if not args.only or k in args.only]
        allcases: list[dict[str, Any]] = []

        def one(key: str) -> tuple[str, list[dict[str, Any]], Counter[str], float]:
            t = time.time()
            try:
                lim = args.limit or None
                if key == "spack":
                    cases, reasons = find_bumps_spack(args.mirrors, args.since, lim, args.at)
                elif key == "debian":
                    repos = load_debian_list(args.debian_list)
                    cases, reasons = find_bumps_debian(args.mirrors, repos, args.debian_since, lim)
                else:
                    cases, reasons = find_bumps(args.mirrors, key, args.since, lim)
            except RuntimeError as e:  # one unreadable mirror does not lose the others
                cases, reasons = [], Counter({f"mirror unreadable: {str(e)[-120:]}": 1})
            return key, cases, reasons, time.time() - t

        header = (
            "# Version-bump refresh cases found by bench/harvest.py bumps (every bump\n"
            "# that qualifies, none chosen by hand): names and commit ids only.\n"
            "# Format: /work/shared/realworld/cases.toml; split = tuning|validation\n"
            '# by sha256(name)[0] < 0.7*256. substitute = "termux": sed the\n'
            "# @TERMUX_...@ placeholders as Termux's build does before applying.\n"
            '# upstream_strip_dir = "debian": the upstream of a Debian packaging repository\n'
            "# is the same commit's tree without that folder (realworld.py builds it)."
        )
        done: dict[str, list[dict[str, Any]]] = {}
        with concurrent.futures.ThreadPoolExecutor(max(1, len(keys))) as ex:
            futs = [ex.submit(one, k) for k in keys]
            for fut in concurrent.futures.as_completed(futs):
                key, cases, reasons, secs = fut.result()
                print(
                    f"{key}: {len(cases)} bumps in {secs:.0f}s; not taken: {dict(reasons)}",
                    file=sys.stderr,
                )
                done[key] = cases
                # downstream order, whatever finished first; written after each downstream
                allcases = [c for k in keys if k in done for c in done[k]]
                seen: Counter[str] = Counter()
                for c in allcases:
                    seen[c["name"]] += 1
                    if seen[c["name"]] > 1:
                        c["name"] = c["name"].rsplit("~", 1)[0] + f"~{seen[c['name']]}"
                        c["split"] = split_of(c["name"])
                write_cases_toml(allcases, args.out, header)
        n = sum(len(c["old_series"]) for c in allcases)
        ups = len({c["upstream_repo"] for c in allcases})
        print(
            f"{len(allcases)} bumps, {n} old-series patches, {ups} upstream projects -> {args.out}"
        )
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
