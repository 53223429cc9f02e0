"""The one status vocabulary (core/status.py): ranks, the placement → drift map, and the
lock outcome that rebase and rebase --dry-run share."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchq.core import hunks
from patchq.core import status as S

PLACEMENT = (S.EXACT, S.OFFSET, S.FUZZ, S.MERGE, S.AMBIGUOUS, S.FAILED, S.CONFLICT)
DRIFT = (S.CLEAN, S.OFFSET, S.FUZZ, S.UPSTREAMED, S.MERGE, S.CONFLICT, S.MISSING)


def test_every_word_of_both_views_is_ranked_in_their_own_order() -> None:
    assert set(PLACEMENT) | set(DRIFT) == set(S.RANK)
    # Each view's order is the one its reports have always used.
    assert [
        S.RANK[w] for w in (S.EXACT, S.OFFSET, S.FUZZ, S.MERGE, S.FAILED, S.CONFLICT)
    ] == sorted(S.RANK[w] for w in (S.EXACT, S.OFFSET, S.FUZZ, S.MERGE, S.FAILED, S.CONFLICT))
    assert (
        S.RANK[S.CLEAN]
        < S.RANK[S.OFFSET]
        < S.RANK[S.MERGE]
        < S.RANK[S.CONFLICT]
        < S.RANK[S.MISSING]
    )


@pytest.mark.parametrize(
    "placement, drift",
    [
        (S.EXACT, S.CLEAN),
        (S.OFFSET, S.OFFSET),
        (S.FUZZ, S.FUZZ),
        (S.MERGE, S.MERGE),
        (S.FAILED, S.CONFLICT),
    ],
)
def test_a_placement_has_one_drift_status(placement: str, drift: str) -> None:
    assert S.drift_of(placement) == drift


@pytest.mark.parametrize(
    "status, hunk_statuses, renamed, outcome",
    [
        (S.CLEAN, [S.CLEAN], False, S.UNCHANGED),
        (S.CLEAN, [S.CLEAN], True, S.REFRESHED),  # a file renamed under it: rewritten
        (S.OFFSET, [S.CLEAN, S.OFFSET], False, S.REFRESHED),
        (S.MERGE, [S.OFFSET, S.MERGE], False, S.MERGED),
        (S.UPSTREAMED, [S.UPSTREAMED], False, S.UPSTREAMED),
        (S.CONFLICT, [S.MERGE, S.CONFLICT], False, S.CONFLICT),
        (S.MISSING, [S.MISSING], False, S.CONFLICT),
    ],
)
def test_the_lock_outcome(
    status: str, hunk_statuses: list[str], renamed: bool, outcome: str
) -> None:
    assert S.outcome(status, hunk_statuses, renamed) == outcome
    assert outcome == S.CONFLICT or outcome in S.OUTCOMES


@given(st.lists(st.sampled_from(PLACEMENT), max_size=8))
def test_the_engine_worst_is_the_highest_rank(statuses: list[str]) -> None:
    got = hunks.worst(statuses)
    assert S.RANK[got] == max((S.RANK[s] for s in statuses), default=0)
