"""Play a set of tasks with a scripted policy through an `EnvPool` (the path model evaluation takes)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from strata.envs.policies import PLAN_POLICIES, POLICY_NAMES, make_policy
from strata.envs.pool import EnvPool
from strata.envs.records import EpisodeOutcome
from strata.envs.tasks import Task


async def play_episode(pool: EnvPool, task: Task, policy: str, seed: int = 0) -> EpisodeOutcome:
    """One episode of ``task`` under a scripted ``policy``, until done; its outcome."""
    async with pool.episode(task, with_walkthrough=policy in PLAN_POLICIES) as episode:
        if not episode.done:
            actor = make_policy(policy, episode.walkthrough, seed=seed * 1_000_003 + task.index,
                                environment=task.environment, instruction=episode.task_description)
            while not episode.done:
                await episode.step(actor.act(episode.admissible_commands))
        return episode.outcome()


async def play_tasks(
    pool: EnvPool, tasks: Sequence[Task], policy: str, seed: int = 0, concurrency: int | None = None,
    on_episode: Callable[[int], None] | None = None,
) -> list[EpisodeOutcome]:
    """Outcomes of one episode per task (in task order), at most ``concurrency`` at a time
    (default: four per worker, enough to keep every worker busy); ``on_episode(done)`` after each episode ends."""
    if policy not in POLICY_NAMES:
        make_policy(policy, None, seed)  # raises the unknown-name error
    limit = asyncio.Semaphore(concurrency or 4 * pool.num_workers)
    done = 0

    async def bounded(task: Task) -> EpisodeOutcome:
        nonlocal done
        async with limit:
            outcome = await play_episode(pool, task, policy, seed)
        done += 1
        if on_episode is not None:
            on_episode(done)
        return outcome

    return list(await asyncio.gather(*(bounded(task) for task in tasks)))
