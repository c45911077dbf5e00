"""Every check of `StrataConfig`: the exact message of each rejection, and the edge values it accepts.

tests/core/test_config.py matches the start of each message; mutation testing (scripts/mutation.sh)
showed that a bound moved by one (``>=`` to ``>``), a bool let through as a number or a message cut short
all passed it. Here each edge is on both sides and each message is compared whole, since the message is
what a user reads to fix the config.
"""

from __future__ import annotations

from typing import Any

import pytest

from strata.core.config import JudgeConfig, LengthPenaltyConfig, StrataConfig

GRPO = {"algorithm": "grpo", "num_stras_per_run": 1, "num_cands_per_stra": 1, "judge": {"enable": False},
        "prompts": {"preset": "alfworld_grpo"}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"num_stras_per_run": 0}, "strata.num_stras_per_run must be an integer >= 1 (paper: 4), got 0"),
        ({"num_trajs_per_stra": True}, "strata.num_trajs_per_stra must be an integer >= 1 (paper: 8), got True"),
        ({"num_cands_per_stra": 1.0}, "strata.num_cands_per_stra must be an integer >= 1 (paper: 8), got 1.0"),
        ({"delta_coef": 0.0}, "strata.delta_coef must be a number in (0, 1]: 1 scores a strategy by its mean "
                              "reward, small values by its best (paper: 0.5), got 0.0"),
        ({"delta_coef": 1.0001}, "strata.delta_coef must be a number in (0, 1]: 1 scores a strategy by its mean "
                                 "reward, small values by its best (paper: 0.5), got 1.0001"),
        ({"delta_coef": True}, "strata.delta_coef must be a number in (0, 1]: 1 scores a strategy by its mean "
                               "reward, small values by its best (paper: 0.5), got True"),
        ({"format_penalty": -0.001}, "strata.format_penalty must be a number >= 0 (spec: 1.0), got -0.001"),
        ({"format_penalty": "1"}, "strata.format_penalty must be a number >= 0 (spec: 1.0), got '1'"),
        ({"inadmissible_penalty": -0.5},
         "strata.inadmissible_penalty must be a number >= 0 (0: none, as in the paper), got -0.5"),
        ({"penalty_mode": "mid_norm"}, "strata.penalty_mode must be one of post_norm, pre_norm, got 'mid_norm'"),
        ({"max_tokens_per_response": 0},
         "strata.max_tokens_per_response must be an integer >= 1 (verl-agent: 512), got 0"),
        ({"max_tokens_per_response": False},
         "strata.max_tokens_per_response must be an integer >= 1 (verl-agent: 512), got False"),
        ({"trajectory_rows": "turns"}, "strata.trajectory_rows must be one of multi_turn, per_step, got 'turns'"),
        ({"seeded_sampling": 1}, "strata.seeded_sampling must be true or false, got 1"),
        ({"zero_variance_filter": "yes"}, "strata.zero_variance_filter must be true or false, got 'yes'"),
        ({"train_strategies": 0}, "strata.train_strategies must be true or false, got 0"),
        ({"algorithm": "ppo"}, "strata.algorithm must be one of strata, grpo, gigpo, got 'ppo'"),
        ({"length_penalty": {"threshold": -0.001}},
         "strata.length_penalty.threshold must be a number in [0, 1] (paper: 0.5), got -0.001"),
        ({"length_penalty": {"threshold": 1.001}},
         "strata.length_penalty.threshold must be a number in [0, 1] (paper: 0.5), got 1.001"),
        ({"length_penalty": {"threshold": False}},
         "strata.length_penalty.threshold must be a number in [0, 1] (paper: 0.5), got False"),
        ({"judge": {"enable": 1}}, "strata.judge.enable must be true or false, got 1"),
        ({"judge": {"kappa": -0.001}}, "strata.judge.kappa must be a number >= 0 (paper: 0.1), got -0.001"),
        ({"judge": {"kappa": None}}, "strata.judge.kappa must be a number >= 0 (paper: 0.1), got None"),
        ({"diversity": {"enable": "no"}}, "strata.diversity.enable must be true or false, got 'no'"),
        ({"diversity": {"embedder": "bow"}},
         "strata.diversity.embedder must be one of sentence_transformer, hashed_bow, got 'bow'"),
        ({"diversity": {"model": 3}}, "strata.diversity.model must be null or a hub name / local folder, got 3"),
        ({"prompts": {"history_window": -1}},
         "strata.prompts.history_window must be null (full history) or an integer >= 0, got -1"),
        ({"prompts": {"history_window": 2.0}},
         "strata.prompts.history_window must be null (full history) or an integer >= 0, got 2.0"),
        ({**GRPO, "num_stras_per_run": 2},
         "strata.num_stras_per_run must be 1 with strata.algorithm=grpo (no strategy level), got 2"),
        ({**GRPO, "num_cands_per_stra": 2},
         "strata.num_cands_per_stra must be 1 with strata.algorithm=grpo (no strategy level), got 2"),
        ({**GRPO, "judge": {"enable": True}},
         "strata.judge.enable must be false with strata.algorithm=grpo (the judge reviews a strategy), got True"),
        ({**GRPO, "prompts": {"preset": "alfworld"}},
         "strata.prompts.action must not show {strategy} with strata.algorithm=grpo (use alfworld_grpo, "
         "sciworld_grpo or webshop_grpo), got 'alfworld'"),
        ({"judge": [0.1]}, "strata.judge must be a mapping of keys to values, got list"),
        ({"lenght_penalty": {}, "deltacoef": 1},
         "unknown key(s) strata.deltacoef, strata.lenght_penalty; valid keys under strata: algorithm, "
         "num_stras_per_run, num_trajs_per_stra, num_cands_per_stra, delta_coef, format_penalty, penalty_mode, "
         "max_tokens_per_response, trajectory_rows, seeded_sampling, zero_variance_filter, inadmissible_penalty, "
         "train_strategies, length_penalty, gigpo, judge, diversity, prompts"),
    ],
)
def test_each_rejection_says_exactly_what_to_fix(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as error:
        StrataConfig.from_dict(data)
    assert str(error.value) == message


@pytest.mark.parametrize(
    "data",
    [
        {"num_stras_per_run": 1, "num_trajs_per_stra": 1, "num_cands_per_stra": 1},
        {"delta_coef": 1.0}, {"delta_coef": 1}, {"delta_coef": 1e-9},
        {"format_penalty": 0.0}, {"format_penalty": 0},
        {"max_tokens_per_response": 1},
        {"length_penalty": {"threshold": 0.0}}, {"length_penalty": {"threshold": 1}},
        {"judge": {"kappa": 0.0, "enable": False}}, {"judge": {"kappa": 0}},
        {"prompts": {"history_window": 0}}, {"prompts": {"history_window": None}},
        {"diversity": {"model": "sentence-transformers/all-MiniLM-L6-v2", "embedder": "hashed_bow"}},
        {"trajectory_rows": "per_step", "penalty_mode": "pre_norm", "seeded_sampling": False},
        GRPO,
    ],
)
def test_edge_values_are_accepted(data: dict[str, Any]) -> None:
    config = StrataConfig.from_dict(data)
    assert StrataConfig.from_dict(data) == config


def test_nested_groups_are_built_as_their_dataclasses() -> None:
    config = StrataConfig.from_dict({"judge": {"kappa": 0.25}, "length_penalty": {"threshold": 0.75},
                                     "num_cands_per_stra": 3, "num_stras_per_run": 5})
    assert config.judge == JudgeConfig(enable=True, kappa=0.25)
    assert config.length_penalty == LengthPenaltyConfig(threshold=0.75)
    assert config.num_candidates == 15
