"""The learning check's assets: magic-word games, task lists, prompt preset and warm-started tiny model.

Shared by the learning check (``tests/integration/test_learning_check.py``) and the demo through
``recipes/train-strata-magic-word-tiny-cpu.sh``, so both train exactly the same thing. Layout of ``root``:

    prompts.yaml                 the game's prompt preset (``+strata.prompts.preset=...``)
    games/{train,valid_seen}/    the games (their task lists hold absolute paths: do not move ``root``)
    train.parquet, valid_seen.parquet
    tiny/                        the random tiny Qwen2 the warm start begins from
    model/                       the warm-started model (``actor_rollout_ref.model.path``)
    assets.json                  what was built and how long the warm start took; written last, so its
                                 presence means the folder is complete

Everything is deterministic in ``seed`` on a given machine and nothing is downloaded.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from strata.assets.tiny_model import build_tiny_model
from strata.assets.warm_start import warm_start
from strata.core.prompting import load_prompt_templates
from strata.envs.magic_word.game import write_games, write_prompt_preset
from strata.envs.task_list import write_task_list

logger = logging.getLogger(__name__)

MANIFEST = "assets.json"
TRAIN_GAMES = 64
VALID_GAMES = 32


def build_learning_check_assets(root: str | Path, train_games: int = TRAIN_GAMES, valid_games: int = VALID_GAMES,
                                seed: int = 0, with_model: bool = True) -> Path:
    """Write the assets under ``root`` (see the module docstring) and return ``root``.

    ``with_model=False`` writes only the preset, games and task lists (a second; what a recipe's dry run
    needs) and no ``assets.json``, so the folder still counts as incomplete.
    """
    root = Path(root).resolve()
    (root / MANIFEST).unlink(missing_ok=True)  # an interrupted rebuild must not look complete
    preset = write_prompt_preset(root / "prompts.yaml")
    train = write_games(root / "games", "train", train_games, seed=seed)
    write_task_list(train, root / "train.parquet")
    write_task_list(write_games(root / "games", "valid_seen", valid_games, seed=seed), root / "valid_seen.parquet")
    if not with_model:
        return root
    started = time.perf_counter()
    warm_start(build_tiny_model(root / "tiny", seed=seed), root / "model", train, seed=seed,
               templates=load_prompt_templates(str(preset)))
    seconds = round(time.perf_counter() - started, 1)
    logger.info("warm start: %.0f s", seconds)
    manifest = {"train_games": train_games, "valid_games": valid_games, "seed": seed, "warm_start_s": seconds}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return root
