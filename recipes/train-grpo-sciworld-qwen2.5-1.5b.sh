#!/usr/bin/env bash
# strata-recipe: train
# The flat GRPO baseline (configs/baseline/grpo.yaml) with Qwen2.5-1.5b on ScienceWorld: the StraTA
# ScienceWorld recipe's infrastructure, trainer, task lists and evaluation protocol, with G=8 episodes per task,
# no strategy and the sciworld_grpo prompts, so a StraTA-vs-GRPO comparison is like for like.
#
#   bash recipes/train-grpo-sciworld-qwen2.5-1.5b.sh [overrides...]
#   bash recipes/evaluate-grpo-sciworld-qwen2.5-1.5b.sh CHECKPOINT [SEED]
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
CKPT=${CKPT:-checkpoints/grpo-sciworld-qwen2.5-1.5b} \
  exec bash recipes/train-strata-sciworld-qwen2.5-1.5b.sh +baseline=grpo \
  trainer.experiment_name=grpo-sciworld-qwen2.5-1.5b "$@"
exit
}
