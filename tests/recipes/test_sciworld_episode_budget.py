"""H = 50 ScienceWorld steps fit every ScienceWorld GPU recipe's row budgets, measured on the real simulator.

ScienceWorld's turns differ from ALFWorld's: an observation turn shows the observation and the objects in
view (trimmed to ~350 tokens, `strata.envs.sciworld.view`), and `look around` in a full room is the longest
observation. The scripted policy explores as an untrained model does: in each room it looks around, then
opens the door to the next room on a fixed tour and goes there (a failed `open`/`go to` costs a step with a
short answer), so a third of its turns are full room descriptions. It is played for 50 steps by the
project's own `Episode` with the real Qwen2.5 tokenizer, and each recipe must hold all 50 steps with every
response `LONGER_RESPONSES` tokens longer, inside Qwen2.5's context (the rule and the headroom of
tests/recipes/test_episode_budget.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
import scienceworld  # noqa: F401  (a hard dependency: a broken install fails here, never skips)

from strata.core.prompting import load_prompt_templates
from strata.envs.pool import EnvPool
from strata.envs.records import REASON_STEP_LIMIT
from strata.envs.sciworld.tasks import game_id
from strata.envs.tasks import Task
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy
from tests.recipes.resolved import RECIPES, recipe_args, resolve
from tests.recipes.test_episode_budget import LONGER_RESPONSES, QWEN25_CONTEXT, Measured

H = 50
GPU_RECIPES = {recipe: recipe_args(recipe) for recipe in RECIPES if "-sciworld-qwen2.5-" in recipe}
TOUR = ("kitchen", "hallway", "greenhouse", "hallway", "living room", "hallway", "bedroom", "hallway",
        "art studio", "hallway", "workshop", "hallway")
STRATEGY = ("Explore the house: look around each room, note the plants, animals and tools, then go on to the "
            "next room until I find what the task needs, then focus on it and finish the task.")


class ExploringServer:
    """verl's ``generate`` for the tour: look around, open the door to the next room, go there."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.steps = 0

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        room = TOUR[(self.steps // 3) % len(TOUR)]
        action = ("look around", f"open door to {room}", f"go to {room}")[self.steps % 3]
        self.steps += 1
        text = f"I will explore the house to find what the task needs, so next I {action}.\n<action>{action}</action>"
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@pytest.fixture(scope="module")
def resolved_recipes() -> Iterator[dict[str, Future]]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield {recipe: executor.submit(resolve, recipe, *args) for recipe, args in GPU_RECIPES.items()}


@pytest.fixture(scope="module")
def exploring_episode(resolved_recipes, qwen_tokenizer) -> Measured:
    task = Task(game_id("find-animal", 0), "find-animal", "valid", 0)  # starts in the hallway of a full house
    policy = Policy(ExploringServer(qwen_tokenizer), ChatTokens(qwen_tokenizer), {}, max_tokens=512)
    limits = EpisodeLimits(max_steps=H, response_budget=10**9, prompt_tokens=2048)

    async def play():
        with EnvPool(num_workers=1, max_steps=H, engine="sciworld") as pool:
            async with pool.episode(task) as env_episode:
                templates = load_prompt_templates("sciworld")
                return await Episode(env_episode, STRATEGY, policy, templates, limits, False).run()

    return Measured(asyncio.run(play()), [])


def test_the_tour_plays_50_steps_with_long_turns(exploring_episode):
    trajectory = exploring_episode.trajectory
    steps = trajectory.steps
    print(f"first prompt {len(trajectory.prompt_ids)} tokens; {len(steps)}-step row {exploring_episode.row_tokens} "
          f"tokens; longest turn {max(len(s.env_tokens) for s in steps)}")
    assert trajectory.num_steps == H and trajectory.end_reason == REASON_STEP_LIMIT
    assert sum(s.command == "look around" for s in steps) >= H // 3
    assert max(len(s.env_tokens) for s in steps) >= 350  # full rooms were described, not only short answers


@pytest.mark.parametrize("recipe", sorted(GPU_RECIPES))
def test_every_sciworld_gpu_recipe_holds_50_steps(recipe, exploring_episode, resolved_recipes):
    config = resolved_recipes[recipe].result()
    measured = exploring_episode
    rollout = config["actor_rollout_ref"]["rollout"]
    limits = EpisodeLimits(max_steps=config["env"]["max_steps"], response_budget=rollout["response_length"],
                           prompt_tokens=rollout["prompt_length"])
    assert limits.max_steps == H
    assert len(measured.trajectory.prompt_ids) <= limits.prompt_tokens
    fits = measured.steps_that_fit(limits, config["strata"]["max_tokens_per_response"], LONGER_RESPONSES)
    assert fits == H, f"{recipe}: {fits} of {H} steps fit ({measured.row_tokens} tokens without headroom)"
    assert measured.row_tokens + H * LONGER_RESPONSES <= limits.prompt_tokens + limits.response_budget
    assert limits.prompt_tokens + limits.response_budget <= QWEN25_CONTEXT
