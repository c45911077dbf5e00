"""Scripted policies for evaluating the environment layer itself (no model involved).

``walkthrough`` replays the game's winning plan (it must win every valid game: a check of the games and
of the pool); ``gold`` is the same for ScienceWorld (its simulator's gold action sequence) and WebShop (the
gold shopper's plan); ``random`` is each environment's own floor for success rates (its package's
``policies.RandomPolicy``, found through `strata.envs.registry`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

from strata.envs.errors import UnknownNameError

# name -> what it plays (the `strata play --policy` help is built from this).
POLICY_HELP: dict[str, str] = {
    "walkthrough": "replay the game's winning plan (ALFWorld)",
    "gold": "replay the gold actions (ScienceWorld's simulator, WebShop's gold shopper)",
    "random": "a random admissible action (a floor)",
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICY_HELP)
PLAN_POLICIES: tuple[str, ...] = ("walkthrough", "gold")  # replay the plan the episode starts with


class ScriptedPolicy(Protocol):
    def act(self, admissible_commands: tuple[str, ...]) -> str: ...


@dataclass
class WalkthroughPolicy:
    """The planner's plan, command by command; ``look`` once it has run out."""

    plan: tuple[str, ...]
    _next: int = field(default=0, init=False)

    def act(self, admissible_commands: tuple[str, ...]) -> str:
        if self._next >= len(self.plan):
            return "look"
        self._next += 1
        return self.plan[self._next - 1]


def make_policy(
    name: str, walkthrough: tuple[str, ...] | None, seed: int, environment: str = "alfworld", instruction: str = ""
) -> ScriptedPolicy:
    """A fresh policy for one episode of ``environment``; ``seed`` makes the random policy reproducible per
    episode, and ``instruction`` (the task description) is what WebShop's random shopper searches for."""
    if name in PLAN_POLICIES:
        if not walkthrough:
            raise ValueError("the walkthrough policy needs the episode's walkthrough (start it with_walkthrough)")
        return WalkthroughPolicy(walkthrough)
    if name == "random":
        from strata.envs.registry import environment as registered

        return registered(environment).new_random_policy(random.Random(seed), instruction)
    raise UnknownNameError(f"unknown policy {name!r}; known policies: {', '.join(POLICY_NAMES)}")
