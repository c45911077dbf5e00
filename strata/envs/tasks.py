"""ALFWorld task types, the six StraTA subtasks, splits, and the `Task` record.

ALFWorld names its six task types after ALFRED's goal library; the StraTA paper (and every ALFWorld table)
reports them under short subtask names. The mapping lives here once; every other module asks it.

A `Task` is a game of any registered environment (`strata.envs.registry`): a ScienceWorld game
(`strata.envs.sciworld.tasks`: its task type is one of ScienceWorld's 30, which is also its subtask, and its
``game_file`` is a game id), a WebShop goal (`strata.envs.webshop.tasks`), or one of an environment registered at
run time. ALFWorld's task rules (what the registry asks of a task: `check_task`, `task_name`, `task_subtask`) are
at the end of this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strata.envs.errors import UnknownNameError
from strata.envs.registry import environment_of_task_type

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
    if split not in SPLITS:
        raise UnknownNameError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
    return split


@dataclass(frozen=True)
class Task:
    """One game to play, of any registered environment: everything the trainer and the pool need to start an
    episode. The task type says which environment (`strata.envs.registry`), and that environment's task rules say
    what a valid task, its name and its subtask are.

    Args:
        game_file: absolute path of the game's file (ALFWorld: ``game.tw-pddl``), or a game id where the
            environment has no file (ScienceWorld: ``sciworld:<task type>:<variation>``, WebShop:
            ``webshop:<goals>:<index>:<folder>``).
        task_type: the environment's task type (ALFWorld: one of `TASK_TYPES`; ScienceWorld's; ``webshop``).
        split: the split the game was read from (ALFWorld: one of `SPLITS`; ScienceWorld and WebShop: train,
            valid, test).
        index: position of the task in its split's sorted list, stable across runs.
    """

    game_file: str
    task_type: str
    split: str
    index: int = 0

    def __post_init__(self) -> None:
        self._rules.check_task(self)

    @property
    def _rules(self) -> Any:
        return environment_of_task_type(self.task_type).part("task_rules")

    @property
    def environment(self) -> str:
        """The registered name of the environment that plays this task (``alfworld``, ``sciworld``, ...)."""
        return environment_of_task_type(self.task_type).name

    @property
    def has_game_file(self) -> bool:
        """Whether ``game_file`` is a file (ALFWorld) rather than a game id."""
        return self._rules.HAS_GAME_FILE

    @property
    def subtask(self) -> str:
        """Short StraTA subtask name: pick, look, clean, heat, cool or pick2; ScienceWorld, WebShop: the task type."""
        return self._rules.task_subtask(self)

    @property
    def name(self) -> str:
        """``<task folder>/<trial folder>``, the way ALFWorld identifies a game; ``<task type>/<variation>``;
        ``<goals>/<goal index>``."""
        return self._rules.task_name(self)


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
