"""The measured-precision file: written from a realworld run's folder with the run's
command and corpus revision inside it, read by patchq as it is shipped, and shown in
docs/trust.md exactly as the file gives it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from patchq.core import tiers

from patchq_bench import precision
from patchq_bench.realworld import scoring as rc


def _names(split: str, k: int) -> list[str]:
    found = [n for n in (f"bump-{i}" for i in range(200)) if rc.split_of(n) == split]
    return found[:k]


def _fake_run(out: Path) -> None:
    """A finished `patchq-bench realworld --mode both` run in miniature: two validation
    bumps and one tuning bump, with the uses the region pass judged."""
    val, tun = _names("validation", 2), _names("tuning", 1)
    run = {
        "command": "patchq-bench realworld --split all --out OUT",
        "date": "2026-12-06",
        "patchq": "patchq, version 0.1.0 (snapshot of commit abc1234)",
        "skipped": [],
        "cases": [*val, *tun],
        "split": "all",
        "modes": ["default", "accept-all"],
        "accept": "run",
        "corpus": ["`bench/corpus/refresh-cases.toml`: sha256 0123456789abcdef, 3 cases"],
    }
    (out / "run.json").write_text(json.dumps(run))
    uses: dict[str, list[dict[str, str]]] = {
        val[0]: [
            {"method": "exact", "verdict": "right"},
            {"method": "word", "verdict": "right"},
            {"method": "word", "verdict": "wrong"},
        ],
        val[1]: [
            {"method": "word", "verdict": "unscored"},
            {"method": "anchored", "verdict": "right"},
        ],
        tun[0]: [{"method": "moved", "verdict": "wrong"}],  # tuning: not in the file
    }
    for name, part in ((val[0], "sealed"), (val[1], "sealed"), (tun[0], "")):
        logs = out / part / "logs" if part else out / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"{name}.json").write_text(json.dumps({"uses": []}))  # default mode: stops
        (logs / f"{name}.accept-all.json").write_text(json.dumps({"uses": uses[name]}))
    peers: dict[str, Any] = {"tools": [], "cases": [{"name": n, "patches": 4} for n in val]}
    (out / "sealed" / "peers.json").write_text(json.dumps(peers))
    (out / "peers.json").write_text(json.dumps({"tools": [], "cases": []}))


def test_the_file_is_written_from_a_run_with_its_command_and_corpus(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    _fake_run(out)
    target = tmp_path / "precision.json"
    docs = tmp_path / "trust.md"
    docs.write_text(f"# Trust\n\nbefore\n\n{precision.BEGIN}\nstale\n{precision.END}\n\nafter\n")
    argv = ["--run", str(out), "--write", str(target), "--docs", str(docs)]
    assert precision.main(argv) == 0
    got = json.loads(target.read_text())
    assert got["command"] == "patchq-bench realworld --split all --out OUT"
    assert got["corpus"] == ["`bench/corpus/refresh-cases.toml`: sha256 0123456789abcdef, 3 cases"]
    assert got["patchq"].endswith("(snapshot of commit abc1234)") and got["date"] == "2026-12-06"
    assert got["written_by"].startswith("patchq-bench precision --run ")
    assert (got["split"], got["cases"], got["patches"], got["uses_from"]) == (
        "validation",
        2,
        8,
        "accept-all",
    )
    assert got["methods"] == {
        "exact": {"uses": 1, "right": 1, "wrong": 0, "unscored": 0},
        "word": {"uses": 3, "right": 1, "wrong": 1, "unscored": 1},
        "anchored": {"uses": 1, "right": 1, "wrong": 0, "unscored": 0},
    }
    text = docs.read_text()
    assert text.startswith("# Trust\n\nbefore\n\n") and text.endswith("\nafter\n")
    assert "stale" not in text
    assert "| `word` | 3 | 1 | 1 | 50.0% | proposed (2 < 30 uses) |" in text
    assert "`exact` 1 right, 0 wrong (100.0%)" in text
    check = ["--check", "--write", str(target), "--docs", str(docs)]
    assert precision.main(check) == 0
    docs.write_text(text.replace("| 50.0% |", "| 51.0% |"))
    assert precision.main(check) == 1


def test_patchq_reads_the_shipped_file_and_shows_only_proposed_methods() -> None:
    record = json.loads(precision.PRECISION_FILE.read_text(encoding="utf-8"))
    assert tiers.PRECISION_FILE.resolve() == precision.PRECISION_FILE.resolve()
    want = {
        m: (c["uses"], c["right"], c["wrong"])
        for m, c in record["methods"].items()
        if tiers.TIERS.get(m) == tiers.PROPOSED
    }
    assert tiers.MEASURED == want and want
    assert record["command"] and record["corpus"], "the file says what produced it"


def test_the_docs_table_is_the_shipped_file() -> None:
    """docs/trust.md's table is rendered from the file (`patchq-bench precision`), never
    edited by hand: the two must agree."""
    assert precision.main(["--check"]) == 0
