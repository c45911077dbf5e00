#!/usr/bin/env bash
# strata-recipe: train
# The learning check as a recipe (`make demo`, tests/integration/test_learning_check.py): StraTA on the
# magic-word game (one decision, won iff the agent says the magic word) with a tiny Qwen2 warm-started to
# write well-formed tags and to name a word at random in its strategy, so it starts at ~1/4 success and the
# strategy decides it. verl's trainer on CPU (FSDP2 actor and reference, KL loss, the `hf` rollout):
# validation on 32 games before training and every TEST_FREQ steps, a trajectory dump every step, then the
# curve (table and PNG) and a model card. Set-up and recorded curves: benchmarks/RESULTS_learning_check.md.
# Extra Hydra overrides pass through ("$@"), e.g. +strata_test.flip_advantage_sign=true for the control.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
source recipes/lib/dry-run.sh

OUT=${OUT:-outputs/strata-magic-word-tiny-cpu}
ASSETS=${ASSETS:-outputs/magic-word-assets}   # games, task lists, preset, warm-started model: built once
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
STEPS=${STEPS:-6}
TEST_FREQ=${TEST_FREQ:-2}
# 4 tasks per step; N=2 strategies (of σ·N=4 candidates) x M=2 episodes each. The action follows the
# strategy, so the M episodes of a strategy agree and M=2 is enough to score it.
N=${N:-2}; M=${M:-2}; SIGMA=${SIGMA:-2}; TASKS=${TASKS:-4}
# The strategy encoder is the config's default, all-MiniLM-L6-v2 (offline); the test passes
# strata.diversity.embedder=hashed_bow to keep its recorded curves comparable.

export RAY_DISABLE_USAGE_STATS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 WANDB_MODE=${WANDB_MODE:-offline}
OUT=$(run_folder "$OUT")
ASSETS=$(realpath -m "$ASSETS")
export VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl"

# assets.json is written last: a folder without it is incomplete and rebuilt. A dry run needs only the preset,
# and builds it in a temporary folder it removes when it ends.
if dry_run; then
  if [ ! -f "$ASSETS/prompts.yaml" ]; then
    ASSETS=$(mktemp -d)
    trap 'rm -rf "$ASSETS"' EXIT
    $PY -m strata.cli build-learning-check --out "$ASSETS" --without-model >/dev/null
  fi
elif [ ! -f "$ASSETS/assets.json" ]; then
  $PY -m strata.cli build-learning-check --out "$ASSETS"
fi

logged "$OUT/train.log" $PY -m strata.trainer.main +platform=cpu ${DRY_RUN:+--dry-run} \
  data.train_files="$ASSETS/train.parquet" \
  data.val_files="$ASSETS/valid_seen.parquet" \
  data.train_batch_size=$TASKS \
  data.max_prompt_length=512 \
  data.max_response_length=256 \
  actor_rollout_ref.model.path="$ASSETS/model" \
  actor_rollout_ref.actor.ppo_mini_batch_size=$TASKS \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \
  actor_rollout_ref.actor.optim.lr=1e-3 \
  strata.num_stras_per_run=$N strata.num_trajs_per_stra=$M strata.num_cands_per_stra=$SIGMA \
  strata.max_tokens_per_response=24 \
  +strata.prompts.preset="$ASSETS/prompts.yaml" \
  env.name=magic_word \
  env.max_steps=1 \
  trainer.total_training_steps="$STEPS" \
  trainer.test_freq="$TEST_FREQ" \
  trainer.save_freq=-1 \
  trainer.default_local_dir="$OUT/checkpoints" \
  run.dir="$OUT" \
  run.dump.train_every=1 \
  trainer.experiment_name=strata-magic-word-tiny-cpu \
  'trainer.logger=[console,file]' \
  "$@"

dry_run && exit 0
echo
echo "== validation success rate per step (32 valid_seen games, one strategy and one episode per task) =="
$PY -m strata.cli curve --run-dir "$OUT"
$PY -m strata.cli eval-result --metrics "$OUT/metrics.jsonl" --seed 0 --split valid_seen --out "$OUT/eval" >/dev/null
$PY -m strata.cli model-card --run-dir "$OUT"   # titled by trainer.experiment_name
echo
echo "curve:        $OUT/curve/curve.png (table: $OUT/curve/curve.md)"
echo "model card:   $OUT/model-card/README.md"
echo "config:       $OUT/config.yaml"
echo "metrics:      $OUT/metrics.jsonl"
echo "log:          $OUT/train.log"
echo "trajectories: strata show $OUT   (--html page.html for a browser)"
exit
}
