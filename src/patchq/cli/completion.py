"""Shell completion of patch names and refs, through click's own machinery.

`eval "$(_PATCHQ_COMPLETE=bash_source patchq)"` (or zsh_source, fish_source) installs it;
the shell then runs patchq with `_PATCHQ_COMPLETE=bash_complete`, and the callbacks here
answer. They run before any command callback, so they open the patch repo and target
from the global options themselves, and they never fail: a shell prints nothing rather
than an error while someone types.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
from click.shell_completion import CompletionItem

from patchq.stack.context import Context

Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


def _context(ctx: click.Context) -> Context:
    params = ctx.find_root().params
    dir_, target = params.get("dir_"), params.get("target")
    return Context(
        dir=Path(dir_) if dir_ is not None else None,
        target=Path(target) if target is not None else None,
    )


def words(kind: str) -> Completer:
    """A click `shell_complete` callback offering the `kind` words of `complete.words`
    that start with what has been typed."""

    def complete(
        ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        from patchq.commands import complete as offers  # here: not loaded by other runs

        session = _context(ctx)
        try:
            found = offers.words(session, kind)
        except Exception:  # noqa: BLE001 - a completion never shows an error
            return []
        finally:
            session.close()
        return [CompletionItem(w) for w in found if w.startswith(incomplete)]

    return complete


# The kinds of `complete.words`.
SERIES = words("series")
APPLIED = words("applied")
UNAPPLIED = words("unapplied")
REFS = words("refs")
GUARDS = words("guards")
