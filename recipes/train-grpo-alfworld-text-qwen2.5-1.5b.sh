#!/usr/bin/env bash
# strata-recipe: train
# The flat GRPO baseline (configs/baseline/grpo.yaml) with Qwen2.5-1.5b on ALFWorld: the StraTA recipe's
# infrastructure, trainer, environment, task lists and evaluation protocol, with G=8 episodes per task and
# no strategy, so a StraTA-vs-GRPO comparison is like for like. Paper's GRPO baseline: group size 8, 16 tasks.
#
#   bash recipes/train-grpo-alfworld-text-qwen2.5-1.5b.sh [overrides...]
#   bash recipes/evaluate-grpo-alfworld-text-qwen2.5-1.5b.sh CHECKPOINT [SEED]
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
CKPT=${CKPT:-checkpoints/grpo-alfworld-qwen2.5-1.5b} \
  exec bash recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh +baseline=grpo \
  trainer.experiment_name=grpo-alfworld-qwen2.5-1.5b "$@"
exit
}
