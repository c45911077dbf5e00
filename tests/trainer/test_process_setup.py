"""Nothing touches CUDA before Ray assigns a worker its GPUs (verl issue #1752), and the cpu platform is
chosen only by ``VERL_PLATFORM=cpu``.

A CUDA query in a Ray worker process before Ray sets ``CUDA_VISIBLE_DEVICES`` for its actor fixes the
visible devices for the life of the process: every FSDP rank then uses GPU 0. So StraTA registers its
trainer and agent loop where verl looks them up, when Ray builds the actor (no
``worker_process_setup_hook``), and no strata module asks torch about devices when imported. Each process
set-up step runs in a fresh interpreter (`process_probe.py`) with the CUDA queries made to fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf
from ray import cloudpickle

from strata.trainer.config import load_config
from strata.trainer.main import RESOLVED_CONFIG_MARKER

REPO = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("process_probe.py")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VERL_PLATFORM"}
    return {**env, "OMP_NUM_THREADS": "1", **extra}


def probe(*args: str) -> dict:
    env = clean_env(VERL_USE_EXTERNAL_PLUGINS="none", VERL_PLATFORM="nvidia")
    result = subprocess.run([sys.executable, str(PROBE), *args], env=env, capture_output=True, text=True,
                            timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["calls"] == [], json.dumps(report["calls"], indent=1)
    return report


def test_importing_every_strata_module_queries_no_device():
    report = probe("modules")
    assert report["failed_imports"] == {}
    assert "cpu" in report["platforms"]  # the plug-in entry point registered the platform
    assert {"strata.backends.cpu_platform", "strata.trainer.strata_trainer", "strata.workflow.agent_loop",
            "strata.trainer.task_runner"} <= set(report["modules"])


def test_trainer_and_agent_loop_are_registered_where_verl_looks_them_up(tmp_path):
    """Driver -> task runner actor -> agent-loop worker actor, each a fresh process, as Ray runs them."""
    from strata.trainer.task_runner import StrataTaskRunner

    config = load_config("strata_trainer", [])
    config_path, runner_path = tmp_path / "config.yaml", tmp_path / "runner.pkl"
    config_path.write_text(OmegaConf.to_yaml(config, resolve=True))  # as strata.trainer.main hands it to verl
    # What Ray exports when the driver (strata.trainer.main) starts the task runner.
    runner_path.write_bytes(cloudpickle.dumps(StrataTaskRunner.__ray_metadata__.modified_class))

    runner = probe("task_runner", str(runner_path), str(config_path))
    assert runner["runner"] == "StrataTaskRunnerBase"
    assert runner["trainer"] == "strata.trainer.strata_trainer.StrataTrainer"
    assert runner["manager"] == "strata.workflow.agent_loop.StrataAgentLoopManager"

    worker = probe("agent_loop_worker", str(config_path))
    default_loop = config.actor_rollout_ref.rollout.agent.default_agent_loop
    assert worker["agent_loops"][default_loop] == "strata.workflow.agent_loop.StrataAgentLoop"


PLATFORM_CODE = """
import torch
from verl.plugin.platform import get_platform
from strata.backends.cpu_platform import CPUPlatform
pinned_at_import = getattr(torch.Tensor.pin_memory, "_strata_cpu_shim", False)
claims = CPUPlatform().is_platform_available(use_smi_check=True)
platform = get_platform()
t = torch.zeros(2)
print(platform.device_name, pinned_at_import, claims, t.pin_memory() is t if platform.device_name == "cpu" else None)
"""


def run_platform_code(**env: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", PLATFORM_CODE], env=clean_env(**env), capture_output=True,
                            text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout.split()


def test_the_cpu_platform_is_chosen_only_by_verl_platform():
    # No accelerator on this machine, and still the cpu platform is not auto-detected (verl falls back to nvidia).
    device, pinned_at_import, claims, _ = run_platform_code()
    assert device != "cpu"
    assert (pinned_at_import, claims) == ("False", "False")

    device, pinned_at_import, claims, pin_is_no_op = run_platform_code(VERL_PLATFORM="cpu")
    assert device == "cpu"
    assert pinned_at_import == "False"  # the pin_memory shim comes with the selected platform, not the import
    assert pin_is_no_op == "True"


def test_the_driver_runs_on_the_platform_the_config_gives_the_workers():
    """``+platform=cpu`` without VERL_PLATFORM in the shell: verl's start-up checks see the cpu platform,
    so ``trainer.device`` stays ``cpu`` (verl rewrites it to the driver's platform)."""
    command = [sys.executable, "-m", "strata.trainer.main", "+platform=cpu", "--dry-run", "data.train_files=x",
               "data.val_files=y", "actor_rollout_ref.model.path=z",
               "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
               "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
               "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1"]
    result = subprocess.run(command, env=clean_env(), capture_output=True, text=True, timeout=300, cwd=REPO)
    assert result.returncode == 0, result.stderr[-4000:]
    config = yaml.safe_load(result.stdout.split(RESOLVED_CONFIG_MARKER, 1)[1])
    assert config["trainer"]["device"] == "cpu"
    assert config["ray_kwargs"]["ray_init"]["runtime_env"]["env_vars"]["VERL_PLATFORM"] == "cpu"


@pytest.mark.parametrize("folder", ["configs", "recipes"])
def test_no_config_or_recipe_names_a_worker_process_setup_hook(folder):
    """A setup hook runs in every Ray worker process before Ray assigns it GPUs; importing verl there
    queries CUDA. Registration happens when verl builds its actors instead (see above)."""
    offenders = [str(p.relative_to(REPO)) for p in (REPO / folder).rglob("*")
                 if p.is_file() and "worker_process_setup_hook" in p.read_text(errors="replace")]
    assert offenders == []
