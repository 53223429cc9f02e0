"""The commands that look without changing anything: `status`, `diff`, `files` and
`patches`.

Each click callback parses options, calls one command and hands its result to
`cli/render`; `cli/group` holds the `patchq` group they register on.
"""

from __future__ import annotations

import click

from patchq.cli import completion, output, render
from patchq.cli.group import cli, pass_ctx
from patchq.stack.context import Context


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@pass_ctx
def status(ctx: Context, *, as_json: bool) -> None:
    """Show the stack: base, applied patches, guards, unrefreshed edits, an operation in progress.

    \b
    Example:
      patchq status
    """
    from patchq.commands import queries

    output.show(render.status(queries.status(ctx), as_json))


@cli.command()
@click.argument("name", required=False, shell_complete=completion.SERIES)
@pass_ctx
def diff(ctx: Context, *, name: str | None) -> None:
    """Show the top patch as refresh would write it now, or the named patch.

    \b
    Example:
      patchq diff | less
    """
    from patchq.commands import queries

    output.show(render.diff(queries.diff(ctx, name)))


@cli.command()
@click.argument("name", required=False, shell_complete=completion.SERIES)
@pass_ctx
def files(ctx: Context, *, name: str | None) -> None:
    """List the files the top (or named) patch touches.

    \b
    Example:
      patchq files 0003-sm120a-fp4.patch
    """
    from patchq.commands import queries

    output.show(render.names(queries.files(ctx, name)))


@cli.command()
@click.argument("path")
@pass_ctx
def patches(ctx: Context, *, path: str) -> None:
    """List the patches that touch a file.

    \b
    Example:
      patchq patches sgl-kernel/CMakeLists.txt
    """
    from patchq.commands import queries

    output.show(render.names(queries.patches_touching(ctx, path)))
