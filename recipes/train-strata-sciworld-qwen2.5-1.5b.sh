#!/usr/bin/env bash
# strata-recipe: train
# StraTA on ScienceWorld with Qwen2.5-1.5B-Instruct on one node of 2 GPUs (2x A100 80GB): the ALFWorld
# recipe's infrastructure with `+environment=sciworld` (configs/environment/sciworld.yaml: env.name=sciworld,
# H=50, the sciworld prompt preset, env.reward=success; add env.reward=score to train on the normalised score).
#
#   strata prepare-data --env sciworld --out "$DATA"                                     # once: train/valid/test
#   strata prepare-data --env sciworld --splits valid,test --per-task-type 10 --out "$DATA/10-per-task-type"
#   bash recipes/train-strata-sciworld-qwen2.5-1.5b.sh                                   # train
#
# Training draws from the 2,312 train variations of AgentGym's 23 task types (prepare-data's default task set);
# validation every 10 steps runs the first 10 dev variations of each (189 episodes; the whole dev split, 1,156 variations up to 346
# per task type, would cost 6x more and weigh a few task types). Algorithm and optimisation keys live in
# configs/strata_trainer.yaml; this script sets infrastructure only. Extra Hydra overrides pass through ("$@").
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."

# Row budget: the ALFWorld recipe's, 2048 + 30720 = Qwen2.5's 32,768-token context. Measured with the real
# tokenizer on the gold paths of variation 0 of all 30 task types (1,060 turns): an observation turn (the
# observation and the objects in view, trimmed to ~350 tokens) is 271 tokens on average, 410 at p90, 816 at
# most (`look around` in a full greenhouse); the first action prompt is <= 550 tokens. With ~60-token
# responses a step costs ~330 tokens: 50 steps ~17k, 50 steps at p90 ~24k, both inside 30720; only a policy
# that looks around in the biggest rooms every turn (~880 a step) runs out, after ~35 steps, counted as
# env/token_budget_ends. An exploring tour on the real simulator (look around, open the next door, go there)
# makes a 50-step row of 10.5k tokens (tests/recipes/test_sciworld_episode_budget.py checks every recipe).
# Rollout sizing (tests/recipes/test_recipes.py checks it against the resolved config): as for ALFWorld,
# 512 episodes over 2 vLLM replicas, 256 per replica; KV cache 0.80 x 80 GiB - weights - activations =
# 2.18M tokens at 28 KiB a token; an episode averages at most (1k + 32.8k) / 2 = 16.9k tokens of context,
# so at most 128 sequences run (2.16M) and the rest queue. ScienceWorld episodes average ~9k (~330 tokens a
# step), so the cache has room to spare.
# Environment: 8 agent-loop workers x 6 = 48 game processes for a 64-core node, each with one JVM capped at
# a 1 GB heap with the serial collector (strata/envs/sciworld/engine.py: ~0.5 GB resident with 9 live
# episodes, ~24 GB in all; uncapped, a JVM sizes itself from the node's RAM); the simulator is CPU-bound.

# The ALFWorld recipe's command with the ScienceWorld environment, data and validation list.
DATA=${DATA:-$HOME/data/strata-sciworld}
DATA="$DATA" CKPT=${CKPT:-checkpoints/strata-sciworld-qwen2.5-1.5b} \
  exec bash recipes/train-strata-alfworld-text-qwen2.5-1.5b.sh \
  +environment=sciworld \
  data.val_files="$DATA/10-per-task-type/valid.parquet" \
  trainer.experiment_name=strata-sciworld-qwen2.5-1.5b \
  "$@"
exit
}
