"""An episode whose multi-turn row runs out of budget ends with ``token_budget`` before overflowing it, and
validation counts it (``val/env/token_budget_ends``) as training does (``env/token_budget_ends``)."""

from __future__ import annotations

import asyncio

from strata.core.prompting import load_prompt_templates
from strata.trainer.metrics import validation_metrics
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import REASON_TOKEN_BUDGET, Episode, EpisodeLimits
from strata.workflow.policy import Policy
from strata.workflow.rows import trajectory_row

L_MAX = 64
BUDGET = 1200


class LookingServer:
    """Always answers ``look``: the episode can only end by the step cap or the row budget."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer

    async def generate(self, request_id, prompt_ids, sampling_params):
        from verl.workers.rollout.replica import TokenOutput

        ids = self.tokenizer.encode("<action>look</action>", add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


def test_a_budget_ended_validation_episode_is_counted(qwen_tokenizer, bundled_valid_tasks, env_pool):
    task = bundled_valid_tasks[0]
    policy = Policy(LookingServer(qwen_tokenizer), ChatTokens(qwen_tokenizer), {}, L_MAX)
    limits = EpisodeLimits(max_steps=50, response_budget=BUDGET, prompt_tokens=2048)

    async def play():
        async with env_pool.episode(task) as env_episode:
            return await Episode(env_episode, "look around", policy, load_prompt_templates(), limits, False).run()

    trajectory = asyncio.run(play())
    row = trajectory_row(trajectory, None)
    assert trajectory.end_reason == REASON_TOKEN_BUDGET
    assert 1 < trajectory.num_steps < 50
    last = trajectory.steps[-1]
    # It stopped when no L_max response fitted any more, and not a step earlier.
    assert len(row.response_ids) > BUDGET - L_MAX
    assert len(row.response_ids) - last.generation.num_tokens - len(last.env_tokens) <= BUDGET - L_MAX

    # The per-episode record the agent loop attaches to a validation episode (its end_reason as is).
    records = {"won": [float(trajectory.won), 1.0], "subtask": [task.subtask, "pick"],
               "episode_length": [trajectory.num_steps, 7], "num_responses": [trajectory.num_steps + 1, 8],
               "num_well_formed": [trajectory.num_steps + 1, 8], "num_admissible": [0, 7],
               "num_refused_repeats": [0, 0],
               "end_reason": [trajectory.end_reason, "won"]}
    metrics = validation_metrics(records)
    assert metrics["val/env/token_budget_ends"] == 1.0
    assert metrics["val/env/failed_episodes"] == 0.0
