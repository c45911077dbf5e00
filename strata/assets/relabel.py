"""Expert labels for the states an agent reached itself (DAgger): its episodes replayed in the engine, each state
labelled by the exploring expert.

Why: the warm start shows only states on the expert's own path (and a few slips off it), so where the tiny agent
errs it has never been shown what to do next: at a receptacle that lacks the task's object it takes the object
anyway, 645 of its 677 held-out takes refused, and repeats the take until the step limit
(benchmarks/RESULTS_alfworld_learning.md). Replaying its own episodes and asking the expert, at every state it
reached, what the expert would do there gives examples of exactly those states: the prompt the agent saw, and the
command that goes on with the search.

The expert follows the agent's own strategy (`ExploringExpert.following`): the label is the next step of the plan
the prompt states, so it never contradicts the strategy the agent is conditioned on. A replay stops where the expert
cannot lead any more (the agent holds another object), and an episode whose replay sees another observation than
the agent saw is counted as diverged and labels nothing after that point (ALFWorld's engine is deterministic, so a
divergence means a replay bug, never noise).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from strata.envs.alfworld.explorer import ExploringExpert
from strata.envs.pool import EnvPool
from strata.envs.tasks import Task
from strata.workflow.records import TaskRollout, Trajectory

UNINFORMATIVE = frozenset({"look"})
"""Labels never used: the expert's fallback when its search is exhausted, which teaches nothing."""


@dataclass
class Relabelled:
    """Labels of replayed episodes, and what the replays saw.

    Args:
        labels: (the prompt the agent saw, the expert's command in that state), in episode order.
        episodes: episodes replayed.
        states: agent steps whose state was labelled or skipped as `UNINFORMATIVE`.
        agreed: labelled states where the agent had sent the expert's command.
        diverged: episodes whose replay saw another observation than the agent had.
        failed: episodes whose game could not be started again.
    """

    labels: list[tuple[list[int], str]] = field(default_factory=list)
    episodes: int = 0
    states: int = 0
    agreed: int = 0
    diverged: int = 0
    failed: int = 0

    def add(self, other: Relabelled) -> None:
        self.labels += other.labels
        for name in ("episodes", "states", "agreed", "diverged", "failed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def summary(self) -> dict[str, int | float]:
        """Counts for ``agent.json``; ``agreement``: the share of labels the agent had already followed."""
        return {"episodes": self.episodes, "states": self.states, "labels": len(self.labels),
                "agreement": round(self.agreed / max(1, len(self.labels)), 4), "diverged": self.diverged,
                "failed": self.failed}


async def relabel_trajectory(pool: EnvPool, task: Task, strategy: str, trajectory: Trajectory) -> Relabelled:
    """Replay ``trajectory`` (played on ``task`` under ``strategy``) in a fresh engine and label each state the
    agent acted in with the expert's command there, paired with the step's own prompt tokens."""
    out = Relabelled(episodes=1)
    async with pool.episode(task) as episode:
        if episode.failure is not None:
            out.failed = 1
            return out
        expert = ExploringExpert.following(task.game_file, episode.admissible_commands, strategy)
        admissible = tuple(episode.admissible_commands)
        for step in trajectory.steps:
            label = expert.suggest(admissible)
            out.states += 1
            if label not in UNINFORMATIVE:
                out.labels.append((step.generation.prompt_ids, label))
                out.agreed += label == step.command
            if step.command is None:  # a malformed reply: the game did not move
                continue
            result = await episode.step(step.command)
            if result.observation != step.observation:
                out.diverged = 1
                break
            if result.done or not expert.follow(step.command, bool(step.admissible)):
                break
            admissible = tuple(result.admissible_commands)
    return out


async def relabel(pool: EnvPool, tasks: Sequence[Task], rollouts: Sequence[TaskRollout]) -> Relabelled:
    """`relabel_trajectory` of every episode of ``rollouts`` (one per task, in order), replayed concurrently."""
    limit = asyncio.Semaphore(4 * pool.num_workers)

    async def one(task: Task, strategy: str, trajectory: Trajectory) -> Relabelled:
        async with limit:
            return await relabel_trajectory(pool, task, strategy, trajectory)

    episodes = [one(task, group.strategy or "", trajectory)
                for task, rollout in zip(tasks, rollouts, strict=True)
                for group in rollout.strategies for trajectory in group.trajectories]
    total = Relabelled()
    for part in await asyncio.gather(*episodes):
        total.add(part)
    return total
