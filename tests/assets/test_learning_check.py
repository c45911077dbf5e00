"""The learning check's assets without the warm start: what a recipe's dry run needs, and never 'complete'.

The full build (with the warm-started model) runs in tests/integration/test_learning_check.py.
"""

from __future__ import annotations

from strata.assets.learning_check import MANIFEST, build_learning_check_assets
from strata.core.prompting import load_prompt_templates
from strata.envs.magic_word.game import load_game
from strata.envs.task_list import read_task_list


def test_without_model_writes_preset_games_and_task_lists_but_no_manifest(tmp_path):
    (tmp_path / MANIFEST).write_text("{}")  # left by an earlier build: a rebuild must not look complete
    root = build_learning_check_assets(tmp_path, train_games=3, valid_games=2, with_model=False)
    assert root == tmp_path.resolve()
    load_prompt_templates(str(root / "prompts.yaml"))  # a valid preset file
    train, valid = read_task_list(root / "train.parquet"), read_task_list(root / "valid_seen.parquet")
    assert [t.split for t in train] == ["train"] * 3 and [t.split for t in valid] == ["valid_seen"] * 2
    assert all(load_game(t.game_file).magic_word == "candle" for t in train + valid)
    assert not (root / MANIFEST).exists() and not (root / "model").exists()
