#!/usr/bin/env bash
# strata-recipe: train
# StraTA on ALFWorld (text) with Qwen2.5-1.5B-Instruct on one node of 2 GPUs (2x A100 80GB).
# Published reproduction: 86.43% valid_seen success after 150 steps.
#
#   strata prepare-data --data-path "$ALFWORLD_DATA" --out "$DATA"     # once
#   bash recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh            # train
#   bash recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh \
#     trainer.resume_mode=resume_path trainer.resume_from_path=$CKPT/global_step_40   # resume
#
# Algorithm and optimisation keys live in configs/strata_trainer.yaml (identical for every model
# size); this script sets infrastructure only. Extra Hydra overrides pass through ("$@").
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL=${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}
# Absolute (without creating anything): on several nodes each Ray worker would resolve a relative path in its own
# working folder.
DATA=$(realpath -m "${DATA:-$HOME/data/strata-alfworld}")
CKPT=$(realpath -m "${CKPT:-checkpoints/strata-alfworld-qwen2.5-1.5b}")
N_GPUS=${N_GPUS:-2}
NNODES=${NNODES:-1}   # nodes of N_GPUS each; more than 1 joins the Ray cluster at RAY_ADDRESS (scripts/ray-node.sh)
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
KEEP_CKPTS=${KEEP_CKPTS:-2}                                # checkpoints kept (below)
VLLM_USE_V2_MODEL_RUNNER=${VLLM_USE_V2_MODEL_RUNNER:-1}    # vLLM's model runner: 1 = V2, 0 = V1 (below)

# Rollout sizing (tests/recipes/test_recipes.py checks it against the resolved config).
# In flight: 16 tasks x N*M = 32 episodes = 512 episodes over 2 vLLM replicas (TP1) = 256 per replica.
# KV cache: Qwen2.5-1.5B holds 2 (K,V) x 28 layers x 2 KV heads x 128 x 2 B = 28 KiB per token.
# vLLM gets 0.80 x 80 GiB = 64 GiB: - 2.9 GiB bf16 weights - ~3 GiB activations/CUDA graphs = 58 GiB
# = 2.18M tokens (0.6 gave 1.58M). The actor's fp32 params and Adam state and the fp32 ref stay on the
# GPU during rollout (no offload): ~11.5 GiB + CUDA contexts, inside the remaining 16 GiB.
# Update (vLLM asleep): a micro-batch of 32768 tokens holds ~38 GiB in its output layer and attention mask
# without flash-attn (bf16 logits 9.3 GiB, the logged entropy's softmax and product 18.5, the row-wise
# log-softmax kept for backward 9.3, sdpa's dense mask over packed rows 1.0; `strata doctor`'s update line),
# ~28 with flash-attn's cross-entropy, beside ~12 GiB of sharded fp32 weights, gradients and Adam and ~3 GiB of
# checkpointed activations (1536 x 32768 x 2 B x 28 layers): ~53 GiB of 80.
# An episode's context grows ~520 tokens a turn from ~1k to the row budget (2048 + 30720, which holds 50
# steps of the largest kitchen: tests/recipes/test_episode_budget.py), ~16.9k on average: 256 x 16.9k =
# 4.3M tokens do not fit one A100, so vLLM runs at most 128 sequences (128 x 16.9k = 2.16M) and queues the
# rest; decode is KV-bandwidth-bound, so 128 vs 256 costs little, while preempting running sequences would
# recompute them. Trained agents finish in ~14 steps (~8k tokens), when more would fit.
# Prefill (chunked, verl's default): 16384 tokens per engine step, ~31 turns' new tokens (~520 each after a
# prefix-cache hit).
# Environment: 8 agent-loop workers x 6 = 48 game processes (~11 episodes each) for a 64-core node:
# the engine is CPU-bound Python, so processes beyond the free cores add memory, not steps.

# Checkpoints: one every 10 steps, each ~17 GiB (1.54B params x 12 B: fp32 weights and Adam). The newest
# KEEP_CKPTS=2 stay (verl's trainer.max_actor_ckpt_to_keep; unset, all 15 of a 150-step run would stay:
# ~258 GiB). The release layout needs only the last step (`strata export --release` and the evaluation
# recipes read global_step_150); the one before it is what trainer.resume_mode=auto falls back to when the
# newest is damaged, and costs no extra peak disk: verl holds two while it saves either way.
# vLLM's model runner: vLLM 0.29 runs its V2 runner whenever Triton is installed (the GPU install; the CPU
# tests run V1, having no Triton). If training/rollout_probs_diff_* jumps after the first weight sync, fall
# back with VLLM_USE_V2_MODEL_RUNNER=0 bash recipes/...; every Ray worker gets the value through the runtime
# env (quoted: Ray takes only strings there), and `strata doctor` prints the runner that will be used.

$PY -m strata.trainer.main ${DRY_RUN:+--dry-run} \
  data.train_files="$DATA/train.parquet" \
  data.val_files="$DATA/valid_seen.parquet" \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.model.enable_gradient_checkpointing=true \
  actor_rollout_ref.model.use_remove_padding=true \
  actor_rollout_ref.actor.use_dynamic_bsz=true \
  actor_rollout_ref.actor.ppo_max_token_len_per_gpu=32768 \
  actor_rollout_ref.actor.fsdp_config.param_offload=false \
  actor_rollout_ref.actor.fsdp_config.optimizer_offload=false \
  actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true \
  actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=32768 \
  actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true \
  actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=32768 \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.8 \
  actor_rollout_ref.rollout.max_num_seqs=128 \
  actor_rollout_ref.rollout.max_num_batched_tokens=16384 \
  actor_rollout_ref.rollout.enable_prefix_caching=true \
  actor_rollout_ref.rollout.agent.num_workers=8 \
  env.num_workers=6 \
  strata.seeded_sampling=false \
  trainer.n_gpus_per_node="$N_GPUS" \
  trainer.nnodes="$NNODES" \
  trainer.save_freq=10 \
  trainer.max_actor_ckpt_to_keep="$KEEP_CKPTS" \
  trainer.default_local_dir="$CKPT" \
  trainer.experiment_name=strata-alfworld-qwen2.5-1.5b \
  'trainer.logger=[console,wandb]' \
  ++ray_kwargs.ray_init.runtime_env.env_vars.VLLM_USE_V2_MODEL_RUNNER="'$VLLM_USE_V2_MODEL_RUNNER'" \
  "$@"
exit
}
