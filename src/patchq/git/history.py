"""Comparisons of trees and commits, and the upstream history between two commits: the
files two trees differ in (with renames), diffs written as `refresh` writes them, the
`log -p` of a range for drift and provenance, patch-ids, ancestry, and one commit's own
diff from a `git diff-tree --stdin` kept for the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from patchq.core.errors import BadInputError, GitError, MissingObjectError
from patchq.core.quoting import diff_git_names, unquote
from patchq.git.diffserver import CommitDiffs
from patchq.git.shallow import refuse_cut
from patchq.git.store import ObjectStore


def _patch_diff(context: int, full_index: bool = False) -> tuple[str, ...]:
    """The diff options of every patch patchq writes: renames detected, 12-digit index ids
    (stable across machines; whole ids with `full_index`, for a writer that abbreviates
    them as the patch did), no colour, no external tools, a/ and b/ prefixes."""
    return (
        "-p",
        "-M",
        f"-U{context}",
        "--full-index" if full_index else "--abbrev=12",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--binary",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--no-relative",
    )


# The most paths path_history names to git as pathspecs (see there).
PATHSPEC_MAX = 64
# What a run goes without where rename detection cannot read a blob (tree_changes).
RENAMES = "the renames upstream made (a patch on a renamed file stops instead)"


class History(ObjectStore):
    """What changed between trees and commits, and what upstream's range of commits did."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._commit_differ: CommitDiffs | None = None  # commits' own diffs, on need

    def added_paths(self, a: str, b: str) -> list[str]:
        """The files tree (or commit) `b` has and `a` has not."""
        out = self._run("diff-tree", "-r", "--name-only", "-z", "--diff-filter=A", a, b)
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def changed_paths(self, a: str, b: str, paths: Iterable[str] = ()) -> list[str]:
        """The files that differ between two trees (no renames), only under `paths` if any."""
        out = self._run(
            "diff-tree",
            "-r",
            "-z",
            "--name-only",
            "--no-renames",
            a,
            b,
            "--",
            *(f":(literal){p}" for p in paths),
        )
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def changed_blobs(self, a: str, b: str) -> dict[str, tuple[str | None, str | None]]:
        """Each file that differs between two trees → (blob in `a`, blob in `b`), or None."""
        raw = self._run("diff-tree", "-r", "--no-renames", "-z", a, b)
        out: dict[str, tuple[str | None, str | None]] = {}
        parts = raw.split(b"\0")
        i = 0
        zero = "0" * 40
        while i + 1 < len(parts):
            meta = parts[i].decode()
            path = parts[i + 1].decode("utf-8", "surrogateescape")
            i += 2
            fields = meta.lstrip(":").split()
            if len(fields) < 5:
                continue
            old, new = fields[2], fields[3]
            out[path] = (None if old == zero else old, None if new == zero else new)
        return out

    def renames(self, a: str, b: str) -> dict[str, str]:
        """The files git sees renamed between two trees or commits (old path → new path)."""
        return self.tree_changes(a, b)[0]

    def tree_changes(self, a: str, b: str) -> tuple[dict[str, str], frozenset[str]]:
        """The renames git sees between two trees or commits (old path → new path), and
        every path that changed (both names of a rename): one `diff-tree`. Where git
        cannot read a blob it would compare for a rename (a partial clone), the paths
        without the renames: a patch on a renamed file then finds it gone and stops."""
        try:
            out = self._run("diff-tree", "-r", "-M", "--name-status", "-z", "--no-ext-diff", a, b)
        except MissingObjectError as e:
            self.went_without(RENAMES, e)
            out = self._run(
                "diff-tree", "-r", "--no-renames", "--name-status", "-z", "--no-ext-diff", a, b
            )
        parts = out.split(b"\0")
        renames: dict[str, str] = {}
        changed: set[str] = set()
        i = 0
        while i < len(parts):
            status = parts[i]
            if status.startswith((b"R", b"C")) and i + 2 < len(parts):
                old = parts[i + 1].decode("utf-8", "surrogateescape")
                new = parts[i + 2].decode("utf-8", "surrogateescape")
                if status.startswith(b"R"):
                    renames[old] = new
                changed.update((old, new))
                i += 3
            elif status and i + 1 < len(parts):
                changed.add(parts[i + 1].decode("utf-8", "surrogateescape"))
                i += 2
            else:
                i += 1
        return renames, frozenset(changed)

    def path_history(self, old: str, new: str, paths: Sequence[str]) -> Iterator[bytes]:
        """The `log -p -U0` of `old..new` for `paths` (past PATHSPEC_MAX of them, for every
        file: the caller picks its own), oldest first: one output per git run."""

        # Paths go to git on its stdin, one per line, after `--`: however many files
        # drifted, one process. A name with a newline cannot go that way, nor one ending in
        # CR (git reads the lines as text and drops a CR before the LF); those few go as
        # arguments.
        def odd_name(n: str) -> bool:
            return "\n" in n or n.endswith("\r")

        plain = [n for n in paths if not odd_name(n)]
        odd = [n for n in paths if odd_name(n)]
        batches: list[tuple[list[str], bytes | None]] = []
        if len(paths) > PATHSPEC_MAX:
            # git matches every tree entry of every commit against every pathspec: 1,757
            # of them made curl's 1,100-commit log take 17 s instead of 1.8 s. Past a few
            # dozen, the whole range is asked and the caller keeps the files it wants.
            batches.append(([], None))
            odd = []
        elif plain:
            batches.append(
                (
                    ["--stdin"],
                    b"--\n" + "".join(n + "\n" for n in plain).encode("utf-8", "surrogateescape"),
                )
            )
        for i in range(0, len(odd), 400):
            batches.append((["--", *odd[i : i + 400]], None))
        for extra, stdin in batches:
            yield self._run(
                "log",
                "--reverse",
                "--topo-order",
                "--format=%x00%H %s",
                "-p",
                "-U0",
                "--no-color",
                "--no-ext-diff",
                "-M",
                f"{old}..{new}",
                *extra,
                input=stdin,
                env={"GIT_LITERAL_PATHSPECS": "1"},
            )

    def behind(self, ref: str, base: str) -> int:
        """How many commits `ref` is behind `base` when `base` holds all of `ref` (an
        older tag, say), else 0: one `rev-list` with both sides' counts."""
        out = self._run("rev-list", "--left-right", "--count", f"{ref}...{base}").decode()
        ahead, behind = (int(x) for x in out.split())
        return behind if ahead == 0 else 0

    def ancestors(self, candidates: Sequence[str], tip: str) -> dict[str, str]:
        """Those of `candidates` (full or abbreviated commit ids) that name a commit which
        is an ancestor of `tip` (or `tip` itself), each → its full id: one `rev-list`."""
        full = self.resolve_many(
            [c for c in candidates if c and all(x in "0123456789abcdef" for x in c.lower())]
        )
        if not full:
            return {}
        # Lists the commits `tip` cannot reach that the candidates can (a range: git walks
        # from the candidates down to what `tip` reaches), so a candidate `tip` reaches is
        # not among them. The candidates go on stdin: a whole series' origins, one process.
        tip_id = self.resolve(tip)
        wanted = "".join(f"{oid}\n" for oid in sorted(set(full.values())))
        out = self._run("rev-list", "--stdin", input=f"{wanted}^{tip_id}\n".encode())
        unreachable = set(out.decode().split())
        return {c: oid for c, oid in full.items() if oid not in unreachable}

    def patch_ids(self, diffs: Sequence[bytes]) -> list[str | None]:
        """git's stable patch-id of each diff (None where git finds no change in it): one
        `git patch-id` over them all."""
        if not diffs:
            return []
        data = b"".join(b"commit %040x\n" % (i + 1) + d for i, d in enumerate(diffs))
        out: list[str | None] = [None] * len(diffs)
        for line in self._run("patch-id", "--stable", input=data).decode().splitlines():
            pid, _, which = line.partition(" ")
            i = int(which, 16) - 1
            if 0 <= i < len(out):
                out[i] = pid
        return out

    def range_evidence(
        self, old: str, new: str, paths: Sequence[str], diffs: Sequence[bytes] = ()
    ) -> tuple[dict[str, list[str]], list[tuple[str, str, tuple[str, ...]]], list[str | None]]:
        """What provenance needs of `old..new`, in one `git log -p` and one `git patch-id`:
        patch-id → the commits (no merges) with it, whole diffs of those that touched
        one of `paths`; (commit, subject, files it changed) for each of them, newest
        first; and the patch-id of each of `diffs` (None where git finds no change)."""
        log = b""
        # Past PATHSPEC_MAX files the whole range is read and the commits that touched none
        # of them are left out here (git's pathspec match is per entry, per pathspec).
        whole = len(paths) > PATHSPEC_MAX
        if paths:
            log = self._run(
                "log",
                "-p",
                "--no-merges",
                "--no-renames",
                "--no-color",
                "--full-diff",  # the whole commit, whichever of `paths` it touched
                "--format=commit %H%n\x01%s",
                f"{old}..{new}",
                *(() if whole else ("--stdin",)),
                input=None if whole else _paths_input(paths),
                env={"GIT_LITERAL_PATHSPECS": "1"},
            )
        commits: list[tuple[str, str, tuple[str, ...]]] = []
        commit = subject = ""
        files: list[str] = []
        touched: set[str] = set()  # what each commit's `diff --git` lines name (whole)
        wanted = {p for p in paths if "\n" not in p and not p.endswith("\r")}
        kept: list[bytes] = []  # the log of the commits kept (whole), for patch-id
        start = 0

        def close(end: int) -> None:
            if commit and (not whole or touched & wanted):
                commits.append((commit, subject, tuple(dict.fromkeys(files))))
                if whole:
                    kept.append(log[start:end])

        at = 0
        for line in log.split(b"\n"):
            if line.startswith(b"commit ") and len(line) == 47:
                close(at)
                commit, subject, files, touched, start = line[7:].decode(), "", [], set(), at
            elif line.startswith(b"\x01") and not subject:
                subject = line[1:].decode("utf-8", "replace")
            elif line.startswith((b"--- a/", b"+++ b/")):
                files.append(_diff_name(line[6:]))
            elif line.startswith((b'--- "a/', b'+++ "b/')):
                files.append(_diff_name(line[4:]))
            elif whole and line.startswith(b"diff --git "):
                touched.update(diff_git_names(line[11:]))
            at += len(line) + 1
        close(len(log))
        refuse_cut(self.common_dir, str(self.root), old, new, (c for c, _, _ in commits))
        if whole:
            log = b"".join(kept)
        # The series' diffs ride in the same patch-id run, under ids no commit has.
        fake = [f"{'f' * 32}{i:08x}" for i in range(len(diffs))]
        fakes = set(fake)
        data = log + b"".join(
            f"commit {f}\n".encode() + d for f, d in zip(fake, diffs, strict=True)
        )
        ids: dict[str, list[str]] = {}
        own: dict[str, str] = {}
        if data.strip():
            for row in self._run("patch-id", "--stable", input=data).decode().splitlines():
                pid, _, which = row.partition(" ")
                if which.startswith("f" * 32) and which in fakes:
                    own[which] = pid
                else:
                    ids.setdefault(pid, []).append(which)
        return ids, commits, [own.get(f) for f in fake]

    def commit_diff(self, commit: str) -> bytes:
        """The -U0 diff of one commit against its first parent (no renames), from one
        `git diff-tree --stdin` kept for the run: however many commits are asked about,
        one process. Where that process dies (it cannot read an object of the commit),
        the commit is asked of a git of its own, whose error says why
        (MissingObjectError for a missing object), and the next commit starts another."""
        if not re.fullmatch(r"[0-9a-f]{40}", commit):
            commit = self.resolve(commit)
        if self._commit_differ is None:
            self._commit_differ = CommitDiffs(self.root, self.env())
            self.processes += 1
        try:
            return self._commit_differ.ask(commit)
        except GitError:
            self._commit_differ = None
            return self._run("diff-tree", *CommitDiffs.OPTIONS, commit)

    def diff_trees(self, a: str, b: str, context: int = 3, *, full_index: bool = False) -> bytes:
        """git's own diff between two trees, as `refresh` writes it: renames detected,
        12-digit index ids (stable across machines; whole ones with `full_index`), no
        colour, no external tools."""
        return self._run("diff-tree", *_patch_diff(context, full_index), a, b)

    def diff_trees_many(
        self, pairs: Sequence[tuple[str, str]], context: int = 3, *, full_index: bool = False
    ) -> list[bytes]:
        """`diff_trees` for many pairs of trees in one `git diff-tree --stdin`: a rebase
        that refreshes hundreds of patches starts one process, not hundreds."""
        if not pairs:
            return []
        lines = "".join(f"{a} {b}\n" for a, b in pairs).encode()
        out = self._run("diff-tree", "--stdin", *_patch_diff(context, full_index), input=lines)
        # git echoes each input line before that pair's diff (nothing for identical trees);
        # no diff line can equal "<40 hex> <40 hex>", every one starts with its own mark.
        waiting: dict[bytes, list[int]] = {}
        for i, (a, b) in enumerate(pairs):
            waiting.setdefault(f"{a} {b}".encode(), []).append(i)
        chunks: list[list[bytes]] = [[] for _ in pairs]
        current = -1
        for line in out.split(b"\n")[:-1] if out.endswith(b"\n") else out.split(b"\n"):
            queue = waiting.get(line)
            if queue and queue[0] > current:
                current = queue.pop(0)
                continue
            if current >= 0:
                chunks[current].append(line + b"\n")
        return [b"".join(c) for c in chunks]

    def format_patch(self, revision_range: str) -> bytes:
        """`git format-patch --stdout` of a range: the mbox that `import --git` reads."""
        if revision_range.startswith("-"):
            raise BadInputError(f"invalid range {revision_range!r}", "import --git")
        return self._run(
            "format-patch",
            "--stdout",
            "--no-stat",
            "--full-index",
            "--no-signature",
            "--binary",
            revision_range,
        )

    def close(self) -> None:
        if self._commit_differ is not None:
            self._commit_differ.close()
            self._commit_differ = None
        super().close()


def _diff_name(raw: bytes) -> str:
    """A path from a `---`/`+++` line after its a/ or b/ (quoted as git quotes)."""
    raw = raw.rstrip(b"\r")
    if raw.startswith(b'"'):
        raw = unquote(raw)[2:]
    return raw.decode("utf-8", "surrogateescape")


def _paths_input(paths: Iterable[str]) -> bytes:
    """Paths for `git log --stdin` (after `--`, one a line): however many, one process.
    A name git cannot read as one line (a newline in it, or a CR at its end) is left out:
    such a file's commits are then simply not seen as evidence."""
    ok = [p for p in paths if "\n" not in p and not p.endswith("\r")]
    return b"--\n" + "".join(p + "\n" for p in ok).encode("utf-8", "surrogateescape")
