#!/usr/bin/env bash
# strata-recipe: train
# The GRPO baseline on CPU: the tiny StraTA recipe with +baseline=grpo and as many trajectories per step
# (2 tasks x G=4 episodes = 2 tasks x N=2 strategies x M=2), for benchmarks/bench_strata_vs_grpo.py and the tests.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-outputs/grpo-tiny-cpu} N=1 SIGMA=1 M=${G:-4} \
  exec bash recipes/train-strata-alfworld-text-tiny-cpu.sh +baseline=grpo trainer.experiment_name=grpo-tiny-cpu "$@"
exit
}
