"""The commands that edit the series and its patches: `new`, `refresh`, `delete`,
`rename`, `fold`, `header`, the reorders `sink`, `float` and `move`, and `guard`.

Each click callback parses options, calls one command and hands its result to
`cli/render`; `cli/group` holds the `patchq` group they register on.
"""

from __future__ import annotations

import click

from patchq.cli import completion, output, render
from patchq.cli.group import cli, end, pass_ctx, recovery_options, run_recovery
from patchq.stack.context import Context


@cli.command()
@click.argument("name")
@click.option("-m", "--message", help="The new patch's header (its description).")
@pass_ctx
def new(ctx: Context, *, name: str, message: str | None) -> None:
    """Create an empty patch after the top and push it; edit files, then `refresh`.

    \b
    Example:
      patchq new 0005-fix-sm120.patch -m "Build FP4 kernels for sm_120a"
    """
    from patchq.commands import new as new_cmd

    output.show(render.new(new_cmd.new(ctx, name, message)))


@cli.command()
@click.argument("name", required=False, shell_complete=completion.APPLIED)
@click.option(
    "--from-commit",
    "wins",
    flag_value="commit",
    help="The patch file changed since it was applied: rewrite it from the commit anyway.",
)
@click.option(
    "--from-file",
    "wins",
    flag_value="file",
    help="The patch file changed since it was applied: re-apply it, the commit follows.",
)
@recovery_options
@pass_ctx
def refresh(
    ctx: Context,
    *,
    name: str | None,
    wins: str | None,
    recover_continue: bool,
    recover_abort: bool,
) -> None:
    """Write the working tree's changes into the top (or named applied) patch.

    The header is kept byte for byte and unchanged hunks stay byte-identical; running
    refresh twice changes nothing. Untracked files are not included: `git add` them.
    A patch file changed since it was applied (a pull, an edit) is never written over
    unless --from-commit or --from-file says which side wins; a file of several mails
    is refused.

    \b
    Example:
      patchq refresh
    """
    from patchq.commands import refresh as refresh_cmd

    if run_recovery(ctx, recover_continue, recover_abort):
        return
    output.show(render.refreshed(refresh_cmd.refresh(ctx, name, wins)))


@cli.command()
@click.argument("name", shell_complete=completion.SERIES)
@click.option("-r", "--remove", is_flag=True, help="Also delete the patch file.")
@pass_ctx
def delete(ctx: Context, *, name: str, remove: bool) -> None:
    """Remove a patch from the series (the top one is popped first); keeps its file unless -r.

    \b
    Example:
      patchq delete 0004-old-workaround.patch -r
    """
    from patchq.commands import delete as delete_cmd

    output.show(render.deleted(delete_cmd.delete(ctx, name, remove)))


@cli.command()
@click.argument("old", shell_complete=completion.SERIES)
@click.argument("new_name", metavar="NEW")
@pass_ctx
def rename(ctx: Context, *, old: str, new_name: str) -> None:
    """Rename a patch (its file and its series line).

    \b
    Example:
      patchq rename fix.patch 0001-cmake-policy-guards.patch
    """
    from patchq.commands import rename as rename_cmd

    output.show(render.renamed(rename_cmd.rename(ctx, old, new_name)))


@cli.command()
@click.argument("name", shell_complete=completion.UNAPPLIED)
@pass_ctx
def fold(ctx: Context, *, name: str) -> None:
    """Fold the unapplied patch NAME into the top patch and remove it from the series.

    \b
    Example:
      patchq fold 0004-typo-fix.patch
    """
    from patchq.commands import fold as fold_cmd

    output.show(render.folded(fold_cmd.fold(ctx, name)))


@cli.command()
@click.argument("name", required=False, shell_complete=completion.SERIES)
@click.option("-e", "--edit", is_flag=True, help="Edit the header in $EDITOR.")
@pass_ctx
def header(ctx: Context, *, name: str | None, edit: bool) -> None:
    """Print (or with -e edit) a patch's header; the diff below it is never touched.

    \b
    Examples:
      patchq header 0001-cmake-policy-guards.patch
      patchq header -e
    """
    from patchq.commands import header as header_cmd

    out = header_cmd.header(
        ctx, name, (lambda t: click.edit(t, extension=".txt")) if edit else None
    )
    output.show(render.header(out, edit))


@cli.command()
@click.argument("name", shell_complete=completion.SERIES)
@pass_ctx
def sink(ctx: Context, *, name: str) -> None:
    """Send a patch to the bottom of the stack: first in the series.

    The patches it crosses are re-applied in memory with the rebase's merge ladder and
    refreshed where their placement changed. Where one conflicts, it stops as a rebase
    does (exit 3): resolve the markers and `patchq rebase --continue`, or `--skip` the
    patch, or `--abort` to put everything back. An unapplied patch sunk under applied
    ones is applied. `patchq undo` puts back a sink that did not stop.

    \b
    Example:
      patchq sink 0007-fix-build-with-gcc-14.patch
    """
    from patchq.commands import sink as sink_cmd

    out = sink_cmd.sink(ctx, name)
    end(render.reordered(out), out.exit_code, out.problem)


@cli.command("float")
@click.argument("name", shell_complete=completion.SERIES)
@pass_ctx
def float_cmd_(ctx: Context, *, name: str) -> None:
    """Bring a patch to the top of the stack: last in the series.

    The patches it crosses are re-applied in memory with the rebase's merge ladder and
    refreshed where their placement changed. Where one conflicts, it stops as a rebase
    does (exit 3): resolve the markers and `patchq rebase --continue`, or `--skip` the
    patch, or `--abort` to put everything back. It stays applied when every patch before
    it is. `patchq undo` puts back a float that did not stop.

    \b
    Example:
      patchq float 0002-local-debug-logging.patch
    """
    from patchq.commands import floating as float_cmd

    out = float_cmd.float_(ctx, name)
    end(render.reordered(out), out.exit_code, out.problem)


@cli.command()
@click.argument("name", shell_complete=completion.SERIES)
@click.option(
    "--before", metavar="OTHER", shell_complete=completion.SERIES, help="Put it just before OTHER."
)
@click.option(
    "--after", metavar="OTHER", shell_complete=completion.SERIES, help="Put it just after OTHER."
)
@pass_ctx
def move(ctx: Context, name: str, before: str | None, after: str | None) -> None:
    """Move a patch just before or just after another one, anywhere in the series.

    The same reorder as sink and float: the patches between its old and new place are
    re-applied in memory with the rebase's merge ladder and refreshed where their
    placement changed. Where one conflicts, it stops as a rebase does (exit 3): resolve
    the markers and `patchq rebase --continue`, or `--skip` the patch, or `--abort` to
    put everything back. An applied patch moved above the unapplied ones is unapplied;
    an unapplied one moved under an applied one is applied. `patchq undo` puts back a
    move that did not stop.

    \b
    Examples:
      patchq move 0005-fix-typo.patch --before 0002-feature.patch
      patchq move 0002-feature.patch --after 0004-docs.patch
    """
    from patchq.commands import move as move_cmd

    if (before is None) == (after is None):
        raise click.UsageError("give exactly one of --before OTHER, --after OTHER")
    out = move_cmd.move_patch(ctx, name, before or after or "", after is not None)
    end(render.reordered(out), out.exit_code, out.problem)


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("name", shell_complete=completion.SERIES)
@click.argument("guards", nargs=-1, type=click.UNPROCESSED, shell_complete=completion.GUARDS)
@click.option("--none", "none_", is_flag=True, help="Remove all the patch's guards.")
@pass_ctx
def guard(ctx: Context, name: str, guards: tuple[str, ...], none_: bool) -> None:
    """Show a patch's guards, or set them: +G applies it only when guard G is active,
    -G never then (Mercurial MQ's guards, written in `series` as `name #+G #-H`).

    Setting replaces all its guards; --none removes them. The guards that are active
    are `guards` in patchq.toml (or `apply --guard`). An applied patch cannot be guarded
    out, nor one brought in below the top of the stack: pop first. `patchq undo` puts
    the old guards back.

    \b
    Examples:
      patchq guard 0003-cuda-only.patch            # show its guards
      patchq guard 0003-cuda-only.patch +cuda -rocm
      patchq guard 0003-cuda-only.patch --none
    """
    from patchq.commands import guard as guard_cmd

    if none_ and guards:
        raise click.UsageError("--none excludes guards")
    out = guard_cmd.guard(ctx, name, () if none_ else (guards or None))
    output.show(render.guarded(out))
