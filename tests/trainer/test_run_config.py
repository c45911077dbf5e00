"""`save_run_config`: the run folder's config.yaml is replaced atomically, the previous one kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from strata.trainer import main as trainer_main
from strata.trainer.main import save_run_config


def _config(run_dir: Path, steps: int):
    return OmegaConf.create({"run": {"dir": str(run_dir)}, "trainer": {"total_training_steps": steps}})


def test_resume_keeps_the_previous_config_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = save_run_config(_config(tmp_path, 1))
    assert OmegaConf.load(path).trainer.total_training_steps == 1
    save_run_config(_config(tmp_path, 2))
    assert OmegaConf.load(path).trainer.total_training_steps == 2
    assert OmegaConf.load(tmp_path / "config.previous.yaml").trainer.total_training_steps == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.previous.yaml", "config.yaml"]


def test_a_failed_write_leaves_the_old_config_whole(tmp_path: Path, monkeypatch) -> None:
    """A crash or a full disk while writing: the old file stays, never half a YAML file."""
    path = save_run_config(_config(tmp_path, 1))
    real_replace = os.replace

    def fail_on_config(source, target):
        if Path(target) == path:
            raise OSError(28, "No space left on device")
        return real_replace(source, target)

    monkeypatch.setattr(trainer_main.os, "replace", fail_on_config)
    with pytest.raises(OSError, match="No space left"):
        save_run_config(_config(tmp_path, 2))
    assert OmegaConf.load(path).trainer.total_training_steps == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.previous.yaml", "config.yaml"]


def test_no_run_dir_writes_nothing(tmp_path: Path) -> None:
    assert save_run_config(OmegaConf.create({"run": {"dir": None}})) is None
