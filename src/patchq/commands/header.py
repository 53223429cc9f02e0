"""`header`: print a patch's header, or replace it (the diff below is kept byte for byte).

An applied patch's commit takes the new header's author and message; an edit that would
break the patch changes nothing and keeps the typed text in a file of its own.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from patchq.core.errors import BadInputError
from patchq.core.patch import parse
from patchq.git.repo import GitRepo
from patchq.stack import journal
from patchq.stack import moves as stack_ops
from patchq.stack.apply import load_patch
from patchq.stack.context import Context
from patchq.stack.targets import check_branch
from patchq.store.patchrepo import PATCHES
from patchq.store.stack import load
from patchq.store.statedir import repo_lock, run_lock


@dataclass(frozen=True, slots=True)
class HeaderOutcome:
    """The patch, its header as it now is, and whether an edit changed it."""

    name: str
    text: str
    changed: bool = False


def header(
    ctx: Context, name: str | None, edit: Callable[[str], str | None] | None
) -> HeaderOutcome:
    """The header of a patch; with `edit`, replace it (the diff is kept byte for byte)."""
    repo = ctx.repo()
    name = name or stack_ops.top(ctx)
    entry = stack_ops.entry(repo, name)
    data, patch = load_patch(repo, entry)
    text = patch.header.decode("utf-8", "surrogateescape")
    if edit is None:
        return HeaderOutcome(name, text)
    try:
        g: GitRepo | None = ctx.git()
    except BadInputError:  # a patch repo edited on its own: no stack to follow
        g = None
    if g is not None:
        stack_ops.refuse_during_rebase(ctx)
    stack = load(g.state_dir(), repo.config.queue) if g is not None else None
    if g is not None and stack is not None and name in stack.applied:
        check_branch(g, stack)  # refuse before the editor opens, not after the typing
    changed = edit(text)
    if changed is None or changed == text:
        return HeaderOutcome(name, text)
    new_header = changed.encode("utf-8", "surrogateescape")
    if new_header and not new_header.endswith(b"\n"):
        new_header += b"\n"
    new_data = new_header + data[len(patch.header) :]
    try:
        new_patch = parse(new_data, repo.display(name), entry.strip_level(repo.config.strip))
    except BadInputError as e:
        # Nothing is changed, and nothing typed is lost: the text goes to a file of its own.
        fd, kept = tempfile.mkstemp(prefix=f"patchq-header-{Path(name).name}-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(changed)
        raise BadInputError(
            f"the edited header would break the patch: {e.what}",
            e.where,
            f"nothing was changed; your text is saved in {kept}",
        ) from None
    files: dict[str, bytes | None] = {f"{PATCHES}/{name}": new_data}
    if g is None:
        with repo_lock(repo.root):
            repo.write_patch(name, new_data)
        return HeaderOutcome(name, changed, True)
    with run_lock(g.state_dir(), repo.root):
        stack = load(g.state_dir(), repo.config.queue)
        if stack is not None and name in stack.applied:
            stack_ops.rewrite_messages(g, repo, stack, name, new_patch, op="header", files=files)
        else:
            journal.run(
                g,
                repo.root,
                journal.Plan("header", "", None, None, repo.config.queue, files=files, reason=name),
            )
    return HeaderOutcome(name, changed, True)
