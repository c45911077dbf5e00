#!/usr/bin/env bash
# strata-recipe: evaluate
# Evaluate StraTA with Qwen2.5-1.5b on ScienceWorld's test variations (spec §3 protocol: one strategy and one
# trajectory per task, H=50), one seed per call:
#
#   bash recipes/evaluate-strata-sciworld-qwen2.5-1.5b.sh CHECKPOINT [SEED] [overrides...]
#
# CHECKPOINT: a training checkpoint (.../global_step_N) or an exported Hugging Face folder. Default: all
# 1,171 test variations of AgentGym's 23 task types ($DATA/test.parquet); SPLIT=valid the dev split; a last override
# data.val_files=$DATA/10-per-task-type/test.parquet the first 10 of each task type. Writes eval_seed<SEED>.json and .md (success and mean score per task type);
# combine seeds with `strata report-eval`. See recipes/lib/evaluate-strata-alfworld.sh.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
SPLIT=${SPLIT:-test} DATA=${DATA:-$HOME/data/strata-sciworld} \
  TRAIN_RECIPE=recipes/train-strata-sciworld-qwen2.5-1.5b.sh NAME=strata-sciworld-qwen2.5-1.5b \
  exec bash recipes/lib/evaluate-strata-alfworld.sh "$@"
exit
}
