"""The learning check: StraTA's advantages have the right sign and land on the right tokens.

End to end through verl's real trainer on CPU (v1 trainer, FSDP2 actor and reference, KL loss, the `hf`
rollout, StraTA's group workflow and advantages), on the magic-word game (`strata.envs.magic_word.game`):
one decision, won iff the agent says the magic word. The tiny model is first warm-started
(`strata.assets.learning_check`, the assets `make demo` uses too) to write well-formed tags, to name a word
uniformly at random in its strategy and to say the word its strategy names, so the starting success rate is
about 1/4 and the strategy decides it. Both runs go through `recipes/train-strata-magic-word-tiny-cpu.sh`:

- normal run: validation success (32 games, spec §3 protocol) must rise clearly above its step-0 value;
- control run, the same with ``+strata_test.flip_advantage_sign=true``: success must fall.

If the advantages had the wrong sign, or landed on prompt or environment tokens, or on the wrong rows,
the normal run could not rise; the control shows the rise is caused by the advantages' sign, not by
anything else in the loop. Each run folder must also describe itself (resolved config, trajectory dumps of
every training step and validation, the curve's PNG, a model card). Measured curves:
benchmarks/RESULTS_learning_check.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from strata.assets.learning_check import VALID_GAMES, build_learning_check_assets
from strata.report.dumps import dump_files, load_step
from strata.trainer.shared_memory import shared_segments
from tests.integration.trainer_runs import assert_nothing_left

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "train-strata-magic-word-tiny-cpu.sh"
SUCCESS = "val/average/metrics/success_rate"
STEPS = 4  # the recorded curves (benchmarks/RESULTS_learning_check.md) have moved by step 4: +0.34, -0.28
TEST_FREQ = 2
TASKS = 4  # the recipe's tasks per step
RUN_TIMEOUT_S = 900
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def assets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once for both runs; the recipe finds them complete and reuses them."""
    started = time.perf_counter()
    root = build_learning_check_assets(tmp_path_factory.mktemp("learning-check") / "assets")
    print(f"\nassets and warm start: {time.perf_counter() - started:.0f} s")
    return root


def train(assets: Path, name: str, *overrides: str) -> tuple[Path, dict[int, float]]:
    """Run the recipe; return its run folder and the validation success rate by step (0: before training)."""
    out = assets.parent / name
    env = dict(os.environ, OUT=str(out), ASSETS=str(assets), PY=sys.executable, STEPS=str(STEPS),
               TEST_FREQ=str(TEST_FREQ), WANDB_MODE="disabled")
    env.pop("DRY_RUN", None)
    # hashed_bow keeps the recorded curves comparable; the recipe's default is all-MiniLM-L6-v2.
    command = ["bash", str(RECIPE), "strata.diversity.embedder=hashed_bow", *overrides]
    started = time.perf_counter()
    log = assets.parent / f"{name}.log"
    segments_before = shared_segments()
    with open(log, "w") as handle:
        result = subprocess.run(command, env=env, stdout=handle, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S,
                                cwd=REPO)
    assert result.returncode == 0, log.read_text()[-6000:]
    assert_nothing_left(out, segments_before)
    curve = {}
    for row in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()):
        if SUCCESS in row["data"]:
            curve[row["step"]] = row["data"][SUCCESS]
    print(f"\n{name}: {time.perf_counter() - started:.0f} s, validation success by step {curve}")
    assert sorted(curve) == list(range(0, STEPS + 1, TEST_FREQ))
    return out, curve


def assert_run_folder_describes_itself(out: Path, curve: dict[int, float], *overrides: str) -> None:
    """Resolved config, dumps of every training step and validation, the curve (PNG, table) and a model card."""
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert Path(config["run"]["dir"]).resolve() == out.resolve() and config["env"]["name"] == "magic_word"
    assert config["strata"]["diversity"]["embedder"] == "hashed_bow"
    assert ("strata_test" in config) == any(o.startswith("+strata_test.") for o in overrides)

    rollouts = out / "rollouts"
    train_steps, valid_steps = dump_files(rollouts, "train"), dump_files(rollouts, "valid")
    assert list(train_steps) == list(range(1, STEPS + 1)), sorted(train_steps)
    assert list(valid_steps) == sorted(curve), sorted(valid_steps)
    for step, files in train_steps.items():
        records = load_step(files)
        assert len(records) == TASKS and all(r["kind"] == "train" and r["step"] == step for r in records)
    for step, files in valid_steps.items():
        records = load_step(files)
        assert len(records) == VALID_GAMES
        won = sum(t["won"] for r in records for s in r["strategies"] for t in s["trajectories"])
        assert won / VALID_GAMES == pytest.approx(curve[step])  # the dumps are the episodes that were scored

    assert (out / "curve" / "curve.png").read_bytes().startswith(PNG_SIGNATURE)
    recorded = json.loads((out / "curve" / "curve.json").read_text())
    assert dict(zip(recorded["steps"], recorded["values"], strict=True)) == pytest.approx(curve)
    card = (out / "model-card" / "README.md").read_text()
    assert "## Training curve" in card and (out / "model-card" / "training_curve.png").is_file()


def test_strata_training_raises_success(assets):
    out, curve = train(assets, "normal")
    assert curve[STEPS] >= curve[0] + 0.25, curve
    assert_run_folder_describes_itself(out, curve)


def test_flipped_advantages_lower_success(assets):
    flip = "+strata_test.flip_advantage_sign=true"
    out, curve = train(assets, "flipped", flip)
    assert curve[STEPS] <= curve[0] - 0.1, curve
    assert_run_folder_describes_itself(out, curve, flip)
