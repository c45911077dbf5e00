#!/usr/bin/env bash
# strata-recipe: train
# StraTA on ALFWorld (text) with Qwen2.5-7B-Instruct on one node of 8 GPUs, parameters and optimizer
# offloaded. Paper: 93.1% ALFWorld success.
#
# Same algorithm and optimisation keys as the 1.5B recipe (configs/strata_trainer.yaml); only
# infrastructure differs (`strata config-diff` lists the differences). Extra Hydra overrides pass through.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}
# Absolute (without creating anything): on several nodes each Ray worker would resolve a relative path in its own
# working folder.
DATA=$(realpath -m "${DATA:-$HOME/data/strata-alfworld}")
CKPT=$(realpath -m "${CKPT:-checkpoints/strata-alfworld-qwen2.5-7b}")
N_GPUS=${N_GPUS:-8}
NNODES=${NNODES:-1}   # nodes of N_GPUS each; more than 1 joins the Ray cluster at RAY_ADDRESS (scripts/ray-node.sh)
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
KEEP_CKPTS=${KEEP_CKPTS:-2}                                # checkpoints kept (below)
VLLM_USE_V2_MODEL_RUNNER=${VLLM_USE_V2_MODEL_RUNNER:-1}    # vLLM's model runner: 1 = V2, 0 = V1 (below)

# Rollout sizing (tests/recipes/test_recipes.py checks it against the resolved config).
# In flight: 16 tasks x N*M = 32 episodes = 512 episodes over 4 vLLM replicas (8 GPUs, TP2) = 128 per replica.
# KV cache: Qwen2.5-7B holds 2 (K,V) x 28 layers x 4 KV heads x 128 x 2 B = 56 KiB per token, 28 KiB per
# GPU at TP2. vLLM gets 0.85 x 80 GiB = 68 GiB per GPU: - 7.1 GiB bf16 weights (half of 14.2) - ~3 GiB
# activations/CUDA graphs = 57.9 GiB = 2.17M tokens per replica (0.5 gave 1.12M). Actor and ref are
# offloaded to CPU during rollout, so the rest of the GPU is free.
# Update (vLLM asleep): a micro-batch of 32768 tokens holds ~38 GiB in its output layer and attention mask
# without flash-attn (as in the 1.5B recipe; `strata doctor`'s update line), beside ~6.6 GiB of checkpointed
# activations (3584 x 32768 x 2 B x 28 layers) and one FSDP unit's gathered weights: inside 80 GiB.
# An episode's context grows ~520 tokens a turn from ~1k to the row budget (2048 + 30720), ~16.9k on
# average: 128 x 16.9k = 2.16M tokens fit.
# Prefill (chunked, verl's default): 16384 tokens per engine step, ~31 turns' new tokens (~520 each after a
# prefix-cache hit).
# Environment: 16 agent-loop workers x 6 = 96 game processes (~5 episodes each) for a 96-128-core node:
# the engine is CPU-bound Python, so processes beyond the free cores add memory, not steps.

# Checkpoints: one every 10 steps, each ~85 GiB (7.62B params x 12 B: fp32 weights and Adam). The newest
# KEEP_CKPTS=2 stay (verl's trainer.max_actor_ckpt_to_keep; unset, all 15 of a 150-step run would stay:
# ~1.25 TiB). The release layout needs only the last step (`strata export --release` and the evaluation
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
  trainer.nnodes="$NNODES" \
  trainer.save_freq=10 \
  trainer.max_actor_ckpt_to_keep="$KEEP_CKPTS" \
  trainer.default_local_dir="$CKPT" \
  trainer.experiment_name=strata-alfworld-qwen2.5-7b \
  'trainer.logger=[console,wandb]' \
  ++ray_kwargs.ray_init.runtime_env.env_vars.VLLM_USE_V2_MODEL_RUNNER="'$VLLM_USE_V2_MODEL_RUNNER'" \
  "$@"
exit
}
