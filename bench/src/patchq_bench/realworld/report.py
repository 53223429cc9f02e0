"""The realworld bench's reports: totals, per-case and per-downstream tables, failure
groups, cost per split and method precision (the Markdown PRECISION.md holds).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from patchq_bench.paths import REPO
from patchq_bench.realworld import scoring as rc  # the split, cost and region rules
from patchq_bench.realworld.driver import CANDIDATE, CLASSES, cause_of, hunk_trouble, run

# ------------------------------------------------------------------------- report
# The case-name prefixes of the corpus, for the tables (else the mirror's owner is shown).
# case-name prefix -> distribution (the shared cases and patchq-bench harvest's prefixes)
DOWNSTREAMS = {
    "br": "Buildroot",
    "tx": "Termux",
    "ms": "MSYS2",
    "mw": "MSYS2",
    "le": "LibreELEC",
    "sp": "Spack",
    "deb": "Debian",
    "db": "Debian",
}


def downstream_of(case: dict[str, Any]) -> str:
    """The distribution a case comes from, by its name's prefix (`deb-openssh-…`: Debian)."""
    prefix = str(case["name"]).split("-", 1)[0]
    return DOWNSTREAMS.get(prefix, str(case["downstream_repo"]).split("/")[0])


def _cell_same(t: dict[str, Any]) -> str:
    return f"{t['same_kept']}+{t['same_dropped']} = {t['same']} ({t['applied_different']})"


def kind_of(case: dict[str, Any], name: str) -> str:
    """The human's change to a patch; a drop is split by what is true of it on Y."""
    c: str = case["human_change"][name]
    if c != "dropped":
        return c
    f = case["facts"][name]
    if f["reverse_applies_on_Y"]:
        return "dropped: already in Y"
    if f["applies_alone_on_Y"]:
        return "dropped: still applies on Y"
    return "dropped: git apply fails on Y"


def row(*cells: object) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def totals(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> dict[str, Counter[str]]:
    """Each tool's sums over the cases of peers.py's per-case counts."""
    keys = ("same", "same_kept", "same_dropped", "applied", "applied_different", "matched")
    tot: dict[str, Counter[str]] = {t: Counter() for t in tools}
    for c in cases:
        for t in tools:
            for k in keys:
                tot[t][k] += c["tools"][t][k]
    return tot


def summary_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    tot = totals(cases, tools)
    npatch = sum(c["patches"] for c in cases)
    nkept = sum(1 for c in cases for n in c["successor"] if c["successor"][n])
    lines = [row("", *tools), "|---|" + "---:|" * len(tools)]
    rows = (
        (f"same as the maintainer (of {npatch})", "same", True),
        (f"— kept patches right (of {nkept})", "same_kept", False),
        (f"— dropped patches left out (of {npatch - nkept})", "same_dropped", False),
        ("applied but not the maintainer's result", "applied_different", False),
        ("applied on Y", "applied", False),
        ("patches whose files equal the maintainer's after the series", "matched", False),
    )
    for label, key, bold in rows:
        lines.append(row(label, *((f"**{tot[t][key]}**" if bold else tot[t][key]) for t in tools)))
    return lines


def case_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    lines = [row("case", "downstream", "N", "kept", "dropped", *tools)]
    lines.append("|---|---|---:|---:|---:|" + "---:|" * len(tools))
    for c in cases:
        nk = sum(1 for n in c["successor"] if c["successor"][n])
        lines.append(
            row(
                c["name"],
                downstream_of(c),
                c["patches"],
                nk,
                c["patches"] - nk,
                *(_cell_same(c["tools"][t]) for t in tools),
            )
        )
    tot = totals(cases, tools)
    npatch = sum(c["patches"] for c in cases)
    nkept = sum(1 for c in cases for n in c["successor"] if c["successor"][n])
    cells = (f"**{_cell_same(tot[t])}**" for t in tools)
    lines.append(row("**total**", "", npatch, nkept, npatch - nkept, *cells))
    return lines


def downstream_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    lines = [row("downstream", "cases", "N", *tools), "|---|---:|---:|" + "---:|" * len(tools)]
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cases:
        by[downstream_of(c)].append(c)
    for ds, cs in sorted(by.items()):
        tot = totals(cs, tools)
        cells = (f"{tot[t]['same']} ({tot[t]['applied_different']})" for t in tools)
        repos = ", ".join(sorted({f"`{c['downstream_repo']}`" for c in cs}))
        lines.append(row(f"{ds} ({repos})", len(cs), sum(c["patches"] for c in cs), *cells))
    return lines


def kind_table(cases: Sequence[dict[str, Any]], tools: Sequence[str]) -> list[str]:
    lines = [row("human change", "patches", *tools), "|---|---:|" + "---:|" * len(tools)]
    kinds = [*CLASSES[:-1], "dropped: already in Y", "dropped: git apply fails on Y"]
    kinds.append("dropped: still applies on Y")
    for k in kinds:
        ps = [(c, n) for c in cases for n in c["human_change"] if kind_of(c, n) == k]
        if not ps:
            continue
        cells = []
        for t in tools:
            applied = sum(
                1 for c, n in ps if c["tools"][t]["status"][n] not in ("failed", "already")
            )
            same = sum(1 for c, n in ps if c["tools"][t]["same_as_human"][n])
            cells.append(f"{applied} / {same}")
        lines.append(row(k, len(ps), *cells))
    return lines


def old_release_table(
    cases: Sequence[dict[str, Any]], logs: dict[str, dict[str, Any]]
) -> list[str]:
    lines = [row("case", "N", "patchq fuzz 0", "patchq fuzz 2", "GNU patch -F0", "GNU patch -F2")]
    lines[0] += " same tree |"
    lines.append("|---|---:|---:|---:|---:|---:|---|")
    sums: Counter[str] = Counter()
    for c in cases:
        lg = logs.get(c["name"])
        if not lg:
            continue
        po, go = lg["patchq_on_old"], lg["gnu_on_old"]
        counts = {
            "pq0": len(po["fuzz0"]["applied"]),
            "pq2": len(po["fuzz2"]["applied"]),
            "gnu0": sum(1 for s in go["fuzz0"].values() if s != "failed"),
            "gnu2": sum(1 for s in go["fuzz2"].values() if s != "failed"),
        }
        sums.update(counts)
        sums["n"] += c["patches"]
        same = po.get("same_tree_as_gnu_fuzz2")
        if same is None:
            same_s = "— (different patches applied)"
        elif same:
            same_s = "yes"
        else:
            same_s = "no: " + ", ".join(po.get("files_differing_from_gnu", [])[:4])
        lines.append(row(c["name"], c["patches"], *counts.values(), same_s))
    bold = (f"**{sums[k]}**" for k in ("pq0", "pq2", "gnu0", "gnu2"))
    lines.append(row("**total**", sums["n"], *bold, ""))
    return lines


def outcome_lines(logs: dict[str, dict[str, Any]]) -> list[str]:
    outcomes: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    for lg in logs.values():
        for e in lg["per_patch"].values():
            outcomes["refused on X" if e["on_old"] == "refused" else str(e["on_new"])] += 1
            methods.update(str(m) for m in e.get("methods", []))
    lines = [row("outcome", "patches"), "|---|---:|"]
    lines += [row(k, v) for k, v in outcomes.most_common()]
    lines.append("")
    lines.append(
        "Hunk statuses of the patches rebased (every hunk, those of skipped patches too): "
        + ", ".join(f"{k} {v}" for k, v in methods.most_common())
        + "."
    )
    return lines


def failure_groups(logs: dict[str, dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """Every error patchq gave, keyed by (where, cause), with the patches that got it."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for lg in logs.values():
        for n, e in lg["per_patch"].items():
            if not e.get("error"):
                continue
            where = "X (apply)" if e["on_old"] == "refused" else "Y (rebase)"
            cause = cause_of(e["error"])
            trouble = hunk_trouble(e.get("hunks", []))
            if trouble:
                cause += " — hunks: " + trouble
            groups[(where, cause)].append(f"{lg['name']}/{n}")
    return groups


def failure_table(logs: dict[str, dict[str, Any]]) -> list[str]:
    lines = [row("where", "cause", "patches", "examples"), "|---|---|---:|---|"]
    groups = failure_groups(logs)
    for (where, cause), ps in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        examples = ", ".join(f"`{p}`" for p in ps[:3]) + (" …" if len(ps) > 3 else "")
        lines.append(row(where, cause.replace("|", "\\|"), len(ps), examples))
    return lines


def per_patch_tables(
    cases: Sequence[dict[str, Any]], logs: dict[str, dict[str, Any]], tools: Sequence[str]
) -> list[str]:
    lines: list[str] = []
    for c in cases:
        lg = logs.get(c["name"])
        if not lg:
            continue
        lines += [f"### {c['name']}", ""]
        lines.append(row("patch", "human", "patchq on X", "patchq on Y", "GNU on X", *tools))
        lines.append("|---|---|---|---|---|" + "---|" * len(tools))
        go = lg["gnu_on_old"]
        for n in c["human_change"]:
            e = lg["per_patch"][n]
            on_y = ""
            if e["on_old"] != "refused":
                on_y = f"{e['on_new']} {'/'.join(str(m) for m in e.get('methods', []))}".strip()
            cells = []
            for t in tools:
                ok = " ok" if c["tools"][t]["same_as_human"][n] else ""
                cells.append(f"{c['tools'][t]['status'][n]}{ok}")
            gnu = f"{go['fuzz0'][n]} / {go['fuzz2'][n]}"
            lines.append(row(n, c["human_change"][n], e["on_old"], on_y, gnu, *cells))
        lines.append("")
    return lines


@dataclass
class Part:
    """The measured cases of one split: peers.py's JSON (patchq among the tools as the
    candidates `patchq` and `patchq-accept`) and patchq's logs per mode, by case name."""

    peers: dict[str, Any]
    logs: dict[str, dict[str, Any]]
    accept_logs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def cases(self) -> list[dict[str, Any]]:
        return list(self.peers.get("cases", []))


def part_tallies(part: Part) -> dict[str, rc.Tally]:
    """Every tool's verdict totals over a part (scoring: same, wrong, stops, cost);
    patchq's stops come from its logs, and a default-mode stop that the `--accept all` run
    got right is half a miss."""
    out: dict[str, rc.Tally] = {}
    for tool in part.peers.get("tools", []):
        t = rc.Tally()
        for c in part.cases:
            pp = None
            if tool == CANDIDATE["default"]:
                pp = part.logs.get(c["name"], {}).get("per_patch", {})
            elif tool == CANDIDATE["accept-all"]:
                pp = part.accept_logs.get(c["name"], {}).get("per_patch", {})
            verdicts = rc.case_verdicts(c, tool, pp)
            accepted: dict[str, str] = {}
            if tool == CANDIDATE["default"] and CANDIDATE["accept-all"] in c["tools"]:
                app = part.accept_logs.get(c["name"], {}).get("per_patch", {})
                accepted = rc.case_verdicts(c, CANDIDATE["accept-all"], app)
            for n, v in verdicts.items():
                t.add(v, accept_right=v == "stop" and accepted.get(n) == "same")
        out[tool] = t
    return out


def cost_table(parts: Sequence[tuple[str, Part]]) -> list[str]:
    """Per split and tool: same, wrong (applied / left out silently), stops, failures, the
    half-misses, misses and cost = misses + 3 × wrong."""
    lines = [
        row(
            "split",
            "tool",
            "patches",
            "same as the maintainer",
            "wrong: applied",
            "wrong: left out silently",
            "stops",
            "failed",
            "stops right with --accept all (½ miss)",
            "misses",
            "**cost**",
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, part in parts:
        for tool, t in part_tallies(part).items():
            lines.append(
                row(
                    label,
                    tool,
                    t.patches,
                    t.same,
                    t.wrong,
                    t.dropped_wrong,
                    t.stops,
                    t.failed,
                    t.half,
                    rc.fmt_num(t.misses),
                    f"**{rc.fmt_num(t.cost)}**",
                )
            )
    return lines


def part_uses(part: Part) -> list[dict[str, Any]]:
    """The method uses the precision is computed from: the `--accept all` run's where it ran
    (in the default mode a proposed method stops and is not seen), else the default run's."""
    logs = part.accept_logs if part.accept_logs else part.logs
    return [u for lg in logs.values() for u in lg.get("uses", [])]


def precision_section(
    parts: Sequence[tuple[str, Part]], accept_status: str, level: str = "##"
) -> list[str]:
    """The per-method tables (validation first: the tiers are fixed from it)."""
    rows = {label: rc.precision_rows(part_uses(p)) for label, p in parts}
    val = rows.get("validation", {})
    tiers = {m: rc.tier(m, val.get(m)) for label in rows for m in rows[label]}
    src = (
        "the `--accept all` run (every proposal taken, so every method's use is seen)"
        if accept_status == "run"
        else "the default run (patchq's `rebase` has no `--accept` yet, so every method "
        "still acts alone and every use is seen there)"
    )
    L = [
        f"Uses are taken from {src}. A use is right when the region its hunk produced (the "
        "lines of patchq's file covered by the refreshed hunk's post-image) equals the "
        "maintainer's refreshed file at the aligned place (the bench's realworld/scoring.py "
        "docstring "
        "has the rule); *unscored*: the region or the maintainer's file could not be found. "
        "precision = right / (right + wrong). Besides the methods DESIGN §4.1 makes automatic "
        f'always ({", ".join(rc.ALWAYS_AUTOMATIC)}), a method reaches "automatic" only at '
        f"≥ {100 * rc.EARN_PRECISION:.0f}% precision over ≥ {rc.EARN_USES} scored uses on the "
        "**validation** split; with fewer uses it stays proposed.",
        "",
    ]
    failed = sum(
        1 for _, p in parts for lg in (p.accept_logs or p.logs).values() if lg.get("uses_error")
    )
    if failed:
        L += [f"In {failed} cases the region pass failed: their uses are not counted.", ""]
    for label, _ in parts:
        n_cases = len(dict(parts)[label].cases)
        n_patch = sum(c["patches"] for c in dict(parts)[label].cases)
        L += [f"{level} {label} split ({n_cases} cases, {n_patch} old-series patches)", ""]
        L += rc.precision_table(rows[label], tiers if label == "validation" else None) + [""]
    return L


def skipped_lines(skipped: Sequence[str]) -> list[str]:
    """The bumps not measured, counted by reason and split; named for the tuning part only
    (SKIPPED: `NAME: reason`)."""
    count: Counter[tuple[str, str]] = Counter()
    named: list[str] = []
    for s in skipped:
        name, _, reason = s.partition(": ")
        split = rc.split_of(name)
        count[(reason.split(" — ")[0], split)] += 1
        if split == "tuning":
            named.append(s)
    L = ["Not measured, by reason (the rule drops them; none is chosen by hand):", ""]
    L += [row("reason", "tuning", "validation"), "|---|---:|---:|"]
    for reason in sorted({r for r, _ in count}):
        L.append(row(reason, count[(reason, "tuning")], count[(reason, "validation")]))
    L.append("")
    if named:
        L += ["Tuning cases not measured:", ""] + [f"- `{s}`" for s in named] + [""]
    return L


def build_report(
    peers: dict[str, Any],
    logs: dict[str, dict[str, Any]],
    command: str,
    date: str,
    skipped: Sequence[str],
    *,
    validation: Part | None = None,
    accept_logs: dict[str, dict[str, Any]] | None = None,
    accept_status: str = "not asked",
    brief: bool = False,
) -> str:
    """REALWORLD.md from peers.py's JSON (every tool, patchq as a candidate) and patchq's logs:
    PEERS/LOGS are the tuning part, shown per case and per patch; VALIDATION is shown as
    totals only."""
    tuning = Part(peers, logs, accept_logs or {})
    tools: list[str] = list(peers["tools"])
    cases: list[dict[str, Any]] = peers["cases"]
    everything = cases + (validation.cases if validation else [])
    npatch = sum(c["patches"] for c in everything)
    downstreams = sorted({c["downstream_repo"] for c in everything})
    L = ["# patchq on real series refreshes", ""]
    L += [f"Measured {date} with:", "", "```", command, "```", ""]
    L.append(
        f"{len(everything)} cases, {npatch} old-series patches, from {len(downstreams)} "
        f"downstream repositories ({', '.join(f'`{d}`' for d in downstreams)}). Each old series "
        "is applied "
        "on the old upstream release X and carried to the new release Y; the result is "
        "compared, patch by patch, with the refresh the downstream maintainer committed. "
        "patchq: `apply --onto X` (with `--fuzz 2` when fuzz 0 refuses a patch; a patch "
        "refused even then is left out), then `rebase --onto Y` and `rebase --skip` at every "
        "stop (a stop is never credited as a refresh; a skipped patch counts as dropped). "
        "Peers: each walks the old series on Y and leaves out what it cannot apply "
        "(`../shared/realworld/peers.py`, which also scores patchq's refreshed series). "
        "A dropped patch is right when the maintainer dropped it too."
    )
    L.append("")
    L.append(
        f"Split (realworld/scoring.py, fixed by the sha256 of the case name): "
        f"{len(cases)} tuning cases ({sum(c['patches'] for c in cases)} patches), "
        + (
            f"{len(validation.cases)} validation cases "
            f"({sum(c['patches'] for c in validation.cases)} patches)"
            if validation
            else "no validation case in this run"
        )
        + ". Per-case and per-patch results below are of the tuning part only; the "
        "validation part is reported as totals. `--accept all` mode: "
        + {
            "run": "run (column `patchq-accept`).",
            "unsupported": "unsupported (this patchq's `rebase --help` has no `--accept`).",
        }.get(accept_status, "not run.")
    )
    L.append("")
    if skipped:
        L += skipped_lines(skipped)
    parts = [("tuning", tuning)] if cases else []
    if validation is not None and validation.cases:
        parts.append(("validation", validation))
    L += ["## Cost per tool", ""]
    L.append(
        "Per patch, a tool is *same* (handled the maintainer's way), *wrong* (applied but not "
        "the maintainer's result, or left out without a stop although the maintainer kept "
        "it), or a *miss* (a stop or a failure). A patchq stop that the `--accept all` run "
        "gets right is half a miss. **cost = misses + 3 × wrong** (DESIGN §4.1)."
    )
    L += [""] + cost_table(parts) + [""]
    L += ["## Precision per placement method (patchq)", ""]
    L += precision_section(parts, accept_status, "###")
    if not cases:
        return "\n".join(L).rstrip() + "\n"
    L += ["## Tuning part: summary", ""] + summary_table(cases, tools) + [""]
    if brief:  # totals only: the per-case and per-patch tables stay in the full report
        L += ["## Per downstream: same as the maintainer (applied but not the maintainer's)", ""]
        L += downstream_table(cases, tools) + [""]
        L += ["## Per kind of change the maintainer made (applied on Y / same)", ""]
        L += kind_table(cases, tools) + [""]
        L += ["## patchq's outcome per patch on Y", ""] + outcome_lines(logs) + [""]
        return "\n".join(L).rstrip() + "\n"
    L += ["## Per case: same as the maintainer", ""]
    L.append(
        "Cells: kept patches right + dropped patches left out = same; in brackets, patches the "
        "tool applied whose result is not the maintainer's (a wrong refresh, or a patch the "
        "maintainer dropped)."
    )
    L += [""] + case_table(cases, tools) + [""]
    L += ["## Per downstream: same as the maintainer (applied but not the maintainer's)", ""]
    L += downstream_table(cases, tools) + [""]
    L += ["## Per kind of change the maintainer made (applied on Y / same as the maintainer)", ""]
    L += kind_table(cases, tools) + [""]
    L += ["## The old series on the old release X", ""]
    L.append(
        "Patches applied on X, of N: patchq `apply` at fuzz 0 and with `--fuzz 2` (each patch "
        "it refuses taken out and the rest applied again) beside GNU patch walking the same "
        "series at `-F0` and at its default fuzz 2. *same tree*: patchq's fuzz-2 result equals "
        "GNU patch's (compared only where both applied the same patches)."
    )
    L += [""] + old_release_table(cases, logs) + [""]
    L += ["## patchq's outcome per patch on Y", ""] + outcome_lines(logs) + [""]
    L += ["## patchq's failures by cause", ""]
    L.append(
        "Every error patchq gave, on X (a patch `apply` refused) or on Y (a rebase stop, then "
        "skipped), grouped by what it says, with the statuses and reasons of the hunks that "
        "did not place. The full text of each is in the case's log (OUT/logs/CASE.json)."
    )
    L += [""] + failure_table(logs) + [""]
    L += ["## Per patch", ""]
    L.append(
        "patchq: how it applied on X (exact / offset / fuzz / refused), its outcome on Y and "
        "the status of each hunk; GNU: GNU patch on X at -F0 / -F2; then every tool's result "
        "on Y as peers.py saw it (`ok` = same as the maintainer; for patchq `already` = left "
        "out of its series)."
    )
    L += [""] + per_patch_tables(cases, logs, tools)
    return "\n".join(L).rstrip() + "\n"


def precision_md(
    parts: Sequence[tuple[str, Part]],
    command: str,
    revision: Sequence[str],
    patchq: str,
    date: str,
    *,
    accept_status: str,
) -> str:
    """bench/PRECISION.md: the per-method tables and what produced them."""
    L = ["# Placement-method precision on real refreshes (DESIGN §4.1)", ""]
    L += ["Produced by:", "", "```", command, "```", ""]
    L += [f"Measured {date} with {patchq}. Corpus revision (case files, their sha256):", ""]
    L += [f"- {r}" for r in revision] + [""]
    L.append(
        '**Methods reach "automatic" only at ≥ 97% precision over ≥ 30 validation uses** '
        "(DESIGN §4.1); the validation table is the one the tiers are fixed from, the tuning "
        "table may be read per patch and is where methods are tuned."
    )
    L.append("")
    if any("realworld/cases.toml" in r or "realworld-cases.toml" in r for r in revision):
        L.append(
            "Caveat: the cases of `../shared/realworld/cases.toml` and "
            "`bench/realworld-cases.toml` were read patch by patch and tuned on before the "
            "split existed, so their validation part is not unseen data; only a harvested "
            "manifest's validation part is."
        )
        L.append("")
    L += precision_section(parts, accept_status)
    return "\n".join(L).rstrip() + "\n"


def corpus_revision(cases_files: Sequence[Path]) -> list[str]:
    """Each case file: its path, the sha256 of its bytes, its case count and, inside a git
    checkout, the last commit that touched it."""
    out = []
    for f in cases_files:
        try:
            data = f.read_bytes()
        except OSError:
            continue
        n = len(re.findall(rb"^\[\[case\]\]", data, re.M))
        shown = str(f)
        if f.is_relative_to(REPO):
            shown = str(f.relative_to(REPO))
        line = f"`{shown}`: sha256 {hashlib.sha256(data).hexdigest()[:16]}, {n} cases"
        r = run(["git", "-C", str(f.parent), "log", "-1", "--format=%h", "--", f.name])
        if r.returncode == 0 and r.stdout.strip():
            line += f", last commit {r.stdout.strip()}"
        out.append(line)
    return out


# ------------------------------------------------------------------------- main
