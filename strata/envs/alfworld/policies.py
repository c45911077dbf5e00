"""ALFWorld's random policy: a floor for success rates (no model involved)."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass
class RandomPolicy:
    """A uniformly random admissible command, from its own seeded stream."""

    rng: random.Random

    @classmethod
    def for_episode(cls, rng: random.Random, instruction: str) -> RandomPolicy:
        return cls(rng)  # the instruction plays no part in a choice among the listed commands

    def act(self, admissible_commands: tuple[str, ...]) -> str:
        return self.rng.choice(sorted(admissible_commands)) if admissible_commands else "look"
