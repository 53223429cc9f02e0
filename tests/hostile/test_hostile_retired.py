"""Moving a retired patch never overwrites a file.

With `retired = "move"`, a patch that left the series goes to `patches/.upstreamed/` or
`patches/.dropped/`. A file already there — retired by an earlier rebase, or put there by
a person — is kept: the newcomer takes the first free `name.N.patch`. And those folders
are patchq's: a series naming a patch inside them is bad input (`lint`, `check`: exit 4),
so a retired patch can never land on an active one.
"""

from __future__ import annotations

from collections.abc import Callable

from ..conftest import Queue, Result, Upstream
from ..store.test_layouts import files_of, gone_scenario

Run = Callable[..., Result]


def test_a_retired_patch_never_overwrites_one_retired_before(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    (queue.path / "patchq.toml").write_text('target = "../upstream"\nretired = "move"\n')
    base, _, _ = gone_scenario(upstream, queue, patchq)
    (queue.path / "series").write_text("a.patch\nfixes/e.patch\n")
    (queue.path / "patches" / "h.patch").unlink()
    assert patchq("apply", "--onto", base).code == 0
    e = (queue.path / "patches" / "fixes" / "e.patch").read_bytes()
    aside = queue.path / "patches" / ".upstreamed" / "fixes"
    aside.mkdir(parents=True)
    (aside / "e.patch").write_bytes(b"an older e, retired last year\n")
    (aside / "e.1.patch").write_bytes(b"and another\n")
    r = patchq("rebase", "--onto", "main")
    assert r.code == 0, r.err
    after = files_of(queue.path / "patches")
    assert after[".upstreamed/fixes/e.patch"] == b"an older e, retired last year\n"
    assert after[".upstreamed/fixes/e.1.patch"] == b"and another\n"
    assert after[".upstreamed/fixes/e.2.patch"] == e
    assert sorted(after) == [
        ".upstreamed/fixes/e.1.patch",
        ".upstreamed/fixes/e.2.patch",
        ".upstreamed/fixes/e.patch",
        "a.patch",
    ]


def test_an_active_patch_in_a_retired_folder_is_refused(
    upstream: Upstream, queue: Queue, patchq: Run
) -> None:
    upstream.write("f.txt", "one\n")
    base = upstream.commit("base")
    (queue.path / "patchq.toml").write_text(f'target = "../upstream"\npin = "{base}"\n')
    body = "x\n\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+two\n"
    for folder in (".dropped", ".upstreamed"):
        queue.add(f"{folder}/x.patch", body)
        (queue.path / "series").write_text(f"{folder}/x.patch\n")
        before = files_of(queue.path)
        for args in (["lint"], ["push"], ["apply"]):
            r = patchq(*args)
            assert r.code == 4, (args, r.err)
            said = r.out + r.err  # lint lists its findings on stdout
            assert f"{folder}/x.patch" in said and "retired patches" in said, said
        assert files_of(queue.path) == before
