"""The learning benchmark's control run: each task's rewards shuffled across its episodes before the advantages."""

from __future__ import annotations

from collections import Counter

from strata.core.config import StrataConfig
from strata.workflow.records import Generation, Step, StrategyCandidate, StrategyRollout, TaskRollout, Trajectory
from strata.workflow.rows import ZeroVariance, group_advantages, trained_rewards


def _trajectory(won: bool) -> Trajectory:
    step = Step(Generation([1], [2, 3], [-0.1, -0.2], "<action>look</action>", False), "look", "ok", "look", True)
    return Trajectory(prompt_ids=[0], steps=[step], won=won, end_reason="won" if won else "step_limit")


def _rollout() -> TaskRollout:
    """Two strategies: the first won 3 of 4 episodes, the second none of 4."""
    candidates = [StrategyCandidate(Generation([1], [5], None, f"<strategy>{i}</strategy>", False), str(i))
                  for i in range(2)]
    outcomes = [[True, True, True, False], [False, False, False, False]]
    strategies = [StrategyRollout(c, [_trajectory(w) for w in won])
                  for c, won in zip(candidates, outcomes, strict=True)]
    return TaskRollout(candidates, [0, 1], strategies)


def test_without_a_seed_the_rewards_are_the_episodes_own() -> None:
    assert trained_rewards(_rollout()) == [[1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]


def test_a_seed_shuffles_the_same_rewards_across_strategies_in_the_same_shape() -> None:
    rollout = _rollout()
    shuffles = {seed: trained_rewards(rollout, seed) for seed in range(20)}
    for rewards in shuffles.values():
        assert [len(row) for row in rewards] == [4, 4]
        assert Counter(r for row in rewards for r in row) == Counter({0.0: 5, 1.0: 3})
    assert shuffles[3] == trained_rewards(rollout, 3)  # the same seed, the same shuffle (exact resume)
    # Wins moved to the strategy that earned none in some shuffles: the rewards no longer follow the episodes.
    assert any(sum(rewards[1]) > 0 for rewards in shuffles.values())


def test_the_advantages_and_the_flat_groups_follow_the_shuffled_rewards() -> None:
    rollout, config = _rollout(), StrataConfig.from_dict({"num_stras_per_run": 2, "num_trajs_per_stra": 4,
                                                          "num_cands_per_stra": 1})
    seed = next(s for s in range(50) if sum(trained_rewards(rollout, s)[1]) > 0)
    shuffled = group_advantages(rollout, config, permutation_seed=seed)
    honest = group_advantages(rollout, config)
    assert honest.trajectory_base[1] == [0.0] * 4  # the second strategy's group is flat on its own rewards
    assert shuffled.trajectory_base[1] != [0.0] * 4
    assert ZeroVariance.of(rollout, config.delta_coef).trajectory_groups == (False, True)
    assert ZeroVariance.of(rollout, config.delta_coef, seed).trajectory_groups[1] is False
