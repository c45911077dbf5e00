#!/usr/bin/env bash
# Foundation smoke run on CPU: plain GRPO for 2 steps with a tiny random Qwen2 (real Qwen2.5 tokenizer),
# verl's FSDP2 actor + reference, the `hf` rollout, checkpoints at every step.
# Extra Hydra overrides pass through: bash recipes/smoke-grpo-tiny-cpu.sh trainer.total_training_steps=3
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-outputs/smoke-grpo-tiny-cpu}
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
export RAY_DISABLE_USAGE_STATS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 WANDB_MODE=${WANDB_MODE:-offline}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)   # absolute: Ray workers run elsewhere
export VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"

[ -f "$OUT/model/config.json" ] || $PY -m strata.cli build-tiny-model --out "$OUT/model"
$PY -c "from strata.assets.smoke_data import write_smoke_prompts as w; w('$OUT/train.parquet', 8); w('$OUT/val.parquet', 2)"

$PY -m strata.trainer.main --config-name smoke_grpo_cpu \
  data.train_files="$OUT/train.parquet" data.val_files="$OUT/val.parquet" \
  actor_rollout_ref.model.path="$OUT/model" \
  reward.custom_reward_function.path="$PWD/strata/assets/smoke_data.py" \
  trainer.default_local_dir="$OUT/checkpoints" \
  'trainer.logger=[console,file]' \
  "$@" 2>&1 | tee "$OUT/train.log"

echo
echo "checkpoints: $OUT/checkpoints (latest: global_step_$(cat "$OUT/checkpoints/latest_checkpointed_iteration.txt"))"
echo "metrics:     $OUT/metrics.jsonl"
echo "log:         $OUT/train.log"
