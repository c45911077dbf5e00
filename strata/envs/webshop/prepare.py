"""Task lists for the trainer from a WebShop catalogue's goal splits (one parquet per split)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from strata.envs.errors import TaskListError
from strata.envs.prepare import PreparedSplit
from strata.envs.task_list import write_task_list
from strata.envs.tasks import Task
from strata.envs.webshop.catalog import GOAL_RANGES, Catalog, load_catalog
from strata.envs.webshop.tasks import SPLITS, TASK_TYPE, check_split, game_id


def webshop_tasks(folder: str | Path, split: str, goals: str = "human", limit: int | None = None,
                  catalog: Catalog | None = None) -> list[Task]:
    """The goals of ``split`` in WebShop's order (the first ``limit`` when given); loads the catalogue in
    ``folder`` unless ``catalog`` is it."""
    check_split(split)
    catalog = catalog or load_catalog(folder, goals=goals)
    return [Task(game_id(folder, goals, goal), TASK_TYPE, split, index=i)
            for i, goal in enumerate(catalog.split(split)[:limit])]


def prepare_webshop(folder: str | Path, out_dir: str | Path, splits: Sequence[str] = SPLITS, goals: str = "human",
                    limit: int | None = None) -> list[PreparedSplit]:
    """Write ``<out_dir>/<split>.parquet`` for each split (train / valid / test), loading the catalogue once."""
    for split in splits:
        check_split(split)
    catalog = load_catalog(folder, goals=goals)
    by_split = {split: webshop_tasks(folder, split, goals, limit, catalog) for split in splits}
    empty = [split for split, tasks in by_split.items() if not tasks]
    if empty:  # checked before any file is written: a failed run leaves no partial set of task lists
        ranges = ", ".join(f"{name} {start}-{'' if stop is None else stop - 1}" for name, (start, stop) in
                           GOAL_RANGES.items())
        raise TaskListError(f"the catalogue in {folder} has {len(catalog.goals)} {goals} goals and none in "
                            f"{', '.join(empty)} (goal indices: {ranges}); generate more products (`strata "
                            f"make-webshop --products N`, two human goals each) or leave {', '.join(empty)} out of "
                            f"--splits")
    prepared = []
    for split, tasks in by_split.items():
        path = write_task_list(tasks, Path(out_dir) / f"{split}.parquet")
        prepared.append(PreparedSplit(split, path, {TASK_TYPE: len(tasks)}, {}))
    return prepared
