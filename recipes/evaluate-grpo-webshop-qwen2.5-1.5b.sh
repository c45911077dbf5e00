#!/usr/bin/env bash
# strata-recipe: evaluate
# Evaluate the GRPO baseline with Qwen2.5-1.5b on WebShop's 500 test goals (spec §3 protocol: one
# trajectory per task, H=15), one seed per call:
#
#   bash recipes/evaluate-grpo-webshop-qwen2.5-1.5b.sh CHECKPOINT [SEED] [overrides...]
#
# CHECKPOINT: a training checkpoint (.../global_step_N) or an exported Hugging Face folder. SPLIT=valid plays the
# 1,000 valid goals, which only human goals on the full catalogue have. Writes eval_seed<SEED>.json and .md (which
# goals, then the mean score, WebShop's reward x 100, then success);
# combine seeds with `strata report-eval`. See recipes/lib/evaluate-strata-alfworld.sh.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
SPLIT=${SPLIT:-test} DATA=${DATA:-$HOME/data/strata-webshop} \
  TRAIN_RECIPE=recipes/train-grpo-webshop-qwen2.5-1.5b.sh NAME=grpo-webshop-qwen2.5-1.5b \
  exec bash recipes/lib/evaluate-strata-alfworld.sh "$@"
exit
}
