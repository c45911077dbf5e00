#!/usr/bin/env bash
# strata-recipe: evaluate
# Evaluate the GRPO baseline with Qwen2.5-1.5b on ALFWorld valid_seen, with StraTA's protocol (spec §3) minus
# the strategy: one episode per task. Same arguments and outputs as evaluate-strata-alfworld-text-qwen2.5-1.5b.sh:
#
#   bash recipes/evaluate-grpo-alfworld-text-qwen2.5-1.5b.sh CHECKPOINT [SEED] [overrides...]
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
TRAIN_RECIPE=recipes/train-grpo-alfworld-text-qwen2.5-1.5b.sh NAME=grpo-alfworld-qwen2.5-1.5b \
  exec bash recipes/lib/evaluate-strata-alfworld.sh "$@"
exit
}
