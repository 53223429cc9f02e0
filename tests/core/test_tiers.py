"""The tier table follows the measured table by DESIGN §4.1's rule.

A method beyond the always-automatic ones acts alone only with >= 97% precision over
>= 30 scored uses on the validation part of the refresh corpus (core.tiers_table.MEASURED);
every other measured method stays proposed. These read the tables, so a new measured run
that changes MEASURED keeps them honest without editing numbers here.
"""

from __future__ import annotations

import pytest

from patchq.core import tiers as tiers_table
from patchq.core.status import Method

ALWAYS = {Method.EXACT, Method.OFFSET, Method.MERGE, Method.REUSED, Method.UPSTREAMED}


def earns(method: str) -> bool:
    got = tiers_table.MEASURED.get(method)
    if got is None:
        return False
    _uses, right, wrong = got
    scored = right + wrong
    return scored >= 30 and right >= 0.97 * scored


@pytest.mark.parametrize("method", sorted(tiers_table.TIERS))
def test_a_method_is_automatic_only_always_or_by_measured_precision(method: str) -> None:
    want = tiers_table.AUTOMATIC if method in ALWAYS or earns(method) else tiers_table.PROPOSED
    assert tiers_table.TIERS[method] == want


def test_measured_counts_are_consistent_and_shown_as_measured() -> None:
    for method, (uses, right, wrong) in tiers_table.MEASURED.items():
        assert method in tiers_table.TIERS
        assert 0 <= right and 0 <= wrong and right + wrong <= uses
        assert tiers_table.measured(method) == {"uses": uses, "right": right, "wrong": wrong}
    for method in tiers_table.TIERS:
        if method not in tiers_table.MEASURED:
            assert tiers_table.measured(method) is None


def test_only_proposed_methods_can_be_accepted() -> None:
    proposed = {m for m, t in tiers_table.TIERS.items() if t == tiers_table.PROPOSED}
    assert set(tiers_table.ACCEPTABLE) == {*proposed, Method.UPSTREAMED, tiers_table.REWRITTEN}
