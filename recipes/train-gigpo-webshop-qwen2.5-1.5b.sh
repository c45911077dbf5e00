#!/usr/bin/env bash
# strata-recipe: train
# GiGPO (configs/baseline/gigpo.yaml; docs/algorithm.md §2.2) with Qwen2.5-1.5b on WebShop: the StraTA
# recipe's infrastructure, trainer, task lists and evaluation protocol, with G=8 episodes per task, no strategy
# and GiGPO's episode- and step-level credit (verl-agent's values), so StraTA, GRPO and GiGPO differ
# only in algorithm keys (`strata config-diff` lists them).
#
#   bash recipes/train-gigpo-webshop-qwen2.5-1.5b.sh [overrides...]
#   bash recipes/evaluate-gigpo-webshop-qwen2.5-1.5b.sh CHECKPOINT [SEED]
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
CKPT=${CKPT:-checkpoints/gigpo-webshop-qwen2.5-1.5b} \
  exec bash recipes/train-strata-webshop-qwen2.5-1.5b.sh +baseline=gigpo \
  trainer.experiment_name=gigpo-webshop-qwen2.5-1.5b "$@"
exit
}
