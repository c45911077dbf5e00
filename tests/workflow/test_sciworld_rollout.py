"""One StraTA group on ScienceWorld's real simulator: the score reward, the lost end reason and the score
metrics, from what the simulator did.

The scripted server plays three kinds of strategy on find-plant (variation 0, a 10-step gold path): "follow
the plan" (the gold path: won, score 1), "stop short" (the gold path without its last step, then `look
around`: the step cap with the score the simulator gave, 0.83) and "give up" (`focus on agent`: ScienceWorld
ends the game as lost, score -1, so no progress).
"""

from __future__ import annotations

import asyncio

import pytest
import scienceworld  # noqa: F401  (a hard dependency: a broken install fails here, never skips)
import torch

from strata.core.config import StrataConfig
from strata.core.prompting import load_prompt_templates
from strata.envs.pool import EnvPool
from strata.envs.records import REASON_LOST, REASON_STEP_LIMIT, REASON_WON
from strata.envs.sciworld.tasks import game_id
from strata.envs.tasks import Task
from strata.trainer.metrics import strata_training_metrics
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import EpisodeLimits
from strata.workflow.group import GroupShape, rollout_task
from strata.workflow.policy import Policy
from strata.workflow.rows import group_advantages, rollout_stats

WIN, SHORT, GIVE_UP = "follow the plan", "stop short", "give up"
TASK = Task(game_id("find-plant", 0), "find-plant", "train", 0)


class ScriptedServer:
    """verl's ``generate``: strategies in the order WIN, SHORT, GIVE_UP; actions follow the strategy."""

    def __init__(self, tokenizer, gold: list[str]):
        self.tokenizer = tokenizer
        self.gold = gold
        self.strategies_served = 0

    def _answer(self, prompt: str) -> str:
        if "<strategy> </strategy> tags" in prompt:
            self.strategies_served += 1
            return f"<strategy>{(WIN, SHORT, GIVE_UP)[(self.strategies_served - 1) % 3]}</strategy>"
        if "<judgment>" in prompt:
            return "<judgment>[]</judgment>"
        step = prompt.count("<|im_start|>assistant") - 1
        if GIVE_UP in prompt:
            return "<action>focus on agent</action>"
        plan = self.gold if WIN in prompt else self.gold[:-1]
        return f"<action>{plan[step] if step < len(plan) else 'look around'}</action>"

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        text = self._answer(self.tokenizer.decode(prompt_ids))
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


@pytest.fixture(scope="module")
def played(qwen_tokenizer):
    """The group under ``env.reward=score``: N=3 strategies (all kept: σ=1), M=1 trajectory each."""
    horizon = 14

    async def play():
        with EnvPool(num_workers=1, max_steps=horizon, engine="sciworld") as pool:
            async with pool.episode(TASK, with_walkthrough=True) as probe:
                gold = list(probe.walkthrough)
            config = StrataConfig.from_dict({"num_stras_per_run": 3, "num_trajs_per_stra": 1,
                                             "num_cands_per_stra": 1, "max_tokens_per_response": 64})
            policy = Policy(ScriptedServer(qwen_tokenizer, gold), ChatTokens(qwen_tokenizer), {}, 64)
            limits = EpisodeLimits(max_steps=horizon, response_budget=16384, prompt_tokens=4096, reward_mode="score")
            rollout = await rollout_task(TASK, GroupShape.training(config), policy, pool,
                                         load_prompt_templates("sciworld"), limits, embedder=None)
            return config, gold, rollout

    return asyncio.run(play())


def test_score_rewards_and_end_reasons_come_from_the_simulator(played):
    _, gold, rollout = played
    win, short, give_up = (s.trajectories[0] for s in rollout.strategies)
    assert [s.strategy for s in rollout.strategies] == [WIN, SHORT, GIVE_UP]
    assert (win.end_reason, win.num_steps, win.reward) == (REASON_WON, len(gold), 1.0)
    assert short.end_reason == REASON_STEP_LIMIT and short.num_steps == 14
    assert 0.5 < short.score < 1.0 and short.reward == short.score  # the simulator's partial credit
    assert (give_up.end_reason, give_up.num_steps) == (REASON_LOST, 1)  # ended before the cap, not won
    assert give_up.score < 0 and give_up.reward == 0.0
    give_up.reward_mode = "final_score"  # AgentGym's reward: the simulator's score as it ended, -100 when lost
    assert give_up.reward == -1.0 and give_up.progress == 0.0
    give_up.reward_mode = "score"
    short.reward_mode = "success"  # the spec's outcome reward of the same episode
    assert short.reward == 0.0
    short.reward_mode = "score"


def test_score_metrics_and_advantages(played):
    config, _, rollout = played
    stats = rollout_stats(rollout, TASK.subtask)
    metrics = strata_training_metrics([{"strata_role": "trajectory", "strata_stats": stats}], [torch.ones(3)])
    short = rollout.strategies[1].trajectories[0].score
    assert metrics["strata/mean_score"] == pytest.approx((1.0 + short + 0.0) / 3)
    assert metrics["train/find-plant/metrics/score"] == metrics["strata/mean_score"]
    assert metrics["train/find-plant/metrics/success_rate"] == pytest.approx(1 / 3)
    # M=1: each strategy's score S_i is its trajectory's reward, so the partial one sits between the others.
    strategy = group_advantages(rollout, config).strategy
    assert strategy[0] > strategy[1] > strategy[2]
