from __future__ import annotations

import pytest

from strata.envs.alfworld.tasks import (
    SPLITS,
    SUBTASKS,
    TASK_TYPES,
    check_split,
    resolve_task_type,
    resolve_task_types,
    subtask_of,
)
from strata.envs.errors import UnknownNameError
from strata.envs.tasks import GameIds, Task, check_split_in

EXPECTED = {
    "pick_and_place_simple": "pick",
    "look_at_obj_in_light": "look",
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "heat",
    "pick_cool_then_place_in_recep": "cool",
    "pick_two_obj_and_place": "pick2",
}


@pytest.mark.parametrize("task_type,subtask", EXPECTED.items())
def test_subtask_mapping(task_type: str, subtask: str) -> None:
    assert subtask_of(task_type) == subtask
    assert resolve_task_type(subtask) == task_type
    assert resolve_task_type(task_type) == task_type
    assert Task(f"/g/{task_type}/trial/game.tw-pddl", task_type, "train").subtask == subtask


def test_order_and_names() -> None:
    assert SUBTASKS == ("pick", "look", "clean", "heat", "cool", "pick2")
    assert tuple(EXPECTED) == TASK_TYPES
    assert SPLITS == ("train", "valid_seen", "valid_unseen")


def test_resolve_task_types_selects_in_alfworld_order() -> None:
    assert resolve_task_types(None) == TASK_TYPES
    assert resolve_task_types(["pick2", "clean", "pick_and_place_simple"]) == (
        "pick_and_place_simple",
        "pick_clean_then_place_in_recep",
        "pick_two_obj_and_place",
    )


def test_unknown_task_type_lists_valid_names() -> None:
    with pytest.raises(UnknownNameError, match="unknown task type 'slice'.*pick, look, clean, heat, cool, pick2"):
        resolve_task_types(["pick", "slice"])
    with pytest.raises(UnknownNameError, match="pick_two_obj_and_place"):
        subtask_of("pick_and_place_with_movable_recep")


def test_unknown_split_lists_valid_names() -> None:
    with pytest.raises(UnknownNameError, match="unknown split 'test'.*train, valid_seen, valid_unseen"):
        check_split("test")


def test_task_requires_absolute_game_file() -> None:
    with pytest.raises(ValueError, match="absolute"):
        Task("relative/game.tw-pddl", "pick_and_place_simple", "train")


def test_game_ids_round_trip_and_name_the_format_when_malformed() -> None:
    ids = GameIds("shop:", ("goals", "index", "folder"), "Shop")
    game = ids.make("human", 7, "/data/a:b")
    assert game == "shop:human:7:/data/a:b" and ids.matches(game) and not ids.matches("other:1")
    assert ids.parse(game, digits=(1,)) == ["human", "7", "/data/a:b"]  # the last field keeps its ':'
    for malformed in ("shop:human:x:/data", "shop:human:7", "shop::7:/data", "sciworld:boil:1"):
        with pytest.raises(ValueError, match=r"is not a Shop game id \(shop:<goals>:<index>:<folder>\)"):
            ids.parse(malformed, digits=(1,))


def test_a_split_check_names_the_known_splits() -> None:
    assert check_split_in("valid", ("train", "valid")) == "valid"
    with pytest.raises(UnknownNameError, match=r"^unknown Shop split 'dev'; known splits: train, valid \(note\)$"):
        check_split_in("dev", ("train", "valid"), "Shop", " (note)")
