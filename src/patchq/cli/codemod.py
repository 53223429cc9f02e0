"""`codemod`: patchq as a silver-platter codemod (protocol v1), and as one pod of a
Kubernetes Indexed Job over a list of patch repos.

Run in a clean checkout of a patch repo, it checks the series against the upstream the
operator names and, where the series drifted, rebases it, building with the command the
operator passes (`--exec`, or `PATCHQ_EXEC` in the job's environment; a command the
package's own patchq.toml names runs only where it was trusted on that worker). It
leaves the rebased series, patches and series.lock in the checkout for silver-platter to
commit, and writes the result JSON to `$SVP_RESULT` (docs/fleet.md):

| patchq | result `code` | exit |
| --- | --- | --- |
| check 0 | `nothing-to-do` | 0 |
| rebase 0 or 1 | `success` (the review's reasons, if any, in `context`) | 0 |
| rebase 1, the operator's build failed | `build-failed` | 1 |
| check or rebase 3 (after `rebase --abort`) | `conflict`, or `needs-review` for a proposal | 1 |
| 4, 5 | `bad-input`, `unsafe-state` | 1 |

A failure's result carries `result_code` beside `code` (the field silver-platter's
runner reads when the command fails). Each step is patchq's own `main` with its output
captured, as `demo` runs its steps: what a step says is its exit code, its JSON and its
one error line, never state shared with the next.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from patchq.core.errors import BadInputError
from patchq.core.text import json_text
from patchq.store import outputs

# The outcomes that count in `value`: patches the rebase refreshed, or took out.
_CHANGED = ("refreshed", "merged", "resolved", "upstreamed", "dropped")
_BY_EXIT = {4: "bad-input", 5: "unsafe-state"}


@dataclass(frozen=True, slots=True)
class Step:
    """One patchq run: its exit code, its JSON output (None if it printed none) and the
    last line it wrote to stderr."""

    code: int
    doc: dict[str, Any] | None
    line: str


def _patchq(repo: Path, *args: str) -> Step:
    from patchq.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--dir", str(repo), *args])
    try:
        doc = json.loads(out.getvalue()) if out.getvalue().strip() else None
    except json.JSONDecodeError:
        doc = None
    lines = err.getvalue().strip().splitlines()
    return Step(code, doc if isinstance(doc, dict) else None, lines[-1] if lines else "")


def _stops(check: dict[str, Any] | None) -> tuple[list[str], list[str]]:
    """The patches a check found in conflict, and those a proposal stops for review."""
    conflict, review = [], []
    for p in (check or {}).get("patches", []):
        hunks = p.get("hunks", [])
        if any(h.get("status") in ("conflict", "missing") for h in hunks):
            conflict.append(p.get("name", ""))
        elif any(h.get("tier") == "proposed" for h in hunks) or p.get("status") == "conflict":
            review.append(p.get("name", ""))
    return conflict, review


def _accepted(check: dict[str, Any] | None) -> list[str]:
    return [
        p.get("name", "")
        for p in (check or {}).get("patches", [])
        if any(h.get("tier") == "accepted" for h in p.get("hunks", []))
    ]


def _failure(code: str, description: str, context: dict[str, Any]) -> dict[str, Any]:
    return {
        "code": code,
        "result_code": code,
        "description": description,
        "value": 0,
        "tags": [],
        "context": context,
        "details": context,
    }


def run_one(
    repo: Path, onto: str | None, exec_cmd: str | None, accept: str | None
) -> tuple[dict[str, Any], int]:
    """The codemod on the patch repo `repo`: its result document and exit code."""
    ref = ["--onto", onto] if onto else []
    acc = ["--accept", accept] if accept else []
    check = _patchq(repo, "check", *ref, *acc, "--json")
    context: dict[str, Any] = {"onto": onto, "check": check.doc}
    if check.code in _BY_EXIT:
        return _failure(_BY_EXIT[check.code], check.line, context), 1
    if check.code == 0:
        doc = {
            "code": "nothing-to-do",
            "description": "every patch applies to the upstream as it is",
            "value": 0,
            "tags": [],
            "context": context,
        }
        return doc, 0
    if check.code == 3:
        return _stopped(check.doc, context)
    if check.code != 1:
        return _failure("internal-error", check.line, context), 1
    build = ["--exec", exec_cmd] if exec_cmd else []
    rebase = _patchq(repo, "rebase", *ref, *acc, *build, "--json")
    context["rebase"] = rebase.doc
    if rebase.code in _BY_EXIT:
        return _failure(_BY_EXIT[rebase.code], rebase.line, context), 1
    if rebase.code == 3:
        _patchq(repo, "rebase", "--abort")
        return _stopped(check.doc, context, rebase.line)
    if rebase.code not in (0, 1) or rebase.doc is None:
        return _failure("internal-error", rebase.line, context), 1
    failed = [x for x in rebase.doc.get("exec") or [] if not x.get("ok")]
    if failed:
        what = f"the build `{failed[0].get('command', '')}` failed on the rebased series"
        return _failure("build-failed", what, context), 1
    return _success(repo, rebase.doc, check.doc, context), 0


def _stopped(
    check: dict[str, Any] | None, context: dict[str, Any], line: str = ""
) -> tuple[dict[str, Any], int]:
    conflict, review = _stops(check)
    if conflict:
        what = f"{len(conflict)} patch(es) conflict with the upstream: {', '.join(conflict)}"
        return _failure("conflict", what, context), 1
    what = f"proposals need a person's review: {', '.join(review)}" if review else line
    return _failure("needs-review", what or "a person is needed", context), 1


def _success(
    repo: Path, rebase: dict[str, Any], check: dict[str, Any] | None, context: dict[str, Any]
) -> dict[str, Any]:
    outcomes: dict[str, int] = {}
    for p in rebase.get("patches", []):
        outcomes[p.get("outcome", "")] = outcomes.get(p.get("outcome", ""), 0) + 1
    value = sum(n for o, n in outcomes.items() if o in _CHANGED)
    reasons = []
    if rebase.get("untrusted"):
        reasons.append(
            "the build patchq.toml names was not run (not trusted on this worker): "
            + ", ".join(str(x) for x in rebase["untrusted"])
        )
    taken = _accepted(check)
    if taken:
        reasons.append("proposals were taken without a stop: " + ", ".join(taken))
    report = _patchq(repo, "report", "--format", "json")
    context.update(report=report.doc, review=reasons, outcomes=outcomes)
    summary = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
    description = f"rebased the series onto {rebase.get('onto', '')[:12]}: {summary}"
    if reasons:
        description = "needs review: " + "; ".join(reasons) + " — " + description
    return {
        "code": "success",
        "description": description,
        "value": value,
        "tags": [],
        "context": context,
    }


def job_line(list_file: Path, index: int) -> Path:
    """The patch repo on line `index` (0-based: `JOB_COMPLETION_INDEX`) of `list_file`,
    one a line (blank lines and `#` comments skipped; a relative path is taken from
    the list's folder)."""
    try:
        text = list_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInputError("no such list of patch repos", str(list_file)) from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise BadInputError("not a list of patch repos", str(list_file)) from None
    lines = [x.strip() for x in text.splitlines()]
    repos = [x for x in lines if x and not x.startswith("#")]
    if not 0 <= index < len(repos):
        raise BadInputError(
            f"JOB_COMPLETION_INDEX {index} is past the {len(repos)} patch repos listed",
            str(list_file),
            "give the Job as many completions as the list has lines",
        )
    path = Path(repos[index])
    return path if path.is_absolute() else list_file.parent / path


def job_index(env: Mapping[str, str]) -> int:
    raw = env.get("JOB_COMPLETION_INDEX")
    if raw is None or not raw.isdigit():
        raise BadInputError(
            "--list needs JOB_COMPLETION_INDEX (the pod's index in an Indexed Job)",
            "JOB_COMPLETION_INDEX",
            "set it, or run on one patch repo with --dir",
        )
    return int(raw)


def command(
    root: Callable[[], Path],
    *,
    onto: str | None,
    exec_cmd: str | None,
    accept: str | None,
    list_file: Path | None,
    out: Path | None,
) -> tuple[dict[str, Any], int]:
    """`patchq codemod`: the patch repo (`root()`, or line JOB_COMPLETION_INDEX of
    `list_file`), its result written to `$SVP_RESULT` and `out/<index>.json`, and the
    exit code. Every place the result goes is judged before check or rebase runs."""
    if out is not None and list_file is None:
        raise click.UsageError("--out needs --list")
    targets: list[Path] = []
    if list_file is not None:
        index = job_index(os.environ)
        repo = job_line(list_file, index)
        if out is not None:
            targets.append(out / f"{index}.json")
    else:
        repo = root()
    if os.environ.get("SVP_RESULT"):
        targets.append(Path(os.environ["SVP_RESULT"]))
    for t in targets:
        outputs.target(t)  # a folder or a socket is refused before the rebase runs
    doc, code = run_one(repo, onto, exec_cmd, accept)
    emit(doc, targets)
    return doc, code


def emit(doc: dict[str, Any], targets: Sequence[Path]) -> None:
    """Write the result as JSON to each of `targets`, through the one writer."""
    text = json_text(doc) + "\n"
    for t in targets:
        outputs.write(t, text.encode())
