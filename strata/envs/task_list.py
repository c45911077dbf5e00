"""The task lists the trainer reads: one parquet file per split, one row per game.

Columns are what verl's ``RLHFDataset`` needs (``data_source``, ``prompt``, ``agent_name``) plus
``extra_info`` with everything needed to start the episode. The ``prompt`` column holds only the task
description as one user message: StraTA's rollout builds the real prompts from the live observation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strata.envs.errors import EnvError, TaskListError
from strata.envs.registry import environment
from strata.envs.tasks import Task

AGENT_NAME = "strata_agent"
COLUMNS = ("data_source", "prompt", "agent_name", "extra_info")


@dataclass(frozen=True)
class PreparedSplit:
    """One written task list: where, how many games per subtask, and which trials were left out."""

    split: str
    path: Path
    counts_by_subtask: dict[str, int]
    skipped: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts_by_subtask.values())


def task_row(task: Task) -> dict[str, Any]:
    """One parquet row for ``task`` (reads the task description from its game file).

    The description is the environment's (`strata.envs.registry`): ALFWorld's goal sentence; ScienceWorld's task
    type and variation (its goal sentence exists only once the simulator has loaded the variation); the WebShop
    goal's name (its instruction needs the catalogue loaded).
    """
    extra_info = {
        "game_file": task.game_file,
        "task_type": task.task_type,
        "subtask": task.subtask,
        "split": task.split,
        "index": task.index,
    }
    description, extra = environment(task.environment).part("task_row")(task)
    extra_info |= extra
    return {
        "data_source": task.environment,
        "prompt": [{"role": "user", "content": description}],
        "agent_name": AGENT_NAME,
        "extra_info": extra_info,
    }


def write_task_list(tasks: Sequence[Task], path: str | Path) -> Path:
    """Write ``tasks`` as a parquet task list at ``path`` (parent folders are created)."""
    import pandas as pd

    if not tasks:
        raise TaskListError(f"{path}: refusing to write an empty task list")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([task_row(task) for task in tasks], columns=list(COLUMNS)).to_parquet(out, index=False)
    return out


def read_task_list(path: str | Path) -> list[Task]:
    """The tasks of a parquet task list, checked: columns present, game files existing."""
    import pandas as pd

    source = Path(path)
    if not source.is_file():
        raise TaskListError(f"task list {source} does not exist; build it with `strata prepare-data`")
    try:
        frame = pd.read_parquet(source)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid (empty, truncated, not parquet) is a ValueError
        raise TaskListError(f"{source} is not a readable task list ({exc}); rebuild it with `strata prepare-data`") \
            from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise TaskListError(f"{source}: missing columns {', '.join(missing)}; rebuild it with `strata prepare-data`")
    tasks = []
    for row, info in enumerate(frame["extra_info"]):
        try:
            task = Task(
                game_file=info["game_file"],
                task_type=info["task_type"],
                split=info["split"],
                index=int(info["index"]),
            )
        except (KeyError, TypeError, ValueError, EnvError) as exc:
            raise TaskListError(f"{source}: row {row} has a bad extra_info ({exc}); rebuild the task list") from exc
        if task.has_game_file and not Path(task.game_file).is_file():
            raise TaskListError(
                f"{source}: row {row} names {task.game_file}, which does not exist; "
                "re-run `strata prepare-data` where the games are now"
            )
        tasks.append(task)
    return tasks


def task_list_digest(tasks: Sequence[Task]) -> str:
    """SHA-256 of ``tasks`` in their order, from what each game is (an ALFWorld game file's bytes, a ScienceWorld
    task and variation id, a WebShop goal's kind and index with its catalogue's `catalog_digest`), not where it
    lies: the same evaluation set gives the same digest on every machine, and another membership or order gives
    another. Evaluations that differ in it are not comparable."""
    memo: dict = {}  # what one environment's fingerprints reuse between tasks (a WebShop catalogue's digest)
    digest = hashlib.sha256()
    for task in tasks:
        game = environment(task.environment).part("game_fingerprint")(task, memo)
        digest.update(f"{task.task_type}\t{game}\n".encode())
    return digest.hexdigest()
