"""ALFWorld's task types, the six StraTA subtasks, its splits, and what a `Task` of ALFWorld must be.

ALFWorld names its six task types after ALFRED's goal library; the StraTA paper (and every ALFWorld table)
reports them under short subtask names. The mapping lives here once; every other module asks it. The task rules
at the end (`check_task`, `task_name`, `task_subtask`, `HAS_GAME_FILE`) are what the registry
(`strata.envs.registry`) asks of ALFWorld for a `strata.envs.tasks.Task`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from strata.envs.errors import UnknownNameError
from strata.envs.registry import About
from strata.envs.tasks import Task, check_split_in

# ALFWorld task type -> StraTA subtask, in the order ALFWorld numbers them (alfred_tw_env.TASK_TYPES 1..6).
TASK_TYPE_TO_SUBTASK: dict[str, str] = {
    "pick_and_place_simple": "pick",
    "look_at_obj_in_light": "look",
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "heat",
    "pick_cool_then_place_in_recep": "cool",
    "pick_two_obj_and_place": "pick2",
}
SUBTASK_TO_TASK_TYPE: dict[str, str] = {sub: tt for tt, sub in TASK_TYPE_TO_SUBTASK.items()}
TASK_TYPES: tuple[str, ...] = tuple(TASK_TYPE_TO_SUBTASK)
SUBTASKS: tuple[str, ...] = tuple(SUBTASK_TO_TASK_TYPE)

# The splits of ALFWorld's `json_2.1.1/` folder: training games, and the in- / out-of-distribution
# evaluation sets (140 and 134 games in the released data).
SPLITS: tuple[str, ...] = ("train", "valid_seen", "valid_unseen")
HAS_GAME_FILE = True  # a task's game_file is the game's file on disk


def subtask_of(task_type: str) -> str:
    """The StraTA subtask name (pick, look, clean, heat, cool, pick2) of an ALFWorld task type."""
    try:
        return TASK_TYPE_TO_SUBTASK[task_type]
    except KeyError:
        raise UnknownNameError(
            f"unknown ALFWorld task type {task_type!r}; known task types: {', '.join(TASK_TYPES)}"
        ) from None


def resolve_task_type(name: str) -> str:
    """Accept either an ALFWorld task type or a subtask name and return the task type."""
    if name in TASK_TYPE_TO_SUBTASK:
        return name
    if name in SUBTASK_TO_TASK_TYPE:
        return SUBTASK_TO_TASK_TYPE[name]
    raise UnknownNameError(
        f"unknown task type {name!r}; use a subtask ({', '.join(SUBTASKS)}) "
        f"or an ALFWorld task type ({', '.join(TASK_TYPES)})"
    )


def resolve_task_types(names: Iterable[str] | None) -> tuple[str, ...]:
    """Task types selected by name (subtask or task type); ``None`` or empty selects all six."""
    if not names:
        return TASK_TYPES
    selected = {resolve_task_type(name.strip()) for name in names if name.strip()}
    return tuple(tt for tt in TASK_TYPES if tt in selected)


def check_split(split: str) -> str:
    """Return ``split`` if it is one of `SPLITS`, else raise with the valid names."""
    return check_split_in(split, SPLITS)


# --- What a `Task` of ALFWorld asks (`strata.envs.registry`) ---


def check_task(task: Task) -> None:
    subtask_of(task.task_type)
    check_split(task.split)
    if not Path(task.game_file).is_absolute():
        raise ValueError(f"Task.game_file must be an absolute path, got {task.game_file!r}")


def task_name(task: Task) -> str:
    trial = Path(task.game_file).parent
    return f"{trial.parent.name}/{trial.name}"


def task_subtask(task: Task) -> str:
    return TASK_TYPE_TO_SUBTASK[task.task_type]


ABOUT = About("ALFWorld", "ALFWorld text games", "alfworld",
              "ALFWorld data version: the command grammar differs between data releases (`put X in/on Y` vs "
              "`move X to Y`)")
