"""An exploring expert for ALFWorld's pick task: a search order as its strategy, then that search played out.

Why not the planner's walkthrough: it goes straight to the object, because the planner knows where the
object is. A model that imitates it learns no search and fails on a new layout. This expert knows only what
an agent knows, the goal (from the task) and what it has seen, so its traces teach what an agent must do:

1. its *strategy* names the receptacles that can hold the object, in the order it will search them (a
   random order per episode, or the order the game lists them, forwards or backwards: several plausible
   strategies per game, for StraTA's diverse selection);
2. it goes to each in turn, opens the closed ones, and takes the object as soon as a ``take`` command for
   it is admissible;
3. then goes to the goal receptacle (opening it if needed) and puts the object there.

It reads only the admissible commands, never the observation's prose, so it plays any grammar version
(``put X in/on Y`` or ``move X to Y``). The goal's classes come from the game folder's ALFRED name
(``pick_and_place_simple-Mug-None-Cabinet-5``), which ALFWorld's released games and ours share.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

EXPLORER_TASK_TYPES: tuple[str, ...] = ("pick_and_place_simple",)
SEARCH_ORDERS: tuple[str, ...] = ("random", "listed")
_GO_TO = re.compile(r"^go to (.+)$")


@dataclass(frozen=True)
class PickGoal:
    """What a pick game asks: carry an object of class ``obj`` onto a receptacle of class ``parent``
    (both as the game text writes them: ``mug``, ``countertop``)."""

    obj: str
    parent: str


def pick_goal(game_file: str | Path) -> PickGoal:
    """The goal of a pick game, from its ALFRED task folder (``<task type>-<Object>-None-<Parent>-<scene>``)."""
    folder = Path(game_file).parent.parent.name
    parts = folder.split("-")
    if len(parts) != 5 or parts[0] not in EXPLORER_TASK_TYPES:
        raise ValueError(f"{game_file}: not a pick game folder (<task type>-<Object>-None-<Parent>-<scene>)")
    return PickGoal(parts[1].lower(), parts[3].lower())


def receptacles_in_view(admissible_commands: Sequence[str]) -> list[str]:
    """The receptacles an agent can go to, in the game's order (``cabinet 1``, ``countertop 1``...)."""
    return [m.group(1) for c in admissible_commands if (m := _GO_TO.match(c))]


def search_candidates(goal: PickGoal, receptacles: Sequence[str]) -> list[str]:
    """The receptacles that may hold ``goal.obj`` by ALFRED's class tables (the goal receptacle never does:
    ALFWorld's pick games never start with the object already in place)."""
    from strata.envs.alfworld.gen.catalog import class_tables

    can_contain = {cls.lower(): holds for cls, holds in class_tables().can_contain.items()}
    obj_classes = {c for holds in can_contain.values() for c in holds if c.lower() == goal.obj}

    def may_hold(receptacle: str) -> bool:
        cls = receptacle.rsplit(" ", 1)[0]
        return cls != goal.parent and bool(obj_classes & can_contain.get(cls, frozenset()))

    return [r for r in receptacles if may_hold(r)]


def search_order_of(strategy: str, candidates: Sequence[str]) -> list[str]:
    """``candidates`` in the order ``strategy`` first names them, then those it does not name, as listed
    (``cabinet 1`` is not read in ``cabinet 10``)."""
    def first_mention(receptacle: str) -> int:
        found = re.search(rf"\b{re.escape(receptacle)}(?!\d)", strategy)
        return found.start() if found else len(strategy)

    return sorted(candidates, key=first_mention)  # stable: the unnamed keep the listed order


def search_strategy(goal: PickGoal, order: Sequence[str]) -> str:
    """The strategy text the expert follows: its search order, then the delivery."""
    return f"look for the {goal.obj} in {', '.join(order)}; take it to the {goal.parent} and put it there."


@dataclass
class ExploringExpert:
    """Plays a pick game by searching ``order`` (see the module docstring); `act` picks one command."""

    goal: PickGoal
    order: tuple[str, ...]
    _visited: list[str] = field(default_factory=list, init=False)  # gone to, in order; the last is here
    _holding: bool = field(default=False, init=False)

    @classmethod
    def for_game(cls, game_file: str | Path, initial_admissible: Sequence[str], rng: random.Random,
                 search_order: str = "random", plan: int = 0) -> ExploringExpert:
        """An expert searching the game's plausible receptacles in a random order (``search_order="random"``)
        or in the order the game lists them, reversed for an odd ``plan`` (``"listed"``: two fixed plans, which
        a tiny model imitates more easily than a list it must copy from its strategy)."""
        if search_order not in SEARCH_ORDERS:
            raise ValueError(f"search_order {search_order!r}: expected one of {', '.join(SEARCH_ORDERS)}")
        goal = pick_goal(game_file)
        order = search_candidates(goal, receptacles_in_view(initial_admissible))
        if search_order == "random":
            rng.shuffle(order)
        elif plan % 2:
            order.reverse()
        return cls(goal, tuple(order))

    @classmethod
    def following(cls, game_file: str | Path, initial_admissible: Sequence[str], strategy: str) -> ExploringExpert:
        """The expert an agent playing ``strategy`` would be: it searches the plausible receptacles in the order
        the strategy names them (`search_order_of`). It labels the states that agent reached
        (`strata.assets.relabel`), so each label follows the plan the agent's own prompt states."""
        goal = pick_goal(game_file)
        candidates = search_candidates(goal, receptacles_in_view(initial_admissible))
        return cls(goal, tuple(search_order_of(strategy, candidates)))

    @property
    def strategy(self) -> str:
        return search_strategy(self.goal, self.order)

    def act(self, admissible_commands: Sequence[str]) -> str:
        """The expert's command here, played: `suggest`, then `follow`."""
        command = self.suggest(admissible_commands)
        self.follow(command, admitted=True)
        return command

    def suggest(self, admissible_commands: Sequence[str]) -> str:
        """What the expert would do here, given what has been played so far; changes nothing."""
        commands = list(admissible_commands)
        if not self._holding:
            take = self._first(commands, f"take {self.goal.obj} ")
            if take:
                return take
            here = self._visited[-1] if self._visited else None
            if here in self.order and f"open {here}" in commands:
                return f"open {here}"
            unvisited = [r for r in self.order if r not in self._visited]
            return f"go to {unvisited[0]}" if unvisited else "look"
        for verb in ("put", "move"):
            put = next((c for c in commands if c.startswith(f"{verb} {self.goal.obj} ")
                        and c.rsplit(" ", 2)[-2] == self.goal.parent), None)
            if put:
                return put
        parent = self.goal.parent
        return self._first(commands, f"open {parent} ") or self._first(commands, f"go to {parent} ") or "look"

    def follow(self, command: str, admitted: bool) -> bool:
        """Take note of ``command``, played by the expert or by an agent it labels (a refused one changes
        nothing). False once the game is where the expert cannot lead (another object in hand)."""
        if not admitted:
            return True
        if go := _GO_TO.match(command):
            self._visited.append(go.group(1))
        elif command.startswith("take "):
            self._holding = command.startswith(f"take {self.goal.obj} ")
            return self._holding
        elif command.startswith((f"put {self.goal.obj} ", f"move {self.goal.obj} ")):
            self._holding = False
        return True

    def misplaced_take(self, admissible_commands: Sequence[str]) -> str | None:
        """The take a small agent tries where the object is not: ``take <object> 1 from <here>`` at a searched
        receptacle that offers no take of it; None while holding it, before the first ``go``, or where it is.

        Not a move of the expert's: played as a slip (`strata.assets.alfworld_agent.expert_traces`), it shows
        what follows the tiny agent's commonest mistake, "Nothing happens." and the search going on, a state
        a slip-free expert never reaches (benchmarks/RESULTS_alfworld_learning.md: 1,468 of the 1,990 takes the
        room refused in the agent's step-0 held-out episodes repeated the take it had just refused)."""
        here = self._visited[-1] if self._visited else None
        if self._holding or here is None or self._first(admissible_commands, f"take {self.goal.obj} "):
            return None
        return f"take {self.goal.obj} 1 from {here}"

    @staticmethod
    def _first(commands: Sequence[str], prefix: str) -> str | None:
        return next((c for c in commands if c.startswith(prefix)), None)
