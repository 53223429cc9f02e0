"""The speed bench's report: tables on stdout, ratios, the targets, git process counts,
and the Markdown block it keeps in a results file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patchq_bench.speed.rows import BASELINE, RATIO_LABELS, RATIO_PEERS, ROWS


def fmt_rss(kb: int | None) -> str:
    return f"{kb / 1024:.0f} MiB" if kb else "–"


HEADERS = [
    "command",
    "onto",
    "median s",
    "min–max s",
    "ms/patch",
    "peak RSS",
    "git procs",
    "result",
]


def table_rows(results: dict[str, dict[str, Any]]) -> list[list[str]]:
    rows = []
    for r in results.values():
        if r["status"] != "ok":
            rows.append(
                [
                    r["tool"],
                    r["onto"],
                    r["status"],
                    "–",
                    "–",
                    "–",
                    str(r.get("git_processes", "–")),
                    r.get("error", ""),
                ]
            )
            continue
        result = r.get("summary") or ""
        if "tree_ok" in r:
            tree = "tree = original" if r["tree_ok"] else f"TREE DIFFERS ({r['tree'][:12]})"
            result = f"{tree}; {result}" if result else tree
        mpp = r.get("ms_per_patch")
        rows.append(
            [
                r["tool"],
                r["onto"],
                f"{r['median_s']:.3f}",
                f"{min(r['times_s']):.2f}–{max(r['times_s']):.2f}",
                "–" if mpp is None else f"{mpp:.2f}",
                fmt_rss(r.get("peak_rss_kb")),
                str(r.get("git_processes", "–")),
                result,
            ]
        )
    return rows


def ratio_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    cols = [p for p in RATIO_PEERS if p in results and results[p]["status"] == "ok"]
    if any(k.endswith(BASELINE) for k in results):
        cols.insert(0, "baseline")
    rows = []
    for r in results.values():
        if r["status"] != "ok" or not r["patchq"] or r["key"].endswith(BASELINE):
            continue
        cells = []
        for p in cols:
            v = r.get("ratios", {}).get(p)
            cells.append("–" if v is None else f"{v:.2f}")
        rows.append([f"{r['tool']} ({r['onto']})", *cells])
    return ["patchq command", *(RATIO_LABELS[c] for c in cols)], rows


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return "\n".join(lines)


def md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    return out


def ratio(results: dict[str, dict[str, Any]], a: str, b: str) -> float | None:
    ra, rb = results.get(a), results.get(b)
    if not ra or not rb or ra["status"] != "ok" or rb["status"] != "ok":
        return None
    return float(ra["median_s"]) / float(rb["median_s"])


# (label, numerator row, denominator row, bound): patchq/peer must be at most `bound`.
TARGETS = [
    ("apply ≥10x faster than git am (patchq/peer ≤ 0.10)", "apply", "am", 0.10),
    ("apply ≥10x faster than quilt push -a", "apply", "quilt", 0.10),
    ("push -a ≥10x faster than git am", "push", "am", 0.10),
    ("push -a ≥10x faster than quilt push -a", "push", "quilt", 0.10),
    ("apply within 5x of the floor (issue 5, at 1,000)", "apply", "floor", 5.0),
    ("apply within 2x of the floor (DESIGN §6)", "apply", "floor", 2.0),
    ("check with drift within 2x of apply", "check-drift", "apply", 2.0),
]


def targets(series: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    headers = ["target (issue 5)", *(f"N={x['count']}" for x in series)]
    rows = []
    for label, a, b, bound in TARGETS:
        cells = []
        for x in series:
            v = ratio(x["rows"], a, b)
            cells.append("–" if v is None else f"{v:.2f} {'✓' if v <= bound else '✗'}")
        rows.append([label, *cells])
    cells = []
    for x in series:
        rss = [
            r.get("peak_rss_kb") or 0
            for r in x["rows"].values()
            if r["patchq"] and r["status"] == "ok"
        ]
        m = max(rss, default=0)
        cells.append("–" if not m else f"{fmt_rss(m)} {'✓' if m <= 300 * 1024 else '✗'}")
    rows.append(["peak RSS of every patchq run ≤ 300 MB", *cells])
    return headers, rows


def process_table(series: list[dict[str, Any]]) -> tuple[list[str], list[list[str]], list[str]]:
    """git processes per patchq run, per command and N; and which commands grow with N."""
    headers = [
        "patchq command",
        *(f"N={x['count']}" for x in series),
        f"by git subcommand (N={series[-1]['count']})" if series else "",
    ]
    rows, growing = [], []
    keys = [k for r in ROWS if r.patchq for k in (r.key, r.key + BASELINE)]
    for k in keys:
        counts = [x["rows"].get(k, {}).get("git_processes") for x in series]
        if all(c is None for c in counts):
            continue
        first = next(x["rows"][k] for x in series if k in x["rows"])
        last = series[-1]["rows"].get(k, {})
        calls = last.get("git_calls") or {}
        rows.append(
            [
                f"{first['tool']} ({first['onto']})",
                *("–" if c is None else str(c) for c in counts),
                ", ".join(f"{n} {sub}" for sub, n in calls.items()),
            ]
        )
        known = [c for c in counts if c is not None]
        if len(set(known)) > 1:
            stops = any(x["rows"].get(k, {}).get("stopped") for x in series)
            growing.append(
                f"{first['tool']} ({first['onto']}): "
                + " → ".join(str(c) for c in known)
                + (" (it stops at a different patch at each N)" if stops else "")
            )
    return headers, rows, growing + per_patch(series)


def per_patch(series: list[dict[str, Any]]) -> list[str]:
    """What a single N shows of a count that grows with the series: a git subcommand one
    patchq run starts at least N times (once per patch), or more than once beyond the
    fewest runs of it seen for the same command (at any N, in either build, --baseline)."""
    seen: list[tuple[str, int, dict[str, Any], dict[str, int]]] = []
    for x in series:
        for k, r in x["rows"].items():
            if r.get("patchq") and r.get("git_calls") is not None:
                seen.append((k.removesuffix(BASELINE), x["count"], r, r["git_calls"]))
    fewest: dict[tuple[str, str], int] = {}
    for cmd, _, _, calls in seen:
        for sub in calls:
            fewest[(cmd, sub)] = min(c.get(sub, 0) for other, _, _, c in seen if other == cmd)
    out = []
    for cmd, n, r, calls in seen:
        what = f"{r['tool']} ({r['onto']}, N={n})"
        for sub, c in calls.items():
            low = fewest[(cmd, sub)]
            if n >= 2 and c >= n:
                out.append(f"{what}: {c} `git {sub}`, one per patch")
            elif c > low + 1:
                out.append(f"{what}: {c} `git {sub}`, where the fewest seen is {low}")
    return out


def series_heading(x: dict[str, Any]) -> list[str]:
    st, rng = x["stats"], x["range"]
    out = [f"### N = {x['count']}: `{rng['base'][:12]}..{rng['head'][:12]}`", ""]
    out.append(
        f"- series: {x['count']} commits, {st['file_changes']} file changes in "
        f"{st['series_files']} files, {st['patch_bytes'] / 1e6:.1f} MB of patches, "
        f"{st['tree_files']}-file tree at BASE"
    )
    if rng.get("drift"):
        out.append(
            f"- drift: DRIFT = BASE~{st['drift_commits']} = `{rng['drift'][:12]}`; "
            f"BASE and DRIFT differ in {st['drift_files']} files, "
            f"{st['drift_files_in_series']} of them touched by the series"
        )
    return out


def md_report(report: dict[str, Any]) -> str:
    m = report["machine"]
    out = [
        f"Written by `patchq-bench speed` on {report['date']}; see `bench/README.md` for "
        "what each row measures.",
        "",
    ]
    out.append(f"- command: `{report['command']}`")
    out.append(f"- repository: `{report['repository']}` (window ends at `{report['end']}`)")
    out.append(f"- patchq {report['patchq_commit']}; patchq run as `{report['patchq_cmd']}`")
    if report.get("baseline"):
        out.append(
            f"- baseline: src/patchq as of {report['baseline']}, each patchq row timed "
            "beside its `[baseline]` twin in the same rounds"
        )
    out.append(f"- runs: {report['runs']} per row, round-robin; median reported")
    out.append(
        f"- machine: {m['nproc']} CPUs, {m['cpu']}; Python {m['python']}; "
        f"git {m['git']}; {m['os']}; clones in `{report['tmpdir']}` "
        f"({report['tmpdir_fs']})"
    )
    missing = [k for k, v in report["peers"].items() if v is None]
    out.append(
        f"- peers: {', '.join(f'{k} `{v}`' for k, v in report['peers'].items() if v)}"
        + (f"; missing: {', '.join(missing)}" if missing else "; none missing")
    )
    out.extend(f"- note: {n}" for n in report.get("notes", []))
    out.append("")
    for x in report["series"]:
        out.extend(series_heading(x))
        out.append("")
        out.extend(md_table(HEADERS, table_rows(x["rows"])))
        out.append("")
        h, rows = ratio_rows(x["rows"])
        if rows and len(h) > 1:
            out.append(f"patchq/peer at N = {x['count']} (below 1: patchq is faster):")
            out.append("")
            out.extend(md_table(h, rows))
            out.append("")
    if report["series"]:
        out.append("### Targets of issue 5 (patchq/peer; ✓ met, ✗ not met)")
        out.append("")
        out.extend(md_table(*targets(report["series"])))
        out.append("")
        h, rows, growing = process_table(report["series"])
        out.append("### git processes started by one patchq run")
        out.append("")
        out.extend(md_table(h, rows))
        out.append("")
        out.append("Grows with N: " + ("; ".join(growing) if growing else "none") + ".")
        out.append("")
    return "\n".join(out)


BEGIN, END = "<!-- bench.py:begin -->", "<!-- bench.py:end -->"


def write_md(path: Path, body: str) -> None:
    """Replace the generated block of `path` (between the markers), keeping what is around
    it; a new file gets a title."""
    block = f"{BEGIN}\n{body}\n{END}\n"
    text = path.read_text() if path.exists() else ""
    if BEGIN in text and END in text:
        before, _, rest = text.partition(BEGIN)
        _, _, after = rest.partition(END)
        text = before + block.rstrip("\n") + after
    else:
        text = "# patchq benchmark results\n\n" + block + ("\n" + text if text.strip() else "")
    path.write_text(text)


def print_series(x: dict[str, Any]) -> None:
    print()
    print("\n".join(series_heading(x)).replace("### ", ""))
    print(text_table(HEADERS, table_rows(x["rows"])))
    h, rows = ratio_rows(x["rows"])
    if rows and len(h) > 1:
        print(f"\npatchq/peer at N = {x['count']} (below 1: patchq is faster)")
        print(text_table(h, rows))
    print(flush=True)


# --- main ---------------------------------------------------------------------------------
