#!/usr/bin/env bash
# StraTA on ScienceWorld with Qwen2.5-7B-Instruct on one node of 8 GPUs, parameters and optimizer
# offloaded: the ALFWorld 7B recipe's infrastructure with `+environment=sciworld`.
#
# Same algorithm and optimisation keys as the 1.5B ScienceWorld recipe; only infrastructure differs
# (`strata config-diff` lists the differences). Data, validation list and row budget: see
# recipes/train-strata-sciworld-qwen2.5-1.5b.sh. Extra Hydra overrides pass through.
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}
DATA=${DATA:-$HOME/data/strata-sciworld}
CKPT=${CKPT:-checkpoints/strata-sciworld-qwen2.5-7b}
N_GPUS=${N_GPUS:-8}
PY=${PY:-python}

# Rollout sizing (tests/recipes/test_recipes.py checks it): 512 episodes over 4 vLLM replicas (TP2) = 128
# per replica; KV cache 0.85 x 80 GiB - 7.1 GiB weights - ~3 GiB = 2.17M tokens per replica at 28 KiB a
# token per GPU; 128 x 16.9k (the row budget's average context) = 2.16M fit, ScienceWorld's ~9k average
# leaves room. Environment: 16 agent-loop workers x 6 = 96 game processes for a 96-128-core node, each with
# one JVM (~0.7 GB resident: ~67 GB in all).

$PY -m strata.trainer.main ${DRY_RUN:+--dry-run} \
  +environment=sciworld \
  data.train_files="$DATA/train.parquet" \
  data.val_files="$DATA/10-per-task-type/valid.parquet" \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.model.enable_gradient_checkpointing=true \
  actor_rollout_ref.model.use_remove_padding=true \
  actor_rollout_ref.actor.use_dynamic_bsz=true \
  actor_rollout_ref.actor.ppo_max_token_len_per_gpu=32768 \
  actor_rollout_ref.actor.fsdp_config.param_offload=true \
  actor_rollout_ref.actor.fsdp_config.optimizer_offload=true \
  actor_rollout_ref.ref.fsdp_config.param_offload=true \
  actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true \
  actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=32768 \
  actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true \
  actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=32768 \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.85 \
  actor_rollout_ref.rollout.max_num_seqs=128 \
  actor_rollout_ref.rollout.max_num_batched_tokens=16384 \
  actor_rollout_ref.rollout.enable_prefix_caching=true \
  actor_rollout_ref.rollout.agent.num_workers=16 \
  env.num_workers=6 \
  strata.seeded_sampling=false \
  trainer.n_gpus_per_node="$N_GPUS" \
  trainer.nnodes=1 \
  trainer.save_freq=10 \
  trainer.default_local_dir="$CKPT" \
  trainer.experiment_name=strata-sciworld-qwen2.5-7b \
  'trainer.logger=[console,wandb]' \
  "$@"
