#!/usr/bin/env bash
# strata-recipe: evaluate
# Evaluate StraTA with Qwen2.5-1.5b on ALFWorld valid_seen (spec §3 protocol), one seed per call:
#
#   bash recipes/evaluate-strata-alfworld-text-qwen2.5-1.5b.sh CHECKPOINT [SEED] [overrides...]
#
# CHECKPOINT: a training checkpoint (.../global_step_N) or an exported Hugging Face folder.
# SPLIT=valid_unseen evaluates the out-of-distribution split. Writes eval_seed<SEED>.json and .md;
# combine seeds with `strata report-eval`. See recipes/lib/evaluate-strata-alfworld.sh.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
TRAIN_RECIPE=recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh NAME=strata-alfworld-qwen2.5-1.5b \
  exec bash recipes/lib/evaluate-strata-alfworld.sh "$@"
exit
}
