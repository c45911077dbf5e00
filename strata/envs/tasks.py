"""ALFWorld task types, the six StraTA subtasks, splits, and the `Task` record.

ALFWorld names its six task types after ALFRED's goal library; the StraTA paper (and every ALFWorld table)
reports them under short subtask names. The mapping lives here once; every other module asks it.

A `Task` is a ScienceWorld game too (`strata.envs.sciworld.tasks`): its task type is one of ScienceWorld's
30, which is also its subtask, and its ``game_file`` is a game id (``sciworld:<task type>:<variation>``); or a
WebShop goal (`strata.envs.webshop.tasks`): task type ``webshop``, game id ``webshop:<goals>:<index>:<folder>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from strata.envs.errors import UnknownNameError
from strata.envs.sciworld import tasks as sciworld_tasks
from strata.envs.webshop import tasks as webshop_tasks

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
# Every split a command may name: ALFWorld's, then ScienceWorld's and WebShop's (train, valid, test), once each.
ALL_SPLITS: tuple[str, ...] = tuple(dict.fromkeys(SPLITS + sciworld_tasks.SPLITS + webshop_tasks.SPLITS))
# Each environment's subtasks, in the order its tables list them.
ENVIRONMENT_SUBTASKS: dict[str, tuple[str, ...]] = {
    "alfworld": SUBTASKS, "sciworld": sciworld_tasks.TASK_TYPES, "webshop": webshop_tasks.TASK_TYPES,
}


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
    """One ALFWorld or ScienceWorld game to play: everything the trainer and the pool need to start an episode.

    Args:
        game_file: absolute path of the game's ``game.tw-pddl``; for ScienceWorld and WebShop its game id.
        task_type: ALFWorld task type (one of `TASK_TYPES`), ScienceWorld task type, or ``webshop``.
        split: the split the game was read from (one of `SPLITS`; ScienceWorld and WebShop: train, valid, test).
        index: position of the task in its split's sorted list, stable across runs.
    """

    game_file: str
    task_type: str
    split: str
    index: int = 0

    def __post_init__(self) -> None:
        if self.environment == "webshop":
            webshop_tasks.check_split(self.split)
            webshop_tasks.parse_game_id(self.game_file)
            return
        if self.is_sciworld:
            sciworld_tasks.check_split(self.split)
            if sciworld_tasks.parse_game_id(self.game_file)[0] != self.task_type:
                raise ValueError(f"Task.game_file {self.game_file!r} is not a game of task type {self.task_type!r}")
            return
        subtask_of(self.task_type)
        check_split(self.split)
        if not Path(self.game_file).is_absolute():
            raise ValueError(f"Task.game_file must be an absolute path, got {self.game_file!r}")

    @property
    def environment(self) -> str:
        """``alfworld``, ``sciworld`` or ``webshop``: the pool engine that plays this task."""
        if self.task_type == webshop_tasks.TASK_TYPE:
            return "webshop"
        return "sciworld" if self.task_type in sciworld_tasks.TASK_TYPES else "alfworld"

    @property
    def is_sciworld(self) -> bool:
        return self.environment == "sciworld"

    @property
    def has_game_file(self) -> bool:
        """Whether ``game_file`` is a file (ALFWorld) rather than a game id."""
        return self.environment == "alfworld"

    @property
    def subtask(self) -> str:
        """Short StraTA subtask name: pick, look, clean, heat, cool or pick2; ScienceWorld, WebShop: the task type."""
        return TASK_TYPE_TO_SUBTASK[self.task_type] if self.has_game_file else self.task_type

    @property
    def name(self) -> str:
        """``<task folder>/<trial folder>``, the way ALFWorld identifies a game; ``<task type>/<variation>``;
        ``<goals>/<goal index>``."""
        if self.environment == "webshop":
            _, goals, index = webshop_tasks.parse_game_id(self.game_file)
            return f"{goals}/{index}"
        if self.is_sciworld:
            return "/".join(map(str, sciworld_tasks.parse_game_id(self.game_file)))
        trial = Path(self.game_file).parent
        return f"{trial.parent.name}/{trial.name}"
