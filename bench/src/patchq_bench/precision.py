"""The measured-precision file patchq reads, and the table docs/trust.md shows from it.

    patchq-bench precision --run OUT [--write FILE] [--docs FILE] [--check]

OUT is the folder of a finished `patchq-bench realworld` run (its run.json, logs and
sealed/ part). The validation part's method uses — from the `--accept all` run where it
ran, else the default run's, as the run's report counts them — become, per method, its
uses, right, wrong and unscored, written to patchq's `src/patchq/data/precision.json`
with the run's command, patchq build, date and corpus revision (the case files and their
sha256). patchq's `core/tiers.py` reads that file; this command then renders the table
between the markers of docs/trust.md from it. `--check` writes nothing and fails (exit 1)
when the docs' table is not the one the file gives.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from patchq_bench.paths import REPO
from patchq_bench.realworld import scoring as rc
from patchq_bench.realworld.cli import load_part
from patchq_bench.realworld.report import part_uses

PRECISION_FILE = REPO / "src" / "patchq" / "data" / "precision.json"
TRUST_MD = REPO / "docs" / "trust.md"
BEGIN = "<!-- patchq-bench precision:begin -->"
END = "<!-- patchq-bench precision:end -->"
ABOUT = (
    "Measured precision of patchq's placement methods on the validation part of the "
    "harvested refresh corpus: per method, its uses, how many were right and wrong (a use "
    "neither was not scored). patchq's core/tiers.py reads it; written by `patchq-bench "
    "precision --run OUT` from a finished `patchq-bench realworld` run (do not edit by hand)."
)


def measured(out: Path, written_by: str) -> dict[str, Any]:
    """The precision record of the finished realworld run in `out` (its validation part)."""
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    names = [n for n in run["cases"] if rc.split_of(n) == "validation"]
    if not names:
        raise ValueError(f"{out}: the run measured no validation case")
    modes = run.get("modes", ["default"])
    part = load_part(out, "validation", names, modes)
    rows = rc.precision_rows(part_uses(part))
    order = [m for m in rc.METHODS if m in rows] + sorted(m for m in rows if m not in rc.METHODS)
    return {
        "about": ABOUT,
        "written_by": written_by,
        "command": run["command"],
        "patchq": run.get("patchq", ""),
        "date": run["date"],
        "corpus": list(run.get("corpus", [])),
        "split": "validation",
        "cases": len(part.cases),
        "patches": sum(int(c["patches"]) for c in part.cases),
        "uses_from": "accept-all" if part.accept_logs else "default",
        "methods": {
            m: {
                "uses": rows[m].uses,
                "right": rows[m].right,
                "wrong": rows[m].wrong,
                "unscored": rows[m].unscored,
            }
            for m in order
        },
    }


def _row(counts: Mapping[str, int]) -> rc.MethodRow:
    return rc.MethodRow(
        uses=counts["uses"],
        right=counts["right"],
        wrong=counts["wrong"],
        unscored=counts.get("unscored", 0),
    )


def _pct(row: rc.MethodRow) -> str:
    return rc.pct(row.precision)


def table(record: Mapping[str, Any]) -> str:
    """The block docs/trust.md shows between its markers: what was measured, the proposed
    methods' table with their tier by DESIGN §4.1's rule, and the always-automatic ones."""
    methods: Mapping[str, Mapping[str, int]] = record["methods"]
    rows = {m: _row(c) for m, c in methods.items()}
    proposed = [m for m in rows if m not in rc.ALWAYS_AUTOMATIC]
    always = [m for m in rows if m in rc.ALWAYS_AUTOMATIC]
    lines = [
        f"Measured {record['date']} with {record['patchq']}, on {record['cases']:,} bumps "
        f"and {record['patches']:,} old-series patches; uses from the "
        f"`{record['uses_from']}` run. Produced by:",
        "",
        "```",
        str(record["command"]),
        "```",
        "",
        "Corpus revision: " + "; ".join(record["corpus"]) + ".",
        "",
        "| method | uses | right | wrong | precision | tier |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for m in proposed:
        r = rows[m]
        tier = rc.tier(m, r)
        lines.append(f"| `{m}` | {r.uses} | {r.right} | {r.wrong} | {_pct(r)} | {tier} |")
    if always:
        shown = "; ".join(
            f"`{m}` {rows[m].right:,} right, {rows[m].wrong:,} wrong ({_pct(rows[m])})"
            for m in always
        )
        lines += ["", f"The always-automatic methods measured on the same part: {shown}."]
    return "\n".join(lines) + "\n"


def render(doc: str, record: Mapping[str, Any]) -> str:
    """`doc` with the block between its markers replaced by `table(record)`."""
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        raise ValueError(f"the document needs exactly one {BEGIN} and one {END}")
    head, rest = doc.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table(record)}{END}{tail}"


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--run", type=Path, help="a finished `patchq-bench realworld` run's folder")
    ap.add_argument("--write", type=Path, default=PRECISION_FILE, help="(default: %(default)s)")
    ap.add_argument("--docs", type=Path, default=TRUST_MD, help="(default: %(default)s)")
    ap.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the docs' table is not the one the file gives",
    )
    a = ap.parse_args(argv)
    if a.check:
        record = json.loads(a.write.read_text(encoding="utf-8"))
        doc = a.docs.read_text(encoding="utf-8")
        if render(doc, record) != doc:
            print(f"{a.docs}: its precision table is not {a.write}'s", file=sys.stderr)
            return 1
        return 0
    if a.run is None:
        ap.error("--run OUT is needed (or --check)")
    invoked = " ".join(["patchq-bench precision", *(sys.argv[1:] if argv is None else argv)])
    record = measured(a.run, invoked)
    a.write.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {a.write}")
    doc = a.docs.read_text(encoding="utf-8")
    a.docs.write_text(render(doc, record), encoding="utf-8")
    print(f"wrote {a.docs}")
    return 0
