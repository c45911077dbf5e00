"""Foundation smoke run: plain GRPO through verl's own entry point on CPU.

Real verl (v1 trainer, FSDP2 actor and reference over gloo, Ray), the project's `cpu` platform and
`hf` rollout plug-ins, a tiny random Qwen2 with the real Qwen2.5 tokenizer. Resuming is tested where it
is compared step by step with an uninterrupted run (test_strata_trainer.py, test_lora.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from strata.assets.smoke_data import write_smoke_prompts

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def run_verl(tmp: Path, model: Path, log: Path, *overrides: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, RAY_DISABLE_USAGE_STATS="1", WANDB_MODE="disabled", HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", VERL_FILE_LOGGER_PATH=str(log))
    cmd = [
        sys.executable, "-m", "verl.trainer.main_ppo",
        f"--config-path={REPO / 'configs'}", "--config-name=smoke_grpo_cpu",
        f"data.train_files={tmp / 'train.parquet'}", f"data.val_files={tmp / 'val.parquet'}",
        f"actor_rollout_ref.model.path={model}", f"trainer.default_local_dir={tmp / 'ckpt'}",
        f"reward.custom_reward_function.path={REPO / 'strata/assets/smoke_data.py'}",
        "trainer.logger=[console,file]", *overrides,
    ]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def metrics_by_step(log: Path) -> dict[int, dict]:
    return {row["step"]: row["data"] for row in map(json.loads, log.read_text().splitlines())}


def test_grpo_trains_and_saves(tmp_path, tiny_model_dir):
    write_smoke_prompts(tmp_path / "train.parquet", 8)
    write_smoke_prompts(tmp_path / "val.parquet", 2)

    run_verl(tmp_path, tiny_model_dir, tmp_path / "run.jsonl")
    steps = metrics_by_step(tmp_path / "run.jsonl")
    assert sorted(steps) == [1, 2]
    for metrics in steps.values():
        assert metrics["actor/grad_norm"] > 0
    # The rollout server got the step-1 weights: step 2's rollout log-probs match the actor's.
    assert steps[2]["training/rollout_probs_diff_max"] < 1e-4

    ckpt = tmp_path / "ckpt"
    assert (ckpt / "latest_checkpointed_iteration.txt").read_text().strip() == "2"
    for step in (1, 2):
        assert (ckpt / f"global_step_{step}/actor/model_world_size_1_rank_0.pt").is_file()
        assert (ckpt / f"global_step_{step}/actor/optim_world_size_1_rank_0.pt").is_file()

    # Parameters changed: compare the trained embedding with the initial one.
    initial = load_file(tiny_model_dir / "model.safetensors")["model.embed_tokens.weight"]
    trained = torch.load(ckpt / "global_step_2/actor/model_world_size_1_rank_0.pt", weights_only=False)
    trained_embedding = trained["model.embed_tokens.weight"]
    trained_embedding = getattr(trained_embedding, "_local_tensor", trained_embedding)
    assert not torch.equal(initial, trained_embedding.to(initial.dtype))
