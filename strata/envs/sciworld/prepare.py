"""Task lists for the trainer from ScienceWorld's own variation splits (one parquet per split); what `strata
prepare-data` and `strata play` do for ScienceWorld (no data folder: the simulator holds its variations)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from strata.envs.errors import EnvError
from strata.envs.sciworld.tasks import DEFAULT_TASK_SET, SPLITS, check_split, game_id, resolve_task_types
from strata.envs.task_list import PreparedSplit, write_task_list
from strata.envs.tasks import Task


def sciworld_tasks(
    split: str, task_types: Sequence[str] | None = None, per_task_type: int | None = None,
    task_set: str = DEFAULT_TASK_SET,
) -> list[Task]:
    """The games of ``split``: every variation of each selected task type (``task_types``, else those of
    ``task_set``; the first ``per_task_type`` variations of each when given), task types in the simulator's
    order. Starts a JVM (~1 s)."""
    from strata.envs.sciworld.engine import SciWorldEngine

    check_split(split)
    selected = resolve_task_types(task_types, task_set)
    engine = SciWorldEngine()
    tasks: list[Task] = []
    for task_type in selected:
        for variation in engine.variations(task_type, split)[:per_task_type]:
            tasks.append(Task(game_id(task_type, variation), task_type, split, index=len(tasks)))
    return tasks


def prepare_sciworld(
    out_dir: str | Path,
    splits: Sequence[str] = SPLITS,
    task_types: Sequence[str] | None = None,
    per_task_type: int | None = None,
    task_set: str = DEFAULT_TASK_SET,
) -> list[PreparedSplit]:
    """Write ``<out_dir>/<split>.parquet`` for each split (train / valid / test)."""
    prepared = []
    for split in splits:
        tasks = sciworld_tasks(split, task_types, per_task_type, task_set)
        path = write_task_list(tasks, Path(out_dir) / f"{split}.parquet")
        counts: dict[str, int] = {}
        for task in tasks:
            counts[task.subtask] = counts.get(task.subtask, 0) + 1
        prepared.append(PreparedSplit(split, path, counts, {}))
    return prepared


def prepare_command(args: argparse.Namespace) -> int:
    """`strata prepare-data --env sciworld`: the variations of each split, a line a split."""
    prepared = prepare_sciworld(args.out, splits=args.splits or SPLITS, task_types=args.task_types,
                                per_task_type=args.per_task_type, task_set=args.task_set or DEFAULT_TASK_SET)
    for split in prepared:
        print(f"{split.split:<6} {split.total:>6} variations, {len(split.counts_by_subtask)} task types  {split.path}")
    return 0


def play_source(args: argparse.Namespace) -> list[Task]:
    """The games `strata play --env sciworld` plays: a split of the simulator's own variations."""
    if args.bundled:  # the bundled games are ALFWorld's
        raise EnvError("--bundled is ALFWorld's small generated set; sciworld has none: give --split and "
                       "--per-task-type (ScienceWorld's own variations), or --task-list")
    return sciworld_tasks(args.split or "valid", args.task_types, args.per_task_type)
