"""`strata prepare-data`: build the trainer's task lists (one parquet per split) from ALFWorld data, from
ScienceWorld's variation splits (``--env sciworld``) or from a WebShop catalogue's goals (``--env webshop``)."""

from __future__ import annotations

import argparse
import sys

from strata.envs.errors import EnvError
from strata.envs.tasks import SPLITS, SUBTASKS

EXAMPLE = "strata prepare-data --data-path $ALFWORLD_DATA --out data/alfworld"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", choices=("alfworld", "sciworld", "webshop"), default="alfworld",
                        help="sciworld: ScienceWorld's variation splits (train, valid = dev, test); no data folder. "
                        "webshop: the goals of the catalogue in --data-path (test 0-499, valid 500-1499, train)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--data-path", help="folder holding json_2.1.1/ (what alfworld-download fills); WebShop: "
                        "its data/ folder (items_shuffle*.json, items_ins_v2*.json, items_human_ins.json)")
    source.add_argument("--bundled", action="store_true", help="use the small generated set shipped with strata")
    parser.add_argument("--out", required=True, help="folder for <split>.parquet")
    parser.add_argument("--splits", default=None, help=f"comma-separated splits (default {','.join(SPLITS)}; "
                        "ScienceWorld: train,valid,test)")
    parser.add_argument(
        "--task-types", default="", help=f"comma-separated subtasks or task types ({','.join(SUBTASKS)})"
    )
    parser.add_argument("--task-set", default=None, choices=("agentgym", "all"),
                        help="sciworld, without --task-types: agentgym (default: the 23 task types AgentGym's "
                        "ScienceWorld, which the StraTA code runs, keeps) or all 30")
    parser.add_argument("--goals", choices=("human", "synthetic"), default="human",
                        help="webshop: WebShop's human-written goals or its synthetic ones")
    parser.add_argument("--per-task-type", type=int, default=None,
                        help="sciworld: only the first N variations of each task type in each split (a small, "
                        "balanced validation list); webshop: the first N goals of each split")


def run(args: argparse.Namespace) -> int:
    from strata.envs.bundled import bundled_data_path
    from strata.envs.prepare import prepare_data

    if args.env == "sciworld":
        return _run_sciworld(args)
    if args.env == "webshop":
        return _run_webshop(args)
    if not (args.bundled or args.data_path):
        print("error: give --data-path or --bundled (or --env sciworld)", file=sys.stderr)
        return 2
    if args.task_set:
        print("error: --task-set selects ScienceWorld task types (--env sciworld)", file=sys.stderr)
        return 2
    data_path = bundled_data_path() if args.bundled else args.data_path
    try:
        prepared = prepare_data(
            data_path,
            args.out,
            splits=[s for s in (args.splits or ",".join(SPLITS)).split(",") if s],
            task_types=[t for t in args.task_types.split(",") if t],
        )
    except EnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{'split':<14}" + "".join(f"{sub:>7}" for sub in SUBTASKS) + f"{'total':>8}  file")
    for split in prepared:
        counts = "".join(f"{split.counts_by_subtask[sub]:>7}" for sub in SUBTASKS)
        print(f"{split.split:<14}{counts}{split.total:>8}  {split.path}")
        for why, n in sorted(split.skipped.items()):
            print(f"{'':<14}skipped {n} trials: {why}")
    return 0


def _run_sciworld(args: argparse.Namespace) -> int:
    from strata.envs.sciworld.prepare import prepare_sciworld
    from strata.envs.sciworld.tasks import DEFAULT_TASK_SET
    from strata.envs.sciworld.tasks import SPLITS as SCIWORLD_SPLITS

    if args.per_task_type is not None and args.per_task_type < 1:
        print(f"error: --per-task-type must be >= 1, got {args.per_task_type}", file=sys.stderr)
        return 2
    try:
        prepared = prepare_sciworld(
            args.out,
            splits=[s for s in (args.splits or ",".join(SCIWORLD_SPLITS)).split(",") if s],
            task_types=[t for t in args.task_types.split(",") if t],
            per_task_type=args.per_task_type,
            task_set=args.task_set or DEFAULT_TASK_SET,
        )
    except EnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for split in prepared:
        print(f"{split.split:<6} {split.total:>6} variations, {len(split.counts_by_subtask)} task types  {split.path}")
    return 0


def _run_webshop(args: argparse.Namespace) -> int:
    from strata.envs.webshop.prepare import prepare_webshop
    from strata.envs.webshop.tasks import SPLITS as WEBSHOP_SPLITS

    if not args.data_path:
        print("error: give --data-path: WebShop's data folder, or one `strata make-webshop` wrote",
              file=sys.stderr)
        return 2
    if args.per_task_type is not None and args.per_task_type < 1:
        print(f"error: --per-task-type must be >= 1, got {args.per_task_type}", file=sys.stderr)
        return 2
    try:
        prepared = prepare_webshop(args.data_path, args.out,
                                   splits=[s for s in (args.splits or ",".join(WEBSHOP_SPLITS)).split(",") if s],
                                   goals=args.goals, limit=args.per_task_type)
    except (EnvError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for split in prepared:
        print(f"{split.split:<6} {split.total:>6} {args.goals} goals  {split.path}")
    return 0
