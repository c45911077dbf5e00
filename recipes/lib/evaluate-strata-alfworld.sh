#!/usr/bin/env bash
# Shared body of recipes/evaluate-*-qwen2.5-*.sh: evaluate on ALFWorld (or, with the ScienceWorld wrappers'
# DATA and SPLIT=test, on ScienceWorld) with the spec's protocol (docs/algorithm.md §3): the whole split, one
# strategy and one trajectory per task, temperature 0.7 / top_p 0.8 / top_k 20, at most 50 steps, no
# selection, no judge. The environment is the training recipe's. Runs the size's
# training recipe (TRAIN_RECIPE) in val-only mode, so the infrastructure settings are the same, then
# writes eval_seed<SEED>.json and .md for `strata report-eval`. The episodes are dumped in OUT/rollouts (not in
# the training run's folder), and each task's outcome goes into the JSON: seeds 0..k-1 give avg@k and pass@k.
#
#   TRAIN_RECIPE=recipes/train-...sh NAME=... bash recipes/lib/evaluate-strata-alfworld.sh CHECKPOINT [SEED] [overrides...]
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/../.."
source recipes/lib/dry-run.sh

if [ $# -lt 1 ]; then
  echo "error: give the checkpoint to evaluate: bash ${TRAIN_RECIPE/train-/evaluate-} CHECKPOINT [SEED] [overrides...]" \
    "(a training step, .../global_step_N, or an exported model folder)" >&2
  exit 2
fi
CHECKPOINT=$1
SEED=${2:-0}
shift $(( $# >= 2 ? 2 : 1 ))
SPLIT=${SPLIT:-valid_seen}
DATA=${DATA:-$HOME/data/strata-alfworld}
OUT=${OUT:-outputs/eval-$NAME/$SPLIT/seed$SEED}   # one folder per split and seed
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
OUT=$(run_folder "$OUT")
export VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"

if [ -f "$CHECKPOINT/config.json" ]; then   # an exported Hugging Face folder
  source=(actor_rollout_ref.model.path="$CHECKPOINT")
else                                        # a training checkpoint, .../global_step_N
  source=(trainer.resume_mode=resume_path trainer.resume_from_path="$CHECKPOINT")
fi

DATA="$DATA" PY="$PY" bash "$TRAIN_RECIPE" \
  "${source[@]}" \
  data.val_files="$DATA/$SPLIT.parquet" \
  data.validation_shuffle=false \
  trainer.val_only=true \
  trainer.val_before_train=true \
  actor_rollout_ref.rollout.seed="$SEED" \
  trainer.experiment_name="eval-$NAME-seed$SEED" \
  run.dir="$OUT" \
  'trainer.logger=[console,file]' \
  "$@"

dry_run && exit 0
$PY -m strata.cli eval-result --metrics "$OUT/metrics.jsonl" --seed "$SEED" --split "$SPLIT" \
  --checkpoint "$CHECKPOINT" --task-list "$DATA/$SPLIT.parquet" --dumps "$OUT" --out "$OUT"
exit
}
