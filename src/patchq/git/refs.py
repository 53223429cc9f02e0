"""Refs and branches: which branch is checked out, moving a ref (with the old value
it must still have), checking a branch out and putting HEAD back, the other worktrees
that hold a branch, and a ref that keeps objects from `git gc`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from patchq.core.errors import GitError
from patchq.git.objects import TREE_MODE, ObjectWriter, render_tree
from patchq.git.store import ObjectStore


class Refs(ObjectStore):
    """The branches and refs of the target, and moving the checked-out one."""

    def head(self) -> str | None:
        return self.try_resolve("HEAD")

    def current_branch(self) -> str | None:
        head = (self.git_dir / "HEAD").read_bytes().strip()
        prefix = b"ref: refs/heads/"
        return (
            head[len(prefix) :].decode("utf-8", "surrogateescape")
            if head.startswith(prefix)
            else None
        )

    def ref_names(self) -> list[str]:
        """The short names of the branches, tags and remote branches (shell completion)."""
        out = self._run(
            "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags", "refs/remotes"
        )
        return [n for n in out.decode("utf-8", "surrogateescape").splitlines() if n]

    def update_ref(self, ref: str, new: str, old: str | None, reason: str) -> None:
        args = ["update-ref", "-m", reason, ref, new]
        if old is not None:
            args.append(old)
        self._run(*args)

    def drop_ref(self, ref: str) -> None:
        """Delete `ref` if it exists."""
        if self.try_resolve(ref, kind="") is not None:
            self._run("update-ref", "-d", ref)

    def keep_reachable(
        self, ref: str, commits: Iterable[str], trees: Iterable[str], why: str
    ) -> None:
        """Point `ref` at a commit whose parents are `commits` and whose tree holds
        `trees`, so no `git gc --prune=now` removes objects nothing else references."""
        w = ObjectWriter(self.common_dir / "objects")  # apart from the run's overlay
        entries = [(TREE_MODE, f"t{i}".encode(), t) for i, t in enumerate(dict.fromkeys(trees))]
        tree = w.add("tree", render_tree(entries))
        parents = [c for c in dict.fromkeys(commits) if c]
        who = b"patchq <patchq@localhost> 0 +0000"
        lines = [b"tree " + tree.encode(), *(b"parent " + c.encode() for c in parents)]
        lines += [b"author " + who, b"committer " + who]
        commit = w.add("commit", b"\n".join(lines) + b"\n\n" + why.encode() + b"\n")
        w.flush()
        self.update_ref(ref, commit, None, f"patchq: {why}")

    def checkout_branch(self, branch: str, commit: str, reason: str, force: bool = False) -> None:
        """Point `branch` at `commit` and check it out (`force`: over any local changes)."""
        self._run(
            "checkout",
            "-q",
            *(("-f",) if force else ()),
            "-B",
            branch,
            commit,
            env={"GIT_REFLOG_ACTION": f"patchq: {reason}"},
        )

    def move_checked_out(self, branch: str, commit: str, old: str | None, reason: str) -> None:
        """Point `branch` at `commit` only if it is still at `old` (`update-ref` with the
        old value: a commit made meanwhile makes it fail) and check it out without force,
        so a file changed meanwhile is carried or makes git refuse. On any failure the
        branch is put back and nothing else has moved."""
        why = f"patchq: {reason}"
        if old is not None and self.current_branch() == branch:
            # Already checked out: the two-tree merge `checkout` does, then the ref.
            self._run("update-index", "-q", "--refresh", check=False)
            self._run("read-tree", "-m", "-u", old, commit)
            try:
                self._run("update-ref", "-m", why, "HEAD", commit, old)
            except GitError:
                self._run("read-tree", "-m", "-u", commit, old)
                raise
            return
        ref = f"refs/heads/{branch}"
        self._run("update-ref", "-m", why, ref, commit, old or "0" * 40)
        try:
            self._run("checkout", "-q", branch, env={"GIT_REFLOG_ACTION": why})
        except GitError:
            if old is None:
                self._run("update-ref", "-d", ref, commit)
            else:
                self._run("update-ref", "-m", why, ref, old, commit)
            raise

    def switch_branch(self, branch: str, force: bool = False) -> None:
        """Check out the existing `branch` as it is (`force`: over any local changes)."""
        self._run("checkout", "-q", *(("-f",) if force else ()), branch)

    def restore_head(self, branch: str | None, head: str | None) -> None:
        """Put HEAD back on `branch`, or else detached at `head`, over any local changes."""
        if branch:
            self.switch_branch(branch, force=True)
        elif head:
            self._run("checkout", "-q", "-f", "--detach", head)

    def delete_branch(self, branch: str) -> None:
        """Delete `branch`, whether or not its commits are merged anywhere."""
        self._run("branch", "-q", "-D", branch)

    def reset_to(self, commit: str, reason: str) -> None:
        """Move the checked-out branch and the index to `commit`, leaving files alone."""
        self._run("reset", "-q", commit, "--", env={"GIT_REFLOG_ACTION": f"patchq: {reason}"})

    def worktree_holding(self, branch: str) -> str | None:
        """The other worktree of this repository that has `branch` checked out, if any
        (read from git's own records of its worktrees: no process)."""
        want = f"ref: refs/heads/{branch}".encode()
        here = os.path.realpath(self.git_dir)
        places = [(self.common_dir, self.common_dir.parent)]
        wts = self.common_dir / "worktrees"
        if wts.is_dir():
            for d in sorted(wts.iterdir()):
                try:
                    gitfile = (d / "gitdir").read_text().strip()
                except OSError:
                    continue
                places.append((d, Path(gitfile).parent))
        for gd, work in places:
            if os.path.realpath(gd) == here:
                continue
            try:
                head = (gd / "HEAD").read_bytes().strip()
            except OSError:
                continue
            if head == want and not (gd == self.common_dir and self._bare_common()):
                return str(work)
        return None

    def _bare_common(self) -> bool:
        """Whether the main repository of these worktrees is bare (its HEAD is no
        checkout)."""
        try:
            text = (self.common_dir / "config").read_text(errors="replace")
        except OSError:
            return False
        return re.search(r"^\s*bare\s*=\s*true\s*$", text, re.M | re.I) is not None
