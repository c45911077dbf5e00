from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from strata.envs.alfworld.discovery import load_split, scan_split, task_description_of_game
from strata.envs.alfworld.tasks import SUBTASKS
from strata.envs.errors import AlfworldDataError, GameFileError, UnknownNameError


def copy_split(bundled_root: Path, dest: Path, split: str = "valid_seen") -> Path:
    shutil.copytree(bundled_root / "json_2.1.1" / split, dest / "json_2.1.1" / split)
    return dest


@pytest.mark.parametrize("split,per_subtask", [("train", 4), ("valid_seen", 2), ("valid_unseen", 1)])
def test_bundled_splits_cover_every_subtask(bundled_root: Path, split: str, per_subtask: int) -> None:
    scan = scan_split(bundled_root, split)
    assert scan.counts_by_subtask() == {sub: per_subtask for sub in SUBTASKS}
    assert [t.index for t in scan.tasks] == list(range(len(scan.tasks)))
    assert [t.game_file for t in scan.tasks] == sorted(t.game_file for t in scan.tasks)
    for task in scan.tasks:
        assert task.split == split
        assert Path(task.game_file).name == "game.tw-pddl" and Path(task.game_file).is_absolute()
        assert Path(task.game_file).parent.name.startswith("trial_")
        assert Path(task.game_file).parent.parent.name.startswith(task.task_type + "-")


def test_select_task_types_by_name(bundled_root: Path) -> None:
    tasks = load_split(bundled_root, "train", ["heat", "pick_two_obj_and_place"])
    assert {t.subtask for t in tasks} == {"heat", "pick2"} and len(tasks) == 8


def test_skips_like_alfredtwenv(bundled_root: Path, tmp_path: Path) -> None:
    root = copy_split(bundled_root, tmp_path)
    trials = sorted((root / "json_2.1.1" / "valid_seen").glob("*/trial_*"))
    # a movable-receptacle task folder, an unsolvable game, a trial without game file
    movable = trials[0].parent.with_name("pick_and_place_with_movable_recep-Apple-Bowl-Fridge-1")
    shutil.copytree(trials[0].parent, movable)
    game = json.loads((trials[1] / "game.tw-pddl").read_text())
    (trials[1] / "game.tw-pddl").write_text(json.dumps({**game, "solvable": False}))
    (trials[2] / "game.tw-pddl").unlink()
    scan = scan_split(root, "valid_seen")
    assert len(scan.tasks) == 10
    assert dict(scan.skipped) == {"movable or sliced task": 1, "not marked solvable": 1, "no game.tw-pddl": 1}


def test_task_description_read_from_grammar(bundled_root: Path) -> None:
    task = load_split(bundled_root, "valid_seen", ["clean"])[0]
    description = task_description_of_game(task.game_file)
    assert description.startswith(("put a clean ", "clean some ")) and not description.endswith(".")


def test_missing_data_path_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(AlfworldDataError, match=r"json_2\.1\.1 not found.*alfworld-download"):
        load_split(tmp_path, "train")
    with pytest.raises(AlfworldDataError, match="does not exist.*alfworld-download"):
        load_split(tmp_path / "nowhere", "train")


def test_missing_split_folder(bundled_root: Path, tmp_path: Path) -> None:
    root = copy_split(bundled_root, tmp_path, "valid_seen")
    with pytest.raises(AlfworldDataError, match=r"valid_unseen is missing.*alfworld-download"):
        load_split(root, "valid_unseen")


def test_split_without_games(tmp_path: Path) -> None:
    (tmp_path / "json_2.1.1" / "train" / "pick_and_place_simple-Mug-None-Desk-301" / "trial_T1").mkdir(parents=True)
    with pytest.raises(AlfworldDataError, match="no playable games in .*train.*alfworld-download"):
        load_split(tmp_path, "train")


def test_corrupt_game_file_named(bundled_root: Path, tmp_path: Path) -> None:
    root = copy_split(bundled_root, tmp_path)
    bad = sorted((root / "json_2.1.1" / "valid_seen").glob("*/trial_*/game.tw-pddl"))[3]
    bad.write_text('{"pddl_domain": "(define', encoding="utf-8")
    with pytest.raises(GameFileError) as info:
        load_split(root, "valid_seen")
    message = str(info.value)
    assert str(bad) in message and "not valid JSON" in message and "\n" not in message


def test_game_file_missing_fields_named(bundled_root: Path, tmp_path: Path) -> None:
    root = copy_split(bundled_root, tmp_path)
    bad = sorted((root / "json_2.1.1" / "valid_seen").glob("*/trial_*/game.tw-pddl"))[0]
    bad.write_text(json.dumps({"solvable": True}))
    with pytest.raises(GameFileError, match=f"{bad}: missing pddl_domain, grammar, pddl_problem"):
        load_split(root, "valid_seen")


def test_unknown_split_and_task_type(bundled_root: Path) -> None:
    with pytest.raises(UnknownNameError, match="known splits: train, valid_seen, valid_unseen"):
        load_split(bundled_root, "valid")
    with pytest.raises(UnknownNameError, match="unknown task type 'toggle'"):
        load_split(bundled_root, "train", ["toggle"])
