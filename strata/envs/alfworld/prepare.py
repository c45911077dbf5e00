"""Turn an ALFWorld data folder into the per-split task lists the trainer reads; what `strata prepare-data` and
`strata play` do for ALFWorld (its data folder, or the bundled set)."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from strata.envs.alfworld.bundled import bundled_data_path
from strata.envs.alfworld.discovery import load_split, scan_split
from strata.envs.alfworld.tasks import SPLITS, SUBTASKS, check_split
from strata.envs.errors import EnvError
from strata.envs.task_list import PreparedSplit, write_task_list
from strata.envs.tasks import Task


def prepare_data(
    data_path: str | Path,
    out_dir: str | Path,
    splits: Sequence[str] = SPLITS,
    task_types: Iterable[str] | None = None,
) -> list[PreparedSplit]:
    """Scan every split of ``data_path`` first (so a missing split fails before anything is written),
    then write ``<out_dir>/<split>.parquet`` for each."""
    scans = [scan_split(data_path, check_split(split), task_types) for split in splits]
    prepared = []
    for scan in scans:
        path = write_task_list(scan.tasks, Path(out_dir) / f"{scan.split}.parquet")
        prepared.append(PreparedSplit(scan.split, path, scan.counts_by_subtask(), dict(Counter(scan.skipped))))
    return prepared


def prepare_command(args: argparse.Namespace) -> int:
    """`strata prepare-data` for ALFWorld: a table of games per subtask and split."""
    if not (args.bundled or args.data_path):
        raise EnvError("give --data-path or --bundled (or --env sciworld)")
    if args.task_set:
        raise EnvError("--task-set selects ScienceWorld task types (--env sciworld)")
    prepared = prepare_data(bundled_data_path() if args.bundled else args.data_path, args.out,
                            splits=args.splits or SPLITS, task_types=args.task_types)
    print(f"{'split':<14}" + "".join(f"{sub:>7}" for sub in SUBTASKS) + f"{'total':>8}  file")
    for split in prepared:
        counts = "".join(f"{split.counts_by_subtask[sub]:>7}" for sub in SUBTASKS)
        print(f"{split.split:<14}{counts}{split.total:>8}  {split.path}")
        for why, n in sorted(split.skipped.items()):
            print(f"{'':<14}skipped {n} trials: {why}")
    return 0


def play_source(args: argparse.Namespace) -> list[Task]:
    """The games `strata play` plays for ALFWorld: a split of ``--data-path`` or of the bundled set."""
    if not (args.bundled or args.data_path):
        raise EnvError("give --data-path, --task-list or --bundled (or --env sciworld)")
    return load_split(bundled_data_path() if args.bundled else args.data_path, args.split or "valid_seen",
                      args.task_types)
