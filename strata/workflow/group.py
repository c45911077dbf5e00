"""One task's rollout: strategy candidates -> diverse selection -> episodes (-> judge), all concurrent.

Training (spec §1): σ·N candidates, N kept by farthest-point selection, M episodes per kept strategy,
each judged. Validation (spec §3): one strategy, one episode, no selection, no judge. The flat GRPO
baseline (``strata.algorithm=grpo``) plays G episodes per task with no strategy.
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
from strata.core.seeding import derive_seed
from strata.envs.pool import EnvPool
from strata.envs.tasks import Task
from strata.workflow.episode import Episode, EpisodeLimits
from strata.workflow.policy import Policy
from strata.workflow.records import StrategyCandidate, StrategyRollout, TaskRollout


@dataclass(frozen=True)
class GroupShape:
    """How many of each thing one task's rollout makes.

    Attributes:
        plan: sample strategies first (StraTA); False plays ``num_trajectories`` episodes straight from the
            task, the flat GRPO baseline (``strata.algorithm=grpo``).
        diverse: keep the N strategies by farthest-point selection; False draws them at random (seeded).
        judge: run the self-judgment after every episode.
    """

    num_candidates: int
    num_strategies: int
    num_trajectories: int
    plan: bool
    diverse: bool
    judge: bool

    @classmethod
    def training(cls, config: StrataConfig) -> GroupShape:
        plan = config.algorithm == "strata"
        return cls(config.num_candidates if plan else 0, config.num_stras_per_run, config.num_trajs_per_stra,
                   plan=plan, diverse=config.diversity.enable, judge=config.judge.enable)

    @classmethod
    def evaluation(cls, config: StrataConfig) -> GroupShape:
        """Spec §3: one strategy (none for GRPO) and one episode per task, no selection, no judge."""
        plan = config.algorithm == "strata"
        return cls(int(plan), 1, 1, plan=plan, diverse=False, judge=False)

    @property
    def embeds(self) -> bool:
        """Whether selection needs the sentence encoder (there is something to choose, diversely)."""
        return self.plan and self.diverse and self.num_candidates > self.num_strategies


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
    if not shape.plan:
        return await _rollout_without_strategy(task, shape, policy, pool, templates, limits)
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
    selection = await asyncio.to_thread(
        select_strategies,
        [c.text_for_conditioning for c in candidates], [c.well_formed for c in candidates],
        shape.num_strategies, embedder if shape.embeds else None, derive_seed(policy.seed, "selection"),
    )
    selection_seconds = time.perf_counter() - started

    strategies = [StrategyRollout(candidates[i]) for i in selection.kept]
    runs = [
        _play(task, s.strategy, policy.stream(f"strategy/{i}/trajectory/{j}"), pool, templates, limits, shape.judge)
        for i, s in enumerate(strategies) for j in range(shape.num_trajectories)
    ]
    episodes = await asyncio.gather(*runs)
    for index, strategy in enumerate(strategies):
        start = index * shape.num_trajectories
        strategy.trajectories = [e.trajectory for e in episodes[start : start + shape.num_trajectories]]
    return TaskRollout(candidates, selection.kept, strategies, selection_seconds, selection.nearest_kept_cosine,
                       task_description, initial_observation)


async def _rollout_without_strategy(task: Task, shape: GroupShape, policy: Policy, pool: EnvPool,
                                    templates: PromptTemplates, limits: EpisodeLimits) -> TaskRollout:
    """GRPO's group: G episodes conditioned on the task alone, one group with no strategy."""
    episodes = await asyncio.gather(*(
        _play(task, None, policy.stream(f"trajectory/{j}"), pool, templates, limits, judge=False)
        for j in range(shape.num_trajectories)
    ))
    if all(e.env.failure is not None and not e.trajectory.steps for e in episodes):
        raise RuntimeError(f"could not start {task.game_file}: {episodes[0].env.failure}")
    started = next(e for e in episodes if e.task)
    return TaskRollout([], [], [StrategyRollout(None, [e.trajectory for e in episodes])],
                       task_description=started.task, initial_observation=started.env.initial_observation)


async def _play(task: Task, strategy: str | None, policy: Policy, pool: EnvPool, templates: PromptTemplates,
                limits: EpisodeLimits, judge: bool) -> Episode:
    async with pool.episode(task) as env_episode:
        episode = Episode(env_episode, strategy, policy, templates, limits, judge)
        await episode.run()
        return episode
