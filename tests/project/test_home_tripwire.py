"""conftest's home tripwire: it fails a test that
writes into the real home a file git or patchq could write there, and stays quiet about
the files every other program on a shared machine writes in that home meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT, home_print, home_touched

# A run of the suite's own conftest in a child pytest, whose "real home" is a folder of
# ours: one test reaches past the seal as a careless test would, one writes what other
# programs write in a home.
INNER = """
import os
import subprocess
from tests.conftest import REAL_HOME


def test_writes_the_real_gitconfig():
    env = dict(os.environ, HOME=str(REAL_HOME), XDG_CONFIG_HOME=str(REAL_HOME / ".config"))
    subprocess.run(["git", "config", "--global", "user.name", "Escaped"], env=env, check=True)


def test_other_programs_files():
    (REAL_HOME / ".cache" / "pip").mkdir(parents=True)
    (REAL_HOME / ".cache" / "pip" / "wheel").write_text("x")
    (REAL_HOME / ".bash_history").write_text("ls\\n")
    (REAL_HOME / "notes.txt").write_text("mine\\n")
    # The same bytes written again (an editor saving, `touch`) are no change.
    (REAL_HOME / ".gitconfig").write_bytes((REAL_HOME / ".gitconfig").read_bytes())


def test_sealed_git_writes_nowhere_real():
    subprocess.run(["git", "config", "--global", "user.name", "Sealed"], check=True)
"""


def test_the_tripwire_sees_what_git_or_patchq_could_write(tmp_path: Path) -> None:
    before = home_print(tmp_path)
    (tmp_path / ".gitconfig").write_text("[user]\n\tname = x\n")
    assert home_touched(before, home_print(tmp_path)) == [".gitconfig"]
    before = home_print(tmp_path)
    (tmp_path / ".gitconfig").write_text("[user]\n\tname = y\n")  # same size, new bytes
    assert home_touched(before, home_print(tmp_path)) == [".gitconfig"]
    before = home_print(tmp_path)
    (tmp_path / ".config" / "git").mkdir(parents=True)
    (tmp_path / ".config" / "git" / "ignore").write_text("*.o\n")
    assert home_touched(before, home_print(tmp_path)) == [".config/git/ignore"]
    before = home_print(tmp_path)
    (tmp_path / ".gitconfig").unlink()
    assert home_touched(before, home_print(tmp_path)) == [".gitconfig"]
    assert home_touched(before, before) == []


def test_the_tripwire_ignores_other_programs_files(tmp_path: Path) -> None:
    (tmp_path / ".gitconfig").write_text("[user]\n\tname = x\n")
    before = home_print(tmp_path)
    (tmp_path / ".cache" / "pip").mkdir(parents=True)
    (tmp_path / ".cache" / "pip" / "x").write_text("x")
    (tmp_path / ".config" / "htop").mkdir(parents=True)
    (tmp_path / ".viminfo").write_text("x")
    (tmp_path / ".gitconfig").write_text("[user]\n\tname = x\n")  # rewritten, same bytes
    assert home_touched(before, home_print(tmp_path)) == []


def test_the_tripwire_fails_a_test_that_writes_the_real_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Real\n")
    (tmp_path / "test_inner.py").write_text(INNER)
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.conftest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "-rA",
            "--rootdir",
            str(tmp_path),
            "test_inner.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "ERROR test_inner.py::test_writes_the_real_gitconfig" in out, out
    assert f"the test touched the real home {home}: ['.gitconfig']" in out, out
    assert "PASSED test_inner.py::test_other_programs_files" in out, out
    assert "ERROR test_inner.py::test_other_programs_files" not in out, out
    assert "PASSED test_inner.py::test_sealed_git_writes_nowhere_real" in out, out
    assert "ERROR test_inner.py::test_sealed_git_writes_nowhere_real" not in out, out
    assert "Escaped" in (home / ".gitconfig").read_text()
    assert "Sealed" not in (home / ".gitconfig").read_text()
