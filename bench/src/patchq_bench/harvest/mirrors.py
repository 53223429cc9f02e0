"""The harvest's access to the local git mirrors (MIRRORS/OWNER+NAME/repo): the downstreams
it reads, git run on a mirror, blobs read in bulk, trees and tags.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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
