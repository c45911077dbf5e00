"""One task's rollout: strategy candidates -> diverse selection -> episodes (-> judge), all concurrent.

Training (spec §1): σ·N candidates, N kept by farthest-point selection, M episodes per kept strategy,
each judged. Validation (spec §3): one strategy, one episode, no selection, no judge.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from strata.core.config import StrataConfig
from strata.core.diversity import select_strategies
from strata.core.embedding import TextEmbedder
from strata.core.parsing import extract_tag
from strata.core.prompting import PromptTemplates, build_strategy_messages
from strata.envs.pool import EnvPool
from strata.envs.tasks import Task
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy
from strata.workflow.records import StrategyCandidate, StrategyRollout, TaskRollout, Trajectory


@dataclass(frozen=True)
class GroupShape:
    """How many of each thing one task's rollout makes."""

    num_candidates: int
    num_strategies: int
    num_trajectories: int
    select: bool
    judge: bool

    @classmethod
    def training(cls, config: StrataConfig) -> GroupShape:
        return cls(config.num_candidates, config.num_stras_per_run, config.num_trajs_per_stra,
                   select=config.num_cands_per_stra > 1, judge=config.judge.enable)

    @classmethod
    def evaluation(cls) -> GroupShape:
        return cls(1, 1, 1, select=False, judge=False)


async def rollout_task(
    task: Task,
    shape: GroupShape,
    policy: Policy,
    pool: EnvPool,
    templates: PromptTemplates,
    limits: EpisodeLimits,
    embedder: TextEmbedder | None,
) -> TaskRollout:
    """Run one task's whole group; every generation and episode of it is in flight concurrently."""
    async with pool.episode(task) as first:
        if first.failure is not None:
            raise RuntimeError(f"could not start {task.game_file}: {first.failure}")
        task_description, initial_observation = first.task_description, first.initial_observation
    strategy_prompt = policy.chat.prompt(build_strategy_messages(templates, task_description, initial_observation))
    generations = await asyncio.gather(
        *(policy.stream(f"candidate/{i}").generate(strategy_prompt) for i in range(shape.num_candidates))
    )
    candidates = [StrategyCandidate(g, extract_tag(g.text, "strategy")) for g in generations]

    started = time.perf_counter()
    # Embedding takes ~1 CPU-second for 32 candidates: off the event loop, so the worker's other
    # episodes keep stepping and generating meanwhile.
    kept = await asyncio.to_thread(
        select_strategies,
        [c.text_for_conditioning for c in candidates], [c.well_formed for c in candidates],
        shape.num_strategies, embedder if shape.select else None,
    )
    selection_seconds = time.perf_counter() - started

    strategies = [StrategyRollout(candidates[i]) for i in kept]
    runs = [
        _play(task, s.candidate.text_for_conditioning, policy.stream(f"strategy/{i}/trajectory/{j}"), pool,
              templates, limits, shape.judge)
        for i, s in enumerate(strategies) for j in range(shape.num_trajectories)
    ]
    trajectories = await asyncio.gather(*runs)
    for index, strategy in enumerate(strategies):
        start = index * shape.num_trajectories
        strategy.trajectories = list(trajectories[start : start + shape.num_trajectories])
    return TaskRollout(candidates, kept, strategies, selection_seconds)


async def _play(task: Task, strategy: str, policy: Policy, pool: EnvPool, templates: PromptTemplates,
                limits: EpisodeLimits, judge: bool) -> Trajectory:
    async with pool.episode(task) as env_episode:
        return await Episode(env_episode, strategy, policy, templates, limits, judge).run()
