"""ScienceWorld's task types, splits and game ids, without starting the simulator.

A ScienceWorld game is a (task type, variation) pair. It has no file, so a `strata.envs.tasks.Task` names it
with a game id, ``sciworld:<task type>:<variation>``, in the field that holds an ALFWorld game's file: the
task lists, the pool's start requests and the episode records then carry it unchanged. The task type is the
subtask of every metric and table (``boil``, ``find-animal``, ...).

Splits: ScienceWorld divides each task type's variations into train, dev and test
(``get_variations_train/dev/test``). Here they are ``train``, ``valid`` (= dev: what validation during
training uses) and ``test`` (held out for the final evaluation).
"""

from __future__ import annotations

from typing import Any

from strata.envs.errors import UnknownNameError
from strata.envs.registry import About
from strata.envs.tasks import GameIds, Task, check_split_in

GAME_IDS = GameIds("sciworld:", ("task type", "variation"), "ScienceWorld")

# The 30 task types in scienceworld 1.2.3's order (constants.ID2TASK, task ids 1-1 ... 10-2).
TASK_TYPES: tuple[str, ...] = (
    "boil",
    "melt",
    "freeze",
    "change-the-state-of-matter-of",
    "use-thermometer",
    "measure-melting-point-known-substance",
    "measure-melting-point-unknown-substance",
    "power-component",
    "power-component-renewable-vs-nonrenewable-energy",
    "test-conductivity",
    "test-conductivity-of-unknown-substances",
    "find-living-thing",
    "find-non-living-thing",
    "find-plant",
    "find-animal",
    "grow-plant",
    "grow-fruit",
    "chemistry-mix",
    "chemistry-mix-paint-secondary-color",
    "chemistry-mix-paint-tertiary-color",
    "lifespan-longest-lived",
    "lifespan-shortest-lived",
    "lifespan-longest-lived-then-shortest-lived",
    "identify-life-stages-1",
    "identify-life-stages-2",
    "inclined-plane-determine-angle",
    "inclined-plane-friction-named-surfaces",
    "inclined-plane-friction-unnamed-surfaces",
    "mendelian-genetics-known-plant",
    "mendelian-genetics-unknown-plant",
)

# The task types AgentGym's ScienceWorld server leaves out (task ids 5-1, 5-2, 9-1, 9-2, 9-3, 10-1, 10-2: the two
# growing tasks, the three inclined-plane tasks and the two Mendelian-genetics tasks): its `exceptions` set in
# agentenv-sciworld/agentenv_sciworld/environment.py (WooooDyy/AgentGym @ 3ef9235), the environment the StraTA
# code runs ScienceWorld through. The names are scienceworld's own for those ids (tasks.json).
AGENTGYM_EXCLUDED: tuple[str, ...] = (
    "grow-plant", "grow-fruit",
    "inclined-plane-determine-angle", "inclined-plane-friction-named-surfaces",
    "inclined-plane-friction-unnamed-surfaces",
    "mendelian-genetics-known-plant", "mendelian-genetics-unknown-plant",
)
# Named selections of task types: ``agentgym`` (the default: the 23 task types the upstream code trains and
# evaluates on) or ``all`` 30.
TASK_SETS: dict[str, tuple[str, ...]] = {
    "agentgym": tuple(name for name in TASK_TYPES if name not in AGENTGYM_EXCLUDED),
    "all": TASK_TYPES,
}
DEFAULT_TASK_SET = "agentgym"

# Our split name -> the simulator's (Java) method that lists a loaded task type's variations of it ("valid" is
# ScienceWorld's dev split).
SPLIT_METHODS: dict[str, str] = {
    "train": "getVariationsTrain",
    "valid": "getVariationsDev",
    "test": "getVariationsTest",
}
SPLITS: tuple[str, ...] = tuple(SPLIT_METHODS)


def check_task_type(name: str) -> str:
    if name not in TASK_TYPES:
        raise UnknownNameError(f"unknown ScienceWorld task type {name!r}; known: {', '.join(TASK_TYPES)}")
    return name


def check_split(split: str) -> str:
    return check_split_in(split, SPLITS, "ScienceWorld", " (valid = ScienceWorld's dev)")


def resolve_task_types(names: list[str] | tuple[str, ...] | None,
                       task_set: str = DEFAULT_TASK_SET) -> tuple[str, ...]:
    """Task types selected by name, in `TASK_TYPES` order; ``None`` or empty selects ``task_set`` (`TASK_SETS`)."""
    if not names:
        if task_set not in TASK_SETS:
            raise UnknownNameError(f"unknown ScienceWorld task set {task_set!r}; known: {', '.join(TASK_SETS)}")
        return TASK_SETS[task_set]
    selected = {check_task_type(name.strip()) for name in names if name.strip()}
    return tuple(name for name in TASK_TYPES if name in selected)


def game_id(task_type: str, variation: int) -> str:
    """``sciworld:<task type>:<variation>``, the game locator a `Task` carries in ``game_file``."""
    if variation < 0:
        raise ValueError(f"variation must be >= 0, got {variation}")
    return GAME_IDS.make(check_task_type(task_type), variation)


def parse_game_id(game: str) -> tuple[str, int]:
    """(task type, variation) of a game id; raises `ValueError` naming the id when it is malformed."""
    task_type, variation = GAME_IDS.parse(game, digits=(1,))
    return check_task_type(task_type), int(variation)


# --- What a `strata.envs.tasks.Task` of ScienceWorld asks (`strata.envs.registry`) ---
HAS_GAME_FILE = False  # a game id, not a file
SUBTASKS = TASK_TYPES  # each task type is its own subtask


def check_task(task: Task) -> None:
    check_split(task.split)
    if parse_game_id(task.game_file)[0] != task.task_type:
        raise ValueError(f"Task.game_file {task.game_file!r} is not a game of task type {task.task_type!r}")


def task_name(task: Task) -> str:
    """``<task type>/<variation>``."""
    return "/".join(map(str, parse_game_id(task.game_file)))


def task_subtask(task: Task) -> str:
    return task.task_type


def task_row(task: Task) -> tuple[str, dict[str, Any]]:
    """The task list's description: task type and variation (the goal sentence exists only once the simulator has
    loaded the variation), and the variation in ``extra_info``."""
    variation = parse_game_id(task.game_file)[1]
    return f"ScienceWorld task {task.task_type}, variation {variation}", {"variation": variation}


def game_fingerprint(task: Task, memo: dict) -> str:
    return task.game_file  # task type and variation: the simulator's own


ABOUT = About("ScienceWorld", "ScienceWorld science experiments", "scienceworld",
              "ScienceWorld version: task variations and their train/dev/test split are the simulator's own")
