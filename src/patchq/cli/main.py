"""The command line: parse options, call one operation, render its result.

No git calls, no loops over patches and no state decisions live here; `main` is the one
boundary that maps exceptions to the exit codes of docs/commands.md.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any

import click

from patchq import __version__
from patchq.cli import completion, interrupted, output, render
from patchq.core.errors import FaultError, PatchqError
from patchq.stack.context import Context

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
    ("Upstream", ("check", "rebase", "report")),
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


_FORCE_HELP = (
    "Save uncommitted changes, and untracked or ignored files in the way, in a stash first."
)
_FORCE_STASH = click.option("-f", "--force", is_flag=True, help=_FORCE_HELP)
_ACCEPT = click.option(
    "--accept",
    multiple=True,
    metavar="METHOD[,METHOD...]|all",
    help="Take these proposed methods without a stop (recorded, exit 1; docs/trust.md): "
    "fuzz, zealous, word, anchored, moved, delete-wins, upstreamed, rewritten (a patch "
    "fixed differently upstream), or all. Adds to "
    "`accept` in patchq.toml.",
)


def _recovery(f: Any) -> Any:
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


def _recovered(ctx: Context, cont: bool, abort: bool) -> bool:
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
@click.pass_context
def cli(ctx: click.Context, *, dir_: Path | None, target: Path | None) -> None:
    """Keep downstream patches as a series and carry them across upstream moves.

    \b
    Example:
      patchq --target ../sglang apply --onto v0.4.0
      patchq verify
    """
    ctx.obj = Context(dir=dir_, target=target)
    ctx.call_on_close(ctx.obj.close)
    # Run first (last registered): what the command went without, before git closes.
    ctx.call_on_close(partial(_say_unavailable, ctx.obj))


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


@cli.command("apply")
@click.option(
    "--onto",
    metavar="REF",
    shell_complete=completion.REFS,
    help="Base to apply onto (default: the lock's base, "
    "else the configured upstream branch, else HEAD).",
)
@click.option("--branch", metavar="NAME", help="Stack branch to create (default patchq/<queue>).")
@click.option(
    "--guard",
    "guards",
    multiple=True,
    help="Active guard (repeatable; replaces the config's guards).",
)
@click.option("--fuzz", type=click.IntRange(0, 3), help="Allow fuzz up to N (default: config, 0).")
@click.option(
    "-f",
    "--force",
    is_flag=True,
    help="Reset a --branch patchq did not make, and save untracked or ignored files "
    "the checkout would write over in a stash first.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Name every patch, not only those that did not apply exactly.",
)
@_recovery
@pass_ctx
def apply(
    ctx: Context,
    *,
    onto: str | None,
    branch: str | None,
    guards: tuple[str, ...],
    fuzz: int | None,
    force: bool,
    as_json: bool,
    verbose: bool,
    recover_continue: bool,
    recover_abort: bool,
) -> None:
    """Apply every active patch onto a base, one reproducible commit each, and write series.lock.

    The commits are built in memory and the working tree is updated once, at the end; the
    same series on the same base gives the same commit ids on any machine.

    \b
    Example:
      patchq apply --onto origin/main --guard sm120
    """
    from patchq.commands import apply as apply_cmd

    if _recovered(ctx, recover_continue, recover_abort):
        return
    with output.Progress("applying") as bar:
        out = apply_cmd.apply(ctx, onto, branch, guards or None, fuzz, progress=bar, force=force)
    output.show(render.applied(out, as_json, verbose))


@cli.command()
@click.option(
    "--files",
    "files_only",
    is_flag=True,
    help="Check the locked files in the working tree instead of re-applying on "
    "the base commit (automatic when the base is not in the target).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def verify(ctx: Context, *, files_only: bool, as_json: bool) -> None:
    """Re-apply the series onto series.lock's base in memory and compare with the lock.

    Exit 0 when the result equals the lock's result_tree and files, 1 when it differs
    (naming the first patch whose hash changed). Nothing is written. In a checkout
    without the base commit (shallow, partial, a source tarball in git) the locked files
    themselves are the base: they must be exactly as the lock pinned them.

    \b
    Examples:
      patchq verify && echo reproducible
      patchq verify --files   # in a shallow checkout at the pinned commit
    """
    from patchq.commands import verify as verify_cmd

    out = verify_cmd.verify(ctx, files_only)
    _end(render.verified(out, as_json), out.exit_code)


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
    help=_FORCE_HELP + " Also reset a stack branch patchq did not make.",
)
@_ACCEPT
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
    if stop is not None:
        output.show(render.refreshed(refresh_cmd.refresh(ctx, None)))
        with output.Progress("pushing") as bar:
            out = push_cmd.resume(ctx, stop, bar, force=force)
        _end(render.moved_stack(out, as_json), out.exit_code, out.problem)
        return
    if _recovered(ctx, recover_continue, recover_abort):
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
            accept=_accepted(accept),
        )
    _end(render.moved_stack(out, as_json), out.exit_code, out.problem)


@cli.command()
@click.argument("target", required=False, metavar="[NAME|N]", shell_complete=completion.APPLIED)
@click.option("-a", "--all", "all_", is_flag=True, help="Pop every applied patch.")
@_FORCE_STASH
@_recovery
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

    if _recovered(ctx, recover_continue, recover_abort):
        return
    out = pop_cmd.pop(ctx, target, all_, force)
    _end(render.moved_stack(out), out.exit_code, out.problem)


@cli.command()
@click.argument("name", required=False, shell_complete=completion.SERIES)
@_FORCE_STASH
@_recovery
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

    if _recovered(ctx, recover_continue, recover_abort):
        return
    if name is None:  # optional only so that `goto --continue`/`--abort` need no NAME
        raise click.UsageError("Missing argument 'NAME'.")
    out = goto_cmd.goto(ctx, name, force)
    _end(render.moved_stack(out), out.exit_code, out.problem)


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
@_recovery
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

    if _recovered(ctx, recover_continue, recover_abort):
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
    _end(render.reordered(out), out.exit_code, out.problem)


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
    _end(render.reordered(out), out.exit_code, out.problem)


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
    _end(render.reordered(out), out.exit_code, out.problem)


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


@cli.command()
@click.option(
    "--onto",
    metavar="REF",
    shell_complete=completion.REFS,
    help="Upstream to check against (default: the configured branch, origin/<branch>).",
)
@click.option("--fuzz", type=click.IntRange(0, 3), help="Fuzz policy (default: config, 0).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (docs/json.md).")
@_ACCEPT
@pass_ctx
def check(
    ctx: Context, *, onto: str | None, fuzz: int | None, as_json: bool, accept: tuple[str, ...]
) -> None:
    """Report how every patch and hunk fares on an upstream, without touching anything.

    Each hunk is clean, offset, fuzz, merge (3-way), conflict, upstreamed or missing,
    with the upstream commits that moved or changed its lines, its placement method and
    its tier (automatic, proposed, accepted; docs/trust.md). Exit 0: no drift;
    1: drift that `rebase` handles alone (an accepted proposal counts here);
    3: a person is needed (a conflict, or a proposal not accepted).

    \b
    Example:
      git -C ../sglang fetch && patchq check --onto origin/main
    """
    from patchq.commands import check as check_cmd

    taken = _accepted(accept)
    with output.Progress("checking") as bar:
        out = check_cmd.check(ctx, onto, fuzz, bar, taken)
    _end(render.checked(out, as_json), out.exit_code)


@cli.command()
@click.option(
    "--onto", metavar="REF", shell_complete=completion.REFS, help="The new upstream to rebase onto."
)
@click.option(
    "--continue",
    "continue_",
    is_flag=True,
    help="Go on after resolving a conflict (edit the files; no `git add` needed).",
)
@click.option("--skip", is_flag=True, help="Drop the conflicting patch (recorded `dropped`).")
@click.option("--abort", is_flag=True, help="Restore target, series, patches and lock exactly.")
@click.option("--dry-run", is_flag=True, help="Say what would happen; change nothing.")
@click.option("--fuzz", type=click.IntRange(0, 3), help="Fuzz policy (default: config, 0).")
@click.option(
    "--exec",
    "exec_cmd",
    metavar="CMD",
    help="Run CMD (a shell command, in the target) once the rebased series is applied; "
    "its failure makes the rebase exit 1 (default: `exec` in patchq.toml, once trusted "
    "with `patchq trust`).",
)
@click.option(
    "--exec-each",
    metavar="CMD",
    help="Run CMD with each rebased patch applied in turn, bottom first "
    "(default: `exec-each` in patchq.toml, once trusted).",
)
@click.option("--no-exec", is_flag=True, help="Run no command patchq.toml names.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@_ACCEPT
@pass_ctx
def rebase(
    ctx: Context,
    *,
    onto: str | None,
    continue_: bool,
    skip: bool,
    abort: bool,
    dry_run: bool,
    fuzz: int | None,
    exec_cmd: str | None,
    exec_each: str | None,
    no_exec: bool,
    as_json: bool,
    accept: tuple[str, ...],
) -> None:
    """Rebase the series onto a new upstream, refresh it, and record it in series.lock.

    Exact and offset hunks need no one; fuzz is taken only within the policy and when
    unique; the rest are merged 3-way against the lock's base. At a conflict it stops
    (exit 3) with markers in the target: edit the files, then --continue; or --skip the
    patch; or --abort to put everything back.

    A hunk placed by a proposed method (fuzz, zealous, word, anchored, moved,
    delete-wins, or upstream holding only part of a patch; docs/trust.md) stops the
    rebase for review (exit 3) with the proposal applied in the target, no markers:
    check it, then --continue. --accept METHOD[,METHOD...] or --accept all (and
    `accept = [...]` in patchq.toml) takes those without a stop; the rebase then
    records them and exits 1 (done, review the proposals).

    --exec CMD runs a build or test in the target when the rebase is done (after
    --continue too), --exec-each CMD after each rebased patch (PATCHQ_PATCH names it);
    each run is recorded in series.lock and the report, and a failure exits 1 with the
    rebased series written. A stopped rebase runs the commands it was started with.
    A command patchq.toml names runs only once you trusted it (`patchq trust`); else
    the rebase is written, says what it did not run, and exits 1.

    \b
    Examples:
      patchq rebase --onto origin/main
      patchq rebase --onto origin/main --exec "make -j8 && make check"
      patchq rebase --onto v2.0 --exec-each "make -C build"
      patchq rebase --continue
      patchq report --format md -o review.md
    """
    from patchq.commands import rebase as rebase_cmd

    modes = [continue_, skip, abort].count(True)
    if modes > 1 or (modes and (onto or dry_run)):
        raise click.UsageError("use one of --onto REF [--dry-run], --continue, --skip, --abort")
    if accept and modes:
        raise click.UsageError(
            "--accept goes with --onto; a stopped rebase takes what it was started with"
        )
    taken = _accepted(accept)
    if (exec_cmd is not None or exec_each is not None or no_exec) and (modes or dry_run):
        raise click.UsageError(
            "--exec, --exec-each and --no-exec go with --onto; a stopped rebase runs the "
            "commands it was started with"
        )
    if abort:
        output.show(render.rebase_aborted(rebase_cmd.abort(ctx)))
        return
    if dry_run:
        with output.Progress("replaying") as bar:
            dry = rebase_cmd.dry_run(ctx, onto, fuzz, bar, taken)
        _end(render.dry_run(dry, as_json), dry.exit_code)
        return
    if not (continue_ or skip or onto or ctx.repo().config.branch):
        raise click.UsageError("give --onto REF (or set `branch` in patchq.toml)")
    with output.Progress("rebasing") as bar:
        if continue_:
            out = rebase_cmd.continue_(ctx, bar, _announce)
        elif skip:
            out = rebase_cmd.skip(ctx, bar, _announce)
        else:
            execs = (exec_cmd, exec_each, no_exec)
            out = rebase_cmd.start(
                ctx, onto or "", fuzz, bar, execs=execs, announce=_announce, accept=taken
            )
    _end(render.rebased(out, as_json), out.exit_code, out.problem)


def _accepted(values: tuple[str, ...]) -> tuple[str, ...]:
    """The methods `--accept` names; a usage error (exit 2) names an unknown one."""
    from patchq.core.tiers import parse_accept

    try:
        return parse_accept(values)
    except ValueError as e:
        raise click.UsageError(f"--accept: {e}") from None


def _announce(command: str, patch: str | None) -> None:
    """Say which run of the user's --exec command starts (its output follows)."""
    output.show(render.exec_starting(command, patch))


@cli.command("report")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "json", "html"]),
    default="text",
    show_default=True,
    help="text for terminals, md for pull requests, json for tools, html for one "
    "self-contained page (old and new hunks side by side).",
)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path),
    help="Write to this file instead of stdout.",
)
@pass_ctx
def report_cmd_(ctx: Context, *, fmt: str, out: Path | None) -> None:
    """Review the last rebase: each patch's outcome, why it moved, and only what changed.

    Each patch is marked cosmetic (only positions or context moved) or substantive (an
    added or removed line changed); substantive ones show just the lines that changed.

    \b
    Examples:
      patchq report
      patchq report --format md -o review.md && gh pr create --body-file review.md
      patchq report --format html -o review.html
    """
    from patchq.commands import report as report_cmd

    output.show(render.reported(report_cmd.run(ctx, fmt, out)))


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
    _end(render.linted(out, as_json), out.exit_code)


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
    _end(render.trusted(out, as_json))


@cli.command()
@_recovery
@pass_ctx
def recover(ctx: Context, *, recover_continue: bool, recover_abort: bool) -> None:
    """Finish (--continue) or undo (--abort) any command that was killed half-way.

    patchq journals every change to the target before making it, so a killed `new`,
    `fold`, `rename` or `header -e` (or any other) can always be completed or undone.

    \b
    Example:
      patchq recover --abort
    """
    if not _recovered(ctx, recover_continue, recover_abort):
        raise click.UsageError("give --continue or --abort")


def _say_unavailable(ctx: Context) -> None:
    """Once, at the end of a command: the evidence it went without because git could not
    read an object of the upstream range (a partial or shallow clone)."""
    g = ctx.opened_git()
    if g is not None and g.unavailable:
        output.show(render.unavailable(g.unavailable))


def _end(shown: render.Rendered, exit_code: int = 0, problem: PatchqError | None = None) -> None:
    """Print a command's rendered result, then end as the result says: its problem (an
    error `main` reports) or its exit code."""
    output.show(shown)
    if problem is not None:
        raise problem
    if exit_code:
        sys.exit(exit_code)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI and map every failure to one stderr line and an exit code."""
    try:
        cli.main(args=argv, prog_name="patchq", standalone_mode=False)
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except click.exceptions.Abort:
        output.show(render.interrupted())
        return 130
    except click.ClickException as e:
        e.show()
        return int(e.exit_code) if e.exit_code else 2
    except PatchqError as e:
        output.show(render.error(e))
        return e.exit_code
    except KeyboardInterrupt:
        output.show(render.interrupted())
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # the environment's fault (full disk, read-only): not a bug
        fault = FaultError.from_os(e)
        output.show(render.error(fault))
        return fault.exit_code
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 0
    except Exception as e:  # noqa: BLE001 - the one place that reports the unexpected
        if interrupted():  # an error Ctrl-C caused (a module it cut short): the interrupt
            output.show(render.interrupted())
            return 130
        import traceback  # only here: loading it costs every run

        frame = traceback.extract_tb(e.__traceback__)[-1]
        output.show(render.internal_error(e, f"{Path(frame.filename).name}:{frame.lineno}"))
        return 70
    return 0


if __name__ == "__main__":
    sys.exit(main())
