"""The worker pool on the real engine: parallel episodes, resets, and failures that stay local."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from strata.envs.alfworld.discovery import load_split
from strata.envs.play import play_episode
from strata.envs.pool import EnvPool
from strata.envs.tasks import Task


def assert_reaped(pids: list[int]) -> None:
    """No process of ``pids`` exists any more (not even as a zombie: they were waited for)."""
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not {p.pid for p in multiprocessing.active_children()} & set(pids)


@pytest.fixture(scope="module")
def pool() -> Iterator[EnvPool]:
    with EnvPool(num_workers=2, max_steps=50) as pool:
        pool.wait_ready()
        pids = pool.worker_pids
        yield pool
    assert_reaped(pids)


def test_walkthrough_wins_and_resets_are_identical(pool: EnvPool, bundled_root: Path) -> None:
    tasks = load_split(bundled_root, "valid_seen", ["look", "pick2"])[:2]

    async def first_view(task: Task) -> tuple[str, tuple[str, ...]]:
        async with pool.episode(task) as ep:
            view = (ep.initial_observation, ep.admissible_commands)
            await ep.step(ep.admissible_commands[0])  # moving on does not change the next episode's start
            return view

    async def won_then_refused(task: Task) -> tuple:
        async with pool.episode(task, with_walkthrough=True) as ep:
            results = [await ep.step(command) for command in ep.walkthrough]
            with pytest.raises(RuntimeError, match="is over \\(won\\)"):
                await ep.step("look")
            return results, ep.outcome()

    async def run() -> tuple:
        played = await asyncio.gather(*(won_then_refused(t) for t in tasks))
        views = await asyncio.gather(*(first_view(tasks[0]) for _ in range(4)))  # M = 4 from one state
        return played, views

    played, views = asyncio.run(run())
    for task, (results, outcome) in zip(tasks, played, strict=True):
        plan = json.loads(Path(task.game_file).read_text())["walkthrough"]
        assert [r.won for r in results] == [False] * (len(plan) - 1) + [True]
        assert results[-1].done and results[-1].reward == 1.0
        assert (outcome.won, outcome.reason, outcome.num_steps, outcome.subtask) == (
            True,
            "won",
            len(plan),
            task.subtask,
        )
    assert len(set(views)) == 1 and views[0][0].startswith("-= Welcome to TextWorld, ALFRED! =-")


def test_many_concurrent_episodes(pool: EnvPool, bundled_root: Path) -> None:
    tasks = load_split(bundled_root, "train")[:2] * 4  # 8 live episodes at once, 4 per worker

    async def walk(task: Task) -> tuple[int, bool, int]:
        async with pool.episode(task) as ep:
            results = [await ep.step("look") for _ in range(2)]
            return ep.num_steps, results[-1].done, ep._worker.slot

    async def run() -> list:
        return await asyncio.gather(*(walk(t) for t in tasks))

    results = asyncio.run(run())
    assert [r[:2] for r in results] == [(2, False)] * 8
    assert sorted(r[2] for r in results) == [0] * 4 + [1] * 4  # least-loaded assignment balances


def test_workers_map_actions_written_like_a_person_unless_switched_off(pool: EnvPool, bundled_root: Path) -> None:
    task = load_split(bundled_root, "valid_seen", ["clean"])[0]

    async def first_step(env: EnvPool) -> tuple:
        async with env.episode(task) as ep:
            command = next(c for c in ep.admissible_commands if c.startswith("go to "))
            return command, await ep.step(f"* `{command.upper()}`!")

    command, mapped = asyncio.run(first_step(pool))
    assert (mapped.command, mapped.admissible) == (command, True)
    assert mapped.observation.startswith("You arrive at ") and "help" not in mapped.admissible_commands
    with EnvPool(num_workers=1, normalize_actions=False) as exact:
        command, sent = asyncio.run(first_step(exact))
    assert (sent.observation, sent.command, sent.admissible) == ("Nothing happens.", f"* `{command.upper()}`!", False)


def corrupt_copy(task: Task, tmp_path: Path) -> Task:
    """A game whose PDDL problem the engine cannot parse (valid JSON, so discovery accepts it)."""
    folder = tmp_path / "json_2.1.1" / "valid_seen" / "pick_and_place_simple-Mug-None-Desk-301" / "trial_T0_0_1"
    folder.mkdir(parents=True)
    game = json.loads(Path(task.game_file).read_text())
    game["pddl_problem"] = game["pddl_problem"][: len(game["pddl_problem"]) // 2]  # cut mid-way: unbalanced
    (folder / "game.tw-pddl").write_text(json.dumps(game))
    shutil.copy(Path(task.game_file).parent / "traj_data.json", folder / "traj_data.json")
    return Task(str(folder / "game.tw-pddl"), task.task_type, "valid_seen")


def test_engine_error_ends_only_that_episode(pool: EnvPool, bundled_root: Path, tmp_path: Path) -> None:
    good = load_split(bundled_root, "valid_seen", ["heat"])[0]
    bad = corrupt_copy(good, tmp_path)
    replaced_before = pool.workers_replaced

    async def run() -> tuple:
        async def broken():
            async with pool.episode(bad) as ep:
                assert ep.done and ep.initial_observation == ""
                return ep.outcome()

        return await asyncio.gather(broken(), play_episode(pool, good, "walkthrough"), broken())

    failed, won, failed_again = asyncio.run(run())
    assert failed.reason.startswith(f"engine_error: {bad.game_file}: ") and "\n" not in failed.reason
    assert not failed.won and failed.num_steps == 0
    assert failed_again.reason == failed.reason
    assert won.won and pool.workers_replaced == replaced_before  # engine errors do not cost a worker


def test_timeout_and_crash_end_only_their_worker_episodes(bundled_root: Path) -> None:
    tasks = load_split(bundled_root, "valid_seen")
    with EnvPool(num_workers=2) as pool:
        pool.wait_ready()
        first_pids = pool.worker_pids

        async def run() -> dict:
            async with pool.episode(tasks[0]) as a, pool.episode(tasks[1], with_walkthrough=True) as b:
                assert {a._worker.slot, b._worker.slot} == {0, 1}
                # Loading takes > 0.3 s, so this start runs over its 0.01 s budget: its worker is replaced.
                async with pool.episode(tasks[2], start_timeout_s=0.01) as victim:
                    assert victim._worker is a._worker
                    timed_out = victim.outcome()
                lost = await a.step("look")
                b_results = [await b.step(c) for c in b.walkthrough]
                return {"timed_out": timed_out, "lost": lost, "lost_outcome": a.outcome(), "b": b_results[-1]}

        results = asyncio.run(run())
        assert results["timed_out"].reason == "timeout" and results["timed_out"].num_steps == 0
        assert results["lost"].done and results["lost"].failure == "worker_lost"
        assert (results["lost"].command, results["lost"].admissible) == ("look", False)  # the engine never answered
        assert results["lost_outcome"].reason == "worker_lost"
        assert results["b"].won  # the other worker's episode went on
        assert pool.workers_replaced == 1
        seen_pids = set(first_pids) | set(pool.worker_pids)

        async def after_crash() -> tuple:
            async with pool.episode(tasks[3]) as c, pool.episode(tasks[4], with_walkthrough=True) as d:
                os.kill(c._worker.process.pid, signal.SIGKILL)
                deadline = time.monotonic() + 30
                while c.failure is None and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                crashed = await c.step("look")
                d_results = [await d.step(x) for x in d.walkthrough]
            return crashed, d_results[-1], await play_episode(pool, tasks[5], "walkthrough")

        crashed, d_last, fresh = asyncio.run(after_crash())
        assert crashed.failure == "worker_lost" and crashed.done
        assert d_last.won and fresh.won  # replacement workers serve new episodes
        assert pool.workers_replaced == 2
        all_pids = seen_pids | set(pool.worker_pids)
    assert len(all_pids) == 4  # two workers, each replaced once
    assert_reaped(sorted(all_pids))
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(play_episode(pool, tasks[0], "walkthrough"))
