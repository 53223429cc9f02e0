"""The commands that set a patch repo up and move patches in and out of it: `init`,
`import`, `export`, `lint`, `trust`, and the guided `demo`.

Each click callback parses options, calls one command and hands its result to
`cli/render`; `cli/group` holds the `patchq` group they register on.
"""

from __future__ import annotations

from pathlib import Path

import click

from patchq.cli import completion, output, render
from patchq.cli.group import cli, end, pass_ctx
from patchq.stack.context import Context


@cli.command()
@click.option("--upstream", help="The upstream repository URL to track.")
@click.option("--branch", help="The upstream branch to track (e.g. main).")
@click.option("--target", "init_target", help="Path of the upstream checkout, relative to here.")
@pass_ctx
def init(
    ctx: Context, *, upstream: str | None, branch: str | None, init_target: str | None
) -> None:
    """Create patchq.toml, series and patches/ in the patch repo folder.

    \b
    Example:
      patchq init --upstream https://github.com/org/proj --branch main --target ../proj
    """
    from patchq.commands import init as init_cmd

    output.show(render.init(init_cmd.init(ctx.dir or Path.cwd(), upstream, branch, init_target)))


@cli.command("import")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--git", "git_range", metavar="A..B", help="Import the commits A..B of the target.")
@click.option(
    "--mbox",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Import every patch mail of an mbox.",
)
@click.option(
    "--quilt",
    type=click.Path(file_okay=False, path_type=Path),
    help="Import a series folder: quilt's, Debian's (debian/patches/series), or a "
    "folder of *.patch/*.diff files without a series, in sorted name order.",
)
@click.option(
    "--after",
    metavar="NAME",
    shell_complete=completion.SERIES,
    help="Insert after this patch instead of at the end.",
)
@click.option(
    "--force", is_flag=True, help="Import a patch even if the series already makes its change."
)
@click.option(
    "--order",
    metavar="LIST",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Take the folder's patches in this file's order (one name a line), as a "
    "recipe lists them.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was imported as JSON.")
@pass_ctx
def import_cmd(
    ctx: Context,
    *,
    files: tuple[Path, ...],
    git_range: str | None,
    mbox: Path | None,
    quilt: Path | None,
    after: str | None,
    force: bool,
    order: Path | None,
    as_json: bool,
) -> None:
    """Bring patches into the series: diff files, an mbox, a series folder or git commits.

    Patch files get stable names and are appended to series (or inserted after --after).
    A folder (given alone, or with --quilt) is read as the build reads it: its `series`
    file (with -pN, guards and comments), `patches/series` or `debian/patches/series`
    under it, else its *.patch and *.diff files in sorted name order (OpenWrt,
    Buildroot), other files skipped and named. A patch whose change the series already
    makes is refused (exit 4) unless --force. An existing patch file is never
    overwritten; on any error nothing is written. --order LIST takes a folder's patches
    in the order a list file gives (a conda-forge recipe's `patches:`, a vcpkg
    portfile's PATCHES), the folder's other patches skipped and named.

    \b
    Examples:
      patchq import fix-build.diff https://gist.example/raw.patch-saved-locally
      patchq import --git v1.0..my-branch
      patchq import --mbox series.mbox
      patchq import --quilt ../debian/patches
      patchq import ../openwrt/package/foo/patches
      patchq import --order recipe-order.txt ../recipe
    """
    from patchq.commands import importing

    if [bool(files), bool(git_range), bool(mbox), bool(quilt)].count(True) != 1:
        raise click.UsageError("give exactly one of FILE…, --git A..B, --mbox F or --quilt DIR")
    out = importing.import_patches(
        ctx,
        files=files,
        git_range=git_range,
        mbox=mbox,
        quilt=quilt,
        after=after,
        force=force,
        order=order,
    )
    output.show(render.imported(out, as_json))


@cli.command()
@click.option(
    "--mbox",
    type=click.Path(path_type=Path),
    help="Write the active series as an mbox for `git am`.",
)
@click.option(
    "--quilt",
    type=click.Path(path_type=Path),
    help="Write the active series as a quilt folder (series + patches).",
)
@click.option(
    "--script",
    type=click.Path(path_type=Path),
    help="Write a stdlib-only Python script that applies the locked series to a plain folder.",
)
@pass_ctx
def export(ctx: Context, *, mbox: Path | None, quilt: Path | None, script: Path | None) -> None:
    """Take the active series out as an mbox, a quilt folder, or a self-contained script.

    \b
    Examples:
      patchq export --mbox series.mbox && git am series.mbox
      patchq export --quilt /tmp/q && QUILT_PATCHES=/tmp/q quilt push -a
      patchq export --script apply-series.py && scp apply-series.py box: && \\
        ssh box python3 apply-series.py /src/sglang
    """
    from patchq.commands import export as export_cmd

    if [mbox, quilt, script].count(None) != 2:
        raise click.UsageError("give exactly one of --mbox F, --quilt DIR or --script F.py")
    if script is not None:
        from patchq.commands import script as script_cmd

        output.show(render.script_written(script_cmd.export_script(ctx, script), script))
    elif mbox is not None:
        output.show(render.exported(export_cmd.export_mbox(ctx, mbox), mbox))
    elif quilt is not None:
        output.show(render.exported(export_cmd.export_quilt(ctx, quilt), quilt))


@cli.command("lint")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="KIND",
    help="Accept no-header, no-author or orig-names (`diff -u a.c.orig a.c` names) "
    "besides `lint-allow` in patchq.toml; repeat or separate with commas.",
)
@click.pass_context
def lint_cmd(click_ctx: click.Context, *, as_json: bool, allow: tuple[str, ...]) -> None:
    """Check the patch repo alone: entries exist and parse, no duplicates, guards, headers
    and authors, whitespace damage, lock hashes. Exit 0 clean, 1 warnings, 4 errors.

    \b
    Example:
      patchq lint && git commit -am "refresh series"
      patchq lint --allow no-header,orig-names   # a recipe's bare `diff -u` patches
    """
    from patchq.commands import lint as lint_verb

    out = lint_verb.lint(click_ctx.obj, Path.cwd(), allow)
    end(render.linted(out, as_json), out.exit_code)


@cli.command("trust")
@click.option("--list", "list_", is_flag=True, help="List every trusted command.")
@click.option("--revoke", is_flag=True, help="Remove this patch repo's marks.")
@click.option("--json", "as_json", is_flag=True, help="Print the marks as JSON.")
@pass_ctx
def trust_cmd(ctx: Context, *, list_: bool, revoke: bool, as_json: bool) -> None:
    """Trust the commands this patch repo's patchq.toml names (exec, exec-each).

    A patch repo's files are anyone's text (a clone, a pull), so `rebase` runs a command
    patchq.toml names only once you trust it: this lists the commands and marks each
    one, for this patch repo's folder and that exact text, in your own configuration
    ($XDG_CONFIG_HOME/patchq/trusted.json). A changed command needs trusting again.

    \b
    Examples:
      patchq trust            # see what runs, and allow it
      patchq trust --list
      patchq trust --revoke
    """
    from patchq.commands import trust as trust_verb

    if list_ and revoke:
        raise click.UsageError("use one of --list, --revoke")
    if list_:
        out = trust_verb.listed(ctx)
    elif revoke:
        out = trust_verb.revoke(ctx)
    else:
        out = trust_verb.trust(ctx)
    end(render.trusted(out, as_json))


@cli.command()
@click.argument("folder", required=False, type=click.Path(path_type=Path))
def demo(*, folder: Path | None) -> None:
    """Guided run: carry a CMake kernel library's patch series across an upstream move.

    Builds an upstream repository and a four-patch series in FOLDER (default: a new
    temporary folder), then applies, moves upstream, checks, rebases, resolves a
    conflict, continues, reports and verifies — explaining each step. Needs only git.

    \b
    Example:
      patchq demo /tmp/patchq-demo
    """
    from patchq.cli import demo as demo_mod

    demo_mod.run(folder)
