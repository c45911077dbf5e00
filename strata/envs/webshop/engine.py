"""WebShop in the env pool: one shopper at a time on a catalogue each worker loads once, with a step cap.

A worker process loads a catalogue (and builds its search index) the first time one of its goals starts, and
keeps it for every later episode (`site`: 1,000 products take ~1 s). The engine and session have the interface
`strata.envs.worker.WorkerState` drives, like ALFWorld's and ScienceWorld's.

The reward is WebShop's, in [0, 1], reported as the episode's score; an episode is won when it is 1. Buying
anything else ends the episode as lost; reaching the step cap first is the step limit.
"""

from __future__ import annotations

import functools

from strata.envs.actions import normalize_command
from strata.envs.records import REASON_LOST, REASON_STEP_LIMIT, REASON_WON, EpisodeStart, StepResult
from strata.envs.webshop.catalog import load_catalog
from strata.envs.webshop.nouns import noun_tagger
from strata.envs.webshop.policies import gold_plan
from strata.envs.webshop.site import ShopSession, ShopSite, ShopStep
from strata.envs.webshop.tasks import DEFAULT_MAX_STEPS, parse_game_id


@functools.cache
def site(folder: str, goals: str) -> ShopSite:
    """The catalogue in ``folder`` with its ``goals`` goals, loaded once per process."""
    return ShopSite(load_catalog(folder, goals=goals), noun_tagger())


class WebShopEngine:
    """Starts shoppers on the goal a game id names; holds the live one."""

    def __init__(self) -> None:
        self.game_file: str | None = None
        self.shopper: ShopSession | None = None

    def start(self, game_file: str, with_walkthrough: bool = False) -> EpisodeStart:
        """A shopper on the search page of ``game_file``'s goal; ``with_walkthrough`` adds the gold plan."""
        folder, goals, index = parse_game_id(game_file)
        shop = site(folder, goals)
        if index >= len(shop.catalog.goals):
            raise ValueError(f"goal {index} does not exist ({len(shop.catalog.goals)} {goals} goals)")
        self.game_file = None
        self.shopper = shop.session(index)
        self.game_file = game_file
        return EpisodeStart(
            task_description=self.shopper.goal.instruction_text,
            initial_observation=self.shopper.observation,
            admissible_commands=tuple(self.shopper.available_actions()),
            walkthrough=gold_plan(self.shopper) if with_walkthrough else None,
            score=0.0,
        )

    def unload(self) -> None:
        self.game_file, self.shopper = None, None

    def step(self, command: str) -> ShopStep:
        if self.shopper is None:
            raise RuntimeError("WebShopEngine.step() before a successful start()")
        return self.shopper.step(command)


class WebShopSession:
    """An episode on a `WebShopEngine`: start, then step until ``Buy Now`` or the step cap.

    Every `step` call counts, valid or not. With ``normalize_actions`` an action loses what only the formatting
    adds (`strata.envs.actions.normalize_command`: case, quotes, a bullet, final punctuation); WebShop lower-cases
    the rest itself. ``admissible`` is whether the site accepted the action.
    """

    def __init__(self, engine: WebShopEngine, max_steps: int = DEFAULT_MAX_STEPS, normalize_actions: bool = True):
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.engine = engine
        self.max_steps = max_steps
        self.normalize_actions = normalize_actions
        self.num_steps, self.won, self.bought, self.done = 0, False, False, True

    def start(self, game_file: str, with_walkthrough: bool = False) -> EpisodeStart:
        start = self.engine.start(game_file, with_walkthrough)
        self.num_steps, self.won, self.bought, self.done = 0, False, False, False
        return start

    def step(self, action: str) -> StepResult:
        if self.done:
            raise RuntimeError(f"step({action!r}) on a finished episode of {self.engine.game_file}")
        command = (normalize_command(action) or action) if self.normalize_actions else action
        shown = self.engine.step(command)
        self.num_steps += 1
        self.bought = shown.done
        self.won = shown.done and shown.reward == 1.0
        self.done = shown.done or self.num_steps >= self.max_steps
        return StepResult(
            observation=shown.observation,
            won=self.won,
            done=self.done,
            admissible_commands=() if self.done else tuple(self.engine.shopper.available_actions()),
            command=command,
            admissible=shown.valid,
            score=shown.reward,
        )

    @property
    def end_reason(self) -> str:
        return REASON_WON if self.won else REASON_LOST if self.bought else REASON_STEP_LIMIT
