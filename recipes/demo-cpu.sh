#!/usr/bin/env bash
# `make demo`: StraTA on a CPU in two runs, both through verl's own trainer, with the real all-MiniLM-L6-v2
# strategy encoder (offline) for diverse selection.
#   1. the plumbing: recipes/train-strata-alfworld-text-tiny-cpu.sh on the bundled ALFWorld games with a random
#      tiny Qwen2. It writes no well-formed tag, so its success rate is 0%: expected, not a failure.
#   2. learning: recipes/train-strata-magic-word-tiny-cpu.sh, the learning check's warm-started tiny model on
#      the magic-word game; its validation success rises over 6 steps.
# It ends with the learning curve and where the PNG, model card, trajectory dumps and config are.
# Each run starts from an empty folder; the learning run's warm-started model is built once and kept.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."
source recipes/lib/dry-run.sh   # DRY_RUN=1: both runs' configs checked and printed, nothing written or removed

OUT=${OUT:-outputs/demo}
ASSETS=${ASSETS:-$OUT/magic-word-assets}   # the warm-started model and games: built on the first demo only
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}   # the project venv when there is one
STRATA=$(dirname "$PY")/strata; [ -x "$STRATA" ] || STRATA="$PY -m strata.cli"
export PY

clock() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
unless_dry_run rm -rf "$OUT/alfworld" "$OUT/learning"

echo "== 1/2 ALFWorld, random tiny model: the whole StraTA loop (success 0% expected) =="
started=$SECONDS
OUT="$OUT/alfworld" bash recipes/train-strata-alfworld-text-tiny-cpu.sh strata.diversity.embedder=sentence_transformer
alfworld_s=$((SECONDS - started))
echo "A random tiny model writes no well-formed <strategy>/<action> tag, so 0% success above is expected:"
echo "this part shows the plumbing (groups, selection, judge, advantages, checkpoints). Part 2 shows learning."

echo
echo "== 2/2 magic word, warm-started tiny model: StraTA learns which strategy wins =="
started=$SECONDS
OUT="$OUT/learning" ASSETS="$ASSETS" bash recipes/train-strata-magic-word-tiny-cpu.sh \
  strata.diversity.embedder=sentence_transformer
learning_s=$((SECONDS - started))
dry_run && exit 0

LEARNING=$(cd "$OUT/learning" && pwd)
ALFWORLD=$(cd "$OUT/alfworld" && pwd)
echo
echo "================ demo done: ALFWorld $(clock $alfworld_s), learning $(clock $learning_s) ================"
echo "Learning run: validation success rate per step (32 magic-word games; step 0 is before training)"
cat "$LEARNING/curve/curve.md"
echo
echo "curve (PNG):   $LEARNING/curve/curve.png"
echo "model card:    $LEARNING/model-card/README.md"
echo "config:        $LEARNING/config.yaml   and   $ALFWORLD/config.yaml"
echo "trajectories:  $STRATA show $LEARNING --step 6        (training groups: strategies, kept ones, advantages)"
echo "               $STRATA show $LEARNING --split valid --html valid.html   (a validation step in a browser)"
echo "               $STRATA show $ALFWORLD                  (the ALFWorld run's episodes)"
echo "metrics:       $LEARNING/metrics.jsonl   and   $ALFWORLD/metrics.jsonl"
exit
}
