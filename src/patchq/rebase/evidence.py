"""Provenance (DESIGN §4): why a patch may already be upstream, and whether it is.

Evidence, strongest first: the patch's own origin (core.header.origins) is an ancestor
of the new upstream; its patch-id equals an upstream commit's in `old base..onto`; its
subject and the files it touches match such a commit. Evidence is never proof on its
own: the replay takes a patch as upstreamed only when the new upstream holds its change
(the region-bounded content test) or the named commit's own diff holds it (a trimmed
backport, `holds`). Each lookup is one batched git call for the whole run, made the
first time a patch needs it and kept for the rest of the replay: the origins of every
patch of the series are asked about in one `rev-list`, the range's patch-ids in one
`patch-id`, and the commits `holds` reads come from one `diff-tree` kept for the run.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from patchq.core.errors import MissingObjectError
from patchq.core.header import header_info, origins
from patchq.core.patch import FilePatch, Hunk, Patch
from patchq.core.records import ORIGIN, PATCH_ID, SUBJECT, Evidence, HunkOutcome
from patchq.core.status import CONFLICT, MISSING, UPSTREAMED
from patchq.git.repo import GitRepo

_PREFIX = re.compile(r"^(\s*\[[^\]]*\]\s*)+")

# What the run goes without where git cannot read an object of the range (a partial or
# shallow clone): said once on stderr. Missing evidence never lets a patch finish alone
# that it might have stopped (Replay._judge, `holds`).
RANGE = "the range's patch-ids and subjects (a patch not placed exactly stops instead)"
OWN_DIFF = "an upstream commit's own diff (a patch naming it stops instead)"
# Why a patch stops where the range's history could not be read (RANGE).
UNREAD = (
    "the upstream history could not be read whole (an object is missing, or the range "
    "crosses a shallow clone's cut): whether upstream took this patch is not known, so "
    "it is not decided alone"
)


def _subject_key(subject: str | None) -> str | None:
    """A subject as compared: no `[PATCH …]` prefix, case, blanks or final period."""
    if not subject:
        return None
    s = _PREFIX.sub("", subject)
    s = " ".join(s.split()).rstrip(".").strip().lower()
    return s if len(s) >= 10 else None  # "fix build" names too many commits


def diff_text(sections: Sequence[FilePatch]) -> bytes:
    """The patch as a git diff that `git patch-id` reads (names and hunks only)."""
    out = []
    for s in sections:
        if s.binary or not s.hunks:
            continue
        old = s.old_path or s.new_path or ""
        new = s.new_path or s.old_path or ""
        out.append(f"diff --git a/{old} b/{new}\n".encode("utf-8", "surrogateescape"))
        out.append(
            (f"--- a/{old}\n" if s.old_path else "--- /dev/null\n").encode(
                "utf-8", "surrogateescape"
            )
        )
        out.append(
            (f"+++ b/{new}\n" if s.new_path else "+++ /dev/null\n").encode(
                "utf-8", "surrogateescape"
            )
        )
        out.extend(h.render() for h in s.hunks)
    return b"".join(out)


def _ended(x: bytes) -> bytes:
    return x if x.endswith(b"\n") else x + b"\n"


@dataclass(slots=True)
class Provenance:
    """The range's patch-ids, subjects and commit diffs, fetched once as needed."""

    g: GitRepo
    old: str
    onto: str
    # The patches the whole replay will ask about, read the first time any is needed, so
    # that the range is read in one pass and every origin asked about in one query,
    # rather than once per patch.
    expected: Callable[[], Sequence[Patch]] | None = None
    _paths: set[str] = field(default_factory=set)
    _want_paths: set[str] = field(default_factory=set)  # the series', not yet covered
    _texts: list[bytes] = field(default_factory=list)  # the series' diffs, not yet sent
    _want_origins: set[str] = field(default_factory=set)  # the series', not yet asked
    _asked: set[str] = field(default_factory=set)  # origins asked about
    _upstream: dict[str, str] = field(default_factory=dict)  # origin → full id, if upstream
    _own_ids: dict[bytes, str | None] = field(default_factory=dict)  # diff text → patch-id
    _ids: dict[str, list[str]] = field(default_factory=dict)
    _commits: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)
    _diffs: dict[str, dict[str, tuple[Counter[bytes], Counter[bytes]]] | None] = field(
        default_factory=dict
    )
    # Whether the range's history could not be read whole (git missed an object): then
    # the patch-id and subject rules had nothing to look at.
    unavailable: bool = False

    def _load(self) -> None:
        """Read the series the replay will ask about, once: every file, diff and origin
        of it, so that what the first patch asks fetches the answers for all of them."""
        if self.expected is None:
            return
        patches = self.expected()
        self.expected = None
        self._want_paths = {p for x in patches for s in x.sections for p in s.paths}
        self._texts = list(dict.fromkeys(diff_text(x.sections) for x in patches))
        self._want_origins = {c for x in patches for c in origins(x.header)}

    def upstream(self, named: Sequence[str]) -> dict[str, str]:
        """Those of `named` that name an ancestor of the new upstream, each → its full id:
        with the series' other origins, in one `rev-list` for the whole run."""
        if any(c not in self._asked for c in named):
            self._load()
            ask = (set(named) | self._want_origins) - self._asked
            self._want_origins = set()
            self._asked |= ask
            self._upstream.update(self.g.ancestors(sorted(ask), self.onto))
        return {c: self._upstream[c] for c in named if c in self._upstream}

    def _cover(self, paths: Iterable[str]) -> None:
        """Know every commit of the range that touched one of `paths` (whole diffs)."""
        self._load()
        wanted = set(paths) | self._want_paths
        self._want_paths = set()
        texts, self._texts = self._texts, []
        new = sorted(wanted - self._paths)
        if (not new and not texts) or self.old == self.onto:
            return
        self._paths.update(new)
        try:
            ids, commits, own = self.g.range_evidence(self.old, self.onto, new, texts)
        except MissingObjectError as e:
            self.unavailable = True
            self.g.went_without(RANGE, e)
            return
        self._own_ids.update(zip(texts, own, strict=True))
        for pid, found in ids.items():
            known = self._ids.setdefault(pid, [])
            known.extend(c for c in found if c not in known)
        for commit, subject, files in commits:
            self._commits.setdefault(commit, (subject, frozenset(files)))

    def find(self, patch: Patch, paths: Sequence[str], weak: bool = True) -> Evidence | None:
        """The strongest evidence that `patch` is upstream, or None; `weak`: also look
        by patch-id and subject (else only the patch's own origin)."""
        named = origins(patch.header)
        if named:
            found = self.upstream(named)
            for c in named:
                if c in found:
                    return Evidence(ORIGIN, found[c])
        if not weak or self.old == self.onto:
            return None
        self._cover(paths)
        # A patch-id covers every file a commit touched: only a commit that changed the
        # very files the patch changes can share it (one git process saved a patch).
        mine = frozenset(p for s in patch.sections for p in s.paths)
        if any(files == mine for _, files in self._commits.values()):
            text = diff_text(patch.sections)
            if text not in self._own_ids:
                (self._own_ids[text],) = self.g.patch_ids([text])
            pid = self._own_ids[text]
            if pid is not None and self._ids.get(pid):
                return Evidence(PATCH_ID, self._ids[pid][0])
        key = _subject_key(header_info(patch.header).subject)
        if key is not None:
            touched = set(paths)
            for commit, (subject, files) in self._commits.items():
                if _subject_key(subject) == key and touched & files:
                    return Evidence(SUBJECT, commit)
        return None

    def holds(self, commit: str, hunks: Sequence[tuple[Sequence[str], Hunk]]) -> bool:
        """Whether `commit`'s own diff holds every hunk's change: each hunk's removed and
        added lines among that commit's removed and added lines of one of the hunk's
        paths (a trimmed backport holds a part of the commit). A line a hunk removes and
        adds again is only moved: another diff of the same change may keep it as context
        (a blank line between two rewritten blocks), so it is not asked for."""
        if commit not in self._diffs:
            try:
                self._diffs[commit] = _lines_by_file(self.g.commit_diff(commit))
            except MissingObjectError as e:
                # Not shown to hold it: the patch stops (never taken as upstreamed).
                self.g.went_without(OWN_DIFF, e)
                self._diffs[commit] = None
        per_file = self._diffs[commit]
        if per_file is None:
            return False
        for paths, h in hunks:
            removed = Counter(_ended(c) for t, c in h.lines if t == "-")
            added = Counter(_ended(c) for t, c in h.lines if t == "+")
            rem, add = removed - added, added - removed
            if not rem and not add:
                continue
            if not any(
                p in per_file and rem <= per_file[p][0] and add <= per_file[p][1] for p in paths
            ):
                return False
        return True


def _lines_by_file(diff: bytes) -> dict[str, tuple[Counter[bytes], Counter[bytes]]]:
    """A -U0 diff's removed and added lines per file (by its new name, and its old)."""
    out: dict[str, tuple[Counter[bytes], Counter[bytes]]] = {}
    names: list[str] = []
    cur: tuple[Counter[bytes], Counter[bytes]] | None = None
    in_hunk = False
    for line in diff.splitlines(keepends=True):
        if line.startswith(b"diff --git "):
            cur, names, in_hunk = (Counter(), Counter()), [], False
            continue
        if cur is None:
            continue
        if not in_hunk and line.startswith((b"--- ", b"+++ ")):
            name = line[4:].rstrip(b"\r\n").decode("utf-8", "surrogateescape")
            if name != "/dev/null":
                name = name[2:] if name[:2] in ("a/", "b/") else name
                names.append(name)
                out.setdefault(name, cur)
                cur = out[name]
            continue
        if line.startswith(b"@@"):
            in_hunk = True
            continue
        if in_hunk and line[:1] == b"-":
            cur[0][_ended(line[1:])] += 1
        elif in_hunk and line[:1] == b"+":
            cur[1][_ended(line[1:])] += 1
    return out


def all_taken(hunks: Sequence[HunkOutcome], why: str) -> list[HunkOutcome]:
    """The patch's hunks all upstreamed: those upstream holds as they are, the rest for
    `why` (the evidence that upstream took the whole patch)."""
    return [
        h
        if h.status == UPSTREAMED
        else HunkOutcome(h.file, h.index, UPSTREAMED, reason=why, drift=h.drift)
        for h in hunks
    ]


def held_back(hunks: Sequence[HunkOutcome], why: str) -> list[HunkOutcome]:
    """The patch's hunks with every one that is not upstream's or already a stop made a
    conflict saying `why`: the patch stops, nothing of it decided alone (evidence that
    names it without the change, or evidence that could not be read: UNREAD)."""
    return [
        h
        if h.status in (UPSTREAMED, CONFLICT, MISSING)
        else replace(h, status=CONFLICT, reason=why, offset=0, fuzz=0, anchored=False, via="")
        for h in hunks
    ]
