"""Task lists for the trainer from a WebShop catalogue's goal splits (one parquet per split); what `strata
prepare-data` and `strata play` do for WebShop (WebShop's data folder, or one `strata make-webshop` wrote)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from strata.envs.errors import EnvError, TaskListError
from strata.envs.task_list import PreparedSplit, write_task_list
from strata.envs.tasks import Task
from strata.envs.webshop.catalog import Catalog, load_catalog
from strata.envs.webshop.tasks import DEFAULT_GOALS, TASK_TYPE, check_split, describe_ranges, game_id


def webshop_tasks(folder: str | Path, split: str, goals: str = DEFAULT_GOALS, limit: int | None = None,
                  catalog: Catalog | None = None) -> list[Task]:
    """The goals of ``split`` in WebShop's order (the first ``limit`` when given); loads the catalogue in
    ``folder`` unless ``catalog`` is it."""
    check_split(split)
    catalog = catalog or load_catalog(folder, goals=goals)
    return [Task(game_id(folder, goals, goal), TASK_TYPE, split, index=i)
            for i, goal in enumerate(catalog.split(split)[:limit])]


def prepare_webshop(folder: str | Path, out_dir: str | Path, splits: Sequence[str] | None = None,
                    goals: str = DEFAULT_GOALS, limit: int | None = None,
                    catalog: Catalog | None = None) -> list[PreparedSplit]:
    """Write ``<out_dir>/<split>.parquet`` for each split (default: every split the catalogue's goals have, see
    `strata.envs.webshop.tasks.goal_ranges`), loading the catalogue once (unless ``catalog`` is it)."""
    for split in splits or ():
        check_split(split)
    catalog = catalog or load_catalog(folder, goals=goals)
    splits = splits or tuple(catalog.ranges)
    by_split = {split: webshop_tasks(folder, split, goals, limit, catalog) for split in splits}
    empty = [split for split, tasks in by_split.items() if not tasks]
    if empty:  # checked before any file is written: a failed run leaves no partial set of task lists
        raise TaskListError(f"the catalogue in {folder} has {len(catalog.goals)} {goals} goals and none in "
                            f"{', '.join(empty)} (goal indices: {describe_ranges(catalog.ranges)}); generate more "
                            f"products (`strata make-webshop --products N`) or leave {', '.join(empty)} out of "
                            "--splits")
    prepared = []
    for split, tasks in by_split.items():
        path = write_task_list(tasks, Path(out_dir) / f"{split}.parquet")
        prepared.append(PreparedSplit(split, path, {TASK_TYPE: len(tasks)}, {}))
    return prepared


def prepare_command(args: argparse.Namespace) -> int:
    """`strata prepare-data --env webshop`: the goals of each split, a line a split."""
    if not args.data_path:
        raise EnvError("give --data-path: WebShop's data folder, or one `strata make-webshop` wrote")
    catalog = load_catalog(args.data_path, goals=args.goals)
    prepared = prepare_webshop(args.data_path, args.out, splits=args.splits, goals=args.goals,
                               limit=args.per_task_type, catalog=catalog)
    print(f"WebShop: {catalog.describe()}")
    for split in prepared:
        print(f"{split.split:<6} {split.total:>6} {args.goals} goals  {split.path}")
    return 0


def play_source(args: argparse.Namespace) -> list[Task]:
    """The games `strata play --env webshop` plays: a split of the goals of the catalogue in ``--data-path``."""
    if args.bundled:  # the bundled games are ALFWorld's
        raise EnvError("--bundled is ALFWorld's small generated set; webshop has none: give --data-path (WebShop's "
                       "data/ folder or `strata make-webshop`'s)")
    if not args.data_path:
        raise EnvError("give --data-path (WebShop's data/ folder or `strata make-webshop`'s) or --task-list")
    return webshop_tasks(args.data_path, args.split or "test", args.goals, args.per_task_type)
