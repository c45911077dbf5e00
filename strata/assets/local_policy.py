"""Play episodes with a model in this process, through the rollout's own workflow (no Ray, no verl trainer).

What evaluates a warm-started agent while it is being built (`strata.assets.alfworld_agent`): the same
`strata.workflow.group.rollout_task` the trainer's validation runs, with the same prompts, parsing, episode
state machine and environment pool, only with the `hf` rollout's sampling loop called in-process instead of
through verl's rollout servers. So the success measured here is the success validation would measure at step 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from strata.core.config import StrataConfig
from strata.envs.pool import EnvPool
from strata.envs.tasks import Task
from strata.workflow.chat import ChatTokens
from strata.workflow.episode import EpisodeLimits
from strata.workflow.group import GroupShape, rollout_task
from strata.workflow.policy import Policy
from strata.workflow.records import TaskRollout


class InProcessServer:
    """verl's ``generate(request_id, prompt_ids, sampling_params)`` call answered by one in-process model.

    Generation runs in a worker thread, one request at a time (torch already uses every core for one),
    so the event loop keeps stepping the other episodes' games meanwhile.
    """

    def __init__(self, model_dir: str | Path, response_length: int, seed: int = 0) -> None:
        from strata.backends.hf_server import HFGenerationServer

        self.server = HFGenerationServer(str(model_dir), response_length, seed=seed)
        self._lock = asyncio.Lock()

    async def generate(self, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any]) -> Any:
        async with self._lock:
            return await asyncio.to_thread(self.server.generate, request_id, prompt_ids, sampling_params)


async def play_evaluation(
    model_dir: str | Path,
    tasks: Sequence[Task],
    config: StrataConfig,
    pool: EnvPool,
    max_steps: int,
    sampling_params: dict[str, Any],
    prompt_tokens: int = 2048,
    seed: int = 0,
    concurrency: int = 8,
) -> list[TaskRollout]:
    """One evaluation episode per task (spec §3: one strategy, no selection, no judge), in task order."""
    from transformers import AutoTokenizer

    chat = ChatTokens(AutoTokenizer.from_pretrained(model_dir))
    server = InProcessServer(model_dir, config.max_tokens_per_response, seed)
    templates = config.prompts.templates()
    limits = EpisodeLimits(max_steps=max_steps, response_budget=max_steps * config.max_tokens_per_response * 8,
                           prompt_tokens=prompt_tokens, per_step=config.trajectory_rows == "per_step",
                           history_window=config.prompts.history_window)
    shape = GroupShape.evaluation(config)
    limit = asyncio.Semaphore(concurrency)

    async def one(task: Task) -> TaskRollout:
        async with limit:
            policy = Policy(server, chat, sampling_params, config.max_tokens_per_response,
                            seed=seed * 1_000_003 + task.index)
            return await rollout_task(task, shape, policy, pool, templates, limits, None)

    return list(await asyncio.gather(*(one(task) for task in tasks)))
