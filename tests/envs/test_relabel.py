"""DAgger's labels (`strata.assets.relabel`): an agent's episode replayed in the real engine, each state it reached
labelled by the expert that follows the agent's own strategy."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from strata.assets.relabel import relabel, relabel_trajectory
from strata.envs.alfworld.discovery import load_split
from strata.envs.alfworld.explorer import (
    ExploringExpert,
    pick_goal,
    receptacles_in_view,
    search_candidates,
    search_strategy,
)
from strata.envs.pool import EnvPool
from strata.workflow.records import (
    Generation,
    Step,
    StrategyCandidate,
    StrategyRollout,
    TaskRollout,
    Trajectory,
)


def generation(prompt: int) -> Generation:
    return Generation(prompt_ids=[prompt], token_ids=[], logprobs=None, text="", truncated=False)


async def play_agent(pool, task, strategy):
    """An agent that answers malformed once, goes to the goal receptacle, tries to take the object there twice
    (the tiny agent's mistake), then plays what the expert suggests until the game ends."""
    async with pool.episode(task) as episode:
        goal = pick_goal(task.game_file)
        expert = ExploringExpert.following(task.game_file, episode.admissible_commands, strategy)
        parent = next(r for r in receptacles_in_view(episode.admissible_commands) if r.startswith(goal.parent))
        script = [None, f"go to {parent}", f"take {goal.obj} 1 from {parent}", f"take {goal.obj} 1 from {parent}"]
        trajectory = Trajectory(prompt_ids=[0])
        while not episode.done:
            prompt = len(trajectory.steps)
            command = script[prompt] if prompt < len(script) else expert.suggest(episode.admissible_commands)
            if command is None:
                trajectory.steps.append(Step(generation(prompt), None, "malformed"))
                continue
            result = await episode.step(command)
            expert.follow(result.command, result.admissible)
            trajectory.steps.append(Step(generation(prompt), command, result.observation, result.command,
                                         result.admissible))
        trajectory.won = episode.outcome().won
        return trajectory, expert


@pytest.fixture(scope="module")
def played(bundled_root):
    task = next(t for t in load_split(bundled_root, "train") if t.task_type == "pick_and_place_simple")

    async def run(pool):
        async with pool.episode(task) as episode:
            goal = pick_goal(task.game_file)
            order = search_candidates(goal, receptacles_in_view(episode.admissible_commands))[::-1]
        strategy = search_strategy(goal, order)
        trajectory, _ = await play_agent(pool, task, strategy)
        return strategy, order, trajectory

    with EnvPool(num_workers=1, max_steps=40) as pool:
        strategy, order, trajectory = asyncio.run(run(pool))
    return task, strategy, order, trajectory


def test_every_state_the_agent_reached_gets_the_expert_command_of_its_strategy(played):
    task, strategy, order, trajectory = played
    assert trajectory.won and trajectory.steps[2].admissible is False  # the misplaced take was refused
    candidate = StrategyCandidate(generation(-1), strategy)
    rollout = TaskRollout([candidate], [0], [StrategyRollout(candidate, [trajectory])])
    with EnvPool(num_workers=1, max_steps=40) as pool:
        labelled = asyncio.run(relabel(pool, [task], [rollout]))
    assert (labelled.episodes, labelled.diverged, labelled.failed) == (1, 0, 0)
    assert labelled.states == len(trajectory.steps) == len(labelled.labels)
    assert [prompt for prompt, _ in labelled.labels] == [[n] for n in range(len(trajectory.steps))]
    # The strategy names the receptacles backwards; the expert searches in that order, from wherever the agent is:
    # through the malformed reply, at the goal receptacle, and after each refused take.
    first = f"go to {order[0]}"
    assert [command for _, command in labelled.labels[:4]] == [first] * 4
    assert labelled.agreed == len(trajectory.steps) - 4  # the rest was the expert's own play
    assert labelled.summary()["agreement"] == round(labelled.agreed / len(labelled.labels), 4)


def test_a_replay_that_sees_another_observation_stops_and_is_counted(played):
    task, strategy, _, trajectory = played
    steps = list(trajectory.steps)
    steps[2] = dataclasses.replace(steps[2], observation="You see a dragon.")
    with EnvPool(num_workers=1, max_steps=40) as pool:
        labelled = asyncio.run(relabel_trajectory(pool, task, strategy, Trajectory([0], steps)))
    assert labelled.diverged == 1 and len(labelled.labels) == labelled.states == 3
