"""The one exception root of patchq and the exit codes of DESIGN §3.

Every failure patchq expects is a `PatchqError` subclass carrying its exit code; the
CLI boundary (`cli.main`) is the only place that catches them and prints one line.
"""

from __future__ import annotations


class PatchqError(Exception):
    """A failure patchq expected: a message saying what, where and what to do."""

    exit_code = 1

    def __init__(self, what: str, where: str | None = None, hint: str | None = None) -> None:
        self.what = what
        self.where = where
        self.hint = hint
        super().__init__(self.line())

    def line(self) -> str:
        """The one-line form: `<where>: <what> — <hint>`."""
        text = f"{self.where}: {self.what}" if self.where else self.what
        if self.hint:
            text += f" — {self.hint}"
        return text


class DriftError(PatchqError):
    """Drift that patchq can handle without a person (check, verify)."""

    exit_code = 1


class ExecFailedError(PatchqError):
    """The person's `rebase --exec` command failed on the rebased series: the rebase is
    written, but not done (exit 1, as a failed check is)."""

    exit_code = 1


class UntrustedError(PatchqError):
    """A command patchq.toml names was not run: the person has not trusted it (`patchq
    trust`). The rebase is written, but the build or test it was configured to check
    with did not run (exit 1, as a failed one: a CI job must not take it for a pass)."""

    exit_code = 1


class AcceptedError(PatchqError):
    """A rebase took proposals (DESIGN §4.1) because the person accepted them: the
    rebase is written, but done only once a person reviewed them (exit 1)."""

    exit_code = 1


class ConflictError(PatchqError):
    """A conflict a person must resolve."""

    exit_code = 3


class BadInputError(PatchqError):
    """Malformed patch or series, unknown patch, unsafe path: nothing was changed."""

    exit_code = 4


class UnsafePathError(BadInputError):
    """A patch tried to touch a path outside the target or inside its .git."""


class UnsafeStateError(PatchqError):
    """Uncommitted changes patchq did not make, an operation in progress, a lock held."""

    exit_code = 5


class FaultError(UnsafeStateError):
    """The environment refused an operation: a full disk, a read-only or forbidden
    file or folder, a name longer than the file system allows, a file where a folder
    must be. Exit 5, one line naming the path; the command rolled back what it did."""

    @classmethod
    def from_os(cls, err: OSError, doing: str = "", where: str | None = None) -> FaultError:
        path = where if where is not None else err.filename
        what = err.strerror.lower() if err.strerror else str(err) or type(err).__name__
        head = f"cannot {doing}: " if doing else ""
        return cls(
            f"{head}{what}",
            str(path) if path is not None else None,
            "nothing was left half-written; fix the cause and run the command again",
        )


class GitError(PatchqError):
    """git itself failed; carries the command and its stderr. Not bad input (4): the
    patch and series may be fine while the target's git refuses (a stale index.lock, a
    damaged repository, a full disk), so scripts can tell the two apart (6)."""

    exit_code = 6


class MissingObjectError(GitError):
    """git could not read an object a command needs: a blob, tree or commit absent from
    the object store (a partial or shallow clone, a damaged store). Raised where the
    caller may go on without what the command would have read (an upstream range's
    history, read as evidence); elsewhere it ends the run as any GitError does (6).
    `oid`: the object git named, where it named one."""

    def __init__(
        self, what: str, where: str | None = None, hint: str | None = None, *, oid: str = ""
    ) -> None:
        super().__init__(what, where, hint)
        self.oid = oid


class ApplyError(ConflictError):
    """A hunk did not apply: names the patch, file and hunk."""
