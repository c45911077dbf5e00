"""GiGPO's advantages on hand-worked groups (docs/algorithm.md §2.2): every number below was worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strata.core.advantage import grpo_normalize
from strata.core.gigpo import anchor_groups, discounted_returns, gigpo_advantages


def parts(credits, name):
    return [[getattr(c, name) for c in trajectory] for trajectory in credits]


def approx(nested, **tolerance):
    """pytest.approx for a list of per-trajectory lists."""
    return [pytest.approx(row, **tolerance) for row in nested]


def test_discounted_returns_with_and_without_discount():
    assert discounted_returns([0.0, 0.0, 10.0], 1.0) == [10.0, 10.0, 10.0]
    assert discounted_returns([0.0, 0.0, 10.0], 0.5) == [2.5, 5.0, 10.0]
    assert discounted_returns([1.0, 0.0, 2.0], 0.5) == [1.5, 1.0, 2.0]
    assert discounted_returns([], 0.9) == []


def test_anchor_groups_exact_in_order_of_first_appearance():
    assert anchor_groups(["b", "a", "b", "c", "a"]) == [0, 1, 0, 2, 1]
    # A similarity threshold joins near-identical observations to the first group they resemble.
    assert anchor_groups(["on the table 1 you see a mug", "on the table 2 you see a mug", "nothing happens"],
                         similarity_threshold=0.9) == [0, 0, 1]
    with pytest.raises(ValueError, match="similarity_threshold"):
        anchor_groups(["a"], similarity_threshold=1.0)


# Trajectory A (won) visits s0, s1; trajectory B (lost) visits s0, s2, s1. γ = 0.5, reward scale 1.
SHARED = dict(outcomes=[1.0, 0.0], anchors=[["s0", "s1"], ["s0", "s2", "s1"]], penalties=[[0.0, 0.0], [0.0] * 3])


def test_states_shared_across_trajectories_mean_norm():
    credits = gigpo_advantages(**SHARED, gamma=0.5, step_weight=1.0)
    # Episode part: rows carry 1, 1, 0, 0, 0; their mean is 0.4.
    assert parts(credits, "episode_part") == approx([[0.6, 0.6], [-0.4, -0.4, -0.4]])
    # Returns: A gets r = [0, 1] -> G = [0.5, 1]; B gets nothing.
    assert parts(credits, "discounted_return") == approx([[0.5, 1.0], [0.0, 0.0, 0.0]])
    assert parts(credits, "step_reward") == [[0.0, 1.0], [0.0, 0.0, 0.0]]
    # s0 = {0.5, 0} (mean 0.25), s1 = {1, 0} (mean 0.5), s2 alone: no step part.
    assert parts(credits, "step_part") == approx([[0.25, 0.5], [-0.25, 0.0, -0.5]])
    assert parts(credits, "step_group_size") == [[2, 2], [2, 1, 2]]
    assert parts(credits, "step_group") == [[0, 1], [0, 2, 1]]
    assert parts(credits, "advantage") == approx([[0.85, 1.1], [-0.65, -0.4, -0.9]])


def test_mean_std_norm_divides_both_parts_by_their_unbiased_std():
    credits = gigpo_advantages(**SHARED, gamma=0.5, step_weight=1.0, mode="mean_std_norm", eps=0.0)
    episode_std = math.sqrt((2 * 0.6**2 + 3 * 0.4**2) / 4)  # sqrt(0.3)
    assert parts(credits, "episode_part") == approx([[0.6 / episode_std] * 2, [-0.4 / episode_std] * 3])
    # s0: {0.5, 0} has std sqrt(2·0.25²) = 0.3536 -> ±0.7071; s1: {1, 0} has std 0.7071 -> ±0.7071.
    half = 1 / math.sqrt(2)
    assert parts(credits, "step_part") == approx([[half, half], [-half, 0.0, -half]])


def test_a_state_repeated_inside_one_trajectory_counts_each_visit():
    # A (won) sees s0 twice ("Nothing happens." after a refused action), B (lost) once.
    credits = gigpo_advantages([1.0, 0.0], [["s0", "s0"], ["s0"]], [[0.0, 0.0], [0.0]], gamma=0.5, step_weight=1.0)
    # s0 = {0.5, 1, 0}, mean 0.5.
    assert parts(credits, "step_part") == approx([[0.0, 0.5], [-0.5]])
    assert parts(credits, "step_group_size") == [[3, 3], [3]]


def test_singleton_states_get_no_step_part():
    credits = gigpo_advantages([1.0, 0.0], [["a", "b"], ["c", "d"]], [[0.0, 0.0], [0.0, 0.0]], gamma=0.9,
                               step_weight=1.0)
    assert parts(credits, "step_part") == [[0.0, 0.0], [0.0, 0.0]]
    assert parts(credits, "advantage") == approx([[0.5, 0.5], [-0.5, -0.5]])


def test_all_equal_returns_give_exactly_zero_but_shorter_wins_are_preferred():
    lost = gigpo_advantages([0.0, 0.0], [["s0", "s1"], ["s0", "s1"]], [[0.0, 0.0], [0.0, 0.0]], gamma=0.95,
                            step_weight=1.0, mode="mean_std_norm")
    assert parts(lost, "advantage") == [[0.0, 0.0], [0.0, 0.0]]
    # Both won, A in 1 step, B in 2: at s0, A's return 10 beats B's 9.5 (γ = 0.95, scale 10), though the
    # outcomes are equal and GRPO would give both 0.
    won = gigpo_advantages([1.0, 1.0], [["s0"], ["s0", "s1"]], [[0.0], [0.0, 0.0]], gamma=0.95, step_weight=1.0,
                           reward_scale=10.0)
    assert parts(won, "episode_part") == [[0.0], [0.0, 0.0]]
    assert parts(won, "step_part") == approx([[0.25], [-0.25, 0.0]])


def test_gamma_one_makes_every_step_carry_the_outcome():
    credits = gigpo_advantages([1.0, 0.0], [["s0", "s1"], ["s0", "s1"]], [[0.0, 0.0], [0.0, 0.0]], gamma=1.0,
                               step_weight=1.0)
    assert parts(credits, "discounted_return") == [[1.0, 1.0], [0.0, 0.0]]
    assert parts(credits, "step_part") == approx([[0.5, 0.5], [-0.5, -0.5]])


def test_step_weight_zero_is_the_episode_part_alone():
    credits = gigpo_advantages(**SHARED, gamma=0.5, step_weight=0.0)
    assert parts(credits, "advantage") == parts(credits, "episode_part")


def test_episode_statistics_over_trajectories():
    # One score per trajectory: [1, 0], mean 0.5, whatever the episodes' lengths.
    credits = gigpo_advantages(**SHARED, gamma=0.5, step_weight=0.0, episode_stats="trajectories")
    assert parts(credits, "episode_part") == approx([[0.5, 0.5], [-0.5, -0.5, -0.5]])


def test_one_trajectory_has_mean_zero_and_std_one():
    credits = gigpo_advantages([1.0], [["s0"]], [[0.0]], gamma=0.5, step_weight=1.0, mode="mean_std_norm",
                               episode_stats="trajectories", eps=0.0)
    assert parts(credits, "episode_part") == [[1.0]]


def test_penalties_enter_the_episode_score_before_normalisation_or_the_advantage_after():
    penalties = [[-0.1, 0.0], [0.0, 0.0, 0.0]]
    kwargs = dict(outcomes=[1.0, 0.0], anchors=SHARED["anchors"], penalties=penalties, gamma=0.5, step_weight=0.0,
                  reward_scale=10.0)
    # pre_norm (verl-agent): rows 9.9, 10, 0, 0, 0, mean 3.98.
    pre = gigpo_advantages(**kwargs, penalty_mode="pre_norm")
    assert parts(pre, "advantage") == approx([[5.92, 6.02], [-3.98, -3.98, -3.98]])
    # post_norm: rows 10, 10, 0, 0, 0, mean 4, then the penalty is added to its own step.
    post = gigpo_advantages(**kwargs, penalty_mode="post_norm")
    assert parts(post, "advantage") == approx([[5.9, 6.0], [-4.0, -4.0, -4.0]])
    assert parts(post, "penalty") == penalties


def test_the_episode_part_over_trajectories_with_std_is_grpo():
    # ω = 0, mean-std over trajectories, penalties after: exactly the flat GRPO baseline's advantages.
    outcomes = [1.0, 0.0, 0.0, 1.0, 0.0]
    anchors = [["s"] * n for n in (1, 3, 2, 2, 4)]
    penalties = [[-0.5 if t == 0 else 0.0 for t in range(len(a))] for a in anchors]
    credits = gigpo_advantages(outcomes, anchors, penalties, gamma=0.9, step_weight=0.0, mode="mean_std_norm",
                               episode_stats="trajectories", penalty_mode="post_norm")
    grpo = grpo_normalize(np.array(outcomes), np.zeros(5, dtype=np.int64))
    expected = [[grpo[j] + p for p in row] for j, row in enumerate(penalties)]
    assert parts(credits, "advantage") == approx(expected, abs=1e-12)


@pytest.mark.parametrize("bad", [dict(mode="max_norm"), dict(episode_stats="episodes"),
                                 dict(penalty_mode="after")])
def test_unknown_settings_are_refused(bad):
    with pytest.raises(ValueError, match="unknown"):
        gigpo_advantages(**SHARED, gamma=0.5, step_weight=1.0, **bad)


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="trajectory 1"):
        gigpo_advantages([1.0, 0.0], [["a"], ["b", "c"]], [[0.0], [0.0]], gamma=0.5, step_weight=1.0)
    with pytest.raises(ValueError, match="G=2"):
        gigpo_advantages([1.0, 0.0], [["a"]], [[0.0]], gamma=0.5, step_weight=1.0)
