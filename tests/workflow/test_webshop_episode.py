"""StraTA's episode on WebShop through the env pool: the purchase's reward becomes the trajectory's score and
outcome, a wrong purchase is lost, and a score survives an engine that dies mid-episode."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from strata.core.prompting import load_prompt_templates
from strata.envs.pool import EnvPool
from strata.envs.webshop.catalog import load_catalog
from strata.envs.webshop.generate import write_catalog
from strata.envs.webshop.nouns import word_nouns
from strata.envs.webshop.policies import gold_plan
from strata.envs.webshop.prepare import webshop_tasks
from strata.envs.webshop.site import ShopSite
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy


class QueueServer:
    """Answers each action request with the next of ``actions``; ``kill_at`` (a request number) kills the
    pool's only worker before answering and waits until the pool has replaced it."""

    def __init__(self, tokenizer, actions: list[str], pool: EnvPool | None = None, kill_at: int | None = None):
        self.tokenizer, self.actions, self.pool, self.kill_at = tokenizer, list(actions), pool, kill_at
        self.prompts: list[str] = []

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        self.prompts.append(self.tokenizer.decode(prompt_ids))
        if len(self.prompts) == self.kill_at:
            os.kill(self.pool.worker_pids[0], signal.SIGKILL)
            while self.pool.workers_replaced == 0:
                await asyncio.sleep(0.05)
        text = f"<action>{self.actions.pop(0)}</action>"
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory) -> Path:
    return write_catalog(tmp_path_factory.mktemp("webshop"), num_products=60, seed=4)


def play(server: QueueServer, task, pool: EnvPool, reward_mode: str = "success"):
    policy = Policy(server, ChatTokens(server.tokenizer), {"temperature": 1.0}, 64)
    limits = EpisodeLimits(max_steps=15, response_budget=1 << 16, prompt_tokens=1 << 16, reward_mode=reward_mode)

    async def run():
        async with pool.episode(task) as env:
            return await Episode(env, "search, open, choose, buy", policy, load_prompt_templates("webshop"), limits,
                                 judge=False).run()

    return asyncio.run(run())


def test_a_gold_purchase_and_a_wrong_one(catalogue: Path, qwen_tokenizer) -> None:
    task = webshop_tasks(catalogue, "test", limit=1)[0]
    site = ShopSite(load_catalog(catalogue), word_nouns)
    gold = gold_plan(site.session(0))
    with EnvPool(num_workers=1, max_steps=15, engine="webshop") as pool:
        server = QueueServer(qwen_tokenizer, list(gold))
        won = play(server, task, pool)
        assert "Your task is to: " + site.catalog.goals[0].instruction_text in server.prompts[0]
        assert "- search[<your query>]" in server.prompts[0]
        assert (won.won, won.end_reason, won.score, won.num_steps) == (True, "won", 1.0, len(gold))
        assert won.reward == 1.0
        # Buying the goal's product without its options: a purchase that scores under 1 is lost.
        options = len(site.catalog.goals[0].options)
        assert options >= 1
        without_options = [*gold[: len(gold) - 1 - options], gold[-1]]
        lost = play(QueueServer(qwen_tokenizer, without_options), task, pool, reward_mode="score")
        assert lost.end_reason == "lost" and not lost.won and 0 < lost.score < 1
        assert lost.reward == pytest.approx(lost.score)  # env.reward=score trains on WebShop's reward itself


def test_the_score_so_far_survives_an_engine_that_dies(catalogue: Path, qwen_tokenizer) -> None:
    task = webshop_tasks(catalogue, "test", limit=1)[0]
    with EnvPool(num_workers=1, max_steps=15, engine="webshop") as pool:
        trajectory = play(QueueServer(qwen_tokenizer, ["search[shorts]"] * 3, pool, kill_at=2), task, pool,
                          reward_mode="score")
        assert pool.workers_replaced == 1
    assert trajectory.end_reason == "worker_lost" and trajectory.num_steps == 2
    assert trajectory.score == 0.0  # WebShop's score before a purchase, kept when the failed step reports none


def test_an_episode_that_never_steps_the_site_keeps_the_start_s_score(catalogue: Path, qwen_tokenizer) -> None:
    class Malformed(QueueServer):
        async def generate(self, request_id, prompt_ids, sampling_params):
            from verl.workers.rollout.replica import TokenOutput

            ids = self.tokenizer.encode("I would search.", add_special_tokens=False) + [self.tokenizer.eos_token_id]
            return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")

    task = webshop_tasks(catalogue, "test", limit=1)[0]
    with EnvPool(num_workers=1, max_steps=15, engine="webshop") as pool:
        trajectory = play(Malformed(qwen_tokenizer, []), task, pool, reward_mode="score")
    assert trajectory.num_steps == 15 and trajectory.end_reason == "step_limit"
    assert all(step.action is None for step in trajectory.steps) and trajectory.score == 0.0


def test_an_episode_whose_game_cannot_start_ends_with_the_engine_s_reason(catalogue: Path, qwen_tokenizer) -> None:
    from strata.envs.tasks import Task
    from strata.envs.webshop.tasks import game_id

    missing = Task(game_id(catalogue, "human", 10**6), "webshop", "test")
    server = QueueServer(qwen_tokenizer, [])
    with EnvPool(num_workers=1, max_steps=15, engine="webshop") as pool:
        trajectory = play(server, missing, pool)
    assert trajectory.end_reason == (f"engine_error: {missing.game_file}: ValueError: goal 1000000 does not exist "
                                     "(120 human goals)")
    assert trajectory.num_steps == 0 and server.prompts == []  # nothing was asked of the model
