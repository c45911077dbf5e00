"""`strata play`: run a whole split with a scripted policy through the env pool; print the success table."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from strata.cli_types import comma_list, positive_int
from strata.envs.alfworld.tasks import SPLITS, SUBTASKS
from strata.envs.errors import EnvError
from strata.envs.policies import POLICY_HELP, POLICY_NAMES
from strata.envs.registry import all_splits, environment, environment_names
from strata.envs.sciworld.tasks import SPLITS as SCIWORLD_SPLITS
from strata.envs.webshop.tasks import DEFAULT_GOALS, GOAL_KINDS

EXAMPLE = "strata play --policy walkthrough --data-path $ALFWORLD_DATA --split valid_seen --out results.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", choices=POLICY_NAMES, required=True,
                        help="; ".join(f"{name}: {what}" for name, what in POLICY_HELP.items()))
    parser.add_argument("--env", choices=environment_names(), default="alfworld")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--data-path", help="folder holding json_2.1.1/ (ALFWorld data or generated games); "
                        "WebShop: its data/ folder or one `strata make-webshop` wrote")
    source.add_argument("--task-list", help="a parquet task list written by `strata prepare-data`")
    source.add_argument("--bundled", action="store_true",
                        help="ALFWorld only: the small generated set shipped with strata")
    parser.add_argument(
        "--split", choices=all_splits(), default=None,
        help=f"ALFWorld: {'/'.join(SPLITS)} (with --data-path or --bundled; default valid_seen); "
        f"ScienceWorld and WebShop: {'/'.join(SCIWORLD_SPLITS)} (default valid; WebShop: test)",
    )
    parser.add_argument("--per-task-type", type=positive_int,
                        help="ScienceWorld: the first N variations per task type; WebShop: the first N goals")
    parser.add_argument("--goals", choices=GOAL_KINDS, default=DEFAULT_GOALS,
                        help="WebShop's goal kind (default synthetic, as verl-agent and AgentGym)")
    parser.add_argument("--task-types", type=comma_list, default="",
                        help=f"comma-separated subtasks or task types ({','.join(SUBTASKS)})")
    parser.add_argument("--out", help="write the table, metrics and every episode's outcome here (JSON)")
    parser.add_argument("--num-workers", type=positive_int, default=2)
    parser.add_argument("--max-steps", type=positive_int, default=None,
                        help="episode horizon (default: the environment's, "
                        + ", ".join(f"{name} {environment(name).part('max_steps')}" for name in environment_names())
                        + ")")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random policy")


PROGRESS_EVERY_S = 10.0


def progress_printer(total: int, began: float, every_s: float = PROGRESS_EVERY_S,
                     clock: Callable[[], float] = time.perf_counter) -> Callable[[int], None]:
    """A callback that prints ``played N/TOTAL games (S s)`` to stderr at most every ``every_s`` seconds, and
    never for a play that ends sooner: a long play (a whole ScienceWorld split) shows that it moves."""
    last = began

    def printed(done: int) -> None:
        nonlocal last
        now = clock()
        if now - last >= every_s and done < total:
            print(f"played {done}/{total} games ({now - began:.0f} s)", file=sys.stderr, flush=True)
            last = now

    return printed


def run(args: argparse.Namespace) -> int:
    from strata.envs.metrics import end_reasons, success_table
    from strata.envs.play import play_tasks
    from strata.envs.pool import EnvPool
    from strata.envs.task_list import read_task_list

    try:
        tasks = read_task_list(args.task_list) if args.task_list else environment(args.env).part("play_source")(args)
    except EnvError as exc:  # an OSError is strata.cli's to report
        print(f"error: {exc}", file=sys.stderr)
        return 2
    began = time.perf_counter()
    max_steps = args.max_steps or environment(args.env).part("max_steps")
    with EnvPool(num_workers=args.num_workers, max_steps=max_steps, engine=args.env) as pool:
        outcomes = asyncio.run(play_tasks(pool, tasks, args.policy, seed=args.seed,
                                          on_episode=progress_printer(len(tasks), began)))
    table = success_table(outcomes)
    reasons = end_reasons(outcomes)
    print(f"{args.policy} policy, {len(tasks)} games, {time.perf_counter() - began:.1f}s")
    print(table.format(played_only=bool(args.task_types)))  # only the task types asked for
    print("end reasons: " + ", ".join(f"{why} {n}" for why, n in reasons.items()))
    scores = [o.score for o in outcomes if o.score is not None]
    if scores:  # ScienceWorld's and WebShop's own metric: the mean final score x 100
        print(f"mean score: {100 * sum(scores) / len(scores):.1f}")
    if args.out:
        report = {
            "policy": args.policy,
            "source": args.task_list or ("bundled" if args.bundled else args.data_path),
            "split": args.split,
            "table": table.to_dict(),
            "metrics": table.to_metrics("val"),
            "end_reasons": reasons,
            "episodes": [asdict(o) for o in outcomes],
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1))
        print(f"wrote {args.out}")
    return 0
