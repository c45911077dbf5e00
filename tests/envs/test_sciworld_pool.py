"""ScienceWorld on its real simulator through the env pool: gold wins, random does not, and a bad action, a
killed JVM and a hung step are counted outcomes."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
import scienceworld  # noqa: F401  (a hard dependency: a broken install fails here, never skips)

from strata.envs.metrics import end_reasons, success_table
from strata.envs.play import play_tasks
from strata.envs.pool import EnvPool
from strata.envs.records import REASON_TIMEOUT, REASON_WORKER_LOST
from strata.envs.sciworld.engine import JVM_OPTIONS
from strata.envs.sciworld.prepare import sciworld_tasks
from strata.envs.sciworld.tasks import TASK_TYPES, game_id
from strata.envs.tasks import Task


def java_children(pid: int) -> list[int]:
    """Process ids of the java processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                comm = (entry / "comm").read_text().strip()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and comm == "java":
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """The process exists and is not a zombie (a container's PID 1 may never reap orphans)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def task(task_type: str = "find-non-living-thing", variation: int = 0) -> Task:
    return Task(game_id(task_type, variation), task_type, "valid", 0)


@pytest.fixture(scope="module")
def pool():
    with EnvPool(num_workers=1, max_steps=20, engine="sciworld") as p:
        p.wait_ready()
        yield p


# The gold test must not win or lose by chance. ScienceWorld seeds its one RNG (scala.util.Random, global to
# the JVM) with the variation number on every load, but its objects live in hash sets keyed by the JVM's
# identity hash codes, which depend on what the JVM did before: their iteration order, and with it which pot
# gets which seed, where the bees fly and so the gold agent's (adaptive, state-reading) sequence, changes from
# load to load. The simulator has no seed method that would fix this (PythonInterface has load, reset, step...).
# Measured (dev variations, default JVM, the same variation loaded again and again in fresh and used JVMs):
#   - mendelian-genetics-known-plant (variation 60): 12 loads, gold paths of 146-150 steps, all won (145-149).
#   - mendelian-genetics-unknown-plant (variation 240): 10 loads, 9 won (132-149 steps); one gold path of 264
#     steps focuses on the green box: LOST (-1). The gold agent calls dominant vs recessive by a majority over
#     the second generation grown from bee-pollinated seeds, and some pollinations give it the wrong answer at
#     load time (the CI failure: known-plant LOST after 260 steps); no replay can fix a wrong plan.
#   - 12 more task types got another gold sequence on a second load (boil 42 vs 44 steps, freeze 37 vs 41,
#     change-the-state-of-matter-of, melt, find-living-thing, find-non-living-thing, find-plant, grow-fruit,
#     chemistry-mix, chemistry-mix-paint-tertiary-color, identify-life-stages-2,
#     inclined-plane-friction-named-surfaces); they won in every run seen.
# Every task type gets the same treatment: -XX:hashCode=2 (every identity hash is 1) makes the hash sets keep
# insertion order, so a load depends only on the variation. With it, each task type's gold sequence was the
# same on every load, in fresh JVMs and after other games (mendelian known: 150 steps, won at 149, 9 loads;
# unknown: 148, won at 147, 7 loads), all 30 won, and this test's two workers won each task type in the same
# number of steps as one JVM did. The RNG is shared by a JVM's simulators, so one live episode per worker
# (concurrency == num_workers: the pool gives an episode to the least-loaded worker). Only this test asks for
# it (JAVA_TOOL_OPTIONS, read by the JVMs of the pool's workers): the hash collisions cost the simulator
# ~15-20% in speed, and training, several live episodes per JVM, could not be made reproducible by it anyway.
# This test's gold run took 33-70 s with it (6 runs) and 51-57 s without (3 runs) on a shared, busy 2-core VM.
# The cap only has to stay out of the gold paths' way (150 steps at most).
DETERMINISTIC_JVM = "-XX:+UnlockExperimentalVMOptions -XX:hashCode=2"
GOLD_STEP_CAP = 1000


@pytest.mark.slow
def test_gold_wins_one_dev_variation_of_every_task_type(monkeypatch):
    tasks = sciworld_tasks("valid", per_task_type=1, task_set="all")
    assert sorted({t.task_type for t in tasks}) == sorted(TASK_TYPES)
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} {DETERMINISTIC_JVM}".strip())
    began = time.perf_counter()
    with EnvPool(num_workers=2, max_steps=GOLD_STEP_CAP, engine="sciworld") as pool:
        pool.wait_ready()
        for worker in pool.worker_pids:
            (jvm,) = java_children(worker)
            assert DETERMINISTIC_JVM in Path(f"/proc/{jvm}/environ").read_text()
        outcomes = asyncio.run(play_tasks(pool, tasks, "gold", concurrency=pool.num_workers))
    table = success_table(outcomes)
    print(f"gold on {len(tasks)} dev variations: {time.perf_counter() - began:.0f}s\n{table.format()}")
    assert end_reasons(outcomes) == {"won": len(tasks)}
    assert all(o.score == 1.0 for o in outcomes)


def test_random_policy_does_not_win(pool):
    tasks = [task(t) for t in ("boil", "find-animal", "chemistry-mix", "test-conductivity")]
    outcomes = asyncio.run(play_tasks(pool, tasks, "random", seed=0))
    assert not any(o.won for o in outcomes)
    assert {o.reason for o in outcomes} <= {"step_limit", "lost"}


def resident_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS"))) / 1024


def test_the_jvm_keeps_a_small_heap_with_many_live_episodes(pool):
    # Left to its own sizing the JVM grew to 2.2-2.7 GB here on this run (a quarter of the RAM is its limit).
    (jvm,) = java_children(pool.worker_pids[0])
    command = Path(f"/proc/{jvm}/cmdline").read_text().split("\0")
    assert set(JVM_OPTIONS) <= set(command)
    asyncio.run(play_tasks(pool, sciworld_tasks("valid", per_task_type=1, task_set="all"), "random", concurrency=9,
                           seed=0))
    assert resident_mib(jvm) < 1024


def test_bad_action_costs_a_step_and_the_episode_goes_on(pool):
    async def play():
        async with pool.episode(task()) as episode:
            assert "Your task is to" in episode.task_description
            assert "door to kitchen" in episode.admissible_commands or episode.admissible_commands
            bad = await episode.step("flibber the jabber")
            good = await episode.step("  Look around. ")
            return episode, bad, good

    episode, bad, good = asyncio.run(play())
    assert (bad.admissible, bad.done, bad.failure, bad.score) == (False, False, None, 0.0)
    assert good.admissible and good.command == "look around" and "This room is called" in good.observation
    assert episode.num_steps == 2 and episode.outcome().reason == "abandoned"


def test_killed_jvm_is_a_counted_worker_crash():
    with EnvPool(num_workers=1, max_steps=20, engine="sciworld") as pool:
        pool.wait_ready()
        worker = pool.worker_pids[0]
        (jvm,) = java_children(worker)

        async def play():
            async with pool.episode(task()) as first, pool.episode(task("find-animal")) as second:
                await first.step("look around")
                os.kill(jvm, signal.SIGKILL)
                time.sleep(0.5)
                crashed = await first.step("look around")
                other = await second.step("look around")
                return crashed, other

        crashed, other = asyncio.run(play())
        assert crashed.done and crashed.failure.startswith("engine_error: worker process died")
        assert other.failure in (REASON_WORKER_LOST, crashed.failure) or other.failure.startswith("engine_error")
        deadline = time.monotonic() + 60
        while pool.workers_replaced < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.workers_replaced == 1
        pool.wait_ready()
        outcomes = asyncio.run(play_tasks(pool, [task()], "gold"))  # the replacement has a fresh JVM
        assert outcomes[0].won


def test_hung_step_times_out_and_leaves_no_java_behind():
    with EnvPool(num_workers=1, max_steps=20, engine="sciworld", step_timeout_s=2.0) as pool:
        pool.wait_ready()
        worker = pool.worker_pids[0]
        (jvm,) = java_children(worker)

        async def play():
            async with pool.episode(task()) as episode:
                os.kill(jvm, signal.SIGSTOP)  # the JVM hangs: the step never returns
                return await episode.step("look around")

        result = asyncio.run(play())
        assert result.done and result.failure == REASON_TIMEOUT
        deadline = time.monotonic() + 30
        while running(jvm) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(jvm), "the killed worker's JVM outlived it"
