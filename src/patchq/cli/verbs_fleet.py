"""The fleet's command: `codemod`, the unattended check-and-rebase of one patch repo as
silver-platter runs it, or as one pod of a Kubernetes Indexed Job (cli/codemod.py)."""

from __future__ import annotations

from pathlib import Path

import click

from patchq.cli import render
from patchq.cli.group import cli, end, pass_ctx
from patchq.stack.context import Context


@cli.command("codemod")
@click.option(
    "--onto",
    metavar="REF",
    envvar="PATCHQ_ONTO",
    help="The upstream to check and rebase onto (default: PATCHQ_ONTO, else the "
    "configured branch).",
)
@click.option(
    "--exec",
    "exec_cmd",
    metavar="CMD",
    envvar="PATCHQ_EXEC",
    help="The operator's build or test, run in the target on the rebased series "
    "(default: PATCHQ_EXEC; a command patchq.toml names runs only if trusted here).",
)
@click.option(
    "--accept",
    metavar="METHOD[,METHOD...]|all",
    envvar="PATCHQ_ACCEPT",
    help="Proposed methods to take without a stop (they make the result a review).",
)
@click.option(
    "--list",
    "list_file",
    type=click.Path(path_type=Path),
    help="A file of patch repos, one a line: run on line JOB_COMPLETION_INDEX "
    "(a Kubernetes Indexed Job's pod).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="With --list: also write the result to OUT/<index>.json (the Job's volume).",
)
@pass_ctx
def codemod_cmd(
    ctx: Context,
    *,
    onto: str | None,
    exec_cmd: str | None,
    accept: str | None,
    list_file: Path | None,
    out: Path | None,
) -> None:
    """Check and rebase as a silver-platter codemod (protocol v1), or one pod of a fleet.

    Runs `check`, then `rebase` where the series drifted, in the patch repo, and leaves
    the changed files for silver-platter to commit. Prints the result JSON and writes
    it to $SVP_RESULT: code `nothing-to-do` or `success` (exit 0), or `conflict`,
    `needs-review`, `build-failed`, `bad-input`, `unsafe-state` (exit 1; a stopped
    rebase is aborted first). docs/fleet.md has the table and the Job.

    \b
    Examples:
      PATCHQ_ONTO=origin/main PATCHQ_EXEC="make check" patchq codemod
      patchq codemod --list repos.txt --out /results --onto origin/main
    """
    from patchq.cli import codemod

    doc, code = codemod.command(
        lambda: ctx.repo().root,
        onto=onto,
        exec_cmd=exec_cmd,
        accept=accept,
        list_file=list_file,
        out=out,
    )
    end((render.Doc(doc),), code)
