"""The learning check: StraTA's advantages have the right sign and land on the right tokens.

End to end through verl's real trainer on CPU (v1 trainer, FSDP2 actor and reference, KL loss, the `hf`
rollout, StraTA's group workflow and advantages), on the magic-word game (`strata.envs.magic_word`):
one decision, won iff the agent says the magic word. The tiny model is first warm-started
(`strata.assets.warm_start`) to write well-formed tags, to name a word uniformly at random in its
strategy and to say the word its strategy names, so the starting success rate is about 1/4 and the
strategy decides it. Then:

- normal run: validation success (32 games, spec §3 protocol) must rise clearly above its step-0 value;
- control run, the same with ``+strata_test.flip_advantage_sign=true``: success must fall.

If the advantages had the wrong sign, or landed on prompt or environment tokens, or on the wrong rows,
the normal run could not rise; the control shows the rise is caused by the advantages' sign, not by
anything else in the loop. Measured curves: benchmarks/RESULTS_learning_check.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strata.assets import build_tiny_model
from strata.assets.warm_start import warm_start
from strata.core.prompting import load_prompt_templates
from strata.envs.magic_word import write_games, write_prompt_preset
from strata.envs.task_list import write_task_list

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SUCCESS = "val/average/metrics/success_rate"
STEPS = 6
TEST_FREQ = 2
# Tasks per step; N strategies (of σ·N candidates) x M episodes each. The action follows the strategy,
# so the M episodes of a strategy agree and M=2 is enough to score it.
TASKS, N, M, SIGMA = 4, 2, 2, 2
VALID_GAMES = 32
RUN_TIMEOUT_S = 900


def build_assets(root: Path) -> Path:
    """Task lists, the game's prompt preset and the warm-started tiny model, under ``root``."""
    preset = write_prompt_preset(root / "prompts.yaml")
    train_games = write_games(root / "games", "train", 64)
    write_task_list(train_games, root / "train.parquet")
    write_task_list(write_games(root / "games", "valid_seen", VALID_GAMES), root / "valid_seen.parquet")
    started = time.perf_counter()
    warm_start(build_tiny_model(root / "tiny", seed=0), root / "model", train_games, seed=0,
               templates=load_prompt_templates(str(preset)))
    print(f"\nwarm start: {time.perf_counter() - started:.0f} s")
    return root


@pytest.fixture(scope="module")
def assets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once for both runs."""
    return build_assets(tmp_path_factory.mktemp("learning-check"))


def train(assets: Path, name: str, *overrides: str) -> dict[int, float]:
    """Run the trainer; return the validation success rate by step (step 0: before training)."""
    out = assets / name
    metrics = out / "metrics.jsonl"
    env = dict(os.environ, RAY_DISABLE_USAGE_STATS="1", WANDB_MODE="disabled", HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", VERL_FILE_LOGGER_PATH=str(metrics))
    command = [
        sys.executable, "-m", "strata.trainer.main", "+platform=cpu",
        f"data.train_files={assets / 'train.parquet'}",
        f"data.val_files={assets / 'valid_seen.parquet'}",
        f"data.train_batch_size={TASKS}",
        "data.max_prompt_length=512",
        "data.max_response_length=256",
        f"actor_rollout_ref.model.path={assets / 'model'}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={TASKS}",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8",
        "actor_rollout_ref.actor.optim.lr=1e-3",
        f"strata.num_stras_per_run={N}", f"strata.num_trajs_per_stra={M}", f"strata.num_cands_per_stra={SIGMA}",
        # Responses are 9 tokens; 24 keeps them under the length-penalty threshold λ·L_max = 12.
        "strata.max_tokens_per_response=24",
        "strata.diversity.embedder=hashed_bow",
        f"+strata.prompts.preset={assets / 'prompts.yaml'}",
        "env.name=magic_word",
        "env.max_steps=1",
        f"trainer.total_training_steps={STEPS}",
        f"trainer.test_freq={TEST_FREQ}",
        "trainer.save_freq=-1",
        f"trainer.default_local_dir={out / 'checkpoints'}",
        f"trainer.experiment_name=learning-check-{name}",
        "trainer.logger=[console,file]",
        *overrides,
    ]
    out.mkdir()
    started = time.perf_counter()
    with open(out / "train.log", "w") as log:
        result = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S,
                                cwd=REPO)
    assert result.returncode == 0, (out / "train.log").read_text()[-6000:]
    curve = {}
    for row in map(json.loads, metrics.read_text().splitlines()):
        if SUCCESS in row["data"]:
            curve[row["step"]] = row["data"][SUCCESS]
    print(f"\n{name}: {time.perf_counter() - started:.0f} s, validation success by step {curve}")
    (out / "curve.json").write_text(json.dumps(curve))
    assert sorted(curve) == list(range(0, STEPS + 1, TEST_FREQ))
    return curve


def test_strata_training_raises_success(assets):
    curve = train(assets, "normal")
    assert curve[STEPS] >= curve[0] + 0.25, curve


def test_flipped_advantages_lower_success(assets):
    curve = train(assets, "flipped", "+strata_test.flip_advantage_sign=true")
    assert curve[STEPS] <= curve[0] - 0.1, curve
