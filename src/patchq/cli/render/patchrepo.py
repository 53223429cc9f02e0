"""The results of the commands that set the patch repo up or move patches in and out:
`init`, `import`, `export` (an mbox, a folder, a script), `trust` and `lint`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from patchq.cli.render.items import Doc, Item, Rendered, data, info
from patchq.core.words import plural

if TYPE_CHECKING:
    from patchq.commands.importing import ImportOutcome
    from patchq.commands.init import InitOutcome
    from patchq.commands.lint import LintOutcome
    from patchq.commands.trust import TrustOutcome


def init(out: InitOutcome) -> Rendered:
    if out.adopted:
        skipped = tuple(info(f"skipped {s.source}: {s.reason}") for s in out.skipped)
        return (
            *skipped,
            info(
                f"initialised a patch queue in {out.root} around the "
                f"{plural(len(out.adopted), 'patch')} already in patches/, "
                + (
                    f"in the order {out.recipe} applies them (kept in step with the series)"
                    if out.recipe
                    else "in name order (as a build of that folder applies them; edit "
                    "series to change it)"
                )
            ),
        )
    named = (info(f"{out.recipe} is the recipe kept in step with the series"),) * bool(out.recipe)
    if out.kept is None:
        return (*named, info(f"initialised an empty patch queue in {out.root}"))
    return (
        info(
            f"initialised a patch queue in {out.root} around its series "
            f"({plural(out.kept, 'patch')}, kept as it is)"
        ),
        *named,
    )


def imported(out: ImportOutcome, as_json: bool = False) -> Rendered:
    if as_json:
        return (
            Doc(
                {
                    "imported": [i.name for i in out.imported],
                    "skipped": [
                        {"source": s.source, "subject": s.subject, "reason": s.reason}
                        for s in out.skipped
                    ],
                }
            ),
        )
    n = len(out.imported)
    return (
        *(data(i.name) for i in out.imported),
        *(
            info(f"skipped {s.source}: {s.subject} ({s.reason})")
            if s.subject
            else info(f"skipped {s.source}: {s.reason}")
            for s in out.skipped
        ),
        info(f"imported {plural(n, 'patch')}"),
    )


def exported(n: int, where: Path) -> Rendered:
    """`export --mbox` / `--quilt`: how many patches went where."""
    return (info(f"exported {plural(n, 'patch')} to {where}"),)


def script_written(n: int, where: Path) -> Rendered:
    return (info(f"wrote {where}: applies the series to {plural(n, 'file')} of a plain folder"),)


def trusted(out: TrustOutcome, as_json: bool = False) -> Rendered:
    """`trust`: the commands marked, every mark (`--list`), or the marks removed."""
    if as_json:
        return (
            Doc(
                {
                    "action": out.action,
                    "file": out.file,
                    "root": out.root,
                    "marks": [m.to_doc() for m in out.marks],
                    "configured": [c.to_doc() for c in out.configured],
                }
            ),
        )
    if out.action == "trusted":
        if not out.configured:
            return (info("patchq.toml names no command (exec, exec-each): nothing to trust"),)
        return (
            *(data(f"trusted {c.key} = `{c.command}`") for c in out.configured),
            info(
                f"marked for {out.root} in {out.file}; a change to the text needs "
                "`patchq trust` again"
            ),
        )
    if out.action == "revoked":
        if not out.marks:
            return (info(f"no trusted commands for {out.root}"),)
        return (
            *(data(f"revoked {m.key} = `{m.command}`") for m in out.marks),
            info(f"{plural(len(out.marks), 'mark')} removed for {out.root} from {out.file}"),
        )
    now = {(c.key, c.command) for c in out.configured if c.trusted}
    lines: list[Item] = []
    for m in out.marks:
        stale = m.root == out.root and (m.key, m.command) not in now
        lines.append(
            data(
                f"{m.root}: {m.key} = `{m.command}`"
                + (" (stale: patchq.toml names another command now)" if stale else "")
            )
        )
    lines += [
        data(f"{out.root}: {c.key} = `{c.command}` (NOT trusted: `patchq trust` allows it)")
        for c in out.configured
        if not c.trusted
    ]
    return tuple(lines) if lines else (info(f"no trusted commands ({out.file})"),)


def linted(out: LintOutcome, as_json: bool = False) -> Rendered:
    if as_json:
        return (
            Doc(
                {
                    "findings": [
                        {"level": f.level, "where": f.where, "what": f.what} for f in out.findings
                    ]
                }
            ),
        )
    if not out.findings:
        return (info("lint: no findings"),)
    return tuple(data(f.line()) for f in out.findings)
