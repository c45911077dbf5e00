"""WebShop goals as `strata.envs.tasks.Task` records, without loading the catalogue.

A WebShop goal has no file: a `Task` names it with a game id, ``webshop:<goals>:<index>:<catalogue folder>``
(``goals`` human or synthetic, ``index`` its position in WebShop's goal order), in the field that holds an
ALFWorld game's file, so task lists, the pool's start requests and episode records carry it unchanged. The
folder comes last, so it may hold any character. Every goal's task type (and subtask) is ``webshop``: the
paper and its peers report one WebShop score.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strata.envs.registry import About
from strata.envs.tasks import GameIds, Task, check_split_in

GAME_IDS = GameIds("webshop:", ("goals", "index", "folder"), "WebShop")
TASK_TYPE = "webshop"
TASK_TYPES: tuple[str, ...] = (TASK_TYPE,)
GOAL_KINDS = ("synthetic", "human")
DEFAULT_GOALS = "synthetic"  # what verl-agent (human_goals: False) and AgentGym train and test on

GoalRanges = dict[str, tuple[int, int | None]]  # each split's goal indices [start, stop) in WebShop's goal order
# The 1,000-product catalogue's split, verl-agent's and AgentGym's: goals 0-499 test, the rest train (no valid).
SMALL_CATALOGUE_RANGES: GoalRanges = {"train": (500, None), "test": (0, 500)}
# WebShop's own split (its baseline_models), for the human goals of the full catalogue only: on the small files
# goal i is another goal.
FULL_HUMAN_RANGES: GoalRanges = {"train": (1500, None), "valid": (500, 1500), "test": (0, 500)}
SPLITS: tuple[str, ...] = tuple(FULL_HUMAN_RANGES)  # every split some catalogue has


def goal_ranges(goals: str, full_catalogue: bool) -> GoalRanges:
    """The split of a catalogue's goals: WebShop's own for the human goals of the full catalogue, otherwise the
    peers' (`SMALL_CATALOGUE_RANGES`)."""
    return FULL_HUMAN_RANGES if goals == "human" and full_catalogue else SMALL_CATALOGUE_RANGES


def describe_ranges(ranges: GoalRanges) -> str:
    """``train 500-, test 0-499``: a split's goal indices, for messages and evaluation output."""
    return ", ".join(f"{name} {start}-{'' if stop is None else stop - 1}" for name, (start, stop) in ranges.items())
DEFAULT_MAX_STEPS = 15  # the horizon verl-agent's WebShop recipes use (env.max_steps=15)


def check_split(split: str) -> str:
    return check_split_in(split, SPLITS, "WebShop")


def game_id(folder: str | Path, goals: str, index: int) -> str:
    if index < 0:
        raise ValueError(f"goal index must be >= 0, got {index}")
    return GAME_IDS.make(goals, index, Path(folder).resolve())


def parse_game_id(game: str) -> tuple[str, str, int]:
    """(catalogue folder, goals, goal index) of a game id; raises `ValueError` naming a malformed one."""
    goals, index, folder = GAME_IDS.parse(game, digits=(1,))
    return folder, goals, int(index)


# --- What a `strata.envs.tasks.Task` of WebShop asks (`strata.envs.registry`) ---
HAS_GAME_FILE = False  # a game id, not a file
SUBTASKS = TASK_TYPES  # each task type is its own subtask


def check_task(task: Task) -> None:
    check_split(task.split)
    parse_game_id(task.game_file)


def task_name(task: Task) -> str:
    """``<goals>/<goal index>``."""
    _, goals, index = parse_game_id(task.game_file)
    return f"{goals}/{index}"


def task_subtask(task: Task) -> str:
    return task.task_type


def task_row(task: Task) -> tuple[str, dict[str, Any]]:
    """The task list's description names the goal (its instruction needs the catalogue loaded)."""
    return f"WebShop goal {task_name(task)}", {}


ABOUT = About("WebShop", "WebShop online shopping", "webshop",
              "WebShop catalogue (the 1,000-product or full set, human or synthetic goals) and the spaCy model of "
              "the reward's title nouns")
