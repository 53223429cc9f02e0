"""`trust`: mark the commands this patch repo's patchq.toml names as the person's own.

`patchq trust` lists the configured commands (`exec`, `exec-each`) and marks each one —
the patch repo root's absolute path and the sha256 of its exact text — in the person's
trust file (store/trust.py), so `rebase` runs them; `--list` shows every mark, `--revoke`
removes this patch repo's marks. See core/trust.py for why a configured command needs it.
"""

from __future__ import annotations

from dataclasses import dataclass

from patchq.core.errors import BadInputError
from patchq.core.trust import Configured, Mark, marked, revoked
from patchq.stack.context import Context
from patchq.store import trust as store

TRUSTED, LISTED, REVOKED = "trusted", "listed", "revoked"


@dataclass(frozen=True, slots=True)
class TrustOutcome:
    """What `trust` did (`action`), the trust file, and the marks it shows: the patch
    repo's new marks (trusted), every mark (listed), the marks removed (revoked)."""

    action: str
    file: str
    marks: tuple[Mark, ...]
    root: str | None  # the patch repo, when there is one
    configured: tuple[Configured, ...] = ()  # its commands, as trusted now

    exit_code = 0


def trust(ctx: Context) -> TrustOutcome:
    """Mark every command the patch repo's patchq.toml names as trusted."""
    repo = ctx.repo()
    root = str(repo.root)
    named = store.configured(repo.root, repo.config, ())
    if not named:
        return TrustOutcome(TRUSTED, str(store.path()), (), root)
    wanted = {c.key: c.command for c in named}
    written, marks = store.update(lambda now: marked(now, root, wanted))
    now = store.configured(repo.root, repo.config, marks)
    mine = tuple(m for m in marks if m.root == root)
    return TrustOutcome(TRUSTED, str(written), mine, root, now)


def listed(ctx: Context) -> TrustOutcome:
    """Every mark, and the commands of the patch repo here (if in one) with their trust."""
    marks = store.read()
    try:
        repo = ctx.repo()
    except BadInputError:
        return TrustOutcome(LISTED, str(store.path()), marks, None)
    return TrustOutcome(
        LISTED,
        str(store.path()),
        marks,
        str(repo.root),
        store.configured(repo.root, repo.config, marks),
    )


def revoke(ctx: Context) -> TrustOutcome:
    """Remove every mark of this patch repo."""
    repo = ctx.repo()
    root = str(repo.root)
    gone: tuple[Mark, ...] = ()

    def revoke_mine(marks: tuple[Mark, ...]) -> tuple[Mark, ...]:
        nonlocal gone
        gone = tuple(m for m in marks if m.root == root)
        return revoked(marks, root)

    store.update(revoke_mine)
    return TrustOutcome(
        REVOKED, str(store.path()), gone, root, store.configured(repo.root, repo.config, ())
    )
