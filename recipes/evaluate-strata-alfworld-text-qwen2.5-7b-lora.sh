#!/usr/bin/env bash
# strata-recipe: evaluate
# Evaluate a LoRA run of StraTA with Qwen2.5-7b (recipes/train-strata-alfworld-text-qwen2.5-7b-lora.sh) on
# ALFWorld valid_seen (spec §3 protocol), one seed per call, from its training checkpoint: the base weights
# and the adapter as the run held them, on the LoRA recipe's 2 GPUs.
#
#   bash recipes/evaluate-strata-alfworld-text-qwen2.5-7b-lora.sh CHECKPOINT [SEED] [overrides...]
#
# An exported LoRA step (`strata export`) is a plain model with the adapter merged: evaluate that folder with
# evaluate-strata-alfworld-text-qwen2.5-7b.sh instead. Writes eval_seed<SEED>.json and .md; combine seeds with
# `strata report-eval`. See recipes/lib/evaluate-strata-alfworld.sh.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
TRAIN_RECIPE=recipes/train-strata-alfworld-text-qwen2.5-7b-lora.sh NAME=strata-alfworld-qwen2.5-7b-lora \
  exec bash recipes/lib/evaluate-strata-alfworld.sh "$@"
exit
}
