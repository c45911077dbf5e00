"""StrataConfig: the paper's defaults, 1:1 construction from the Hydra node, actionable validation."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from omegaconf import OmegaConf

from strata.core.config import StrataConfig


def test_defaults_are_the_papers() -> None:
    config = StrataConfig()
    assert (config.num_stras_per_run, config.num_trajs_per_stra, config.num_cands_per_stra) == (4, 8, 8)
    assert config.num_candidates == 32  # σ·N = 8·4 candidates sampled per task
    assert config.delta_coef == 0.5
    assert config.length_penalty.threshold == 0.5
    assert (config.judge.enable, config.judge.kappa) == (True, 0.1)
    assert config.format_penalty == 1.0
    assert config.penalty_mode == "post_norm"
    assert (config.diversity.enable, config.diversity.embedder, config.diversity.model) == (
        True,
        "sentence_transformer",
        None,
    )
    assert (config.prompts.preset, config.prompts.history_window) == ("alfworld", None)
    assert (config.max_tokens_per_response, config.trajectory_rows) == (512, "multi_turn")


def test_from_hydra_node_maps_keys_one_to_one() -> None:
    node = OmegaConf.create(
        {
            "num_stras_per_run": 2,
            "delta_coef": 1.0,
            "judge": {"kappa": 0.01},
            "diversity": {"embedder": "hashed_bow"},
            "prompts": {"history_window": 5, "no_history": "Nothing yet."},
        }
    )
    config = StrataConfig.from_dict(node)  # a DictConfig is a Mapping: no conversion needed
    assert config.num_stras_per_run == 2 and config.delta_coef == 1.0
    assert config.judge.kappa == 0.01 and config.judge.enable  # unset nested keys keep their defaults
    assert config.diversity.embedder == "hashed_bow"
    assert config.prompts.history_window == 5
    assert config.prompts.templates().no_history == "Nothing yet."
    assert config.num_trajs_per_stra == 8


def test_round_trip_through_a_plain_dict() -> None:
    config = StrataConfig(penalty_mode="pre_norm", judge=StrataConfig().judge)
    assert StrataConfig.from_dict(dataclasses.asdict(config)) == config


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        StrataConfig().delta_coef = 0.1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"num_strats_per_run": 4}, r"unknown key\(s\) strata.num_strats_per_run; valid keys under strata: "),
        ({"judge": {"kapa": 0.1}}, r"strata.judge.kapa; valid keys under strata.judge: enable, kappa"),
        ({"judge": 0.1}, "strata.judge must be a mapping"),
    ],
)
def test_unknown_keys_list_the_valid_ones(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StrataConfig.from_dict(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"delta_coef": 0.0}, r"strata.delta_coef must be a number in \(0, 1\]"),
        ({"delta_coef": 1.5}, r"strata.delta_coef must be a number in \(0, 1\]"),
        ({"num_stras_per_run": 0}, "strata.num_stras_per_run must be an integer >= 1"),
        ({"num_trajs_per_stra": "8"}, "strata.num_trajs_per_stra must be an integer >= 1"),
        ({"num_cands_per_stra": 2.0}, "strata.num_cands_per_stra must be an integer >= 1"),
        ({"format_penalty": -1.0}, "strata.format_penalty must be a number >= 0"),
        ({"penalty_mode": "before"}, "strata.penalty_mode must be one of post_norm, pre_norm, got 'before'"),
        (
            {"length_penalty": {"threshold": 1.5}},
            r"strata.length_penalty.threshold must be a number in \[0, 1\]",
        ),
        ({"judge": {"kappa": -0.1}}, "strata.judge.kappa must be a number >= 0"),
        ({"judge": {"enable": "yes"}}, "strata.judge.enable must be true or false"),
        (
            {"diversity": {"embedder": "bert"}},
            "strata.diversity.embedder must be one of sentence_transformer",
        ),
        ({"max_tokens_per_response": 0}, "strata.max_tokens_per_response must be an integer >= 1"),
        ({"trajectory_rows": "per_turn"}, "strata.trajectory_rows must be one of multi_turn, per_step"),
        ({"prompts": {"history_window": -1}}, "strata.prompts.history_window must be null"),
        ({"prompts": {"preset": "webarena"}}, "unknown prompt preset 'webarena'"),
        ({"prompts": {"action": "Act on {tsk}"}}, r"unknown placeholder\(s\) \['tsk'\]"),
    ],
)
def test_invalid_values_fail_with_actionable_errors(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StrataConfig.from_dict(data)
