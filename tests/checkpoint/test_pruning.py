"""Checkpoints of earlier jobs of a resumed run are pruned by verl's own rule (the newest ``keep`` stay), and
nothing of another run is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.checkpoint.pruning import prune_earlier_jobs, stale_checkpoints


def steps(root: Path, *numbers: int) -> Path:
    for number in numbers:
        (root / f"global_step_{number}" / "actor").mkdir(parents=True)
    (root / "latest_checkpointed_iteration.txt").write_text(str(max(numbers)))
    return root


def left(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def test_after_a_save_the_newest_keep_up_to_it_stay(tmp_path):
    root = steps(tmp_path, 10, 20, 30, 40, 50)
    assert [p.name for p in stale_checkpoints(root, 40, keep=2)] == ["global_step_10", "global_step_20"]
    assert stale_checkpoints(root, 40, keep=4) == []
    with pytest.raises(ValueError, match="at least the checkpoint just saved"):
        stale_checkpoints(root, 40, keep=0)


def test_a_resumed_run_removes_what_earlier_jobs_left(tmp_path):
    # Job 1 saved 10-30 (verl kept 20, 30); job 2 resumed from 30 and saved 40 and 50, pruning only its own.
    root = steps(tmp_path / "ckpt", 20, 30, 40, 50)
    removed = prune_earlier_jobs(root, root / "global_step_30", 50, keep=2)
    assert [p.name for p in removed] == ["global_step_20", "global_step_30"]
    assert left(root) == ["global_step_40", "global_step_50", "latest_checkpointed_iteration.txt"]


@pytest.mark.parametrize(("resumed_from", "keep"), [
    (None, 2),                      # started from scratch: the folders are another run's
    ("elsewhere/global_step_30", 2),  # resumed from another folder
    ("ckpt/global_step_30", None),  # verl keeps all
    ("ckpt/global_step_30", 0),
])
def test_nothing_else_is_touched(tmp_path, resumed_from, keep):
    root = steps(tmp_path / "ckpt", 10, 20, 30, 40)
    if resumed_from is not None:
        resumed_from = tmp_path / resumed_from
    assert prune_earlier_jobs(root, resumed_from, 40, keep) == []
    assert left(root)[:4] == ["global_step_10", "global_step_20", "global_step_30", "global_step_40"]
