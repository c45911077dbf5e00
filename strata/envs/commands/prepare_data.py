"""`strata prepare-data`: build the trainer's task lists (one parquet per split) from ALFWorld data, from
ScienceWorld's variation splits (``--env sciworld``) or from a WebShop catalogue's goals (``--env webshop``)."""

from __future__ import annotations

import argparse
import sys

from strata.cli_types import comma_list, positive_int
from strata.envs.alfworld.tasks import SPLITS, SUBTASKS
from strata.envs.errors import EnvError
from strata.envs.registry import environment, environment_names
from strata.envs.webshop.tasks import DEFAULT_GOALS, GOAL_KINDS

EXAMPLE = "strata prepare-data --data-path $ALFWORLD_DATA --out data/alfworld"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", choices=environment_names(), default="alfworld",
                        help="sciworld: ScienceWorld's variation splits (train, valid = dev, test); no data folder. "
                        "webshop: the goals of the catalogue in --data-path (the 1,000-product files: test 0-499, "
                        "train the rest; human goals of the full catalogue: test 0-499, valid 500-1499, train)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--data-path", help="folder holding json_2.1.1/ (what alfworld-download fills); WebShop: "
                        "its data/ folder (items_shuffle*.json, items_ins_v2*.json, items_human_ins.json)")
    source.add_argument("--bundled", action="store_true", help="use the small generated set shipped with strata")
    parser.add_argument("--out", required=True, help="folder for <split>.parquet")
    parser.add_argument("--splits", type=comma_list, default=None,
                        help=f"comma-separated splits (default {','.join(SPLITS)}; ScienceWorld: "
                        "train,valid,test; WebShop: every split of its goals)")
    parser.add_argument("--task-types", type=comma_list, default="",
                        help=f"comma-separated subtasks or task types ({','.join(SUBTASKS)})")
    parser.add_argument("--task-set", default=None, choices=("agentgym", "all"),
                        help="sciworld, without --task-types: agentgym (default: the 23 task types AgentGym's "
                        "ScienceWorld, which the StraTA code runs, keeps) or all 30")
    parser.add_argument("--goals", choices=GOAL_KINDS, default=DEFAULT_GOALS,
                        help="webshop: WebShop's synthetic goals (default, as verl-agent and AgentGym) or its "
                        "human-written ones")
    parser.add_argument("--per-task-type", type=positive_int, default=None,
                        help="sciworld: only the first N variations of each task type in each split (a small, "
                        "balanced validation list); webshop: the first N goals of each split")


def run(args: argparse.Namespace) -> int:
    try:
        return int(environment(args.env).part("prepare")(args))
    except EnvError as exc:  # an OSError is strata.cli's to report
        print(f"error: {exc}", file=sys.stderr)
        return 2
