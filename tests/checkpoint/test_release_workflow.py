"""The user story end to end with verl's real trainer on CPU.

Train one GRPO step at world size 2, find that world size 1 cannot resume it, reshard it to 1, resume
with verl at world size 1 and run step 2, export the result as a release and write its model card from
the two runs' own logs.

It is also the foundation smoke run of plain GRPO through verl's own entry point (`make smoke`'s config:
v1 trainer, FSDP2 actor and reference over gloo, Ray, the project's `cpu` platform and `hf` rollout
plug-ins, a tiny random Qwen2 with the real Qwen2.5 tokenizer): both runs train, the resumed weights reach
the rollout server, and the parameters move.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from strata.assets.smoke_data import write_smoke_prompts
from strata.checkpoint.export import export_hf
from strata.checkpoint.fsdp2 import load_shard
from strata.checkpoint.inspect import CheckpointError, check_resumable, describe_checkpoint, find_latest_checkpoint
from strata.checkpoint.reshard import reshard_checkpoint
from strata.report.logs import read_metrics
from strata.report.model_card import write_model_card

REPO = Path(__file__).resolve().parents[2]
METRIC = "val-aux/smoke/reward/mean@1"  # the smoke run's validation metric (no ALFWorld here)
pytestmark = pytest.mark.slow


def run_verl(run_dir: Path, data: Path, model: Path, *overrides: str) -> None:
    """verl's own entry point with the CPU smoke config, logging to console and JSONL inside ``run_dir``."""
    run_dir.mkdir(parents=True)
    env = dict(os.environ, RAY_DISABLE_USAGE_STATS="1", WANDB_MODE="disabled", HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", VERL_FILE_LOGGER_PATH=str(run_dir / "metrics.jsonl"))
    command = [
        sys.executable, "-m", "verl.trainer.main_ppo", f"--config-path={REPO / 'configs'}",
        "--config-name=smoke_grpo_cpu", f"hydra.run.dir={run_dir}",
        f"data.train_files={data / 'train.parquet'}", f"data.val_files={data / 'val.parquet'}",
        f"actor_rollout_ref.model.path={model}",
        f"reward.custom_reward_function.path={REPO / 'strata/assets/smoke_data.py'}",
        "trainer.logger=[console,file]", "trainer.val_before_train=true", "trainer.test_freq=1",
        # 4 rows per step split over 2 ranks: micro-batches of 2 fit both world sizes (infrastructure only)
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2",
        *overrides,
    ]
    with open(run_dir / "train.log", "w") as log:
        result = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=1500)
    assert result.returncode == 0, (run_dir / "train.log").read_text()[-5000:]


def optimizer_steps(step_dir: Path) -> float:
    world_size = describe_checkpoint(step_dir).world_size
    optim = load_shard(step_dir / f"actor/optim_world_size_{world_size}_rank_0.pt")
    return float(optim["state"][0]["step"])


def test_train_w2_reshard_resume_w1_export_and_card(tmp_path: Path, tiny_model_dir: Path,
                                                    make_evaluation_file) -> None:
    data = tmp_path / "data"
    write_smoke_prompts(data / "train.parquet", 8)
    write_smoke_prompts(data / "val.parquet", 2)

    first = tmp_path / "run-w2"
    run_verl(first, data, tiny_model_dir, "trainer.n_gpus_per_node=2", "trainer.total_training_steps=1",
             f"trainer.default_local_dir={first / 'checkpoints'}")
    step1 = find_latest_checkpoint(first / "checkpoints")
    assert step1 == first / "checkpoints" / "global_step_1" and describe_checkpoint(step1).world_size == 2
    with pytest.raises(CheckpointError, match="strata reshard"):
        check_resumable(step1, world_size=1, dataloader_num_workers=0)

    root = tmp_path / "checkpoints-w1"
    resharded = reshard_checkpoint(step1, 1, root)
    check_resumable(resharded, world_size=1, dataloader_num_workers=0)

    second = tmp_path / "run-w1"
    run_verl(second, data, tiny_model_dir, "trainer.n_gpus_per_node=1", "trainer.total_training_steps=2",
             f"trainer.default_local_dir={root}", "trainer.resume_mode=resume_path",
             f"trainer.resume_from_path={resharded}")
    resumed = read_metrics([second / "metrics.jsonl"])
    assert 2 in resumed and resumed[2]["actor/grad_norm"] > 0  # step 2 trained...
    assert "actor/grad_norm" not in resumed.get(1, {})  # ...and step 1 was not trained again
    assert read_metrics([first / "metrics.jsonl"])[1]["actor/grad_norm"] > 0
    # The rollout server got the resumed weights: step 2's rollout log-probs match the actor's.
    assert resumed[2]["training/rollout_probs_diff_max"] < 1e-4
    step2 = find_latest_checkpoint(root)
    assert step2 == root / "global_step_2" and describe_checkpoint(step2).world_size == 1
    # AdamW's step counter went on from the resharded state: 1 update before the reshard, 1 after
    assert optimizer_steps(step1) == 1 and optimizer_steps(step2) == 2

    # The parameters moved: the trained embedding is not the initial one.
    initial = load_file(tiny_model_dir / "model.safetensors")["model.embed_tokens.weight"]
    trained = load_shard(step2 / "actor/model_world_size_1_rank_0.pt")["model.embed_tokens.weight"]
    assert not torch.equal(initial, getattr(trained, "_local_tensor", trained).to(initial.dtype))

    release = export_hf(step2, tmp_path / "release", release=True)
    evaluation = make_evaluation_file(tmp_path / "eval" / "seed0.json", checkpoint=str(step2), step=2)
    card = write_model_card(second, [evaluation], release / "README.md", name="strata-smoke",
                            metric=METRIC, logs=[first / "metrics.jsonl", second / "metrics.jsonl"]).read_text()
    logged = read_metrics([first / "metrics.jsonl", second / "metrics.jsonl"])
    curve = {step: values[METRIC] for step, values in logged.items() if METRIC in values}
    assert sorted(curve) == [0, 1, 2]
    rows = dict(re.findall(r"^\| (\d+) \| ([\d.]+) \|", card.split("## Training curve")[1], flags=re.M))
    assert rows == {str(step): f"{100 * value:.2f}" for step, value in curve.items()}
    assert "`training_state/global_step_2/`" in card and "saved at world size 1" in card
