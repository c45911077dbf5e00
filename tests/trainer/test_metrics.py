"""Validation and training metrics are computed from the per-episode records, by hand here."""

from __future__ import annotations

import pytest
import torch

from strata.trainer.metrics import strata_training_metrics, validation_metrics


def test_validation_metrics_by_hand():
    records = {
        "won": [1.0, 0.0, 1.0, 1.0],
        "subtask": ["pick", "pick", "heat", "look"],
        "episode_length": [4, 50, 10, 6],
        "num_responses": [5, 51, 11, 7],
        "num_well_formed": [5, 40, 11, 7],
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


def test_validation_counts_episodes_the_token_budget_ended():
    """A budget-ended episode is a loss of fewer than H steps: counted on its own, as training counts it."""
    records = {
        "won": [0.0, 0.0, 1.0, 0.0, 0.0],
        "subtask": ["heat", "heat", "pick", "cool", "clean"],
        "episode_length": [34, 36, 8, 50, 3],
        "num_responses": [35, 37, 9, 51, 4],
        "num_well_formed": [35, 37, 9, 51, 4],
        "end_reason": ["token_budget", "token_budget", "won", "step_limit", "timeout"],
    }
    metrics = validation_metrics(records)
    assert metrics["val/env/token_budget_ends"] == 2.0
    assert metrics["val/env/failed_episodes"] == 1.0
    assert metrics["val/average/metrics/success_rate"] == pytest.approx(1 / 5)


def test_training_metrics_by_hand():
    extras = [
        {"strata_role": "strategy", "strata_stats": {
            "num_candidates": 4, "candidate_format_ok": 3, "kept_format_ok": 2, "num_trajectories": 4,
            "num_won": 1, "num_env_failures": 0, "num_token_budget_ends": 0, "num_steps": 10,
            "action_format_ok": 8, "action_truncated": 1, "num_judged": 4, "judge_parse_ok": 2,
            "judge_flagged_steps": 3, "selection_seconds": 0.5}},
        {"strata_role": "strategy", "strata_stats": None},
        {"strata_role": "trajectory", "strata_stats": None},
        {"strata_role": "trajectory", "strata_stats": None},
    ]
    advantages = [torch.tensor([0.5, 0.5]), torch.tensor([-0.5]), torch.tensor([1.0, 0.0, 0.8]),
                  torch.tensor([-1.0, -1.0])]
    metrics = strata_training_metrics(extras, advantages)
    assert metrics["strata/strategy_advantage/mean"] == pytest.approx(0.0)
    # trajectory rows: mean over non-zero (trained) tokens: 0.9 and -1.0
    assert metrics["strata/trajectory_advantage/mean"] == pytest.approx((0.9 - 1.0) / 2)
    assert metrics["strata/success_rate"] == pytest.approx(1 / 4)
    assert metrics["strata/candidate_format_rate"] == pytest.approx(3 / 4)
    assert metrics["strata/action_format_rate"] == pytest.approx(8 / 10)
    assert metrics["strata/judge_format_rate"] == pytest.approx(2 / 4)
    assert metrics["strata/judge_flag_rate"] == pytest.approx(3 / 10)
    assert metrics["strata/mean_episode_length"] == pytest.approx(10 / 4)
