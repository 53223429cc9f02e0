"""Materializing a parity case: the upstream tree at its commit and the downstream's
series, from the mirrors, into a folder the person names.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from patchq_bench.harvest.mirrors import Blobs, ls_tree, mirror_gitdir, substitute


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
