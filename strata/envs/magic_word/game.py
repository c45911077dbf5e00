"""The magic-word game: a one-decision toy environment for the learning check.

Why it exists: the learning check (design/TESTING.md) must show, end to end through verl's trainer on a
CPU, that StraTA's advantages have the right sign and land on the right tokens. ALFWorld is far beyond a
tiny model, so its success rate stays at 0 and gives no signal. Here the starting policy already wins
sometimes, and whether it wins is decided by the strategy:

    observation:  "On a sign you read 4 words: river, apple, candle, tiger.
                   Your task is to: say the magic word."
    admissible:   "say river", "say apple", "say candle", "say tiger"
    won        iff the action is "say <magic word>".

Every game has the same magic word; only the order of the words differs between games. A policy that
picks a word uniformly wins 1/K of the games, and one that learned to name the magic word in its
strategy (and to follow its strategy) wins all of them, so the validation success rate moves only if
the advantages push the right tokens in the right direction.

Saying any listed word ends the episode (won or lost); any other command is answered "Nothing happens."
and costs a step, as in ALFWorld, until ``max_steps``. As in the ALFWorld pool, ``normalize_actions`` maps
an action to the admissible command it means first (``Say candle.`` -> ``say candle``).

A game is a small JSON file, so the task lists the trainer reads (`strata.envs.task_list`) name real
files, exactly as for ALFWorld. The file keeps the goal sentence in a ``grammar`` field in ALFWorld's
own ``"Your task is to: ..."`` form, which is where the task-list writer reads it from. Magic-word tasks
use the ALFWorld task type ``pick_and_place_simple``, so the metrics count them under the subtask
``pick``. The game runs in-process (no worker pool): a step is a string comparison.

`write_prompt_preset` writes a prompt preset for the game (``strata.prompts.preset=<file>``): ALFWorld's
templates with short strategy and action prompts. The ALFRED wording is meaningless here, and on a CPU
verl's cost per step is dominated by the 151k-way logits over every prompt token, so ~60-token prompts
instead of ~200 make each training step about three times cheaper. Nothing else changes: the rollout
renders these templates with the same builders as any other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from strata.core.prompting import load_prompt_templates
from strata.envs.actions import match_command
from strata.envs.alfworld.tasks import check_split
from strata.envs.records import StepResult
from strata.envs.registry import About
from strata.envs.tasks import Task

TASK_TYPE = "pick_and_place_simple"  # counted as the subtask "pick" in every metric
TASK_DESCRIPTION = "say the magic word"
WORDS: tuple[str, ...] = ("river", "apple", "candle", "tiger")
MAGIC_WORD = "candle"
GAME_FILE = "game.json"

PROMPTS: dict[str, str] = {
    "strategy": "{observation}\nPresent your strategy inside <strategy> </strategy> tags.",
    "action": "Your task is to: {task}\nYour strategy: {strategy}\nPresent one action inside <action> </action> tags.",
}
"""The strategy and action templates of `write_prompt_preset` (placeholders as in the ALFWorld preset)."""


@dataclass(frozen=True)
class MagicWordGame:
    """One game: the words on the sign, in the order shown, and the one that wins."""

    words: tuple[str, ...]
    magic_word: str

    def __post_init__(self) -> None:
        if self.magic_word not in self.words:
            raise ValueError(f"magic word {self.magic_word!r} is not among the words {self.words}")
        if len(set(self.words)) != len(self.words):
            raise ValueError(f"the words must be distinct, got {self.words}")

    @property
    def task_description(self) -> str:
        return TASK_DESCRIPTION

    @property
    def initial_observation(self) -> str:
        """Shaped like ALFWorld's first text: a scene, then the goal sentence."""
        return (
            f"On a sign you read {len(self.words)} words: {', '.join(self.words)}.\n\n"
            f"Your task is to: {TASK_DESCRIPTION}."
        )

    @property
    def admissible_commands(self) -> tuple[str, ...]:
        return tuple(f"say {word}" for word in self.words)


def write_games(
    folder: str | Path,
    split: str,
    count: int,
    seed: int = 0,
    words: Sequence[str] = WORDS,
    magic_word: str = MAGIC_WORD,
) -> list[Task]:
    """Write ``count`` games of ``split`` under ``folder/<split>/<index>/game.json`` and return their tasks.

    Each game shows ``words`` in its own order (deterministic in ``seed``, ``split`` and the index), so
    a policy must learn the word itself, not its position. Write the trainer's task list from the
    returned tasks with `strata.envs.task_list.write_task_list`.
    """
    check_split(split)
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    MagicWordGame(tuple(words), magic_word)  # validate once, before writing anything
    tasks = []
    for index in range(count):
        order = list(words)
        random.Random(f"{seed}/{split}/{index}").shuffle(order)
        game_file = Path(folder).resolve() / split / str(index) / GAME_FILE
        game_file.parent.mkdir(parents=True, exist_ok=True)
        game = {
            # The task-list writer reads the goal from here, as from an ALFWorld game's grammar.
            "grammar": json.dumps({"intro": f"Your task is to: {TASK_DESCRIPTION}"}),
            "words": order,
            "magic_word": magic_word,
        }
        game_file.write_text(json.dumps(game, indent=1), encoding="utf-8")
        tasks.append(Task(game_file=str(game_file), task_type=TASK_TYPE, split=split, index=index))
    return tasks


def write_prompt_preset(path: str | Path) -> Path:
    """Write the game's prompt preset (ALFWorld's templates with `PROMPTS` replacing two) as a YAML file."""
    templates = dataclasses.asdict(load_prompt_templates("alfworld", PROMPTS))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(templates, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return out


@functools.lru_cache(maxsize=4096)
def load_game(game_file: str) -> MagicWordGame:
    """The game stored in ``game_file`` (cached: every episode of a group starts the same game)."""
    data = json.loads(Path(game_file).read_text(encoding="utf-8"))
    return MagicWordGame(tuple(data["words"]), data["magic_word"])


class MagicWordEpisode:
    """One episode, with the interface of `strata.envs.pool.PooledEpisode` that the rollout uses."""

    def __init__(self, task: Task, game: MagicWordGame, max_steps: int, normalize_actions: bool) -> None:
        self.task = task
        self.game = game
        self.max_steps = max_steps
        self.normalize_actions = normalize_actions
        self.task_description = game.task_description
        self.initial_observation = game.initial_observation
        self.admissible_commands = game.admissible_commands
        self.walkthrough: tuple[str, ...] | None = (f"say {game.magic_word}",)
        self.failure: str | None = None  # nothing here can fail the way an engine worker can
        self.num_steps = 0
        self.won = False
        self.done = False
        self.score: float | None = None  # no progress score: R(τ) is the outcome

    async def step(self, action: str) -> StepResult:
        """Say something; every call costs a step, and saying a listed word ends the episode."""
        if self.done:
            raise RuntimeError(f"episode of {self.task.game_file} is over; start a new episode")
        self.num_steps += 1
        if self.normalize_actions:
            command = match_command(action, self.admissible_commands)
        else:
            command = " ".join(action.split())
        admissible = command in self.admissible_commands
        if admissible:
            self.won = command == f"say {self.game.magic_word}"
            observation = "The door opens." if self.won else "The sign fades. The door stays closed."
            self.done = True
        else:
            observation = "Nothing happens."
            self.done = self.num_steps >= self.max_steps
        return StepResult(
            observation=observation,
            won=self.won,
            done=self.done,
            admissible_commands=() if self.done else self.admissible_commands,
            command=command,
            admissible=admissible,
        )


class MagicWordEnv:
    """Plays magic-word games with ``async with env.episode(task) as episode`` (the `EnvPool` interface)."""

    def __init__(self, max_steps: int = 1, normalize_actions: bool = True) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.max_steps = max_steps
        self.normalize_actions = normalize_actions

    @contextlib.asynccontextmanager
    async def episode(self, task: Task) -> AsyncIterator[MagicWordEpisode]:
        """A fresh episode of ``task``'s game (every start is the same initial state)."""
        yield MagicWordEpisode(task, load_game(task.game_file), self.max_steps, self.normalize_actions)


ABOUT = About("the magic-word game", "the magic-word toy game (StraTA's learning check)", "toy",
              "game generator (`strata build-learning-check`)")
