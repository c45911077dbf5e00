#!/usr/bin/env bash
# strata-recipe: train
# The flat GRPO baseline (configs/baseline/grpo.yaml) with Qwen2.5-7b on WebShop: the StraTA WebShop
# recipe's infrastructure, trainer, task lists and evaluation protocol, with G=8 episodes per task, no strategy
# and the webshop_grpo prompts, so a StraTA-vs-GRPO comparison is like for like.
#
#   bash recipes/train-grpo-webshop-qwen2.5-7b.sh [overrides...]
#   bash recipes/evaluate-grpo-webshop-qwen2.5-7b.sh CHECKPOINT [SEED]
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
CKPT=${CKPT:-checkpoints/grpo-webshop-qwen2.5-7b} \
  exec bash recipes/train-strata-webshop-qwen2.5-7b.sh +baseline=grpo \
  trainer.experiment_name=grpo-webshop-qwen2.5-7b "$@"
exit
}
