"""ALFWorld on the real engine: games, splits, task lists, the worker pool, metrics, the offline generator.

Nothing here imports verl or Ray. Importing this package does not import the engine (textworld,
alfworld) either: worker processes and the generator load it when they need it.

Public API:
    tasks        Task, TASK_TYPES, SUBTASKS, SPLITS, subtask_of, resolve_task_types
    discovery    load_split / scan_split over ``<data>/json_2.1.1/<split>/<task>/trial_*/``
    task_list    write_task_list / read_task_list (the trainer's parquet files)
    pool         EnvPool, PooledEpisode (async episodes in worker processes)
    records      StepResult, EpisodeStart, EpisodeOutcome
    metrics      success_table (overall and per subtask), end_reasons
    session      EpisodeSession (the step cap, normalisation and end reasons every environment's episode shares)
    engine       AlfworldEngine, GameSession (one in-process game; what workers run)
    actions      match_command (an action as people write it -> the admissible command it means)
    gen          sample_spec, write_game, generate_split (offline game generator)
    bundled      bundled_data_path (the small generated set for tests and the demo)
"""

from strata.envs.bundled import bundled_data_path
from strata.envs.discovery import load_split, scan_split
from strata.envs.errors import (
    AlfworldDataError,
    EnvError,
    GameFileError,
    TaskListError,
    UnknownNameError,
    UnwinnableGameError,
)
from strata.envs.metrics import SuccessTable, end_reasons, success_table
from strata.envs.pool import EnvPool, PooledEpisode
from strata.envs.records import EpisodeOutcome, EpisodeStart, StepResult
from strata.envs.task_list import read_task_list, write_task_list
from strata.envs.tasks import SPLITS, SUBTASKS, TASK_TYPES, Task, resolve_task_types, subtask_of

__all__ = [
    "SPLITS",
    "SUBTASKS",
    "TASK_TYPES",
    "AlfworldDataError",
    "EnvError",
    "EnvPool",
    "EpisodeOutcome",
    "EpisodeStart",
    "GameFileError",
    "PooledEpisode",
    "StepResult",
    "SuccessTable",
    "Task",
    "TaskListError",
    "UnknownNameError",
    "UnwinnableGameError",
    "bundled_data_path",
    "end_reasons",
    "load_split",
    "read_task_list",
    "resolve_task_types",
    "scan_split",
    "subtask_of",
    "success_table",
    "write_task_list",
]
