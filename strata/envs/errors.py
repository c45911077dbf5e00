"""Errors of the environment layer.

Each one carries a single line that names the file or name at fault and what to do about it, so a user
who sees only the last line of a traceback (or the CLI's one-line report) can act on it.
"""

from __future__ import annotations


class EnvError(Exception):
    """Base class: anything the environment layer rejects on purpose."""


class UnknownNameError(EnvError, ValueError):
    """A split, task type or subtask name that is not one of the known ones (the message lists them)."""


class AlfworldDataError(EnvError):
    """The ALFWorld data folder is missing, empty or incomplete (the message says what to run)."""


class GameFileError(EnvError):
    """One game's files (``traj_data.json`` / ``game.tw-pddl``) cannot be read or are malformed."""


class UnwinnableGameError(EnvError):
    """A generated game the planner cannot win, or whose plan does not win when replayed."""


class TaskListError(EnvError):
    """A task-list parquet file that is missing or lacks the columns the trainer reads."""


class CatalogError(EnvError):
    """A WebShop data file that cannot be read as the JSON WebShop writes (empty, truncated, another format)."""


class EngineLostError(EnvError):
    """The process behind an engine died (ScienceWorld's JVM): its worker exits so the pool replaces it."""
