"""Hold ``trainer.max_actor_ckpt_to_keep`` across restarts: after each save, remove what earlier jobs left beyond it.

verl prunes only the checkpoints its running process saved (it keeps their paths in memory), so every restart of a
job that resumes, such as a SLURM resubmission, starts with an empty list and never removes what earlier jobs
wrote: a 7B run (~85 GiB a checkpoint) resubmitted five times with ``max_actor_ckpt_to_keep=2`` could leave ten.
When a run resumed from its own ``default_local_dir`` (so the earlier jobs' checkpoints are this run's), each save
applies verl's rule to every step on disk up to the one just saved: the newest ``keep`` stay. A run that started
from scratch or resumed from elsewhere touches nothing beyond verl's own pruning: those folders belong to another
run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from strata.checkpoint.layout import parse_step, step_dirs


def stale_checkpoints(root: str | Path, step: int, keep: int) -> list[Path]:
    """The ``global_step_N`` folders under ``root`` that verl's rule removes once ``step`` is saved: every step
    up to it but the newest ``keep``, oldest first (later steps, written by a job that is gone, are not judged)."""
    if keep < 1:
        raise ValueError(f"keep={keep}: at least the checkpoint just saved must stay")
    older = [path for number, path in sorted(step_dirs(root).items()) if number <= step]
    return older[:-keep] if len(older) > keep else []


def prune_earlier_jobs(root: str | Path, resumed_from: str | Path | None, step: int, keep: int | None) -> list[Path]:
    """After saving ``step``: remove the `stale_checkpoints` when the run resumed from a step under ``root``
    and ``keep`` (``trainer.max_actor_ckpt_to_keep``) is positive (None or 0: verl keeps all, and so does this);
    the removed folders."""
    if not keep or keep < 1 or resumed_from is None:
        return []
    resumed, root = Path(resumed_from).resolve(), Path(root).resolve()
    if parse_step(resumed) is None or resumed.parent != root:
        return []
    removed = stale_checkpoints(root, step, keep)
    for path in removed:
        shutil.rmtree(path)
    return removed
