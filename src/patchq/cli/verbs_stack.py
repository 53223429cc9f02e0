"""The commands that read and move the applied stack: `series`, `applied`, `unapplied`,
`top`, `push`, `pop`, `goto`, and `undo` of the last stack operation.

Each click callback parses options, calls one command and hands its result to
`cli/render`; `cli/group` holds the `patchq` group they register on.
"""

from __future__ import annotations

import click

from patchq.cli import completion, output, render
from patchq.cli.group import (
    ACCEPT_OPTION,
    FORCE_HELP,
    FORCE_STASH_OPTION,
    accepted_methods,
    cli,
    end,
    pass_ctx,
    recovery_options,
    run_recovery,
)
from patchq.stack.context import Context
from patchq.store.statedir import crashpoint


@cli.command("series")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Mark patches as in quilt: = top, + applied, # guarded out.",
)
@click.option("--guard", "guards", multiple=True, help="Treat this guard as active (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print each patch's state as JSON.")
@pass_ctx
def series_cmd(ctx: Context, *, verbose: bool, guards: tuple[str, ...], as_json: bool) -> None:
    """List the patches of the series, one a line.

    During a rebase, -v tells the rebase: + replayed onto the new base, - upstreamed or
    dropped, ! the patch it stopped at, blank still to come.

    \b
    Example:
      patchq series -v
    """
    from patchq.commands import queries

    if verbose or as_json:
        output.show(render.series_view(queries.series_view(ctx, guards), as_json, verbose))
    else:
        output.show(render.names(queries.series(ctx)))


@cli.command("applied")
@pass_ctx
def applied_cmd(ctx: Context) -> None:
    """List the applied patches, bottom first.

    \b
    Example:
      patchq applied | wc -l
    """
    from patchq.commands import queries

    output.show(render.names(queries.applied(ctx)))


@cli.command("unapplied")
@pass_ctx
def unapplied_cmd(ctx: Context) -> None:
    """List the active patches not applied yet.

    \b
    Example:
      patchq unapplied
    """
    from patchq.commands import queries

    output.show(render.names(queries.unapplied(ctx)))


@cli.command()
@pass_ctx
def top(ctx: Context) -> None:
    """Print the top applied patch (exit 4 if none).

    \b
    Example:
      patchq top
    """
    from patchq.commands import queries

    output.show(render.names((queries.top(ctx),)))


@cli.command()
@click.argument("target", required=False, metavar="[NAME|N]", shell_complete=completion.UNAPPLIED)
@click.option("-a", "--all", "all_", is_flag=True, help="Push every remaining active patch.")
@click.option("--fuzz", type=click.IntRange(0, 3), help="Allow fuzz up to N (default: config, 0).")
@click.option(
    "--merge",
    is_flag=True,
    help="Fall back to a 3-way merge against the lock's base; "
    "conflicts are left as markers in the working tree.",
)
@click.option(
    "-f",
    "--force",
    is_flag=True,
    help=FORCE_HELP + " Also reset a stack branch patchq did not make.",
)
@ACCEPT_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--abort",
    "recover_abort",
    is_flag=True,
    help="After a stop at a patch (markers, or proposals in the working tree): put "
    "everything back as before the push. Also: undo a push that was interrupted.",
)
@click.option(
    "--continue",
    "recover_continue",
    is_flag=True,
    help="After a stop at a patch: take the working tree into the patch (as `refresh`) "
    "and push on as the push would have. Also: finish a push that was interrupted.",
)
@pass_ctx
def push(
    ctx: Context,
    *,
    target: str | None,
    all_: bool,
    fuzz: int | None,
    merge: bool,
    force: bool,
    accept: tuple[str, ...],
    as_json: bool,
    recover_continue: bool,
    recover_abort: bool,
) -> None:
    """Apply the next patch, N patches, up to NAME, or all (-a) on top of the stack.

    Stops with exit 3 at a patch that does not apply, leaving the stack at the last good
    patch. With --merge a patch that needs a 3-way merge is pushed and the merge is left
    in the working tree; resolve it and run `patchq refresh`. A patch git's merge does
    not place climbs the rebase's ladder: a proposed method (word, zealous, anchored, ...)
    stops the push for review with the proposal in the working tree, no markers (exit 3);
    --accept takes such proposals without a stop (exit 1: review them). After a stop,
    `--continue` takes the working tree into the patch and pushes on; `--abort` puts
    everything back as before the push.

    \b
    Examples:
      patchq push            # the next patch
      patchq push -a         # all of them
      patchq push 0003-fa3-optional.patch --merge
      patchq push --continue # after a stop: take the files as they are, push on
    """
    from patchq.commands import push as push_cmd
    from patchq.commands import refresh as refresh_cmd

    stop = push_cmd.stopped(ctx) if recover_continue != recover_abort else None
    if stop is not None and recover_abort:
        output.show(render.push_aborted(push_cmd.abort(ctx)))
        return
    if stop is None and recover_continue != recover_abort:
        # A push --continue killed between taking the tree and pushing on.
        stop = push_cmd.continuing(ctx, abort=recover_abort)
    elif stop is not None:
        output.show(render.refreshed(refresh_cmd.refresh(ctx, None, going_on=stop)))
        crashpoint("push:continued")
    if stop is not None:
        with output.Progress("pushing") as bar:
            out = push_cmd.resume(ctx, stop, bar, force=force)
        end(render.moved_stack(out, as_json), out.exit_code, out.problem)
        return
    if run_recovery(ctx, recover_continue, recover_abort):
        return
    if accept and not merge:
        raise click.UsageError("--accept goes with --merge (proposals come from its ladder)")
    with output.Progress("pushing") as bar:
        out = push_cmd.push(
            ctx,
            target,
            all_=all_,
            fuzz=fuzz,
            merge=merge,
            force=force,
            progress=bar,
            accept=accepted_methods(accept),
        )
    end(render.moved_stack(out, as_json), out.exit_code, out.problem)


@cli.command()
@click.argument("target", required=False, metavar="[NAME|N]", shell_complete=completion.APPLIED)
@click.option("-a", "--all", "all_", is_flag=True, help="Pop every applied patch.")
@FORCE_STASH_OPTION
@recovery_options
@pass_ctx
def pop(
    ctx: Context,
    *,
    target: str | None,
    all_: bool,
    force: bool,
    recover_continue: bool,
    recover_abort: bool,
) -> None:
    """Remove the top patch, N patches, down to NAME (which stays applied), or all (-a).

    \b
    Examples:
      patchq pop
      patchq pop -a
      patchq pop 0002-cccl-include.patch
    """
    from patchq.commands import pop as pop_cmd

    if run_recovery(ctx, recover_continue, recover_abort):
        return
    out = pop_cmd.pop(ctx, target, all_, force)
    end(render.moved_stack(out), out.exit_code, out.problem)


@cli.command()
@click.argument("name", required=False, shell_complete=completion.SERIES)
@FORCE_STASH_OPTION
@recovery_options
@pass_ctx
def goto(
    ctx: Context, *, name: str | None, force: bool, recover_continue: bool, recover_abort: bool
) -> None:
    """Push or pop until NAME is the top patch.

    \b
    Example:
      patchq goto 0002-cccl-include.patch
    """
    from patchq.commands import goto as goto_cmd

    if run_recovery(ctx, recover_continue, recover_abort):
        return
    if name is None:  # optional only so that `goto --continue`/`--abort` need no NAME
        raise click.UsageError("Missing argument 'NAME'.")
    out = goto_cmd.goto(ctx, name, force)
    end(render.moved_stack(out), out.exit_code, out.problem)


@cli.command()
@pass_ctx
def undo(ctx: Context) -> None:
    """Roll the last stack operation back (push, pop, goto, refresh, new, delete, rename,
    fold, header, sink, float, move, guard, apply).

    The target, the stack and the patch files it wrote are put back as they were
    before it. Refused (exit 5) when anything changed since: uncommitted edits, the
    stack branch, the patch repo. One level deep; a rebase is undone with --abort.

    \b
    Example:
      patchq refresh && patchq undo   # the refresh is undone, its edits unrefreshed again
    """
    from patchq.commands import undo as undo_cmd

    output.show(render.undone(undo_cmd.undo(ctx)))
