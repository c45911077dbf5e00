"""The `Task` record: one game of any registered environment (`strata.envs.registry`).

An ALFWorld game (`strata.envs.alfworld.tasks`: its task type is one of ALFWorld's six, its ``game_file`` the
game's file), a ScienceWorld game (`strata.envs.sciworld.tasks`: its task type is one of ScienceWorld's 30, which
is also its subtask, and its ``game_file`` is a game id), a WebShop goal (`strata.envs.webshop.tasks`), or one of
an environment registered at run time. Each environment's task rules say what a valid task, its name and its
subtask are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strata.envs.errors import UnknownNameError
from strata.envs.registry import environment_of_task_type


@dataclass(frozen=True)
class Task:
    """One game to play, of any registered environment: everything the trainer and the pool need to start an
    episode. The task type says which environment (`strata.envs.registry`), and that environment's task rules say
    what a valid task, its name and its subtask are.

    Args:
        game_file: absolute path of the game's file (ALFWorld: ``game.tw-pddl``), or a game id where the
            environment has no file (ScienceWorld: ``sciworld:<task type>:<variation>``, WebShop:
            ``webshop:<goals>:<index>:<folder>``).
        task_type: the environment's task type (ALFWorld: one of its six; ScienceWorld's; ``webshop``).
        split: the split the game was read from (ALFWorld: train, valid_seen, valid_unseen; ScienceWorld and
            WebShop: train, valid, test).
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


def check_split_in(split: str, splits: Sequence[str], environment: str = "", note: str = "") -> str:
    """``split`` if it is one of ``splits``, else `UnknownNameError` naming the known ones (``environment``: whose
    splits, for the message; ``note``: what a reader may need to know of them)."""
    if split not in splits:
        whose = f"{environment} " if environment else ""
        raise UnknownNameError(f"unknown {whose}split {split!r}; known splits: {', '.join(splits)}{note}")
    return split


@dataclass(frozen=True)
class GameIds:
    """Game ids ``<prefix><field>:<field>...`` of an environment whose games have no file: what its `Task`
    carries in ``game_file``. The last field may itself hold ``:`` (a folder)."""

    prefix: str
    fields: tuple[str, ...]
    environment: str

    def make(self, *values: object) -> str:
        return self.prefix + ":".join(str(value) for value in values)

    def matches(self, game: str) -> bool:
        return game.startswith(self.prefix)

    def parse(self, game: str, digits: Sequence[int] = ()) -> list[str]:
        """The fields of ``game``, as written; `ValueError` naming the id and the format when it is malformed (a
        field missing or empty, or one of the ``digits`` positions not a non-negative integer)."""
        parts = game.removeprefix(self.prefix).split(":", len(self.fields) - 1)
        if (not self.matches(game) or len(parts) != len(self.fields) or not all(parts)
                or not all(parts[i].isdigit() for i in digits)):
            shape = ":".join(f"<{field}>" for field in self.fields)
            raise ValueError(f"{game!r} is not a {self.environment} game id ({self.prefix}{shape})")
        return parts
