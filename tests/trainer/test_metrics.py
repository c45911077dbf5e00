"""Validation and training metrics are computed from the per-episode records, by hand here."""

from __future__ import annotations

import pytest
import torch

from strata.trainer.metrics import sampled_token_nll, strata_training_metrics, validation_metrics


def test_validation_metrics_by_hand():
    records = {
        "won": [1.0, 0.0, 1.0, 1.0],
        "subtask": ["pick", "pick", "heat", "look"],
        "episode_length": [4, 50, 10, 6],
        "num_responses": [5, 51, 11, 7],
        "num_well_formed": [5, 40, 11, 7],
        "num_admissible": [4, 30, 9, 6],
        "num_refused_repeats": [0, 18, 1, 0],
        "end_reason": ["won", "step_limit", "won", "won"],
    }
    metrics = validation_metrics(records)
    assert metrics["val/average/metrics/success_rate"] == pytest.approx(3 / 4)
    assert metrics["val/average/metrics/pass@1"] == pytest.approx(3 / 4)
    assert metrics["val/pick/metrics/success_rate"] == pytest.approx(1 / 2)
    assert metrics["val/heat/metrics/success_rate"] == 1.0
    assert "val/clean/metrics/success_rate" not in metrics  # no clean task: not logged as 0
    assert metrics["val/average/metrics/episode_length"] == pytest.approx((4 + 50 + 10 + 6) / 4)
    # (5 + 40 + 11 + 7) well-formed of (5 + 51 + 11 + 7) responses = 63 / 74
    assert metrics["val/average/metrics/format_rate"] == pytest.approx(63 / 74)
    assert metrics["val/env/token_budget_ends"] == 0.0
    assert metrics["val/env/failed_episodes"] == 0.0
    assert metrics["val/average/metrics/admissible_action_rate"] == pytest.approx(49 / 70)
    assert metrics["val/average/metrics/refused_repeat_rate"] == pytest.approx(19 / 70)
    assert metrics["val/end_reason/won"] == 3.0 and metrics["val/end_reason/step_limit"] == 1.0


def test_a_validation_set_of_two_splits_reports_each_apart():
    records = {
        "won": [1.0, 0.0, 0.0, 1.0, 1.0],
        "subtask": ["pick"] * 5,
        "split": ["valid_seen", "valid_seen", "valid_seen", "train", "train"],
        "episode_length": [4, 15, 15, 5, 7],
        "num_responses": [4, 15, 15, 5, 7],
        "num_well_formed": [4, 15, 15, 5, 7],
        "num_admissible": [4, 5, 3, 5, 6],
        "num_refused_repeats": [0, 9, 11, 0, 1],
        "end_reason": ["won", "step_limit", "step_limit", "won", "won"],
    }
    metrics = validation_metrics(records)
    assert metrics["val/split/valid_seen/success_rate"] == pytest.approx(1 / 3)
    assert metrics["val/split/train/success_rate"] == 1.0
    assert metrics["val/split/valid_seen/admissible_action_rate"] == pytest.approx(12 / 34)
    assert metrics["val/split/train/admissible_action_rate"] == pytest.approx(11 / 12)
    assert metrics["val/split/valid_seen/refused_repeat_rate"] == pytest.approx(20 / 34)
    assert metrics["val/split/train/refused_repeat_rate"] == pytest.approx(1 / 12)
    assert metrics["val/split/valid_seen/num_tasks"] == 3.0 and metrics["val/split/train/num_tasks"] == 2.0
    assert metrics["val/average/metrics/success_rate"] == pytest.approx(3 / 5)
    one_split = validation_metrics({**records, "split": ["valid_seen"] * 5})
    assert not any(key.startswith("val/split/") for key in one_split)


def test_validation_counts_episodes_the_token_budget_ended():
    """A budget-ended episode is a loss of fewer than H steps: counted on its own, as training counts it."""
    records = {
        "won": [0.0, 0.0, 1.0, 0.0, 0.0],
        "subtask": ["heat", "heat", "pick", "cool", "clean"],
        "episode_length": [34, 36, 8, 50, 3],
        "num_responses": [35, 37, 9, 51, 4],
        "num_well_formed": [35, 37, 9, 51, 4],
        "num_admissible": [30, 30, 8, 40, 2], "num_refused_repeats": [0, 0, 0, 0, 0],
        "end_reason": ["token_budget", "token_budget", "won", "step_limit", "timeout"],
    }
    metrics = validation_metrics(records)
    assert metrics["val/env/token_budget_ends"] == 2.0
    assert metrics["val/env/failed_episodes"] == 1.0
    ends = {reason: metrics[f"val/end_reason/{reason}"]
            for reason in ("won", "step_limit", "token_budget", "environment_failure")}
    assert ends == {"won": 1.0, "step_limit": 1.0, "token_budget": 2.0, "environment_failure": 1.0}
    assert metrics["val/average/metrics/success_rate"] == pytest.approx(1 / 5)


def test_validation_scores_and_lost_games():
    """An environment with a progress score (ScienceWorld) logs its mean per subtask and overall; a game it
    ended as lost is its own end reason. The episode that failed to start has no score and is left out."""
    records = {
        "won": [1.0, 0.0, 0.0, 0.0],
        "subtask": ["boil", "boil", "find-plant", "find-plant"],
        "episode_length": [20, 50, 3, 0],
        "num_responses": [21, 51, 4, 1],
        "num_well_formed": [21, 51, 4, 1],
        "num_admissible": [20, 45, 3, 0], "num_refused_repeats": [0, 0, 0, 0],
        "end_reason": ["won", "step_limit", "lost", "timeout"],
        "score": [1.0, 0.5, 0.0, None],
    }
    metrics = validation_metrics(records)
    assert metrics["val/boil/metrics/score"] == pytest.approx(0.75)
    assert metrics["val/find-plant/metrics/score"] == 0.0
    assert metrics["val/average/metrics/score"] == pytest.approx(1.5 / 3)
    assert metrics["val/end_reason/lost"] == 1.0 and metrics["val/end_reason/step_limit"] == 1.0
    assert metrics["val/find-plant/metrics/num_tasks"] == 2.0
    alfworld = validation_metrics({**records, "subtask": ["pick"] * 4, "score": [None] * 4})
    assert not [key for key in alfworld if key.endswith("/score")]  # no score where there is none


def test_training_metrics_by_hand():
    extras = [
        {"strata_role": "strategy", "strata_stats": {
            "num_candidates": 4, "candidate_format_ok": 3, "kept_format_ok": 2, "num_trajectories": 4,
            "num_won": 1, "num_env_failures": 0, "num_token_budget_ends": 0, "num_steps": 10,
            "action_format_ok": 8, "action_admissible": 6, "action_refused_repeats": 3, "action_truncated": 1,
            "num_judged": 4,
            "judge_parse_ok": 2, "judge_flagged_steps": 3, "selection_seconds": 0.5, "num_dropped_strategies": 1,
            "subtask/heat/num_trajectories": 4, "subtask/heat/num_won": 1, "subtask/heat/num_steps": 10}},
        {"strata_role": "strategy", "strata_stats": {
            "num_candidates": 4, "candidate_format_ok": 4, "kept_format_ok": 2, "num_trajectories": 2,
            "num_won": 2, "num_env_failures": 0, "num_token_budget_ends": 0, "num_steps": 6,
            "action_format_ok": 6, "action_admissible": 6, "action_refused_repeats": 0, "action_truncated": 0,
            "num_judged": 2,
            "judge_parse_ok": 2, "judge_flagged_steps": 0, "selection_seconds": 0.5, "num_dropped_strategies": 0,
            "subtask/pick/num_trajectories": 2, "subtask/pick/num_won": 2, "subtask/pick/num_steps": 6}},
        {"strata_role": "trajectory", "strata_stats": None},
        {"strata_role": "trajectory", "strata_stats": None},
    ]
    advantages = [torch.tensor([0.5, 0.5]), torch.tensor([-0.5]), torch.tensor([1.0, 0.0, 0.8]),
                  torch.tensor([-1.0, -1.0])]
    metrics = strata_training_metrics(extras, advantages)
    assert metrics["strata/strategy_advantage/mean"] == pytest.approx(0.0)
    # trajectory rows: mean over non-zero (trained) tokens: 0.9 and -1.0
    assert metrics["strata/trajectory_advantage/mean"] == pytest.approx((0.9 - 1.0) / 2)
    assert metrics["strata/success_rate"] == pytest.approx(3 / 6)
    assert metrics["strata/candidate_format_rate"] == pytest.approx(7 / 8)
    assert metrics["strata/action_format_rate"] == pytest.approx(14 / 16)
    assert metrics["strata/admissible_action_rate"] == pytest.approx(12 / 16)
    assert metrics["strata/refused_repeat_rate"] == pytest.approx(3 / 16)
    assert metrics["strata/judge_format_rate"] == pytest.approx(4 / 6)
    assert metrics["strata/judge_flag_rate"] == pytest.approx(3 / 16)
    assert metrics["strata/mean_episode_length"] == pytest.approx(16 / 6)
    assert metrics["strata/num_dropped_strategies"] == 1.0
    # per subtask, as validation names them
    assert metrics["train/heat/metrics/success_rate"] == pytest.approx(1 / 4)
    assert metrics["train/heat/metrics/episode_length"] == pytest.approx(10 / 4)
    assert metrics["train/pick/metrics/success_rate"] == 1.0
    assert "train/clean/metrics/success_rate" not in metrics
    # No group counts in the records: no zero-variance share (the GRPO baseline has no strategy groups).
    assert not [key for key in metrics if key.startswith("strata/zero_var")]


def test_zero_variance_shares_are_over_the_step_s_groups():
    counts = [{"num_strategy_groups": 1, "zero_var_strategy_groups": 1, "num_trajectory_groups": 2,
               "zero_var_trajectory_groups": 1},
              {"num_strategy_groups": 1, "zero_var_strategy_groups": 0, "num_trajectory_groups": 2,
               "zero_var_trajectory_groups": 2}]
    base = {"num_candidates": 0, "candidate_format_ok": 0, "kept_format_ok": 0, "num_trajectories": 1,
            "num_won": 0, "num_env_failures": 0, "num_token_budget_ends": 0, "num_steps": 1,
            "action_format_ok": 1, "action_admissible": 1, "action_refused_repeats": 0, "action_truncated": 0,
            "num_judged": 0,
            "judge_parse_ok": 0, "judge_flagged_steps": 0, "selection_seconds": 0.0, "num_dropped_strategies": 0}
    extras = [{"strata_role": "trajectory", "strata_stats": {**base, **c}} for c in counts]
    metrics = strata_training_metrics(extras, [torch.ones(1), torch.ones(1)])
    assert metrics["strata/zero_var_strategy_groups"] == pytest.approx(1 / 2)
    assert metrics["strata/zero_var_trajectory_groups"] == pytest.approx(3 / 4)
    flat = [{**e, "strata_stats": {**e["strata_stats"], "num_strategy_groups": 0, "zero_var_strategy_groups": 0}}
            for e in extras]
    metrics = strata_training_metrics(flat, [torch.ones(1), torch.ones(1)])
    assert "strata/zero_var_strategy_groups" not in metrics and "strata/zero_var_trajectory_groups" in metrics


def test_per_step_rows_are_counted_and_their_advantages_summarised():
    extras = [{"strata_role": "strategy", "strata_stats": None}, {"strata_role": "step", "strata_stats": None},
              {"strata_role": "step", "strata_stats": None}, {"strata_role": "step", "strata_stats": None}]
    advantages = [torch.tensor([0.5]), torch.tensor([0.25, 0.25]), torch.tensor([-0.75]), torch.tensor([0.0])]
    metrics = strata_training_metrics(extras, advantages)
    assert metrics["strata/num_step_rows"] == 3 and metrics["strata/num_trajectory_rows"] == 0
    assert metrics["strata/trajectory_advantage/mean"] == pytest.approx((0.25 - 0.75 + 0.0) / 3)
    assert metrics["strata/trajectory_advantage/min"] == pytest.approx(-0.75)


def test_the_zero_variance_filter_masks_real_rows_of_flat_groups_unless_nothing_would_train():
    from strata.trainer.strata_trainer import filtered_rows

    # Rows 0-3 are real, 4 is verl's padding: only real rows of flat groups go.
    assert filtered_rows([True, False, True, False, True], [True, True, True, True, False]) == [
        True, False, True, False, False]
    # Every real row flat: an update with no trained token would be 0/0, so the step keeps them all.
    assert filtered_rows([True, True, False], [True, True, False]) == [False, False, False]
    assert filtered_rows([False, False], [True, True]) == [False, False]


def test_sampled_token_nll_averages_the_trained_tokens_only():
    logprobs = [torch.tensor([-1.0, -2.0, -9.0]), torch.tensor([-0.5])]
    masks = [torch.tensor([1, 1, 0]), torch.tensor([1])]  # the -9 is an environment token: masked out
    assert sampled_token_nll(logprobs, masks) == pytest.approx((1.0 + 2.0 + 0.5) / 3)
    assert sampled_token_nll([], []) == 0.0
