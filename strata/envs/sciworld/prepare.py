"""Task lists for the trainer from ScienceWorld's own variation splits (one parquet per split)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from strata.envs.prepare import PreparedSplit
from strata.envs.sciworld.tasks import DEFAULT_TASK_SET, SPLITS, check_split, game_id, resolve_task_types
from strata.envs.task_list import write_task_list
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
