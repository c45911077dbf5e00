#!/usr/bin/env bash
# strata-recipe: train
# StraTA on WebShop on a CPU: the tiny ALFWorld recipe (tiny random Qwen2, verl's FSDP2 actor and reference,
# the `hf` rollout, 2 tasks a step, N=2 of σ·N=4 candidates x M=2) with `+environment=webshop` on a generated
# catalogue (`strata make-webshop`, 1,000 products in WebShop's file layout; its synthetic goals, 0-499 test, the
# rest train) and the first 8 goals of each split (GOALS_PER_SPLIT). tests/integration/test_webshop_trainer.py
# runs it (4 goals, 1 a step).
# Extra Hydra overrides pass through ("$@").
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
source recipes/lib/dry-run.sh

OUT=${OUT:-outputs/strata-webshop-tiny-cpu}
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
GOALS_PER_SPLIT=${GOALS_PER_SPLIT:-8}
OUT=$(run_folder "$OUT")
CATALOGUE=${CATALOGUE:-$OUT/catalogue}   # WebShop's own data/ folder works the same
[ -f "$CATALOGUE/items_shuffle_1000.json" ] || [ -f "$CATALOGUE/items_shuffle.json" ] || \
  unless_dry_run $PY -m strata.cli make-webshop --out "$CATALOGUE" >/dev/null
DATA=$OUT/webshop-data
[ -f "$DATA/train.parquet" ] || unless_dry_run $PY -m strata.cli prepare-data --env webshop --data-path "$CATALOGUE" \
  --per-task-type "$GOALS_PER_SPLIT" --out "$DATA" >/dev/null

# Rows: 4 steps, each page turn up to ~500 tokens (10 results with their clicks), 32-token responses:
# 3 x 500 + 4 x 32 = 1.6k fit a 2048-token row; prompts (<= 500 tokens) fit 1024.
OUT="$OUT" DATA="$DATA" PY="$PY" VAL_SPLIT=test \
  exec bash recipes/train-strata-alfworld-text-tiny-cpu.sh \
  +environment=webshop \
  env.max_steps=4 \
  data.max_response_length=2048 \
  trainer.experiment_name=strata-webshop-tiny-cpu \
  "$@"
exit
}
