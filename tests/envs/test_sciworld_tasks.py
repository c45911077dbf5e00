"""ScienceWorld game ids, tasks, the prompt's object view, and its per-task-type success table (pure code)."""

from __future__ import annotations

import random

import pytest

from strata.envs.errors import UnknownNameError
from strata.envs.metrics import success_table
from strata.envs.records import EpisodeOutcome
from strata.envs.sciworld.tasks import TASK_TYPES, game_id, parse_game_id
from strata.envs.sciworld.view import TEMPLATES, object_view, random_action
from strata.envs.tasks import Task


def test_game_id_round_trips_and_rejects_bad_ids():
    assert parse_game_id(game_id("boil", 12)) == ("boil", 12)
    for bad in ("boil:1", "sciworld:boil", "sciworld:boil:x", "sciworld:bake:1"):
        with pytest.raises((ValueError, UnknownNameError)):
            parse_game_id(bad)


def test_task_names_its_type_variation_and_subtask():
    task = Task(game_id("find-animal", 3), "find-animal", "valid", 0)
    assert (task.subtask, task.name, task.environment) == ("find-animal", "find-animal/3", "sciworld")
    with pytest.raises(UnknownNameError):
        Task(game_id("boil", 1), "boil", "valid_seen", 0)  # an ALFWorld split
    with pytest.raises(ValueError):
        Task(game_id("melt", 1), "boil", "train", 0)  # id and task type disagree


def test_object_view_puts_mentioned_objects_first_and_counts_the_rest():
    objects = [f"thing {i}" for i in range(200)] + ["metal pot"]
    view = object_view(objects, "You see a metal pot.", max_chars=100)
    assert view[0] == "metal pot"
    assert sum(len(v) + 3 for v in view[:-1]) <= 100
    assert view[-1] == f"... ({len(objects) - len(view) + 1} more objects not shown)"
    assert object_view(["a", "b"], "") == ("a", "b")
    # Whole words only: the chair is mentioned, the air is not (it keeps its place in the simulator's order).
    assert object_view(["air", "door", "chair"], "You see a chair.") == ("chair", "air", "door")
    assert object_view(["air", "chair"], "The air is warm; a chair.") == ("air", "chair")


def test_random_action_fills_every_slot_from_the_objects():
    rng = random.Random(0)
    actions = {random_action(("door to kitchen", "... (3 more objects not shown)"), rng) for _ in range(300)}
    assert not any("OBJ" in a or "LOC" in a or "more objects" in a for a in actions)
    assert "focus on door to kitchen" in actions and len(actions) == len(TEMPLATES)


def test_success_table_lists_sciworld_task_types_in_order():
    outcomes = [EpisodeOutcome(game_id(t, 0), t, t, won, 5, "won" if won else "lost", 1.0 if won else -1.0)
                for t, won in (("melt", True), ("boil", False), ("boil", True))]
    table = success_table(outcomes)
    assert [row.subtask for row in table.by_subtask] == list(TASK_TYPES)
    assert table.by_subtask[0].success_rate == 0.5 and table.overall.wins == 2
    assert table.to_metrics()["val/melt/metrics/success_rate"] == 1.0
    with pytest.raises(UnknownNameError):
        success_table([*outcomes, EpisodeOutcome("/g", "pick_and_place_simple", "pick", True, 1, "won")])


def test_prepare_data_writes_small_balanced_sciworld_lists(tmp_path, capsys):
    """`--per-task-type N` keeps the first N variations of each task type (the tiny recipe's 6-variation
    validation list); the rows name ScienceWorld's split and task type. Starts a JVM (~1 s)."""
    from strata.cli import main
    from strata.envs.task_list import read_task_list

    assert main(["prepare-data", "--env", "sciworld", "--task-types", "find-plant,boil", "--per-task-type", "2",
                 "--splits", "valid", "--out", str(tmp_path)]) == 0
    tasks = read_task_list(tmp_path / "valid.parquet")
    assert [t.task_type for t in tasks] == ["boil", "boil", "find-plant", "find-plant"]  # the simulator's order
    assert all(t.split == "valid" and t.subtask == t.task_type for t in tasks)
    with pytest.raises(SystemExit) as usage:  # argparse's one-line usage error
        main(["prepare-data", "--env", "sciworld", "--per-task-type", "0", "--out", str(tmp_path)])
    assert usage.value.code == 2 and "--per-task-type: expected an integer >= 1, got 0" in capsys.readouterr().err


def test_the_default_task_set_is_agentgym_s():
    """AgentGym's ScienceWorld server (which the StraTA code runs) skips task ids 5-1, 5-2, 9-1, 9-2, 9-3, 10-1 and
    10-2; these are their names in scienceworld's task list, and the other 23 task types stay, in order."""
    from strata.envs.sciworld.tasks import DEFAULT_TASK_SET, TASK_SETS, resolve_task_types

    assert DEFAULT_TASK_SET == "agentgym"
    excluded = [name for name in TASK_TYPES if name not in TASK_SETS["agentgym"]]
    assert excluded == ["grow-plant", "grow-fruit", "inclined-plane-determine-angle",
                        "inclined-plane-friction-named-surfaces", "inclined-plane-friction-unnamed-surfaces",
                        "mendelian-genetics-known-plant", "mendelian-genetics-unknown-plant"]
    assert [TASK_TYPES.index(name) for name in excluded] == [15, 16, 25, 26, 27, 28, 29]  # ids 5-1 ... 10-2
    assert len(TASK_SETS["agentgym"]) == 23 and TASK_SETS["all"] == TASK_TYPES
    assert resolve_task_types(None) == TASK_SETS["agentgym"]
    assert resolve_task_types(["grow-plant"]) == ("grow-plant",)  # named task types override the set
    with pytest.raises(UnknownNameError, match="unknown ScienceWorld task set 'paper'; known: agentgym, all"):
        resolve_task_types(None, "paper")


def test_prepare_data_takes_agentgym_s_task_types_unless_told_all(tmp_path, capsys):
    from strata.cli import main
    from strata.envs.task_list import read_task_list

    for task_set, count in ((None, 23), ("all", 30)):
        out = tmp_path / str(task_set)
        args = ["prepare-data", "--env", "sciworld", "--per-task-type", "1", "--splits", "valid", "--out", str(out)]
        assert main(args + (["--task-set", task_set] if task_set else [])) == 0
        assert len({t.task_type for t in read_task_list(out / "valid.parquet")}) == count
    assert main(["prepare-data", "--bundled", "--task-set", "all", "--out", str(tmp_path / "alfworld")]) == 2
    assert "--task-set selects ScienceWorld task types" in capsys.readouterr().err
