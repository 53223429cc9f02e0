"""The command line: parse options, call one operation, render its result.

No git calls, no loops over patches and no state decisions live here; `main` is the one
boundary that maps exceptions to the exit codes of DESIGN §3.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import click

from . import __version__, importers, output
from .application import PatchResult
from .commands import apply as apply_cmd
from .commands import importing
from .commands import init as init_cmd
from .context import Context
from .errors import PatchqError

pass_ctx = click.make_pass_decorator(Context)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="patchq")
@click.option("--dir", "dir_", type=click.Path(file_okay=False, path_type=Path),
              help="The patch repo (default: nearest folder upwards with patchq.toml or series).")
@click.option("--target", type=click.Path(file_okay=False, path_type=Path),
              help="The upstream git checkout (default: PATCHQ_TARGET, the config's `target`, "
                   "else the patch repo's own checkout).")
@click.pass_context
def cli(ctx: click.Context, dir_: Path | None, target: Path | None) -> None:
    """Keep downstream patches as a series and carry them across upstream moves.

    \b
    Example:
      patchq --target ../sglang apply --onto v0.4.0
      patchq verify
    """
    ctx.obj = Context(dir=dir_, target=target)
    ctx.call_on_close(ctx.obj.close)


@cli.command()
@click.option("--upstream", help="The upstream repository URL to track.")
@click.option("--branch", help="The upstream branch to track (e.g. main).")
@click.option("--target", "init_target", help="Path of the upstream checkout, relative to here.")
@pass_ctx
def init(ctx: Context, upstream: str | None, branch: str | None, init_target: str | None) -> None:
    """Create patchq.toml, series and patches/ in the patch repo folder.

    \b
    Example:
      patchq init --upstream https://github.com/org/proj --branch main --target ../proj
    """
    root = init_cmd.init(ctx.dir or Path.cwd(), upstream, branch, init_target)
    output.info(f"initialised an empty patch queue in {root}")


@cli.command("series")
@click.option("-v", "--verbose", is_flag=True, help="Mark guarded-out patches.")
@click.option("--guard", "guards", multiple=True, help="Treat this guard as active (repeatable).")
@pass_ctx
def series_cmd(ctx: Context, verbose: bool, guards: tuple[str, ...]) -> None:
    """List the patches of the series, one a line.

    \b
    Example:
      patchq series -v
    """
    repo = ctx.repo()
    active = guards or repo.config.guards
    for e in repo.series.patches:
        if not verbose:
            output.data(e.name or "")
            continue
        mark = "+" if e.active(active) else "#"
        guard_text = (" " + " ".join(f"#{g}" for g in e.guards)) if e.guards else ""
        output.data(f"{mark} {e.name}{guard_text}")


@cli.command("import")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--git", "git_range", metavar="A..B", help="Import the commits A..B of the target.")
@click.option("--mbox", type=click.Path(dir_okay=False, path_type=Path),
              help="Import every patch mail of an mbox.")
@click.option("--quilt", type=click.Path(file_okay=False, path_type=Path),
              help="Import a quilt series folder (its series and patches).")
@click.option("--after", metavar="NAME", help="Insert after this patch instead of at the end.")
@click.option("--json", "as_json", is_flag=True, help="Print what was imported as JSON.")
@pass_ctx
def import_cmd(ctx: Context, files: tuple[Path, ...], git_range: str | None,
               mbox: Path | None, quilt: Path | None, after: str | None, as_json: bool) -> None:
    """Bring patches into the series: diff files, an mbox, a quilt series or git commits.

    Patch files get stable names and are appended to series (or inserted after --after).
    An existing patch file is never overwritten; on any error nothing is written.

    \b
    Examples:
      patchq import fix-build.diff https://gist.example/raw.patch-saved-locally
      patchq import --git v1.0..my-branch
      patchq import --mbox series.mbox
      patchq import --quilt ../debian/patches
    """
    sources = sum(bool(x) for x in (files, git_range, mbox, quilt))
    if sources != 1:
        raise click.UsageError("give exactly one of FILE…, --git A..B, --mbox F or --quilt DIR")
    skipped: list[importers.Skipped] = []
    if files:
        incoming = importing.from_files(ctx, files)
    elif quilt is not None:
        incoming = importing.from_quilt(ctx, quilt)
    else:
        res = importing.from_git(ctx, git_range) if git_range else \
            importing.from_mbox(ctx, mbox)  # type: ignore[arg-type]
        incoming, skipped = list(res.patches), list(res.skipped)
    done = importing.commit(ctx, incoming, after)
    if as_json:
        output.emit_json({"imported": [i.name for i in done],
                          "skipped": [{"source": s.source, "subject": s.subject,
                                       "reason": s.reason} for s in skipped]})
        return
    for i in done:
        output.data(i.name)
    for s in skipped:
        output.info(f"skipped {s.source}: {s.subject or ''} ({s.reason})")
    output.info(f"imported {len(done)} patch{'es' if len(done) != 1 else ''}")


@cli.command("apply")
@click.option("--onto", metavar="REF", help="Base to apply onto (default: the lock's base, "
              "else the configured upstream branch, else HEAD).")
@click.option("--branch", metavar="NAME", help="Stack branch to create (default patchq/<queue>).")
@click.option("--guard", "guards", multiple=True, help="Active guard (repeatable; replaces the "
              "config's guards).")
@click.option("--fuzz", type=click.IntRange(0, 3), help="Allow fuzz up to N (default: config, 0).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def apply(ctx: Context, onto: str | None, branch: str | None, guards: tuple[str, ...],
          fuzz: int | None, as_json: bool) -> None:
    """Apply every active patch onto a base, one reproducible commit each, and write series.lock.

    The commits are built in memory and the working tree is updated once, at the end; the
    same series on the same base gives the same commit ids on any machine.

    \b
    Example:
      patchq apply --onto origin/main --guard sm120
    """
    entries = ctx.repo().series.active(guards or ctx.repo().config.guards)
    progress = output.Progress(len(entries), "applying")
    out = apply_cmd.apply(ctx, onto, branch, guards or None, fuzz, progress)
    progress.done()
    res = out.result
    if as_json:
        output.emit_json({"base": res.base, "head": res.head, "tree": res.tree,
                          "branch": out.branch,
                          "patches": [_patch_json(p) for p in res.patches]})
        return
    for p in res.patches:
        output.info(f"{_status_word(p.status)} {p.name}{_moved(p)}")
    output.info(f"applied {len(res.patches)} patches onto {res.base[:12]}; "
                f"{out.branch} is at {res.head[:12]}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def verify(ctx: Context, as_json: bool) -> None:
    """Re-apply the series onto series.lock's base in memory and compare with the lock.

    Exit 0 when the result equals the lock's result_tree and files, 1 when it differs.
    Nothing is written.

    \b
    Example:
      patchq verify && echo reproducible
    """
    out = apply_cmd.verify(ctx)
    if as_json:
        output.emit_json({"ok": out.ok, "expected_tree": out.expected_tree, "tree": out.tree,
                          "problems": list(out.problems)})
    else:
        for p in out.problems:
            output.info(p)
        output.info("verified: the series reproduces series.lock" if out.ok else
                    "differs from series.lock")
    if not out.ok:
        sys.exit(1)


def _patch_json(p: PatchResult) -> dict[str, Any]:
    return {"name": p.name, "status": p.status, "commit": p.commit,
            "files": [{"file": s.path, "action": s.action, "status": s.status,
                       "hunks": [{"status": h.status, "offset": h.offset, "fuzz": h.fuzz,
                                  "line": h.line} for h in s.hunks]} for s in p.sections]}


def _status_word(status: str) -> str:
    colour = {"exact": "green", "offset": "yellow", "fuzz": "yellow"}.get(status, "red")
    return output.paint(f"{status:>6}", colour)


def _moved(p: PatchResult) -> str:
    notes = [f"{s.path} hunk #{h.index + 1} {h.status} {h.offset:+d}"
             + (f" fuzz {h.fuzz}" if h.fuzz else "")
             for s in p.sections for h in s.hunks if h.status != "exact"]
    return f" ({'; '.join(notes)})" if notes else ""


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI and map every failure to one stderr line and an exit code."""
    try:
        cli.main(args=argv, prog_name="patchq", standalone_mode=False)
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except click.exceptions.Abort:
        output.info("patchq: interrupted")
        return 130
    except click.ClickException as e:
        e.show()
        return int(e.exit_code) if e.exit_code else 2
    except PatchqError as e:
        output.info(f"patchq: {e.line()}")
        return e.exit_code
    except KeyboardInterrupt:
        output.info("patchq: interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 0
    except Exception as e:  # noqa: BLE001 - the one place that reports the unexpected
        where = traceback.extract_tb(e.__traceback__)[-1]
        output.info(f"patchq: internal error: {type(e).__name__}: {e} "
                    f"(at {Path(where.filename).name}:{where.lineno}) — please report it")
        return 70
    return 0


if __name__ == "__main__":
    sys.exit(main())
