"""The placement ladder is a table the replay runs (rebase/ladder.py): one order, stated
once, that DESIGN §4's list states too; every method a hunk records comes from a rung; a
rung's tier and precision are its method's, read from the one table of method facts."""

from __future__ import annotations

import re
from pathlib import Path

from patchq.core import tiers
from patchq.core.status import FACTS, REVIEWABLE, Method, Tier
from patchq.rebase.ladder import RUNGS, rung

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "design.md"


def design_steps() -> list[str]:
    """DESIGN §4's steps in order: each numbered item's bold words, and the context-only
    drift step stated between two of them."""
    text = DESIGN.read_text(encoding="utf-8")
    body = text.split("## 4. Application semantics", 1)[1].split("### 4.1", 1)[0]
    steps = []
    for line in body.splitlines():
        item = re.match(r"\d+\. \*\*(.+?)\*\*", line)
        if item:
            steps.append(item.group(1))
        elif "context-only drift" in line:
            steps.append("context-only drift")
    return steps


def test_design_lists_the_rungs_in_the_order_the_table_climbs_them() -> None:
    assert design_steps() == [word for r in RUNGS for word in r.design]


def test_every_method_is_recorded_by_a_rung_and_has_its_facts() -> None:
    recorded = {m for r in RUNGS for m in r.methods}
    assert recorded == set(Method)
    assert set(FACTS) == set(Method)
    assert len({r.name for r in RUNGS}) == len(RUNGS)
    for r in RUNGS:
        assert r.does and callable(r.climb)


def test_a_rungs_tier_and_precision_are_its_methods() -> None:
    for r in RUNGS:
        if r.method is None:
            assert r.tier is None and r.precision is None
            continue
        assert r.tier is FACTS[r.method].tier is tiers.TIERS[r.method]
        assert r.precision == tiers.measured(r.method)
    assert tiers.TIERS == {m: f.tier for m, f in FACTS.items()}
    assert set(REVIEWABLE) == {m for m, f in FACTS.items() if f.reviewable}
    assert {m for m, t in tiers.TIERS.items() if t is Tier.PROPOSED} <= set(tiers.ACCEPTABLE)


def test_fuzz_is_the_first_rungs_and_the_context_drift_proposal_follows_reused() -> None:
    names = [r.name for r in RUNGS]
    assert RUNGS[0].method is Method.EXACT and Method.FUZZ in RUNGS[0].methods
    assert names.index("context drift") == names.index("reused") + 1
    assert rung("context drift").method is Method.FUZZ
    assert names[-1] == "conflict" and rung("conflict").method is None
    # The filters record no method of their own; the quick tests come first.
    assert rung("doubt").method is None
    quick = [r.quick for r in RUNGS]
    assert quick == sorted(quick, reverse=True) and quick.count(True) == 3
