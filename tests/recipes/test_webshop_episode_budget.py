"""H = 15 WebShop steps fit every WebShop GPU recipe's row budgets, measured on the site with the longest pages.

Real WebShop products have long titles (often 20-40 words), long descriptions and five bullet points; the
generated catalogue's are short. So the catalogue here is a generated one whose titles, descriptions and bullets
are stretched to real lengths and beyond (60-word titles, a 400-word description, five 80-word bullets), and the
scripted shopper visits the longest pages in turn: a results page (10 long titles), a product, its description,
its features, back, the next results page. It is played for 15 steps by the project's own `Episode` with the real
Qwen2.5 tokenizer through the env pool, and each recipe must hold all 15 steps with every response
`LONGER_RESPONSES` tokens longer, inside Qwen2.5's context (the rule of tests/recipes/test_episode_budget.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from strata.core.prompting import load_prompt_templates
from strata.envs.pool import EnvPool
from strata.envs.records import REASON_STEP_LIMIT
from strata.envs.webshop.generate import write_catalog
from strata.envs.webshop.prepare import webshop_tasks
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy
from tests.recipes.resolved import RECIPES, recipe_args, resolve
from tests.recipes.test_episode_budget import LONGER_RESPONSES, QWEN25_CONTEXT, Measured

H = 15
GPU_RECIPES = {recipe: recipe_args(recipe) for recipe in RECIPES if "-webshop-qwen2.5-" in recipe}
TOUR = ("search[{query}]", "click[{product}]", "click[description]", "click[< prev]", "click[features]",
        "click[< prev]", "click[< prev]", "click[next >]")
STRATEGY = ("Search for the product type with its main attributes, open the most promising results, read their "
            "description and features to check the attributes and the price, then choose the options and buy.")
WORDS = ("premium", "durable", "lightweight", "comfortable", "breathable", "adjustable", "waterproof", "portable",
         "classic", "modern")


def stretch(folder: Path) -> None:
    """Real-length texts: 60-word titles, a 400-word description, five 80-word bullets per product."""
    path = folder / "items_shuffle_1000.json"
    products = json.loads(path.read_text())
    for i, product in enumerate(products):
        filler = [WORDS[(i + k) % len(WORDS)] for k in range(480)]
        product["name"] = f"{product['name']} {' '.join(filler[:55])}"
        product["full_description"] = f"{product['full_description']} {' '.join(filler[:400])}"
        product["small_description"] = [f"{bullet} {' '.join(filler[k * 80:(k + 1) * 80])}"
                                        for k, bullet in enumerate((product["small_description"] * 5)[:5])]
    path.write_text(json.dumps(products))


class TouringServer:
    """verl's ``generate`` for the tour: results, a product, its description and features, the next page."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.steps = 0

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        prompt = self.tokenizer.decode(prompt_ids)
        products = [word for word in prompt.replace("]", " ").split() if word.startswith("click[b0")]
        move = TOUR[self.steps % len(TOUR)].format(query="shorts cotton", product=products[-1][6:] if products
                                                   else "b000000001")
        self.steps += 1
        text = f"I will look at the longest pages to compare the products, so next: {move}.\n<action>{move}</action>"
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@pytest.fixture(scope="module")
def resolved_recipes() -> Iterator[dict[str, Future]]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield {recipe: executor.submit(resolve, recipe, *args) for recipe, args in GPU_RECIPES.items()}


@pytest.fixture(scope="module")
def touring_episode(resolved_recipes, qwen_tokenizer, tmp_path_factory) -> Measured:
    folder = write_catalog(tmp_path_factory.mktemp("webshop"), num_products=200, seed=5)
    stretch(folder)
    task = webshop_tasks(folder, "test", limit=1)[0]
    policy = Policy(TouringServer(qwen_tokenizer), ChatTokens(qwen_tokenizer), {}, max_tokens=512)
    limits = EpisodeLimits(max_steps=H, response_budget=10**9, prompt_tokens=2048)

    async def play():
        with EnvPool(num_workers=1, max_steps=H, engine="webshop") as pool:
            async with pool.episode(task) as env_episode:
                templates = load_prompt_templates("webshop")
                return await Episode(env_episode, STRATEGY, policy, templates, limits, False).run()

    return Measured(asyncio.run(play()), [])


def test_the_tour_plays_15_steps_of_long_pages(touring_episode):
    trajectory = touring_episode.trajectory
    steps = trajectory.steps
    print(f"first prompt {len(trajectory.prompt_ids)} tokens; {len(steps)}-step row {touring_episode.row_tokens} "
          f"tokens; longest turn {max(len(s.env_tokens) for s in steps)}")
    assert trajectory.num_steps == H and trajectory.end_reason == REASON_STEP_LIMIT
    assert all(step.admissible for step in steps)  # every move was a real page change
    assert max(len(s.env_tokens) for s in steps) >= 500  # the stretched pages were shown, not short answers


@pytest.mark.parametrize("recipe", sorted(GPU_RECIPES))
def test_every_webshop_gpu_recipe_holds_15_steps(recipe, touring_episode, resolved_recipes):
    config = resolved_recipes[recipe].result()
    rollout = config["actor_rollout_ref"]["rollout"]
    limits = EpisodeLimits(max_steps=config["env"]["max_steps"], response_budget=rollout["response_length"],
                           prompt_tokens=rollout["prompt_length"])
    assert limits.max_steps == H
    assert len(touring_episode.trajectory.prompt_ids) <= limits.prompt_tokens
    fits = touring_episode.steps_that_fit(limits, config["strata"]["max_tokens_per_response"], LONGER_RESPONSES)
    assert fits == H, f"{recipe}: {fits} of {H} steps fit ({touring_episode.row_tokens} tokens without headroom)"
    assert touring_episode.row_tokens + H * LONGER_RESPONSES <= limits.prompt_tokens + limits.response_budget
    assert limits.prompt_tokens + limits.response_budget <= QWEN25_CONTEXT
