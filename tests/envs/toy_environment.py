"""A fifth environment in one file, as docs/adding-an-environment.md describes: a counting game whose game id
names the number to reach. tests/envs/test_registry.py puts it on the path as ``counting_game`` and registers it."""

from __future__ import annotations

from typing import Any

from strata.envs.records import EpisodeStart
from strata.envs.session import EpisodeSession, Outcome
from strata.envs.tasks import GameIds, check_split_in

GAME_IDS = GameIds("count:", ("target",), "counting")
TASK_TYPES = ("count-up",)
SUBTASKS = TASK_TYPES
SPLITS = ("train", "test")
HAS_GAME_FILE = False
MAX_STEPS = 10


def game_id(target: int) -> str:
    return GAME_IDS.make(target)


def target_of(game: str) -> int:
    [target] = GAME_IDS.parse(game, digits=(0,))
    return int(target)


class CountingEngine:
    """One counter; ``say N`` is admitted when N is the next number, and reaching the target wins."""

    def __init__(self) -> None:
        self.game_file: str | None = None
        self.value = 0

    def start(self, game_file: str, with_walkthrough: bool = False) -> EpisodeStart:
        target = target_of(game_file)
        self.game_file, self.value = game_file, 0
        plan = tuple(f"say {n}" for n in range(1, target + 1)) if with_walkthrough else None
        return EpisodeStart(f"count to {target}", "You are at 0.", ("say 1", "say 0"), walkthrough=plan)

    def unload(self) -> None:
        self.game_file = None

    def say(self, command: str) -> bool:
        if command != f"say {self.value + 1}":
            return False
        self.value += 1
        return True


class CountingSession(EpisodeSession):
    def begin(self, game_file: str, with_walkthrough: bool) -> EpisodeStart:
        return self.engine.start(game_file, with_walkthrough)

    def apply(self, command: str) -> Outcome:
        admitted = self.engine.say(command)
        won = self.engine.value == target_of(self.engine.game_file)
        return Outcome(f"You are at {self.engine.value}.", won=won, lost=False, admissible=admitted)

    def commands_after(self, observation: str) -> tuple[str, ...]:
        return () if self.done else (f"say {self.engine.value + 1}", f"say {self.engine.value}")


def check_task(task: Any) -> None:
    check_split_in(task.split, SPLITS, "counting")
    target_of(task.game_file)


def task_name(task: Any) -> str:
    return f"to-{target_of(task.game_file)}"


def task_subtask(task: Any) -> str:
    return task.task_type


def task_row(task: Any) -> tuple[str, dict[str, Any]]:
    return f"count to {target_of(task.game_file)}", {"target": target_of(task.game_file)}


def game_fingerprint(task: Any, memo: dict) -> str:
    return task.game_file
