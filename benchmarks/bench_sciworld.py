"""ScienceWorld throughput on the real simulator: JVM start, steps/s with 1 and 2 workers, and a gold sweep.

Run under the shared lock: ``flock /tmp/strata-heavy.lock .venv/bin/python benchmarks/bench_sciworld.py``.
Steps/s: the random policy (what the model's early actions look like to the simulator) on the first
``--per-task-type`` valid variations of every task type, ``--max-steps`` steps each, 4 episodes per worker in
flight. Gold sweep: the gold policy on the first ``--gold-per-task-type`` valid variations of every task type.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from strata.envs.metrics import end_reasons
from strata.envs.play import play_tasks
from strata.envs.pool import EnvPool
from strata.envs.sciworld.prepare import sciworld_tasks


def jvm_start_s() -> float:
    from strata.envs.sciworld.engine import Jvm

    began = time.perf_counter()
    jvm = Jvm()
    jvm.simulator().load("boil", 0, "", False)  # the first call loads the simulator's classes
    elapsed = time.perf_counter() - began
    jvm.process.stdin.close()
    jvm.process.wait(timeout=30)
    return elapsed


def steps_per_s(workers: int, per_task_type: int, max_steps: int) -> tuple[float, int]:
    tasks = sciworld_tasks("valid", per_task_type=per_task_type)
    with EnvPool(num_workers=workers, max_steps=max_steps, engine="sciworld") as pool:
        pool.wait_ready()
        # Warm-up, untimed: each JVM compiles the simulator's hot paths during its first episodes.
        asyncio.run(play_tasks(pool, tasks[:4 * workers], "random", seed=1, concurrency=4 * workers))
        began = time.perf_counter()
        outcomes = asyncio.run(play_tasks(pool, tasks, "random", concurrency=4 * workers))
        elapsed = time.perf_counter() - began
    steps = sum(o.num_steps for o in outcomes)
    return steps / elapsed, steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-task-type", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--gold-per-task-type", type=int, default=3)
    args = parser.parse_args()
    print(f"JVM start + first load: {jvm_start_s():.2f}s")
    for workers in (1, 2):
        rate, steps = steps_per_s(workers, args.per_task_type, args.max_steps)
        print(f"{workers} worker(s): {rate:.1f} steps/s ({steps} random-policy steps incl. episode starts)")
    tasks = sciworld_tasks("valid", per_task_type=args.gold_per_task_type)
    began = time.perf_counter()
    with EnvPool(num_workers=2, max_steps=200, engine="sciworld") as pool:
        outcomes = asyncio.run(play_tasks(pool, tasks, "gold", concurrency=2))
    print(f"gold sweep: {len(tasks)} valid variations, {time.perf_counter() - began:.0f}s, {end_reasons(outcomes)}")
    # Gold path lengths against the episode horizon H the recipes use (env.max_steps=50).
    lengths = sorted(o.num_steps for o in outcomes if o.won)
    if lengths:
        within = sum(n <= 50 for n in lengths)
        print(f"gold path length: min {lengths[0]}, median {lengths[len(lengths) // 2]}, max {lengths[-1]}; "
              f"{within}/{len(lengths)} within 50 steps")
        longest = {}
        for o in outcomes:
            longest[o.subtask] = max(longest.get(o.subtask, 0), o.num_steps)
        print("longest gold path per task type:", ", ".join(f"{k} {v}" for k, v in longest.items()))


if __name__ == "__main__":
    main()
