#!/usr/bin/env bash
# Foundation smoke run on CPU: plain GRPO for 2 steps with a tiny random Qwen2 (real Qwen2.5 tokenizer),
# verl's FSDP2 actor + reference, the `hf` rollout, checkpoints at every step.
# Extra Hydra overrides pass through: bash recipes/smoke-grpo-tiny-cpu.sh trainer.total_training_steps=3
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
source recipes/lib/dry-run.sh

OUT=${OUT:-outputs/smoke-grpo-tiny-cpu}
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
export RAY_DISABLE_USAGE_STATS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 WANDB_MODE=${WANDB_MODE:-offline}
OUT=$(run_folder "$OUT")
export VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"

[ -f "$OUT/model/config.json" ] || unless_dry_run $PY -m strata.cli build-tiny-model --out "$OUT/model"
unless_dry_run $PY -c "from strata.assets.smoke_data import write_smoke_prompts as w; w('$OUT/train.parquet', 8); w('$OUT/val.parquet', 2)"

logged "$OUT/train.log" $PY -m strata.trainer.main --config-name smoke_grpo_cpu ${DRY_RUN:+--dry-run} \
  data.train_files="$OUT/train.parquet" data.val_files="$OUT/val.parquet" \
  actor_rollout_ref.model.path="$OUT/model" \
  reward.custom_reward_function.path="$PWD/strata/assets/smoke_data.py" \
  trainer.default_local_dir="$OUT/checkpoints" \
  'trainer.logger=[console,file]' \
  "$@"
dry_run && exit 0

echo
echo "checkpoints: $OUT/checkpoints (latest: global_step_$(cat "$OUT/checkpoints/latest_checkpointed_iteration.txt"))"
echo "metrics:     $OUT/metrics.jsonl"
echo "log:         $OUT/train.log"
exit
}
