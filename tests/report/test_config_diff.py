"""Config diff: resolved configs compared key by key, infrastructure vs algorithm/optimisation."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.report.config_diff import ALGORITHM, INFRASTRUCTURE, classify_key, diff_configs
from strata.report.config_resolve import ConfigSource, resolve_config


@pytest.mark.parametrize("key", [
    "trainer.n_gpus_per_node", "trainer.nnodes", "actor_rollout_ref.actor.fsdp_config.param_offload",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "actor_rollout_ref.rollout.log_prob_micro_batch_size",
    "actor_rollout_ref.rollout.tensor_model_parallel_size", "actor_rollout_ref.rollout.gpu_memory_utilization",
    "trainer.default_local_dir", "data.train_files", "trainer.logger", "trainer.experiment_name",
    "ray_kwargs.ray_init.num_cpus", "trainer.device", "actor_rollout_ref.actor.ppo_max_token_len_per_gpu",
    "actor_rollout_ref.model.override_config.attn_implementation", "actor_rollout_ref.model.path", "env.num_workers",
    "run.dir",
])
def test_infrastructure_keys(key: str) -> None:
    assert classify_key(key) == INFRASTRUCTURE


@pytest.mark.parametrize("key", [
    "actor_rollout_ref.actor.optim.lr", "data.train_batch_size", "actor_rollout_ref.actor.ppo_mini_batch_size",
    "actor_rollout_ref.rollout.n", "strata.delta_coef", "strata.judge.kappa", "algorithm.adv_estimator",
    "actor_rollout_ref.rollout.val_kwargs.temperature", "env.max_steps",
])
def test_algorithm_keys(key: str) -> None:
    assert classify_key(key) == ALGORITHM


def test_a_preset_file_copied_elsewhere_is_infrastructure_a_changed_one_is_not(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "prompts.yaml").write_text("strategy: '{observation}'\n")
    (tmp_path / "changed.yaml").write_text("strategy: 'other {observation}'\n")
    run = {"strata.prompts.preset": str(tmp_path / "b" / "prompts.yaml")}
    [moved] = diff_configs({"strata.prompts.preset": str(tmp_path / "a" / "prompts.yaml")}, run).deltas
    assert moved.kind == INFRASTRUCTURE  # the same prompts in another output folder
    [changed] = diff_configs({"strata.prompts.preset": str(tmp_path / "changed.yaml")}, run).deltas
    assert changed.kind == ALGORITHM
    [renamed] = diff_configs({"strata.prompts.preset": "alfworld"}, {"strata.prompts.preset": "alfworld_grpo"}).deltas
    assert renamed.kind == ALGORITHM


def test_diff_of_flat_configs() -> None:
    a = {"x.lr": 1e-3, "trainer.nnodes": 1, "same": [1, 2], "flag": True, "only_a": 1}
    b = {"x.lr": 0.001, "trainer.nnodes": 2, "same": [1, 2], "flag": 1, "only_b": 0}
    diff = diff_configs(a, b)
    assert [(d.key, d.kind) for d in diff.deltas] == [
        ("trainer.nnodes", INFRASTRUCTURE), ("flag", ALGORITHM), ("only_a", ALGORITHM), ("only_b", ALGORITHM)]
    assert diff.deltas[2].b == "<absent>"
    assert diff.summary == "4 differing keys out of 6"


def test_two_smoke_configs_differ_in_one_infrastructure_and_one_algorithm_key() -> None:
    """Composed through Hydra like the recipes: n_gpus_per_node (infra) and lr (algorithm)."""
    base = resolve_config(ConfigSource("smoke_grpo_cpu"))
    other = resolve_config(ConfigSource("smoke_grpo_cpu", ("trainer.n_gpus_per_node=2",
                                                           "actor_rollout_ref.actor.optim.lr=2e-3")))
    diff = diff_configs(base, other)
    by_kind = {kind: {d.key: (d.a, d.b) for d in diff.of_kind(kind)} for kind in (INFRASTRUCTURE, ALGORITHM)}
    assert by_kind[ALGORITHM] == {"actor_rollout_ref.actor.optim.lr": (1e-3, 2e-3)}
    # verl and the platform config interpolate two more keys from n_gpus_per_node: resolved, they differ too
    assert by_kind[INFRASTRUCTURE] == {"trainer.n_gpus_per_node": (1, 2), "ray_kwargs.ray_init.num_gpus": (1, 2),
                                       "actor_rollout_ref.rollout.n_gpus_per_node": (1, 2)}
    assert diff.total_keys == len(base) > 900
    assert diff.summary == f"4 differing keys out of {len(base)}"


def test_saved_yaml_against_config_name(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from strata.trainer.config import load_config

    saved = tmp_path / "config.yaml"  # what Hydra writes to a run's .hydra/config.yaml (unresolved)
    OmegaConf.save(load_config("smoke_grpo_cpu", ["trainer.total_training_steps=7"]), saved)
    diff = diff_configs(resolve_config(ConfigSource(str(saved))), resolve_config(ConfigSource("smoke_grpo_cpu")))
    assert [(d.key, d.a, d.b) for d in diff.deltas] == [("trainer.total_training_steps", 7, 2)]


def test_errors_name_the_problem(tmp_path: Path) -> None:
    from strata.trainer.config import ConfigError

    with pytest.raises(ConfigError, match="No config 'no_such_recipe'"):
        resolve_config(ConfigSource("no_such_recipe"))
    with pytest.raises(ValueError, match="overrides apply to a Hydra config name"):
        resolve_config(ConfigSource(str(tmp_path / "x.yaml"), ("a=1",)))
    with pytest.raises(FileNotFoundError, match="no config file"):
        resolve_config(ConfigSource(str(tmp_path / "x.yaml")))
