#!/usr/bin/env bash
# strata-recipe: train
# StraTA on ScienceWorld on a CPU: the tiny ALFWorld recipe (tiny random Qwen2, verl's FSDP2 actor and
# reference, the `hf` rollout, 2 tasks a step, N=2 of σ·N=4 candidates x M=2) with `+environment=sciworld`
# and small ScienceWorld task lists: the first 2 variations of three short task types (find-living-thing,
# find-non-living-thing, find-plant) per split, so validation plays 6 dev variations.
# tests/integration/test_sciworld_lora.py runs it (with LoRA on vLLM). Extra Hydra overrides pass through ("$@").
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
source recipes/lib/dry-run.sh

OUT=${OUT:-outputs/strata-sciworld-tiny-cpu}
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
TASK_TYPES=${TASK_TYPES:-find-living-thing,find-non-living-thing,find-plant}
PER_TASK_TYPE=${PER_TASK_TYPE:-2}
OUT=$(run_folder "$OUT")
DATA=$OUT/sciworld-data
[ -f "$DATA/train.parquet" ] || unless_dry_run $PY -m strata.cli prepare-data --env sciworld --task-types "$TASK_TYPES" \
  --per-task-type "$PER_TASK_TYPE" --out "$DATA" >/dev/null

# Rows: 4 steps, each observation turn up to ~820 tokens (a full room and its objects), 32-token responses:
# 3 x 820 + 4 x 32 = 2.6k fit a 3072-token row; prompts (<= 600 tokens) fit 1024.
OUT="$OUT" DATA="$DATA" PY="$PY" VAL_SPLIT=valid \
  exec bash recipes/train-strata-alfworld-text-tiny-cpu.sh \
  +environment=sciworld \
  env.max_steps=4 \
  data.max_response_length=3072 \
  trainer.experiment_name=strata-sciworld-tiny-cpu \
  "$@"
exit
}
