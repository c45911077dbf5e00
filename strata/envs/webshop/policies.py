"""Scripted WebShop shoppers, for checking the site and the catalogue (no model involved).

`gold_plan` is what a perfect shopper does: search the goal's words, page to the goal's product, choose the
goal's options, buy. On a generated catalogue it must win every goal (a check of the generator, the search
and the reward together). `random_action` is a floor: a uniformly random available action, searching a random
word of the instruction where there is a search bar.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from strata.envs.webshop.search import RESULTS
from strata.envs.webshop.site import BUY, NEXT, PER_PAGE, ShopSession


def gold_plan(session: ShopSession) -> tuple[str, ...]:
    """The actions that buy the goal's own product with the goal's options, from the search page."""
    goal = session.goal
    query = goal.instruction_text
    results = session.site.index.search(query)[:RESULTS]
    plan = [f"search[{query}]"]
    if goal.asin in results:
        plan += [f"click[{NEXT}]"] * (results.index(goal.asin) // PER_PAGE)
    plan.append(f"click[{goal.asin.lower()}]")  # not on the pages when the search missed it: an invalid click
    values = [option[1] if isinstance(option, tuple) else option for option in goal.options]
    plan += [f"click[{value}]" for value in values]
    plan.append(f"click[{BUY}]")
    return tuple(plan)


def random_action(actions: Sequence[str], instruction: str, rng: random.Random) -> str:
    """One of the page's available ``actions`` at random; a search (the search page's only action,
    ``search[<your query>]``) searches three random words of the goal's ``instruction``."""
    action = rng.choice(actions)
    if action.startswith("search["):
        words = instruction.split()
        return f"search[{' '.join(rng.sample(words, min(3, len(words))))}]"
    return action


@dataclass
class RandomPolicy:
    """`random_action` for one episode: searches use random words of the goal's ``instruction``, not the
    placeholder ``<your query>`` the search page lists."""

    rng: random.Random
    instruction: str

    @classmethod
    def for_episode(cls, rng: random.Random, instruction: str) -> RandomPolicy:
        return cls(rng, instruction)

    def act(self, admissible_commands: tuple[str, ...]) -> str:
        return random_action(sorted(admissible_commands), self.instruction, self.rng)
