"""Defaults and clips of the reward functions, which tests/core/test_rewards.py always passes explicitly.

Mutation testing (scripts/mutation.sh) showed that a default flipped (``truncated``, ``mode``), a clip
widened or a message garbled went unnoticed; callers rely on the defaults (the rows and the dump do).
"""

from __future__ import annotations

import pytest

from strata.core.rewards import length_penalty, outcome_reward, response_shaping


def test_defaults_are_an_unfinished_response_and_the_success_reward() -> None:
    assert length_penalty(2, 8, 0.5) == 0.0  # not truncated unless told
    assert outcome_reward(False, 0.7) == 0.0 and outcome_reward(True, None) == 1.0  # success: the score is ignored


def test_the_score_reward_is_clipped_to_the_unit_interval() -> None:
    assert outcome_reward(False, 1.5, "score") == 1.0
    assert outcome_reward(False, -0.25, "score") == 0.0
    assert outcome_reward(False, 0.25, "score") == 0.25


def test_an_unknown_mode_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError) as error:
        outcome_reward(True, None, "dense")
    assert str(error.value) == "unknown reward mode 'dense' (env.reward); valid: success, score, final_score"


def test_shaping_defaults_and_its_upper_clip() -> None:
    assert response_shaping(2, 8, 0.5, True) == 0.0  # not truncated unless told
    assert response_shaping(2, 8, 0.5, False) == -1.0  # f = 1 by default
    # s(r) = clip(-f - ℓ, -1, 0): a negative f (never valid in the config) still gives no bonus.
    assert response_shaping(2, 8, 0.5, False, format_penalty=-0.5) == 0.0
