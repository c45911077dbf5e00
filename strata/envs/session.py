"""The rules of an episode that every environment shares, written once: the step cap, action normalisation, and how
an episode ends.

Every ``step`` call counts, admitted or not, as in ALFWorld's gym wrapper (``max_episode_steps``). An episode ends
when it is won, when it is lost (ScienceWorld's negative score, WebShop's purchase of the wrong item, the
magic-word game's wrong word), or at the step cap; its end reason says which. With ``normalize_actions`` an action
first loses what only the formatting adds (`strata.envs.actions.normalize_command`: case, quotes, a bullet, final
punctuation); an environment that lists its commands maps it to the listed command it means instead
(`strata.envs.actions.match_command`). What differs between environments is only how a game starts, what a
command does, and what the model may do next: an `EpisodeSession` subclass's `begin`, `apply` and `commands_after`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from strata.envs.actions import normalize_command
from strata.envs.records import REASON_LOST, REASON_STEP_LIMIT, REASON_WON, EpisodeStart, StepResult

logger = logging.getLogger(__name__)

DEFAULT_MAX_STEPS = 50  # the StraTA paper's episode horizon H (ALFWorld's, ScienceWorld's); WebShop has its own


@dataclass(frozen=True)
class Outcome:
    """What one command did, as the environment tells it.

    Args:
        observation: the environment's answer.
        won: the goal holds now.
        lost: the game ended without the goal (no later step can win it).
        admissible: the environment accepted the command.
        score: its own progress score after the command, or ``None`` where it has only won / not won.
    """

    observation: str
    won: bool
    lost: bool
    admissible: bool
    score: float | None = None


class EpisodeSession:
    """One episode on an engine: `start` a game, then `step` until won, lost or ``max_steps`` steps.

    ``running`` is true between `start` and the step that ends the episode; `step` refuses otherwise. A subclass
    says how its environment starts a game (`begin`), what a command does (`apply`), what may follow
    (`commands_after`) and, where the environment lists its commands, how an action maps to one (`command_for`).
    """

    def __init__(self, engine: Any, max_steps: int, normalize_actions: bool = True) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.engine = engine
        self.max_steps = max_steps
        self.normalize_actions = normalize_actions
        self.admissible_commands: tuple[str, ...] = ()
        self.num_steps = 0
        self.won = False
        self.lost = False
        self.done = False
        self.running = False
        self.score: float | None = None

    @property
    def game_file(self) -> str | None:
        return self.engine.game_file

    def begin(self, game_file: str, with_walkthrough: bool) -> EpisodeStart:
        """Start ``game_file`` on the engine; the walkthrough only when asked (it may cost a planner call)."""
        raise NotImplementedError

    def apply(self, command: str) -> Outcome:
        """Send ``command`` to the engine (``self.admissible_commands`` still lists the state it is issued in)."""
        raise NotImplementedError

    def commands_after(self, observation: str) -> tuple[str, ...]:
        """What the model is shown it may do after a step (``self.done`` already says whether the episode ended)."""
        raise NotImplementedError

    def command_for(self, action: str) -> str:
        """The command sent for ``action``: without what only the formatting adds, when normalising."""
        return (normalize_command(action) or action) if self.normalize_actions else action

    def start(self, game_file: str, with_walkthrough: bool = False) -> EpisodeStart:
        began = time.perf_counter()
        start = self.begin(game_file, with_walkthrough)
        logger.debug("started %s in %.2fs", game_file, time.perf_counter() - began)
        self.num_steps, self.won, self.lost, self.done, self.running = 0, False, False, False, True
        self.score = start.score
        self.admissible_commands = start.admissible_commands
        return start

    def step(self, action: str) -> StepResult:
        if not self.running:
            state = "a finished episode" if self.done else "no started episode"
            raise RuntimeError(f"step({action!r}) on {state} of {self.game_file}; start a new episode")
        command = self.command_for(action)
        outcome = self.apply(command)
        self.num_steps += 1
        self.won, self.lost, self.score = outcome.won, outcome.lost, outcome.score
        self.done = self.won or self.lost or self.num_steps >= self.max_steps
        self.running = not self.done
        self.admissible_commands = self.commands_after(outcome.observation)
        return StepResult(
            observation=outcome.observation,
            won=self.won,
            done=self.done,
            admissible_commands=self.admissible_commands,
            command=command,
            admissible=outcome.admissible,
            score=outcome.score,
        )

    @property
    def end_reason(self) -> str:
        return REASON_WON if self.won else REASON_LOST if self.lost else REASON_STEP_LIMIT
