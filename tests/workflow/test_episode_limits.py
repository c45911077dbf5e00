"""`EpisodeLimits` exactly: the reward mode it refuses, and the token budget's boundary (a response that fits
exactly still gets its turn)."""

from __future__ import annotations

import pytest

from strata.workflow.episode import EpisodeLimits


def test_an_unknown_reward_mode_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError) as error:
        EpisodeLimits(max_steps=1, response_budget=10, prompt_tokens=10, reward_mode="progress")
    assert str(error.value) == "unknown env.reward 'progress'; valid: success, score, final_score"


def test_a_response_that_fits_exactly_has_room() -> None:
    limits = EpisodeLimits(max_steps=1, response_budget=100, prompt_tokens=10)
    assert limits.room_for_response(row_tokens=68, max_tokens=32)  # 100 - 68 = 32: exactly L_max left
    assert not limits.room_for_response(row_tokens=69, max_tokens=32)
    assert limits.room_for_response(row_tokens=0, max_tokens=100) and not limits.room_for_response(1, 100)
