"""The smoke run's reward gives every group of distinct responses variance, so its steps always train."""

from __future__ import annotations

from strata.assets.smoke_data import smoke_score


def test_the_smoke_reward_separates_any_two_responses_and_is_stable() -> None:
    responses = [f"{word}{n}" for word in ("one", "two", " ", "") for n in range(50)]
    scores = [smoke_score("smoke", text, "0") for text in responses]
    assert len(set(scores)) == len(set(responses))  # no two different responses tie
    assert all(0.0 <= score < 1.0 for score in scores)
    assert smoke_score("smoke", "Count", "0") == smoke_score("smoke", "Count", "1")  # a pure function
