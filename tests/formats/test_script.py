"""`export --script`: the stdlib-only applier on a plain folder (no git, no patchq)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..conftest import Queue, Runner, Upstream


def tree_of(root: Path) -> dict[str, tuple[str, bool]]:
    """Every file's hash and executable bit."""
    return {
        str(p.relative_to(root)): (
            hashlib.sha256(p.read_bytes()).hexdigest(),
            os.access(p, os.X_OK),
        )
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def run_script(script: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    # A clean environment: the script must not need patchq or git.
    return subprocess.run(
        [sys.executable, "-S", str(script), str(folder)],
        capture_output=True,
        text=True,
        env={"PATH": "/nonexistent"},
    )


def test_script_applies_once_then_does_nothing_and_stops_on_drift(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("src/a.c", "".join(f"int a{i};\n" for i in range(30)))
    upstream.write("gone.txt", "bye\n").write("tool.sh", "#!/bin/sh\necho hi\n")
    base = upstream.commit("base")
    plain = tmp_path / "plain"
    shutil.copytree(upstream.path, plain, ignore=shutil.ignore_patterns(".git"))
    upstream.write("src/a.c", upstream.read("src/a.c").decode().replace("a5;", "a5 = 5;"))
    upstream.write("src/new/b.c", "int b;\n").remove("gone.txt")
    (upstream.path / "tool.sh").chmod(0o755)
    upstream.commit("downstream work")
    queue.add("work.patch", upstream.git("format-patch", "--stdout", "-1"))
    upstream.git("checkout", "-q", base)
    assert patchq("apply", "--onto", base).code == 0
    expected = tree_of(upstream.path)
    script = tmp_path / "apply-series.py"
    r = patchq("export", "--script", str(script))
    assert r.code == 0, r.err

    first = run_script(script, plain)
    assert first.returncode == 0, first.stderr
    assert tree_of(plain) == expected
    assert "patched  src/a.c" in first.stdout and "deleted  gone.txt" in first.stdout

    again = run_script(script, plain)
    assert again.returncode == 0
    assert again.stdout.strip() == "nothing to do: all 4 files are already patched"
    assert tree_of(plain) == expected

    drifted = tmp_path / "drifted"
    shutil.copytree(upstream.path, drifted, ignore=shutil.ignore_patterns(".git"))
    # Back to the base for all files but one, which someone edited by hand.
    for name in ("src/a.c", "tool.sh"):
        (drifted / name).write_bytes(upstream.git("show", f"{base}:{name}").encode())
    (drifted / "tool.sh").chmod(0o644)
    (drifted / "gone.txt").write_text("bye\n")
    shutil.rmtree(drifted / "src" / "new")
    (drifted / "src" / "a.c").write_text("edited by hand\n")
    before = tree_of(drifted)
    stop = run_script(script, drifted)
    assert stop.returncode == 1
    assert stop.stderr.startswith("drift: src/a.c (work.patch) is neither as upstream")
    assert tree_of(drifted) == before


def test_script_refuses_a_series_that_changes_a_symlink(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("a.txt", "a\n")
    (upstream.path / "link").symlink_to("a.txt")
    base = upstream.commit("base")
    queue.add(
        "l.patch",
        "diff --git a/link b/link\nindex 0000000..1111111 120000\n"
        "--- a/link\n+++ b/link\n@@ -1 +1 @@\n-a.txt\n"
        "\\ No newline at end of file\n+b.txt\n"
        "\\ No newline at end of file\n",
    )
    assert patchq("apply", "--onto", base).code == 0
    r = patchq("export", "--script", str(tmp_path / "s.py"))
    assert r.code == 4 and "changes the symlink 'link'" in r.err
    assert not (tmp_path / "s.py").exists()
