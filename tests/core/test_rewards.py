"""Length, format and judge penalties: the spec's cases by hand, and their bounds as properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.core.rewards import (
    inadmissible_penalties,
    judge_penalties,
    length_penalty,
    outcome_reward,
    response_shaping,
)


@pytest.mark.parametrize(
    ("num_tokens", "max_tokens", "threshold", "truncated", "expected"),
    [
        # L_max = 512, λ = 0.5: the first λ·L_max = 256 tokens are free.
        (0, 512, 0.5, False, 0.0),
        (256, 512, 0.5, False, 0.0),  # L = λ·L_max is still free (L ≤ λ·L_max)
        (257, 512, 0.5, False, 1 / 256),  # (257 − 256) / ((1 − 0.5)·512) = 1/256
        (384, 512, 0.5, False, 0.5),  # (384 − 256) / 256 = 0.5
        (512, 512, 0.5, False, 1.0),  # (512 − 256) / 256 = 1: a finished response at the budget
        (512, 512, 0.5, True, 1.0),  # cut at L_max without finishing
        (10, 512, 0.5, True, 1.0),  # truncated always costs 1, whatever the count says
        # λ = 0.25, L_max = 100: free up to 25; (40 − 25) / 75 = 0.2
        (40, 100, 0.25, False, 0.2),
        # λ = 0: every token costs; 30 / 100 = 0.3
        (30, 100, 0.0, False, 0.3),
        # λ = 1: nothing is penalised below the budget, and the span (1 − λ)·L_max is 0.
        (100, 100, 1.0, False, 0.0),
        (101, 100, 1.0, False, 1.0),
        # A miscounted finished response over the budget is clamped to 1.
        (600, 512, 0.5, False, 1.0),
    ],
)
def test_length_penalty_cases(
    num_tokens: int, max_tokens: int, threshold: float, truncated: bool, expected: float
) -> None:
    assert length_penalty(num_tokens, max_tokens, threshold, truncated) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((10, 0, 0.5), "max_tokens"),
        ((-1, 10, 0.5), "num_tokens"),
        ((1, 10, 1.5), "threshold"),
        ((1, 10, -0.1), "threshold"),
    ],
)
def test_length_penalty_rejects_impossible_budgets(args: tuple[int, int, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        length_penalty(*args)


@settings(deadline=None)
@given(
    max_tokens=st.integers(1, 4096),
    threshold=st.floats(0.0, 1.0),
    truncated=st.booleans(),
    data=st.data(),
)
def test_length_penalty_is_in_unit_interval_and_monotone(
    max_tokens: int, threshold: float, truncated: bool, data: st.DataObject
) -> None:
    shorter = data.draw(st.integers(0, 2 * max_tokens))
    longer = data.draw(st.integers(shorter, 2 * max_tokens))
    low = length_penalty(shorter, max_tokens, threshold, truncated)
    high = length_penalty(longer, max_tokens, threshold, truncated)
    assert 0.0 <= low <= high <= 1.0


@pytest.mark.parametrize(
    ("num_tokens", "well_formed", "truncated", "format_penalty", "expected"),
    [
        (100, True, False, 1.0, 0.0),  # clip(−0 − 0) = 0
        (384, True, False, 1.0, -0.5),  # clip(−0 − 0.5) = −0.5
        (100, False, False, 1.0, -1.0),  # clip(−1 − 0) = −1
        (384, False, False, 1.0, -1.0),  # clip(−1 − 0.5) = clip(−1.5) = −1
        (100, False, False, 0.3, -0.3),  # clip(−0.3 − 0) = −0.3
        (384, False, False, 0.3, -0.8),  # clip(−0.3 − 0.5) = −0.8
        (100, True, True, 1.0, -1.0),  # truncated: ℓ = 1 → clip(−1) = −1
        (100, False, False, 0.0, 0.0),  # format penalty switched off
    ],
)
def test_response_shaping_cases(
    num_tokens: int, well_formed: bool, truncated: bool, format_penalty: float, expected: float
) -> None:
    # L_max = 512 and λ = 0.5 throughout, so ℓ(384) = (384 − 256) / 256 = 0.5 and ℓ(100) = 0.
    shaping = response_shaping(num_tokens, 512, 0.5, well_formed, truncated, format_penalty)
    assert shaping == pytest.approx(expected, abs=1e-12)


@settings(deadline=None)
@given(
    num_tokens=st.integers(0, 1024),
    well_formed=st.booleans(),
    truncated=st.booleans(),
    format_penalty=st.floats(0.0, 10.0),
    threshold=st.floats(0.0, 1.0),
)
def test_response_shaping_is_clipped_to_minus_one_zero(
    num_tokens: int, well_formed: bool, truncated: bool, format_penalty: float, threshold: float
) -> None:
    assert -1.0 <= response_shaping(num_tokens, 512, threshold, well_formed, truncated, format_penalty) <= 0.0


def test_judge_penalties_flag_the_named_steps() -> None:
    # T = 5, I(τ) = {2, 5}, κ = 0.1 → j = [0, −0.1, 0, 0, −0.1]; 0 and 7 are out of range and ignored.
    assert judge_penalties([2, 5, 0, 7], 5, 0.1) == [0.0, -0.1, 0.0, 0.0, -0.1]


def test_inadmissible_penalties_hit_refused_actions_only() -> None:
    # admitted, refused, malformed (nothing sent: the format penalty's case), refused.
    assert inadmissible_penalties([True, False, None, False], 0.5) == [0.0, -0.5, 0.0, -0.5]
    assert inadmissible_penalties([False, False], 0.0) == [0.0, 0.0]
    assert inadmissible_penalties([], 0.5) == []


def test_unparsable_or_empty_judgment_flags_nothing() -> None:
    assert judge_penalties(None, 3, 0.1) == [0.0, 0.0, 0.0]
    assert judge_penalties([], 3, 0.1) == [0.0, 0.0, 0.0]
    assert judge_penalties([1], 0, 0.1) == []


@pytest.mark.parametrize("won, score, mode, expected", [
    (True, None, "success", 1.0), (False, None, "success", 0.0), (False, 0.75, "success", 0.0),
    (True, 1.0, "score", 1.0), (False, 0.75, "score", 0.75), (False, -1.0, "score", 0.0),  # lost: no progress
    (False, None, "score", 0.0), (True, None, "score", 1.0),  # no score (ALFWorld): the outcome
    (False, -1.0, "final_score", -1.0), (False, 0.75, "final_score", 0.75), (True, 1.0, "final_score", 1.0),
    (False, None, "final_score", 0.0), (True, None, "final_score", 1.0), (False, 1.5, "final_score", 1.0),
])
def test_outcome_reward_modes(won: bool, score: float | None, mode: str, expected: float) -> None:
    assert outcome_reward(won, score, mode) == expected


def test_outcome_reward_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="env.reward"):
        outcome_reward(True, 1.0, "dense")
