#!/usr/bin/env bash
# strata-recipe: train
# StraTA on WebShop with Qwen2.5-7b-Instruct on one node of 8 GPUs (8x A100 80GB): the ALFWorld
# recipe's infrastructure with `+environment=webshop` (configs/environment/webshop.yaml: env.name=webshop,
# H=15 as verl-agent's WebShop recipes, the webshop prompt preset, env.reward=success; add env.reward=score to
# train on WebShop's reward itself). Success rate and score (mean reward x 100) are both logged.
#
#   # once: WebShop's data/ folder from its setup.sh (items_shuffle_1000.json, items_ins_v2_1000.json,
#   # items_human_ins.json), or `strata make-webshop --out $WEBSHOP_DATA` for a generated catalogue
#   strata prepare-data --env webshop --data-path "$WEBSHOP_DATA" --out "$DATA"          # train/test
#   strata prepare-data --env webshop --data-path "$WEBSHOP_DATA" --splits test --per-task-type 100 --out "$DATA/100"
#   bash recipes/train-strata-webshop-qwen2.5-7b.sh                                    # train
#
# Goals: the synthetic goals of the 1,000-product files, goals 0-499 test and the rest train, as verl-agent
# (human_goals: False) and AgentGym train and test (`--goals human` for WebShop's human goals: on the full
# catalogue they take WebShop's own split, 0-499 test, 500-1499 valid, the rest train). Validation every 10 steps
# plays the first 100 test goals, as verl-agent validates on its test goals; the evaluation recipes play all 500.
# Row budget: the ALFWorld recipe's, 2048 + 30720 tokens. A WebShop page turn is a few hundred tokens (a results
# page: 10 titles and their clicks); 15 steps of the longest pages with 512-token responses stay far inside it
# (tests/recipes/test_webshop_episode_budget.py plays them on a catalogue of long titles and descriptions).
# Algorithm and optimisation keys live in configs/strata_trainer.yaml; this script sets infrastructure only.
# Extra Hydra overrides pass through ("$@").
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${DATA:-$HOME/data/strata-webshop}
DATA="$DATA" CKPT=${CKPT:-checkpoints/strata-webshop-qwen2.5-7b} \
  exec bash recipes/train-strata-alfworld-text-qwen2.5-7b.sh \
  +environment=webshop \
  data.val_files="$DATA/100/test.parquet" \
  trainer.experiment_name=strata-webshop-qwen2.5-7b \
  "$@"
exit
}
