"""The trainer records each save in a manifest after verl's save returns, then commits it with the pointer."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

from strata.checkpoint.inspect import describe_checkpoint, find_latest_checkpoint
from strata.checkpoint.layout import MANIFEST_FILE, POINTER_FILE
from strata.checkpoint.manifest import read_manifest
from strata.trainer import strata_trainer
from strata.trainer.strata_trainer import StrataTrainer
from tests.checkpoint.conftest import _make_step


def _trainer(root: Path, step: int, async_save: bool = False) -> StrataTrainer:
    trainer = object.__new__(StrataTrainer)  # no Ray, no workers: only what _save_checkpoint reads
    trainer.config = OmegaConf.create({
        "trainer": {"default_local_dir": str(root)},
        "actor_rollout_ref": {"actor": {"checkpoint": {"async_save": async_save}}},
    })
    trainer.global_steps = step
    return trainer


@pytest.fixture
def verl_save(monkeypatch):
    """verl's save, as far as the files go: every shard, data.pt, then its own non-atomic pointer."""
    def save(self) -> None:
        root = Path(self.config.trainer.default_local_dir)
        _make_step(root, self.global_steps, world_size=2)
        (root / POINTER_FILE).write_text(str(self.global_steps))

    monkeypatch.setattr(PPOTrainerSync, "_save_checkpoint", save)


def test_save_writes_the_manifest_before_the_pointer(tmp_path: Path, verl_save, monkeypatch) -> None:
    order = []
    write_pointer = strata_trainer.write_latest_pointer

    def pointer(root, step):
        order.append(("pointer", (Path(root) / f"global_step_{step}" / MANIFEST_FILE).is_file()))
        return write_pointer(root, step)

    monkeypatch.setattr(strata_trainer, "write_latest_pointer", pointer)
    _trainer(tmp_path, 3)._save_checkpoint()
    assert order == [("pointer", True)]  # the manifest existed when the step was committed
    step = tmp_path / "global_step_3"
    assert "actor/optim_world_size_2_rank_1.pt" in read_manifest(step) and "data.pt" in read_manifest(step)
    info = describe_checkpoint(step, checksums=True)
    assert info.complete and info.checksums_verified
    assert find_latest_checkpoint(tmp_path) == step


def test_no_manifest_while_an_async_save_is_still_writing(tmp_path: Path, verl_save) -> None:
    _trainer(tmp_path, 2, async_save=True)._save_checkpoint()
    assert not (tmp_path / "global_step_2" / MANIFEST_FILE).exists()
