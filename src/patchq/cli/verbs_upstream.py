"""The commands that carry the series onto a base: `apply` and `verify` reproduce it,
`check`, `rebase` and `report` take it across an upstream move.

Each click callback parses options, calls one command and hands its result to
`cli/render`; `cli/group` holds the `patchq` group they register on.
"""

from __future__ import annotations

from pathlib import Path

import click

from patchq.cli import completion, output, render
from patchq.cli.group import (
    ACCEPT_OPTION,
    accepted_methods,
    announce,
    cli,
    end,
    pass_ctx,
    recovery_options,
    run_recovery,
)
from patchq.stack.context import Context


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
@click.option(
    "--pin",
    is_flag=True,
    help="Write series.lock anew for the series as it is (edited patches re-pinned); "
    "without it an existing lock is kept on its base.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Name every patch, not only those that did not apply exactly.",
)
@recovery_options
@pass_ctx
def apply(
    ctx: Context,
    *,
    onto: str | None,
    branch: str | None,
    guards: tuple[str, ...],
    fuzz: int | None,
    force: bool,
    pin: bool,
    as_json: bool,
    verbose: bool,
    recover_continue: bool,
    recover_abort: bool,
) -> None:
    """Apply every active patch onto a base, one reproducible commit each, and write series.lock.

    The commits are built in memory and the working tree is updated once, at the end; the
    same series on the same base gives the same commit ids on any machine. An existing
    series.lock is what was reviewed: on its base it is re-pinned only with --pin (a
    patch that differs from it still applies, and is named); onto another base it is
    written anew.

    \b
    Examples:
      patchq apply --onto origin/main --guard sm120
      patchq apply --pin   # after editing a patch by hand
    """
    from patchq.commands import apply as apply_cmd

    if run_recovery(ctx, recover_continue, recover_abort):
        return
    with output.Progress("applying") as bar:
        out = apply_cmd.apply(
            ctx, onto, branch, guards or None, fuzz, progress=bar, force=force, pin=pin
        )
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
    end(render.verified(out, as_json), out.exit_code)


@cli.command()
@click.option(
    "--onto",
    metavar="REF",
    multiple=True,
    shell_complete=completion.REFS,
    help="Upstream to check against (default: the configured branch, origin/<branch>); "
    "repeat it to check several (nightly, beta, stable) in one run.",
)
@click.option("--fuzz", type=click.IntRange(0, 3), help="Fuzz policy (default: config, 0).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (docs/json.md).")
@click.option(
    "--watch",
    is_flag=True,
    help="Report only what changed since the last watch (state in watch.json); exit with "
    "the worst new finding.",
)
@ACCEPT_OPTION
@pass_ctx
def check(
    ctx: Context,
    *,
    onto: tuple[str, ...],
    fuzz: int | None,
    as_json: bool,
    watch: bool,
    accept: tuple[str, ...],
) -> None:
    """Report how every patch and hunk fares on an upstream, without touching anything.

    Each hunk is clean, offset, fuzz, merge (3-way), conflict, upstreamed or missing,
    with the upstream commits that moved or changed its lines, its placement method and
    its tier (automatic, proposed, accepted; docs/trust.md). Exit 0: no drift;
    1: drift that `rebase` handles alone (an accepted proposal counts here);
    3: a person is needed (a conflict, or a proposal not accepted). With several
    --onto, each ref is reported and the worst exit code wins. --watch keeps
    watch.json in the patch repo and reports only what is new, fixed or still broken
    (counted): exit 0 nothing new, 1 new drift, 3 a new stop.

    \b
    Examples:
      git -C ../sglang fetch && patchq check --onto origin/main
      patchq check --watch --onto origin/nightly --onto origin/stable
    """
    from patchq.commands import check as check_cmd

    taken = accepted_methods(accept)
    with output.Progress("checking") as bar:
        out = check_cmd.check_refs(ctx, onto or (None,), fuzz, bar, taken)
    if watch:
        from patchq.commands import watch as watch_cmd

        seen = watch_cmd.watch(ctx, out.reports)
        end(render.watched(seen, as_json), seen.exit_code)
        return
    end(render.checked_refs(out.reports, as_json), out.exit_code)


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
@ACCEPT_OPTION
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
    taken = accepted_methods(accept)
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
        end(render.dry_run(dry, as_json), dry.exit_code)
        return
    if not (continue_ or skip or onto or ctx.repo().config.branch):
        raise click.UsageError("give --onto REF (or set `branch` in patchq.toml)")
    with output.Progress("rebasing") as bar:
        if continue_:
            out = rebase_cmd.continue_(ctx, bar, announce)
        elif skip:
            out = rebase_cmd.skip(ctx, bar, announce)
        else:
            execs = (exec_cmd, exec_each, no_exec)
            out = rebase_cmd.start(
                ctx, onto or "", fuzz, bar, execs=execs, announce=announce, accept=taken
            )
    end(render.rebased(out, as_json), out.exit_code, out.problem)


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
