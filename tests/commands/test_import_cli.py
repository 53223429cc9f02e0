"""`patchq import` end to end: every source, --after, and all-or-nothing refusals."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Queue, Runner, Upstream

DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"
DIFF_B = DIFF.replace("a.txt", "b.txt")
DIFF_C = DIFF.replace("a.txt", "c.txt")


def snapshot(q: Queue) -> dict[str, bytes]:
    return {
        str(p.relative_to(q.path)): p.read_bytes() for p in sorted(q.path.rglob("*")) if p.is_file()
    }


def test_import_files_keeps_names_and_bytes(queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    (tmp_path / "fix.patch").write_text("Subject: fix it\n\n" + DIFF)
    (tmp_path / "raw").write_text("From: A <a@x>\nSubject: [PATCH] from a gist\n\n" + DIFF_B)
    r = patchq("import", str(tmp_path / "fix.patch"), str(tmp_path / "raw"))
    assert r.code == 0, r.err
    assert r.out.split() == ["fix.patch", "0002-from-a-gist.patch"]
    assert queue.series() == "fix.patch\n0002-from-a-gist.patch\n"
    assert (queue.path / "patches" / "0002-from-a-gist.patch").read_bytes() == (
        tmp_path / "raw"
    ).read_bytes()


def test_import_after_and_clash(queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    queue.add("one.patch", DIFF).add("two.patch", DIFF_B)
    (tmp_path / "mid.patch").write_text(DIFF_C)
    assert patchq("import", "--after", "one.patch", str(tmp_path / "mid.patch")).code == 0
    assert queue.series() == "one.patch\nmid.patch\ntwo.patch\n"
    before = snapshot(queue)
    # The same content again is refused, and with --force gets a fresh name, never
    # overwriting the existing file.
    r = patchq("import", str(tmp_path / "mid.patch"))
    assert r.code == 4 and "same change as mid.patch" in r.err
    assert snapshot(queue) == before
    r = patchq("import", "--force", str(tmp_path / "mid.patch"))
    assert r.code == 0, r.err
    assert (queue.path / "patches" / "mid.patch").read_bytes() == before["patches/mid.patch"]
    r = patchq("import", "--after", "nope", str(tmp_path / "mid.patch"))
    assert r.code == 4 and "nope" in r.err


def test_malformed_input_writes_nothing(queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    queue.add("one.patch", DIFF)
    (tmp_path / "good.patch").write_text(DIFF)
    (tmp_path / "bad.patch").write_text("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1 @@\n-a\n")
    before = snapshot(queue)
    r = patchq("import", str(tmp_path / "good.patch"), str(tmp_path / "bad.patch"))
    assert r.code == 4
    assert "bad.patch:3:" in r.err and len(r.err.strip().splitlines()) == 1
    assert snapshot(queue) == before
    r = patchq("import", str(tmp_path / "missing.patch"))
    assert r.code == 4 and "no such file" in r.err
    assert patchq("import").code == 2


def test_import_git_range_and_mbox(
    upstream: Upstream, queue: Queue, patchq: Runner, tmp_path: Path
) -> None:
    upstream.write("a.txt", "a\n")
    base = upstream.commit("base")
    upstream.write("a.txt", "A\n")
    upstream.commit("Make a loud")
    upstream.write("b.txt", "b\n")
    top = upstream.commit("Add b")
    r = patchq("import", "--git", f"{base}..{top}")
    assert r.out.split() == ["0001-Make-a-loud.patch", "0002-Add-b.patch"], r.err
    text = (queue.path / "patches" / "0001-Make-a-loud.patch").read_text()
    assert text.startswith("From ") and "Subject: [PATCH 1/2] Make a loud" in text
    (tmp_path / "x.mbox").write_text(upstream.git("format-patch", "--stdout", f"{base}..{top}"))
    # The same commits again: refused as already in the series, unless --force.
    r = patchq("import", "--mbox", str(tmp_path / "x.mbox"))
    assert r.code == 4 and "same change as 0001-Make-a-loud.patch" in r.err
    r = patchq("import", "--force", "--mbox", str(tmp_path / "x.mbox"))
    assert r.code == 0
    assert r.out.split() == ["0003-Make-a-loud.patch", "0004-Add-b.patch"]
    r = patchq("import", "--git", f"{top}..{top}")
    assert r.code == 4 and "no commits" in r.err


def test_import_quilt_folder(queue: Queue, patchq: Runner, tmp_path: Path) -> None:
    q = tmp_path / "debian" / "patches"
    (q / "sub").mkdir(parents=True)
    (q / "series").write_text("# from quilt\n01.patch -p0\nsub/02.patch #+sm120\n")
    (q / "01.patch").write_text(DIFF.replace("a/a.txt", "a.txt").replace("b/a.txt", "a.txt"))
    (q / "sub" / "02.patch").write_text(DIFF_B)
    r = patchq("import", "--quilt", str(tmp_path / "debian"))
    assert r.code == 0, r.err
    assert queue.series() == "# from quilt\n01.patch -p0\nsub/02.patch #+sm120\n"
    assert (queue.path / "patches" / "sub" / "02.patch").read_text() == DIFF_B
