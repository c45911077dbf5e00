"""The exploring expert: it knows the goal, not where the object is, and wins pick games by searching."""

from __future__ import annotations

import asyncio
import random

import pytest

from strata.envs.alfworld.discovery import load_split
from strata.envs.alfworld.explorer import (
    ExploringExpert,
    PickGoal,
    pick_goal,
    receptacles_in_view,
    search_candidates,
    search_order_of,
)
from strata.envs.pool import EnvPool


def test_the_goal_comes_from_the_alfred_task_folder():
    game = "/data/json_2.1.1/train/pick_and_place_simple-KeyChain-None-SideTable-328/trial_T1_000001/game.tw-pddl"
    assert pick_goal(game) == PickGoal("keychain", "sidetable")
    with pytest.raises(ValueError, match="not a pick game"):
        pick_goal("/data/json_2.1.1/train/pick_heat_then_place_in_recep-Egg-None-Fridge-5/trial_T1/game.tw-pddl")


def test_it_searches_only_receptacles_that_can_hold_the_object_and_never_the_goal():
    commands = ["go to cabinet 1", "go to fridge 1", "go to sinkbasin 1", "go to countertop 1", "look", "inventory"]
    assert receptacles_in_view(commands) == ["cabinet 1", "fridge 1", "sinkbasin 1", "countertop 1"]
    # ALFRED's tables: an apple may be in a fridge, a sink basin or on a counter top, never in a cabinet.
    assert search_candidates(PickGoal("apple", "countertop"), receptacles_in_view(commands)) == ["fridge 1",
                                                                                              "sinkbasin 1"]


def test_it_follows_its_search_order_opening_what_is_closed():
    expert = ExploringExpert(PickGoal("mug", "shelf"), ("drawer 1", "countertop 1"))
    assert expert.strategy == "look for the mug in drawer 1, countertop 1; take it to the shelf and put it there."
    assert expert.act(["go to drawer 1", "go to countertop 1", "go to shelf 1"]) == "go to drawer 1"
    assert expert.act(["open drawer 1", "go to countertop 1"]) == "open drawer 1"
    assert expert.act(["close drawer 1", "go to countertop 1"]) == "go to countertop 1"
    assert expert.act(["take mug 2 from countertop 1", "go to shelf 1"]) == "take mug 2 from countertop 1"
    assert expert.act(["go to shelf 1", "go to drawer 1"]) == "go to shelf 1"
    assert expert.act(["move mug 2 to shelf 1", "put mug 2 in/on shelf 1"]) == "put mug 2 in/on shelf 1"


def test_the_misplaced_take_is_the_take_where_the_object_is_not():
    expert = ExploringExpert(PickGoal("mug", "shelf"), ("drawer 1", "countertop 1"))
    assert expert.misplaced_take(["go to drawer 1", "go to shelf 1"]) is None  # nowhere yet
    expert.act(["go to drawer 1", "go to countertop 1"])
    assert expert.misplaced_take(["open drawer 1", "go to countertop 1"]) == "take mug 1 from drawer 1"
    # It does not change what the expert does next: the search goes on.
    assert expert.act(["open drawer 1", "go to countertop 1"]) == "open drawer 1"
    assert expert.act(["close drawer 1", "go to countertop 1"]) == "go to countertop 1"
    assert expert.misplaced_take(["take mug 2 from countertop 1", "go to shelf 1"]) is None  # it is here
    expert.act(["take mug 2 from countertop 1", "go to shelf 1"])
    assert expert.misplaced_take(["go to shelf 1", "go to drawer 1"]) is None  # holding it


def test_the_search_order_is_the_one_a_strategy_names_then_the_rest_as_listed():
    candidates = ["cabinet 1", "cabinet 10", "drawer 2", "countertop 1"]
    strategy = "look for the mug in cabinet 10, drawer 2, cabinet 1; take it to the shelf and put it there."
    assert search_order_of(strategy, candidates) == ["cabinet 10", "drawer 2", "cabinet 1", "countertop 1"]
    assert search_order_of("garbled", candidates) == candidates


def test_following_an_agent_it_labels_each_state_from_where_the_agent_is():
    expert = ExploringExpert(PickGoal("mug", "shelf"), ("drawer 1", "countertop 1"))
    # The agent went to the shelf first and tried a take there: the label leads the search on.
    assert expert.follow("go to shelf 1", admitted=True)
    assert expert.follow("take mug 1 from shelf 1", admitted=False)  # refused: nothing changed
    assert expert.suggest(["go to drawer 1", "go to countertop 1"]) == "go to drawer 1"
    assert expert.follow("go to countertop 1", admitted=True)  # it skipped the drawer: the label goes back
    assert expert.suggest(["go to drawer 1", "go to shelf 1"]) == "go to drawer 1"
    assert expert.suggest(["take mug 2 from countertop 1", "go to drawer 1"]) == "take mug 2 from countertop 1"
    assert not expert.follow("take apple 1 from countertop 1", admitted=True)  # another object: no more labels


@pytest.fixture(scope="module")
def pick_tasks(bundled_root, put_games_root):
    """Every pick game of the bundled train and valid splits ("move" grammar) and the "put" grammar set."""
    tasks = [t for split in ("train", "valid_seen") for t in load_split(bundled_root, split)]
    tasks += load_split(put_games_root, "valid_seen")
    return [t for t in tasks if t.task_type == "pick_and_place_simple"]


def test_it_wins_every_pick_game_by_search_in_both_grammars(pick_tasks):
    assert len(pick_tasks) >= 3

    async def play(pool, task, order_seed):
        async with pool.episode(task) as episode:
            expert = ExploringExpert.for_game(task.game_file, episode.admissible_commands, random.Random(order_seed))
            actions = []
            while not episode.done:
                actions.append(expert.act(episode.admissible_commands))
                await episode.step(actions[-1])
            return expert, actions, episode.outcome()

    async def play_all(pool):
        return await asyncio.gather(*(play(pool, t, k) for t in pick_tasks for k in range(2)))

    with EnvPool(num_workers=1, max_steps=30) as pool:
        results = asyncio.run(play_all(pool))
    for expert, actions, outcome in results:
        assert outcome.won, (expert.strategy, actions)
        searched = [a.removeprefix("go to ") for a in actions[: next(i for i, a in enumerate(actions)
                                                                      if a.startswith("take "))]
                    if a.startswith("go to ")]
        assert tuple(searched) == expert.order[: len(searched)]  # it searched in the order its strategy says
    assert len({expert.order for expert, _, _ in results}) > len(pick_tasks)  # orders vary with the seed


def test_listed_plans_search_in_the_games_order_then_its_reverse():
    game = "/data/json_2.1.1/train/pick_and_place_simple-Apple-None-CounterTop-1/trial_T1_000001/game.tw-pddl"
    commands = ["go to fridge 1", "go to cabinet 1", "go to sinkbasin 1", "go to microwave 1", "go to countertop 1"]
    plans = [ExploringExpert.for_game(game, commands, random.Random(0), "listed", plan).order for plan in range(3)]
    assert plans == [("fridge 1", "sinkbasin 1", "microwave 1"), ("microwave 1", "sinkbasin 1", "fridge 1"),
                     ("fridge 1", "sinkbasin 1", "microwave 1")]
    with pytest.raises(ValueError, match="search_order 'sorted'"):
        ExploringExpert.for_game(game, commands, random.Random(0), "sorted")
