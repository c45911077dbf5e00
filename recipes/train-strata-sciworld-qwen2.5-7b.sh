#!/usr/bin/env bash
# strata-recipe: train
# StraTA on ScienceWorld with Qwen2.5-7B-Instruct on one node of 8 GPUs, parameters and optimizer
# offloaded: the ALFWorld 7B recipe's infrastructure with `+environment=sciworld`.
#
# Same algorithm and optimisation keys as the 1.5B ScienceWorld recipe; only infrastructure differs
# (`strata config-diff` lists the differences). Data, validation list and row budget: see
# recipes/train-strata-sciworld-qwen2.5-1.5b.sh. Extra Hydra overrides pass through.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."

# Rollout sizing (tests/recipes/test_recipes.py checks it): 512 episodes over 4 vLLM replicas (TP2) = 128
# per replica; KV cache 0.85 x 80 GiB - 7.1 GiB weights - ~3 GiB = 2.17M tokens per replica at 28 KiB a
# token per GPU; 128 x 16.9k (the row budget's average context) = 2.16M fit, ScienceWorld's ~9k average
# leaves room. Environment: 16 agent-loop workers x 6 = 96 game processes for a 96-128-core node, each with
# one JVM (1 GB heap cap, ~0.5 GB resident: ~48 GB in all).

# The ALFWorld recipe's command with the ScienceWorld environment, data and validation list.
DATA=${DATA:-$HOME/data/strata-sciworld}
DATA="$DATA" CKPT=${CKPT:-checkpoints/strata-sciworld-qwen2.5-7b} \
  exec bash recipes/train-strata-alfworld-text-qwen2.5-7b.sh \
  +environment=sciworld \
  data.val_files="$DATA/10-per-task-type/valid.parquet" \
  trainer.experiment_name=strata-sciworld-qwen2.5-7b \
  "$@"
exit
}
