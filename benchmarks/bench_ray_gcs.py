"""How Ray's GCS grows with the number of actor tasks, with and without a cap on the task events it keeps.

Every generation request of a run is an actor task; Ray's GCS records each task's events for the dashboard, up to
``task_events_max_num_task_in_gcs`` tasks (Ray's default: 100,000). This starts a local Ray, calls a trivial actor
method ``--rounds`` x ``--tasks`` times and prints the resident memory of the GCS and the raylet after each round,
once per cap given (``default`` = Ray's own). configs/strata_trainer.yaml sets the cap the results chose.

    .venv/bin/python benchmarks/bench_ray_gcs.py --caps default 10000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import psutil


def resident_mib(program: str) -> float:
    """The RSS (MiB) of this session's processes whose executable is named ``program`` (``gcs_server``,
    ``raylet``): the children of this process, so another Ray on the machine is not counted."""
    total = 0
    for process in psutil.Process().children(recursive=True):
        try:
            command = process.cmdline()
            if command and command[0].endswith(program):
                total += process.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


def measure(cap: int | None, rounds: int, tasks: int) -> list[dict]:
    """One Ray session: the GCS's and raylet's memory after each round of ``tasks`` actor calls."""
    import ray

    ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR",
             _system_config={} if cap is None else {"task_events_max_num_task_in_gcs": cap})

    @ray.remote
    class Echo:
        def call(self, value: int) -> int:
            return value

    echo = Echo.remote()
    ray.get(echo.call.remote(0))
    rows = []
    try:
        for done in range(1, rounds + 1):
            ray.get([echo.call.remote(i) for i in range(tasks)])
            time.sleep(2)  # the workers report task events every second
            rows.append({"cap": cap, "tasks": done * tasks, "gcs_mib": round(resident_mib("gcs_server"), 1),
                         "raylet_mib": round(resident_mib("raylet"), 1)})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        ray.shutdown()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--caps", nargs="+", default=["default", "10000"],
                        help="task_events_max_num_task_in_gcs values; 'default' leaves Ray's")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--tasks", type=int, default=5000, help="actor calls a round")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # one cap, in a fresh process (Ray's config is per process)
    args = parser.parse_args()
    if args.one is not None:
        measure(None if args.one == "default" else int(args.one), args.rounds, args.tasks)
        return
    for cap in args.caps:
        subprocess.run([sys.executable, __file__, "--one", cap, "--rounds", str(args.rounds),
                        "--tasks", str(args.tasks)], check=True)


if __name__ == "__main__":
    main()
