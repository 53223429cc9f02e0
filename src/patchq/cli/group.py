"""The `patchq` click group: its global options, the task headings of its help, and
what every command's callback shares (the `--continue`/`--abort` recovery, `--accept`,
`--force`, and `end`, which prints a result and exits as it says), with `recover`, the
stand-alone form of every command's `--continue`/`--abort`.

The commands register on `cli` from the `verbs_*` modules; `cli/main` loads them all and
maps failures to exit codes.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any

import click

from patchq import __version__
from patchq.cli import output, render
from patchq.core.errors import BadInputError, PatchqError
from patchq.stack.context import Context
from patchq.store.statedir import repo_lock, set_wait

pass_ctx = click.make_pass_decorator(Context)

# `patchq --help` lists the commands by task, in this order; a command missing here is
# still listed, under "Other", so adding one never hides it.
TASKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Set up", ("init", "import", "export", "lint", "trust")),
    (
        "Stack",
        (
            "series",
            "applied",
            "unapplied",
            "top",
            "push",
            "pop",
            "goto",
            "new",
            "refresh",
            "delete",
            "rename",
            "fold",
            "header",
            "sink",
            "float",
            "move",
            "guard",
            "undo",
        ),
    ),
    ("Inspect", ("status", "diff", "files", "patches")),
    ("Upstream", ("check", "rebase", "report", "codemod")),
    ("Reproduce", ("apply", "verify")),
    ("Recover", ("recover",)),
    ("Tour", ("demo",)),
)


class TaskGroup(click.Group):
    """A click group whose help lists the commands under task headings (TASKS)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        ordered = [n for _, names in TASKS for n in names if n in self.commands]
        return ordered + sorted(set(self.commands) - set(ordered))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        listed: set[str] = set()
        sections: list[tuple[str, list[click.Command]]] = []
        for heading, names in (*TASKS, ("Other", tuple(sorted(self.commands)))):
            cmds = [
                self.commands[n]
                for n in names
                if n in self.commands and not self.commands[n].hidden and n not in listed
            ]
            listed.update(c.name or "" for c in cmds)
            if cmds:
                sections.append((heading, cmds))
        # One name column for all sections, so the headings read as one table.
        width = max((len(c.name or "") for _, cmds in sections for c in cmds), default=0)
        for heading, cmds in sections:
            with formatter.section(heading):
                formatter.write_dl(
                    [
                        (
                            (c.name or "").ljust(width),
                            c.get_short_help_str(formatter.width - 6 - width),
                        )
                        for c in cmds
                    ]
                )


FORCE_HELP = (
    "Save uncommitted changes, and untracked or ignored files in the way, in a stash first."
)
FORCE_STASH_OPTION = click.option("-f", "--force", is_flag=True, help=FORCE_HELP)
ACCEPT_OPTION = click.option(
    "--accept",
    multiple=True,
    metavar="METHOD[,METHOD...]|all",
    help="Take these proposed methods without a stop (recorded, exit 1; docs/trust.md): "
    "fuzz, zealous, word, anchored, moved, delete-wins, upstreamed, rewritten (a patch "
    "fixed differently upstream), or all. Adds to "
    "`accept` in patchq.toml.",
)


def recovery_options(f: Any) -> Any:
    """--continue/--abort: finish or undo this command after it was killed half-way."""
    f = click.option(
        "--abort",
        "recover_abort",
        is_flag=True,
        help="Undo a run of this command that was interrupted.",
    )(f)
    return click.option(
        "--continue",
        "recover_continue",
        is_flag=True,
        help="Finish a run of this command that was interrupted.",
    )(f)


def run_recovery(ctx: Context, cont: bool, abort: bool) -> bool:
    """Run the recovery the flags ask for; True if the command should stop there."""
    from patchq.commands import recover as recover_cmd

    if not (cont or abort):
        return False
    if cont and abort:
        raise click.UsageError("--continue and --abort exclude each other")
    output.show(render.recovered(recover_cmd.recover(ctx, "continue" if cont else "abort")))
    return True


@click.group(
    cls=TaskGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="patchq")
@click.option(
    "--dir",
    "dir_",
    type=click.Path(file_okay=False, path_type=Path),
    help="The patch repo (default: nearest folder upwards with patchq.toml or series).",
)
@click.option(
    "--target",
    type=click.Path(file_okay=False, path_type=Path),
    help="The upstream git checkout (default: PATCHQ_TARGET, the config's `target`, "
    "else the patch repo's own checkout).",
)
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    is_flag=False,
    flag_value=600.0,
    default=None,
    metavar="[=SECONDS]",
    help="When another patchq is changing this patch repo or target, wait for it (up to "
    "SECONDS, default 600) instead of saying it is busy (exit 5).",
)
@click.pass_context
def cli(ctx: click.Context, *, dir_: Path | None, target: Path | None, wait: float | None) -> None:
    """Keep downstream patches as a series and carry them across upstream moves.

    \b
    Example:
      patchq --target ../sglang apply --onto v0.4.0
      patchq --wait=60 guard p.patch +sm120
      patchq verify
    """
    set_wait(wait or 0.0)
    ctx.obj = Context(dir=dir_, target=target)
    if ctx.invoked_subcommand in WRITERS:
        _hold_patch_repo(ctx, dir_)
    ctx.call_on_close(ctx.obj.close)
    # Run first (last registered): what the command went without, before git closes.
    ctx.call_on_close(partial(_say_unavailable, ctx.obj))


# The commands that change the patch repo: each holds its lock before it reads `series`,
# so two at once take turns (or the second says it is busy) and neither writes over the
# other. Read-only ones (status, series, check, verify, lint, report, …) take none.
WRITERS = frozenset(
    {
        "import", "push", "pop", "goto", "new", "refresh", "delete", "rename", "fold",
        "header", "sink", "float", "move", "guard", "undo", "rebase", "apply", "recover",
    }
)  # fmt: skip


def _hold_patch_repo(ctx: click.Context, dir_: Path | None) -> None:
    """Take the patch repo's lock for the whole command (released as it ends). Without a
    patch repo here there is nothing to hold: the command says so itself."""
    from patchq.store.patchrepo import PatchRepo

    try:
        root = dir_ if dir_ is not None else PatchRepo.find(Path.cwd())
    except BadInputError:
        return
    if root.is_dir():
        ctx.with_resource(repo_lock(root, recovering=True))


def accepted_methods(values: tuple[str, ...]) -> tuple[str, ...]:
    """The methods `--accept` names; a usage error (exit 2) names an unknown one."""
    from patchq.core.tiers import parse_accept

    try:
        return parse_accept(values)
    except ValueError as e:
        raise click.UsageError(f"--accept: {e}") from None


def announce(command: str, patch: str | None) -> None:
    """Say which run of the user's --exec command starts (its output follows)."""
    output.show(render.exec_starting(command, patch))


@cli.command()
@recovery_options
@pass_ctx
def recover(ctx: Context, *, recover_continue: bool, recover_abort: bool) -> None:
    """Finish (--continue) or undo (--abort) any command that was killed half-way.

    patchq journals every change to the target before making it, so a killed `new`,
    `fold`, `rename` or `header -e` (or any other) can always be completed or undone.

    \b
    Example:
      patchq recover --abort
    """
    if not run_recovery(ctx, recover_continue, recover_abort):
        raise click.UsageError("give --continue or --abort")


def _say_unavailable(ctx: Context) -> None:
    """Once, at the end of a command: the evidence it went without because git could not
    read an object of the upstream range (a partial or shallow clone)."""
    g = ctx.opened_git()
    if g is not None and g.unavailable:
        output.show(render.unavailable(g.unavailable))


def end(shown: render.Rendered, exit_code: int = 0, problem: PatchqError | None = None) -> None:
    """Print a command's rendered result, then end as the result says: its problem (an
    error `main` reports) or its exit code."""
    output.show(shown)
    if problem is not None:
        raise problem
    if exit_code:
        sys.exit(exit_code)
