"""WebShop in the env pool: one shopper at a time on a catalogue each worker loads once, with a step cap.

A worker process loads a catalogue (and builds its search index) the first time one of its goals starts, and
keeps it for every later episode (`site`: 1,000 products take ~1 s). The engine and session have the interface
`strata.envs.worker.WorkerState` drives, like ALFWorld's and ScienceWorld's.

The reward is WebShop's, in [0, 1], reported as the episode's score; an episode is won when it is 1. Buying
anything else ends the episode as lost; reaching the step cap first is the step limit.
"""

from __future__ import annotations

import functools

from strata.envs.actions import match_command
from strata.envs.records import EpisodeStart
from strata.envs.session import EpisodeSession, Outcome
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


class WebShopSession(EpisodeSession):
    """An episode on a `WebShopEngine` (`strata.envs.session`'s rules): ``Buy Now`` ends it, won when WebShop's
    reward is 1, else lost. ``admissible`` is whether the site accepted the action.

    With ``normalize_actions`` an action that means a listed one is sent as listed (`strata.envs.actions.
    match_command`): WebShop writes an option "Navy / White" as ``navy  |  white``, two spaces each side, so
    collapsing the spaces would make the listed ``click[navy  |  white]`` one the site refuses. Anything else (a
    search with the model's own query) loses only its formatting; WebShop lower-cases the rest itself."""

    def __init__(self, engine: WebShopEngine, max_steps: int = DEFAULT_MAX_STEPS, normalize_actions: bool = True):
        super().__init__(engine, max_steps, normalize_actions)

    def begin(self, game_file: str, with_walkthrough: bool) -> EpisodeStart:
        return self.engine.start(game_file, with_walkthrough)

    def command_for(self, action: str) -> str:
        listed = match_command(action, self.admissible_commands) if self.normalize_actions else action
        return listed if listed in self.admissible_commands else super().command_for(action)

    def apply(self, command: str) -> Outcome:
        shown = self.engine.step(command)
        won = shown.done and shown.reward == 1.0
        return Outcome(shown.observation, won=won, lost=shown.done and not won, admissible=shown.valid,
                       score=shown.reward)

    def commands_after(self, observation: str) -> tuple[str, ...]:
        return () if self.done else tuple(self.engine.shopper.available_actions())
