"""Hierarchical GRPO advantages: hand-computed cases, slow reference loops, invariants, and verl itself."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.core.advantage import (
    PENALTY_MODES,
    grpo_normalize,
    hierarchical_advantages,
    response_advantages,
    strategy_scores,
)

SQRT_HALF = math.sqrt(0.5)  # a two-member group with distinct values normalises to ±0.5 / √0.5 = ±√0.5

# ---------------------------------------------------------------------------------------------------------
# Slow reference loops, written from the spec's formulas without NumPy.


def reference_grpo(
    scores: Sequence[float], group: Sequence[int], eps: float, norm_by_std: bool
) -> list[float]:
    """verl's compute_grpo_outcome_advantage as a plain loop (single member: mean 0, std 1)."""
    members: dict[int, list[float]] = {}
    for score, label in zip(scores, group, strict=True):
        members.setdefault(label, []).append(score)
    out = []
    for score, label in zip(scores, group, strict=True):
        values = members[label]
        if len(values) > 1 and len(set(values)) == 1:
            out.append(0.0)  # all equal: exactly zero (documented deviation from verl's rounding residue)
            continue
        mean, std = (0.0, 1.0) if len(values) == 1 else (statistics.fmean(values), statistics.stdev(values))
        out.append((score - mean) / (std + eps) if norm_by_std else score - mean)
    return out


def reference_strategy_scores(rewards: Sequence[Sequence[float]], delta: Fraction) -> list[float]:
    out = []
    for row in rewards:
        k = max(1, math.floor(delta * len(row)))  # exact rational arithmetic: no rounding question
        out.append(sum(sorted(row, reverse=True)[:k]) / k)
    return out


def reference_response_advantages(
    rewards: Sequence[Sequence[float]],
    strategy_shaping: Sequence[float],
    action_shaping: Sequence[Sequence[Sequence[float]]],
    judge: Sequence[Sequence[Sequence[float]]],
    delta: Fraction,
    eps: float,
    norm_by_std: bool,
    mode: str,
) -> tuple[list[float], list[list[list[float]]]]:
    if mode == "pre_norm":
        rewards = [
            [
                r + sum(s_t + j_t for s_t, j_t in zip(s, j, strict=True))
                for r, s, j in zip(r_i, s_i, j_i, strict=True)
            ]
            for r_i, s_i, j_i in zip(rewards, action_shaping, judge, strict=True)
        ]
    scores = reference_strategy_scores(rewards, delta)
    if mode == "pre_norm":
        scores = [s + z for s, z in zip(scores, strategy_shaping, strict=True)]
    strategy_base = reference_grpo(scores, [0] * len(scores), eps, norm_by_std)
    strategy, actions = [], []
    for i, row in enumerate(rewards):
        trajectory_base = reference_grpo(row, [0] * len(row), eps, norm_by_std)
        if mode == "post_norm":
            strategy.append(strategy_base[i] + strategy_shaping[i])
            actions.append(
                [
                    [
                        trajectory_base[j] + s + p
                        for s, p in zip(action_shaping[i][j], judge[i][j], strict=True)
                    ]
                    for j in range(len(row))
                ]
            )
        else:
            strategy.append(strategy_base[i])
            actions.append([[trajectory_base[j]] * len(action_shaping[i][j]) for j in range(len(row))])
    return strategy, actions


# ---------------------------------------------------------------------------------------------------------
# Hypothesis data: ragged groups of rewards, δ on the decimal grid a user writes in a config.

DELTAS = st.integers(1, 100).map(lambda percent: Fraction(percent, 100))
BINARY_ROW = st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=10)
REAL_ROW = st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=10)
RAGGED = st.lists(st.one_of(BINARY_ROW, REAL_ROW), min_size=1, max_size=6)


@st.composite
def groups_with_penalties(draw: st.DrawFn) -> tuple[list, list, list, list]:
    rewards = draw(RAGGED)
    penalty = st.floats(-1, 0, allow_nan=False)
    strategy_shaping = [draw(penalty) for _ in rewards]
    lengths = [[draw(st.integers(1, 6)) for _ in row] for row in rewards]
    action_shaping = [[[draw(penalty) for _ in range(t)] for t in row] for row in lengths]
    judge = [[[draw(st.sampled_from([0.0, -0.1])) for _ in range(t)] for t in row] for row in lengths]
    return rewards, strategy_shaping, action_shaping, judge


# ---------------------------------------------------------------------------------------------------------
# grpo_normalize


def test_grpo_normalize_by_hand() -> None:
    # group a = [1, 0, 0, 0]: mean 0.25, deviations [0.75, −0.25, −0.25, −0.25],
    #   unbiased var = (0.5625 + 3·0.0625) / 3 = 0.25, std 0.5 → [1.5, −0.5, −0.5, −0.5]
    # group b = [2, 4]: mean 3, std √((1 + 1) / 1) = √2 → [−1/√2, 1/√2]
    # group c = [7]: a single member keeps verl's mean 0, std 1 → 7
    scores = np.array([1.0, 2.0, 0.0, 4.0, 0.0, 7.0, 0.0])
    group = np.array(["a", "b", "a", "b", "a", "c", "a"])
    expected = [1.5, -SQRT_HALF, -0.5, SQRT_HALF, -0.5, 7.0, -0.5]
    assert grpo_normalize(scores, group, eps=0.0) == pytest.approx(expected, abs=1e-12)
    # Without std (Dr.GRPO): deviations only, single member keeps its score.
    expected_centred = [0.75, -1.0, -0.25, 1.0, -0.25, 7.0, -0.25]
    assert grpo_normalize(scores, group, norm_by_std=False) == pytest.approx(expected_centred, abs=1e-12)


def test_grpo_normalize_epsilon_enters_the_denominator() -> None:
    # [1, 0, 0, 0] with ε = 1e-6: 0.75 / (0.5 + 1e-6) = 1.499997000006
    assert grpo_normalize(np.array([1.0, 0, 0, 0]), np.zeros(4))[0] == pytest.approx(
        1.499997000006, rel=1e-12
    )


def test_equal_group_gets_exact_zeros() -> None:
    # Mean of three 0.1s is 0.10000000000000002 in floating point; the advantage must still be 0, not 1e-11.
    advantages = grpo_normalize(np.array([0.1, 0.1, 0.1]), np.zeros(3))
    assert advantages.tolist() == [0.0, 0.0, 0.0]


@settings(deadline=None)
@given(
    scores=st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=30),
    data=st.data(),
    eps=st.sampled_from([0.0, 1e-6]),
    norm_by_std=st.booleans(),
)
def test_grpo_normalize_matches_reference_loop(
    scores: list[float], data: st.DataObject, eps: float, norm_by_std: bool
) -> None:
    group = data.draw(st.lists(st.integers(0, 3), min_size=len(scores), max_size=len(scores)))
    if eps == 0.0:  # division by a zero std is only defined away for equal groups; keep std > 0 or equal
        for label in set(group):
            values = [s for s, g in zip(scores, group, strict=True) if g == label]
            if len(set(values)) > 1 and statistics.stdev(values) < 1e-3:
                return
    expected = reference_grpo(scores, group, eps, norm_by_std)
    assert grpo_normalize(np.array(scores), np.array(group), eps, norm_by_std) == pytest.approx(
        expected, rel=1e-9, abs=1e-9
    )


@settings(deadline=None)
@given(scores=st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=30), norm=st.booleans())
def test_normalised_group_sums_to_zero_and_is_finite(scores: list[float], norm: bool) -> None:
    advantages = grpo_normalize(np.array(scores), np.zeros(len(scores)), norm_by_std=norm)
    assert np.isfinite(advantages).all()
    # Σ (x − mean) = 0, so the sum is rounding noise, amplified at most by 1 / ε = 1e6.
    assert abs(advantages.sum()) <= 1e-6 * len(scores) * max(1.0, max(abs(s) for s in scores))


@settings(deadline=None)
@given(value=st.floats(-10, 10, allow_nan=False), size=st.integers(2, 20), norm=st.booleans())
def test_group_of_equal_members_gets_zeros(value: float, size: int, norm: bool) -> None:
    advantages = grpo_normalize(np.full(size, value), np.zeros(size), norm_by_std=norm)
    assert advantages.tolist() == [0.0] * size


def test_grpo_normalize_matches_verl() -> None:
    """The estimator this module claims to match, run on the same groups (float32 in verl)."""
    import torch
    from verl.trainer.ppo import core_algos  # verl is installed: a broken install fails, never skips

    rng = np.random.default_rng(0)
    scores = rng.integers(0, 2, size=40).astype(np.float64) + rng.normal(0, 0.3, size=40)
    scores[:8] = 1.0  # an all-equal group
    group = np.array([0] * 8 + [1] * 16 + [2] * 15 + [3])  # sizes 8, 16, 15 and a singleton
    for norm in (True, False):
        verl_advantages, _ = core_algos.compute_grpo_outcome_advantage(
            token_level_rewards=torch.tensor(scores, dtype=torch.float32).unsqueeze(-1),
            response_mask=torch.ones(len(scores), 1),
            index=group,
            norm_adv_by_std_in_grpo=norm,
        )
        ours = grpo_normalize(scores, group, norm_by_std=norm)
        assert ours == pytest.approx(verl_advantages.squeeze(-1).double().numpy(), abs=1e-5)


# ---------------------------------------------------------------------------------------------------------
# strategy_scores


def test_strategy_scores_by_hand() -> None:
    # δ = 0.5:
    #   [1, 0, 1, 1, 0, 0, 0, 1] (M = 8): k = ⌊4⌋ = 4, the top four are 1s → 1.0
    #   [1, 0, 0, 0, 0, 0, 0, 0] (M = 8): k = 4 → (1 + 0 + 0 + 0) / 4 = 0.25
    #   [0.5, 0.2, 0.9] (M = 3): k = ⌊1.5⌋ = 1 → 0.9
    #   [0.3] (M = 1): k = max(1, ⌊0.5⌋) = 1 → 0.3
    #   [1, 1, 0, 1, 0] (M = 5): k = ⌊2.5⌋ = 2 → 1.0
    rewards = [[1, 0, 1, 1, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0, 0, 0], [0.5, 0.2, 0.9], [0.3], [1, 1, 0, 1, 0]]
    assert strategy_scores(rewards, 0.5) == pytest.approx([1.0, 0.25, 0.9, 0.3, 1.0])
    # δ = 0.75 on [1, 0, 0, 0, 0, 0, 0, 0]: k = 6 → 1/6; on [0.5, 0.2, 0.9]: k = ⌊2.25⌋ = 2 → 0.7
    assert strategy_scores([[1, 0, 0, 0, 0, 0, 0, 0], [0.5, 0.2, 0.9]], 0.75) == pytest.approx([1 / 6, 0.7])


def test_strategy_scores_floor_is_taken_on_the_decimal_delta() -> None:
    # 0.29 · 100 = 28.999999999999996 in floating point; the spec's ⌊δ·M⌋ is 29.
    # Rewards 1..100: the top 29 are 72..100, mean (72 + 100) / 2 = 86.
    assert strategy_scores([list(range(1, 101))], 0.29) == pytest.approx([86.0])


@pytest.mark.parametrize("delta", [0.0, -0.5, 1.5])
def test_strategy_scores_rejects_delta_outside_unit_interval(delta: float) -> None:
    with pytest.raises(ValueError, match="delta_coef"):
        strategy_scores([[1.0]], delta)


def test_strategy_without_trajectories_is_an_error_that_names_it() -> None:
    with pytest.raises(ValueError, match=r"strategies \[1\]"):
        strategy_scores([[1.0], []], 0.5)


@settings(deadline=None)
@given(rewards=RAGGED, delta=DELTAS)
def test_strategy_scores_match_reference_loop(rewards: list[list[float]], delta: Fraction) -> None:
    expected = reference_strategy_scores(rewards, delta)
    assert strategy_scores(rewards, float(delta)) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@settings(deadline=None)
@given(rewards=RAGGED)
def test_delta_one_is_the_mean_and_small_delta_the_max(rewards: list[list[float]]) -> None:
    assert strategy_scores(rewards, 1.0) == pytest.approx([statistics.fmean(r) for r in rewards], abs=1e-12)
    # δ = 0.01 and M ≤ 10: ⌊δ·M⌋ = 0, so k = 1 and the score is the best reward.
    assert strategy_scores(rewards, 0.01) == [max(r) for r in rewards]


# ---------------------------------------------------------------------------------------------------------
# hierarchical_advantages


def test_hierarchical_advantages_by_hand() -> None:
    # δ = 0.5, N = 4 strategies, with ragged M:
    #   S = [top2 of [1,0,0,0], top2 of [1,1,0,0], top2 of [0,0,0,0], top1 of [1]] = [0.5, 1, 0, 1]
    #   mean S = 0.625, deviations [−0.125, 0.375, −0.625, 0.375], Σd² = 0.6875, std = √(0.6875/3)
    std = math.sqrt(0.6875 / 3)
    rewards = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [1]]
    strategy, trajectory = hierarchical_advantages(rewards, 0.5, eps=0.0)
    assert strategy == pytest.approx([-0.125 / std, 0.375 / std, -0.625 / std, 0.375 / std])
    # [1,0,0,0] → [1.5, −0.5, −0.5, −0.5]; [1,1,0,0]: mean 0.5, std √(1/3) → ±0.5·√3;
    # [0,0,0,0] → zeros; [1] alone → 1 (verl's single-member rule).
    half_root3 = 0.5 * math.sqrt(3)
    assert trajectory[0] == pytest.approx([1.5, -0.5, -0.5, -0.5])
    assert trajectory[1] == pytest.approx([half_root3, half_root3, -half_root3, -half_root3])
    assert trajectory[2] == [0.0, 0.0, 0.0, 0.0]
    assert trajectory[3] == pytest.approx([1.0])


def test_single_strategy_follows_verls_single_member_rule() -> None:
    # N = 1: S = [mean of top 1 of [0, 1]] = [1]; a single member is normalised with mean 0, std 1.
    strategy, _ = hierarchical_advantages([[0, 1]], 0.5)
    assert strategy == pytest.approx([1 / (1 + 1e-6)], rel=1e-12)


@settings(deadline=None)
@given(rewards=RAGGED, delta=DELTAS, norm=st.booleans())
def test_hierarchical_advantages_invariants(rewards: list[list[float]], delta: Fraction, norm: bool) -> None:
    strategy, trajectory = hierarchical_advantages(rewards, float(delta), norm_by_std=norm)
    assert len(strategy) == len(rewards)
    assert [len(row) for row in trajectory] == [len(row) for row in rewards]
    assert all(math.isfinite(a) for a in [*strategy, *(a for row in trajectory for a in row)])
    for row, advantages in zip(rewards, trajectory, strict=True):
        if len(row) > 1:
            assert abs(sum(advantages)) < 1e-5 * len(row) * 10
        if len(set(row)) == 1 and len(row) > 1:
            assert advantages == [0.0] * len(row)


# ---------------------------------------------------------------------------------------------------------
# response_advantages

# N = 2, M = 2; δ = 0.5 so k = max(1, ⌊1⌋) = 1 (each strategy is scored by its best trajectory).
REWARDS = [[1.0, 0.0], [0.0, 0.0]]
STRATEGY_SHAPING = [0.0, -1.0]  # the second strategy response lacked its <strategy> tag
ACTION_SHAPING = [[[0.0, -0.25], [-1.0]], [[0.0, 0.0, 0.0], [-0.5]]]
JUDGE = [[[-0.1, 0.0], [0.0]], [[0.0, -0.1, -0.1], [0.0]]]


def test_post_norm_by_hand() -> None:
    # S = [1, 0] → Â(z) = ±√0.5.  Trajectories: [1, 0] → ±√0.5;  [0, 0] → [0, 0].
    # strategy:  [√0.5 + 0, −√0.5 − 1]
    # τ00: √0.5 + [0 − 0.1, −0.25 + 0];  τ01: −√0.5 + [−1];  τ10: 0 + [0, −0.1, −0.1];  τ11: 0 + [−0.5]
    result = response_advantages(REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, JUDGE, delta=0.5, eps=0.0)
    assert result.strategy_scores == [1.0, 0.0]
    assert result.strategy == pytest.approx([SQRT_HALF, -SQRT_HALF - 1.0])
    assert result.actions[0][0] == pytest.approx([SQRT_HALF - 0.1, SQRT_HALF - 0.25])
    assert result.actions[0][1] == pytest.approx([-SQRT_HALF - 1.0])
    assert result.actions[1][0] == pytest.approx([0.0, -0.1, -0.1])
    assert result.actions[1][1] == pytest.approx([-0.5])
    assert result.trajectory_base[1] == [0.0, 0.0]


def test_pre_norm_by_hand() -> None:
    # R̃ = R + Σ(s + j):  τ00 = 1 − 0.35 = 0.65,  τ01 = 0 − 1 = −1,  τ10 = 0 − 0.2 = −0.2,  τ11 = −0.5
    # S̃ = best R̃ + s(z):  [0.65 + 0, −0.2 − 1] = [0.65, −1.2]
    # Without std (centred only): mean S̃ = −0.275 → [0.925, −0.925];
    #   strategy 0: mean(0.65, −1) = −0.175 → [0.825, −0.825]
    #   strategy 1: mean(−0.2, −0.5) = −0.35 → [0.15, −0.15]
    # Every action of a trajectory shares its trajectory's advantage.
    result = response_advantages(
        REWARDS,
        STRATEGY_SHAPING,
        ACTION_SHAPING,
        JUDGE,
        delta=0.5,
        norm_by_std=False,
        penalty_mode="pre_norm",
    )
    assert result.strategy_scores == pytest.approx([0.65, -1.2])
    assert result.strategy == pytest.approx([0.925, -0.925])
    assert result.actions == [
        [pytest.approx([0.825, 0.825]), pytest.approx([-0.825])],
        [pytest.approx([0.15, 0.15, 0.15]), pytest.approx([-0.15])],
    ]
    # The normalised terms kept for metrics: the penalised rewards' levels themselves (no penalty added after).
    assert result.strategy_base == pytest.approx([0.925, -0.925])
    assert result.trajectory_base == [pytest.approx([0.825, -0.825]), pytest.approx([0.15, -0.15])]


def test_pre_norm_amplifies_small_penalties_when_outcomes_agree() -> None:
    # The spec's reason for post_norm: strategy 1's trajectories both failed (R = 0, 0), yet with std
    # normalisation their penalty difference (−0.2 vs −0.5) becomes a full ±√0.5 advantage.
    result = response_advantages(
        REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, JUDGE, delta=0.5, eps=0.0, penalty_mode="pre_norm"
    )
    assert result.actions[1][0] == pytest.approx([SQRT_HALF] * 3)
    assert result.actions[1][1] == pytest.approx([-SQRT_HALF])


def test_one_inadmissible_step_is_the_only_difference_between_two_groups() -> None:
    # Two trajectories of one strategy, both lost (R = 0, 0): the group is flat, so Â(τ) = 0 and each action's
    # advantage is its penalties alone. The second trajectory's middle action was refused: ι = −p there only.
    rewards, shaping = [[0.0, 0.0]], [0.0]
    actions, judged = [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]
    refused = [[[0.0, 0.0, 0.0], [0.0, -0.5, 0.0]]]
    post = response_advantages(rewards, shaping, actions, judged, delta=0.5, inadmissible_penalties=refused)
    assert post.actions == [[[0.0, 0.0, 0.0], [0.0, -0.5, 0.0]]]
    # pre_norm: R̃ = [0, −0.5], std √0.125 → ±√0.5, shared by every action of a trajectory.
    pre = response_advantages(rewards, shaping, actions, judged, delta=0.5, eps=0.0, penalty_mode="pre_norm",
                              inadmissible_penalties=refused)
    assert pre.actions == [[pytest.approx([SQRT_HALF] * 3), pytest.approx([-SQRT_HALF] * 3)]]
    # With a judge penalty on the same step the two add up (post_norm): Â(τ) + s + j + ι.
    both = response_advantages(REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, JUDGE, delta=0.5, eps=0.0,
                               inadmissible_penalties=[[[0.0, -0.5], [0.0]], [[-0.5, 0.0, 0.0], [0.0]]])
    assert both.actions[0][0] == pytest.approx([SQRT_HALF - 0.1, SQRT_HALF - 0.25 - 0.5])
    assert both.actions[1][0] == pytest.approx([-0.5, -0.1, -0.1])


def test_zero_inadmissible_penalties_change_nothing_bit_for_bit() -> None:
    zeros = [[[0.0] * len(steps) for steps in strategy] for strategy in ACTION_SHAPING]
    for mode in PENALTY_MODES:
        without = response_advantages(REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, JUDGE, delta=0.5, penalty_mode=mode)
        with_zeros = response_advantages(REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, JUDGE, delta=0.5,
                                         penalty_mode=mode, inadmissible_penalties=zeros)
        assert repr(with_zeros) == repr(without)  # repr tells 0.0 from -0.0


def test_inadmissible_penalties_of_the_wrong_shape_are_named() -> None:
    with pytest.raises(ValueError, match=r"^trajectory \(0, 0\): 2 action_shaping steps but 1 inadmissible_penalties"):
        response_advantages(REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, JUDGE, delta=0.5,
                            inadmissible_penalties=[[[0.0], [0.0]], [[0.0, 0.0, 0.0], [0.0]]])


def test_unknown_penalty_mode_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="post_norm, pre_norm"):
        response_advantages(REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, JUDGE, delta=0.5, penalty_mode="mid")


def test_mismatched_shapes_are_rejected_with_the_location() -> None:
    with pytest.raises(ValueError, match=r"trajectory \(1, 0\)"):
        response_advantages(REWARDS, STRATEGY_SHAPING, ACTION_SHAPING, [JUDGE[0], [[0.0], [0.0]]], delta=0.5)
    with pytest.raises(ValueError, match="N=2"):
        response_advantages(REWARDS, [0.0], ACTION_SHAPING, JUDGE, delta=0.5)
    with pytest.raises(ValueError, match=r"^strategy 1: 2 rewards but 1 action_shaping and 2 judge_penalties "
                                         r"trajectories$"):
        response_advantages(REWARDS, STRATEGY_SHAPING, [ACTION_SHAPING[0], [[0.0]]], JUDGE, delta=0.5)


@settings(max_examples=150, deadline=None)
@given(
    group=groups_with_penalties(),
    delta=DELTAS,
    norm=st.booleans(),
    mode=st.sampled_from(["post_norm", "pre_norm"]),
)
def test_response_advantages_match_reference_loop(
    group: tuple[list, list, list, list], delta: Fraction, norm: bool, mode: str
) -> None:
    rewards, strategy_shaping, action_shaping, judge = group
    result = response_advantages(
        rewards, strategy_shaping, action_shaping, judge, float(delta), norm_by_std=norm, penalty_mode=mode
    )
    expected_strategy, expected_actions = reference_response_advantages(
        rewards, strategy_shaping, action_shaping, judge, delta, 1e-6, norm, mode
    )
    # Penalty sums can make near-equal groups whose tiny std is amplified by 1/std: compare relatively.
    assert result.strategy == pytest.approx(expected_strategy, rel=1e-6, abs=1e-6)
    for got_i, expected_i in zip(result.actions, expected_actions, strict=True):
        for got, expected in zip(got_i, expected_i, strict=True):
            assert got == pytest.approx(expected, rel=1e-6, abs=1e-6)
            assert all(math.isfinite(a) for a in got)
