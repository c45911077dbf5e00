"""ScienceWorld's random policy: a floor for success rates (no model involved). Its admissible list is the objects
in view, so it fills a random action template with random objects (`strata.envs.sciworld.view.random_action`)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from strata.envs.sciworld.view import random_action


@dataclass
class RandomPolicy:
    """A random ScienceWorld action, from its own seeded stream."""

    rng: random.Random

    @classmethod
    def for_episode(cls, rng: random.Random, instruction: str) -> RandomPolicy:
        return cls(rng)  # random templates over the objects in view, whatever the task

    def act(self, admissible_commands: tuple[str, ...]) -> str:
        return random_action(admissible_commands, self.rng)
