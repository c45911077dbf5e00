"""Turn a task's rollout into the rows verl trains on, with StraTA's per-token advantages.

One row per kept strategy (its prompt and response; every response token carries Â(z_i) + s(z_i)) and
one row per trajectory (a multi-turn sequence: action tokens carry Â(τ_ij) + s(a_t) + j_t of their step,
environment tokens are masked out). Discarded candidates and judge generations produce no row.
Trajectories cut short by an environment failure (timeout, crashed worker, engine error) are left out
of the advantage groups: their outcome says nothing about the policy. A strategy left with none is
dropped from the strategy group; the task's other strategies still train.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from strata.core.advantage import GroupAdvantages, response_advantages, strategy_scores
from strata.core.config import StrataConfig
from strata.core.gigpo import StepCredit, gigpo_advantages
from strata.core.rewards import inadmissible_penalties, judge_penalties, response_shaping
from strata.envs.records import REASON_ENGINE_ERROR, REASON_TIMEOUT, REASON_WORKER_LOST
from strata.workflow.episode import REASON_TOKEN_BUDGET
from strata.workflow.records import Generation, StrategyRollout, TaskRollout, Trajectory

ENVIRONMENT_FAILURES = (REASON_TIMEOUT, REASON_WORKER_LOST, REASON_ENGINE_ERROR)
SUBTASK_PREFIX = "subtask/"
"""Prefix of the per-subtask counts in `rollout_stats`."""


def is_environment_failure(trajectory: Trajectory) -> bool:
    return trajectory.end_reason.startswith(ENVIRONMENT_FAILURES)


@dataclass(frozen=True)
class Row:
    """One training sequence (verl's ``AgentLoopOutput`` fields plus StraTA's token advantages).

    Args:
        role: ``"strategy"``, ``"trajectory"`` (a whole multi-turn episode) or ``"step"`` (one action).
        prompt_ids / response_ids / response_mask / response_logprobs: as verl defines them.
        advantages: one per response token (0 where ``response_mask`` is 0).
        reward: the outcome reward R(τ) of a trajectory row; the score S_i of a strategy row.
        num_turns: chat turns in the row (user + assistant), for verl's turn metrics.
        weights_versions: the weights version of each generation in the row (verl's staleness tags).
        zero_variance: the row belongs to an advantage group whose rewards are all equal (`ZeroVariance`);
            ``strata.zero_variance_filter`` leaves such rows out of the update.
    """

    role: str
    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]
    response_logprobs: list[float]
    advantages: list[float]
    reward: float
    num_turns: int
    weights_versions: tuple[int, ...] = ()
    zero_variance: bool = False


def _shaping(generation: Generation, well_formed: bool, config: StrataConfig) -> float:
    return response_shaping(
        generation.num_tokens, config.max_tokens_per_response, config.length_penalty.threshold,
        well_formed, generation.truncated, config.format_penalty,
    )


def trained_trajectories(strategy: StrategyRollout) -> list[Trajectory]:
    """The trajectories that enter the advantage groups: at least one step, not cut short by the environment."""
    return [t for t in strategy.trajectories if not is_environment_failure(t) and t.steps]


def scored_strategies(rollout: TaskRollout) -> list[StrategyRollout]:
    """The kept strategies that have a score. One whose every trajectory failed in the environment has none
    (S_i is a mean over no rewards): it is left out of the strategy group and trains no row, and the rest of
    the task trains as usual (counted as ``num_dropped_strategies``)."""
    return [s for s in rollout.strategies if trained_trajectories(s)]


def trained_rewards(rollout: TaskRollout, permutation_seed: int | None = None) -> list[list[float]]:
    """R_ij of the trained trajectories of each scored strategy, the rewards the advantage groups normalise.

    With ``permutation_seed`` (the learning benchmark's control run, ``+strata_test.permute_rewards=true``) the
    same rewards are shuffled across all of the task's trained episodes, strategies included, before they are
    handed back in the same ragged shape: the update keeps its size, its penalties and each task's mix of wins and
    losses (so its share of flat groups only in expectation: a shuffle across strategies can make one group flat
    and another not), but no reward belongs to the episode that earned it any more. A gain of such a run is what
    moving the policy buys without the signal.
    """
    rewards = [[t.reward for t in trained_trajectories(s)] for s in scored_strategies(rollout)]
    if permutation_seed is None:
        return rewards
    shuffled = iter(np.random.default_rng(permutation_seed).permutation([r for row in rewards for r in row]).tolist())
    return [[next(shuffled) for _ in row] for row in rewards]


def group_advantages(rollout: TaskRollout, config: StrataConfig, norm_by_std: bool = True,
                     permutation_seed: int | None = None) -> GroupAdvantages:
    """The task's advantages for the scored strategies (`scored_strategies`, in order) and their trained
    trajectories: StraTA's two levels; for the GRPO baseline (one strategy-free group) only the trajectory
    level is used; GiGPO's episode and step-level credit for ``strata.algorithm=gigpo`` (`gigpo_credit`).
    ``permutation_seed``: the control's shuffled rewards (`trained_rewards`)."""
    if config.algorithm == "gigpo":
        return gigpo_credit(rollout, config, permutation_seed)
    strategies = scored_strategies(rollout)
    shaping, judged, refused = _penalty_terms(strategies, config)
    return response_advantages(
        rewards=trained_rewards(rollout, permutation_seed),
        strategy_shaping=[_shaping(s.candidate.generation, s.candidate.well_formed, config)
                          if s.candidate is not None else 0.0 for s in strategies],
        action_shaping=shaping,
        judge_penalties=judged,
        delta=config.delta_coef,
        norm_by_std=norm_by_std,
        penalty_mode=config.penalty_mode,
        inadmissible_penalties=refused,
    )


def gigpo_credit(rollout: TaskRollout, config: StrataConfig, permutation_seed: int | None = None) -> GroupAdvantages:
    """GiGPO's advantages (`strata.core.gigpo`) of the task's one strategy-free group, every term kept in
    ``step_credit``. A step's anchor is the observation its action was chosen on (`Trajectory.anchors`).
    ``trajectory_base`` holds each trajectory's first-step episode part (every step's, unless penalties enter
    before the normalisation)."""
    strategies = scored_strategies(rollout)
    rewards = trained_rewards(rollout, permutation_seed)
    shaping, judged, refused = _penalty_terms(strategies, config)
    settings = config.gigpo
    credit = [
        gigpo_advantages(
            outcomes,
            [t.anchors(rollout.initial_observation, settings.anchor == "last_admitted")
             for t in trained_trajectories(strategy)],
            [np.add(np.add(s, j), r).tolist() for s, j, r in zip(shaping_i, judged_i, refused_i, strict=True)],
            gamma=settings.gamma, step_weight=settings.step_weight, mode=settings.mode,
            episode_stats=settings.episode_stats, reward_scale=settings.reward_scale,
            penalty_mode=config.penalty_mode, similarity_threshold=settings.similarity_threshold,
        )
        for strategy, outcomes, shaping_i, judged_i, refused_i in zip(strategies, rewards, shaping, judged, refused,
                                                                      strict=True)
    ]
    return GroupAdvantages(
        strategy=[0.0] * len(strategies),
        actions=[[[c.advantage for c in steps] for steps in group] for group in credit],
        strategy_scores=strategy_scores(rewards, config.delta_coef),
        strategy_base=[0.0] * len(strategies),
        trajectory_base=[[steps[0].episode_part for steps in group] for group in credit],
        step_credit=credit,
    )


def credit_settings(config: StrataConfig) -> dict[str, Any] | None:
    """The keys GiGPO's advantages were computed with, for the dumps (None for StraTA and GRPO)."""
    if config.algorithm != "gigpo":
        return None
    return {**asdict(config.gigpo), "penalty_mode": config.penalty_mode}


def _penalty_terms(strategies: list[StrategyRollout], config: StrataConfig) -> tuple[list, list, list]:
    """Per step of every trained trajectory: its shaping s(a_t), judge penalty j_t and inadmissible penalty ι_t."""
    kept = [trained_trajectories(s) for s in strategies]
    shaping = [[[_shaping(step.generation, step.well_formed, config) for step in t.steps] for t in trajs]
               for trajs in kept]
    judged = [[judge_penalties(t.flagged_steps, t.num_steps, config.judge.kappa) for t in trajs] for trajs in kept]
    refused = [[inadmissible_penalties([s.admissible for s in t.steps], config.inadmissible_penalty) for t in trajs]
               for trajs in kept]
    return shaping, judged, refused


def strategy_row(generation: Generation, advantage: float, score: float, zero_variance: bool = False) -> Row:
    n = generation.num_tokens
    return Row("strategy", generation.prompt_ids, generation.token_ids, [1] * n,
               _logprobs(generation), [advantage] * n, score, num_turns=2,
               weights_versions=_versions([generation]), zero_variance=zero_variance)


def trajectory_row(trajectory: Trajectory, step_advantages: list[float] | None, zero_variance: bool = False) -> Row:
    """The multi-turn row of one trajectory; ``step_advantages`` None gives zero advantages (validation)."""
    ids: list[int] = []
    mask: list[int] = []
    logprobs: list[float] = []
    advantages: list[float] = []
    for t, step in enumerate(trajectory.steps):
        advantage = step_advantages[t] if step_advantages is not None else 0.0
        n = step.generation.num_tokens
        ids += step.generation.token_ids + step.env_tokens
        mask += [1] * n + [0] * len(step.env_tokens)
        logprobs += _logprobs(step.generation) + [0.0] * len(step.env_tokens)
        advantages += [advantage] * n + [0.0] * len(step.env_tokens)
    return Row("trajectory", trajectory.prompt_ids, ids, mask, logprobs, advantages, trajectory.reward,
               num_turns=2 * trajectory.num_steps + 1,
               weights_versions=_versions([s.generation for s in trajectory.steps]), zero_variance=zero_variance)


def step_rows(trajectory: Trajectory, step_advantages: list[float] | None, zero_variance: bool = False) -> list[Row]:
    """One row per step (``strata.trajectory_rows=per_step``): the step's own prompt and its response."""
    rows = []
    for t, step in enumerate(trajectory.steps):
        advantage = step_advantages[t] if step_advantages is not None else 0.0
        g = step.generation
        rows.append(Row("step", g.prompt_ids, g.token_ids, [1] * g.num_tokens, _logprobs(g),
                        [advantage] * g.num_tokens, trajectory.reward, num_turns=2, weights_versions=_versions([g]),
                        zero_variance=zero_variance))
    return rows


def rows_of_trajectory(trajectory: Trajectory, step_advantages: list[float] | None, per_step: bool,
                       zero_variance: bool = False) -> list[Row]:
    if per_step:
        return step_rows(trajectory, step_advantages, zero_variance)
    return [trajectory_row(trajectory, step_advantages, zero_variance)]


def training_rows(rollout: TaskRollout, advantages: GroupAdvantages, constant: ZeroVariance, *,
                  per_step: bool = False, train_strategies: bool = True) -> list[Row]:
    """Strategy rows first (none without a strategy, or with ``train_strategies`` False, the
    ``strata.train_strategies`` ablation), then each strategy's trajectories (one row each, or one per step);
    ``advantages`` is `group_advantages` of ``rollout`` and ``constant`` its groups without reward variance
    (`ZeroVariance.of` with the same δ), which the rows carry for the optional filter."""
    strategies = scored_strategies(rollout)
    rows = [strategy_row(s.candidate.generation, a, score, constant.strategy_group) for s, a, score in
            zip(strategies, advantages.strategy, advantages.strategy_scores, strict=True)
            if s.candidate is not None and train_strategies]
    for strategy, per_trajectory, flat in zip(strategies, advantages.actions, constant.trajectory_groups, strict=True):
        for trajectory, step_advantages in zip(trained_trajectories(strategy), per_trajectory, strict=True):
            rows += rows_of_trajectory(trajectory, step_advantages, per_step, flat)
    return rows


def _versions(generations: list[Generation]) -> tuple[int, ...]:
    return tuple(g.weights_version for g in generations if g.weights_version is not None)


def _logprobs(generation: Generation) -> list[float]:
    return generation.logprobs if generation.logprobs is not None else [0.0] * generation.num_tokens


def rollout_stats(rollout: TaskRollout, subtask: str) -> dict[str, float]:
    """Per-task numbers the trainer sums over a step into ``strata/*`` and ``train/*`` metrics (all from the
    records); ``subtask`` keys the per-subtask success, episode length and score. Score sums are there only
    when the environment reports a progress score (ScienceWorld)."""
    trajectories = rollout.trajectories
    steps = [s for t in trajectories for s in t.steps]
    judged = [t for t in trajectories if t.judge is not None]
    kept = [s.candidate for s in rollout.strategies if s.candidate is not None]
    scores = [t.progress for t in trajectories if t.progress is not None]
    stats = {
        "num_candidates": len(rollout.candidates),
        "candidate_format_ok": sum(c.well_formed for c in rollout.candidates),
        "kept_format_ok": sum(c.well_formed for c in kept),
        "num_dropped_strategies": len(rollout.strategies) - len(scored_strategies(rollout)),
        "num_trajectories": len(trajectories),
        "num_won": sum(t.won for t in trajectories),
        "num_env_failures": sum(is_environment_failure(t) for t in trajectories),
        "num_token_budget_ends": sum(t.end_reason == REASON_TOKEN_BUDGET for t in trajectories),
        "num_steps": len(steps),
        "action_format_ok": sum(s.well_formed for s in steps),
        "action_admissible": sum(bool(s.admissible) for s in steps),
        "action_refused_repeats": sum(t.refused_repeats for t in trajectories),
        "action_truncated": sum(s.generation.truncated for s in steps),
        "num_judged": len(judged),
        "judge_parse_ok": sum(bool(t.judge_parsed) for t in judged),
        "judge_flagged_steps": sum(len(t.flagged_steps) for t in judged),
        "selection_seconds": rollout.selection_seconds,
        f"{SUBTASK_PREFIX}{subtask}/num_trajectories": len(trajectories),
        f"{SUBTASK_PREFIX}{subtask}/num_won": sum(t.won for t in trajectories),
        f"{SUBTASK_PREFIX}{subtask}/num_steps": len(steps),
    }
    if scores:
        for prefix in ("", f"{SUBTASK_PREFIX}{subtask}/"):
            stats[f"{prefix}num_scored"] = len(scores)
            stats[f"{prefix}score_sum"] = sum(scores)
    return stats


@dataclass(frozen=True)
class ZeroVariance:
    """Which of a task's advantage groups carry no outcome signal: the strategy group when its scores S_i
    (`strategy_scores` of the rewards, penalties left out) are all equal, and each trajectory group (one per
    scored strategy) whose rewards are all equal. Every response of such a group gets advantage 0 before the
    format, length and judge penalties, so a step made mostly of them learns little, whatever was sampled.
    A task without a strategy level (the GRPO baseline) has no strategy group; a single scored strategy is
    a group without variance."""

    strategy_level: bool
    strategy_group: bool
    trajectory_groups: tuple[bool, ...]

    @classmethod
    def of(cls, rollout: TaskRollout, delta: float, permutation_seed: int | None = None,
           step_credit: list[list[list[StepCredit]]] | None = None) -> ZeroVariance:
        """``permutation_seed``: judge the control's shuffled rewards, as `group_advantages` trained on them.
        ``step_credit`` (GiGPO): a group of equal rewards still carries a signal where a step part is non-zero
        (equal wins of different lengths), so it counts as flat only when every step part is 0."""
        strategies = scored_strategies(rollout)
        rewards = trained_rewards(rollout, permutation_seed)
        strategy_level = any(s.candidate is not None for s in strategies)
        steps_flat = [True] * len(rewards) if step_credit is None else [
            all(c.step_part == 0.0 for steps in group for c in steps) for group in step_credit]
        return cls(strategy_level, strategy_level and _constant(strategy_scores(rewards, delta)),
                   tuple(_constant(group) and flat for group, flat in zip(rewards, steps_flat, strict=True)))

    def counts(self) -> dict[str, int]:
        """The task's counts of groups and of groups without reward variance, summed by the trainer into the
        step's ``strata/zero_var_*_groups`` shares."""
        return {
            "num_strategy_groups": int(self.strategy_level),
            "zero_var_strategy_groups": int(self.strategy_group),
            "num_trajectory_groups": len(self.trajectory_groups),
            "zero_var_trajectory_groups": sum(self.trajectory_groups),
        }


def credit_counts(advantages: GroupAdvantages) -> dict[str, int]:
    """GiGPO's step groups in the task (none for other algorithms), summed by the trainer into the step's
    ``strata/gigpo/*`` metrics: how many steps share their anchor with another and how many get a step part."""
    if advantages.step_credit is None:
        return {}
    credits = [c for group in advantages.step_credit for steps in group for c in steps]
    return {
        "gigpo_steps": len(credits),
        "gigpo_step_group_size_sum": sum(c.step_group_size for c in credits),
        "gigpo_grouped_steps": sum(c.step_group_size > 1 for c in credits),
        "gigpo_nonzero_step_parts": sum(c.step_part != 0.0 for c in credits),
    }


def _constant(values: list[float]) -> bool:
    return max(values) - min(values) <= 1e-9
