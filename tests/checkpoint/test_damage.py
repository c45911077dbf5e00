"""Damaged checkpoint files: one `error:` line naming the file, and a resume falls back to the last good step.

Two kinds of damage that the structural check (shards present, zip end record) cannot see or survive:
a truncated ``fsdp_config.json`` (was a JSONDecodeError traceback from every tool), and a shard that is a
valid zip archive with wrong bytes inside (``strata export`` failed in torch with ``Expected
hasRecord("version")`` while ``inspect-checkpoint`` called the step complete). The second is caught by the
manifest the trainer writes after each save (`strata.checkpoint.manifest`); without one (an older run) the
tools still fail with one line naming the file when torch cannot read it.
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from strata.checkpoint.export import export_hf
from strata.checkpoint.inspect import CheckpointError, check_resumable, describe_checkpoint, find_latest_checkpoint
from strata.checkpoint.layout import MANIFEST_FILE
from strata.checkpoint.manifest import read_manifest, write_manifest
from strata.checkpoint.pointer import write_latest_pointer
from strata.checkpoint.reshard import reshard_checkpoint
from strata.cli import main

SHARD = "actor/model_world_size_1_rank_0.pt"


def _flip_bytes_inside(path: Path) -> None:
    """Damage that keeps the size and the zip end record: ``zipfile.is_zipfile`` still says yes."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle:middle + 8] = bytes(255 - b for b in data[middle:middle + 8])
    path.write_bytes(bytes(data))
    assert zipfile.is_zipfile(path)


def _not_a_torch_archive(path: Path) -> None:
    """A valid zip that torch cannot read: ``RuntimeError: ... Expected hasRecord("version")``."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("something/else.txt", "not a tensor")


def _run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- a truncated fsdp_config.json ---------------------------------------------------------------------------

def test_truncated_fsdp_config_makes_the_step_incomplete_not_a_traceback(tmp_path: Path, make_step, truncate,
                                                                          caplog) -> None:
    caplog.set_level(logging.WARNING, logger="strata.checkpoint")
    make_step(tmp_path, 1)
    step2 = make_step(tmp_path, 2)
    write_latest_pointer(tmp_path, 2)
    truncate(step2 / "actor/fsdp_config.json")
    info = describe_checkpoint(step2)
    assert not info.complete and info.world_size == 1  # inferred from the shard names, as without the file
    assert info.missing[0].startswith("actor/fsdp_config.json (unreadable: ")
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"
    assert "fsdp_config.json (unreadable" in caplog.text


def test_inspect_checkpoint_lists_the_truncated_config_and_resumes_the_previous_step(
        tmp_path: Path, make_step, truncate, capsys) -> None:
    make_step(tmp_path, 1)
    truncate(make_step(tmp_path, 2) / "actor/fsdp_config.json")
    write_latest_pointer(tmp_path, 2)
    code, out, err = _run_cli(capsys, "inspect-checkpoint", str(tmp_path), "--world-size", "1")
    assert code == 0, err
    assert "global_step_2: world size 1, INCOMPLETE (missing actor/fsdp_config.json (unreadable:" in out
    assert f"resume_mode=auto would load: {tmp_path / 'global_step_1'}" in out
    assert "resumable at world size 1" in out
    code, _, err = _run_cli(capsys, "inspect-checkpoint", str(tmp_path / "global_step_2"), "--world-size", "1")
    assert code == 2
    assert "global_step_2 is incomplete" in _error_line(err) and "fsdp_config.json" in _error_line(err)


def test_trainer_resume_auto_falls_back_to_the_newest_complete_step(tmp_path: Path, make_step, truncate) -> None:
    """The trainer's own path: `resolve_resume` (run before Ray starts) turns resume_mode=auto into the
    ``resume_path`` verl's ``_load_checkpoint`` then loads, here the step before the damaged one."""
    from strata.trainer.checks.inputs import resolve_resume

    make_step(tmp_path, 1)
    make_step(tmp_path, 2)
    truncate(make_step(tmp_path, 3) / "actor/fsdp_config.json")
    write_latest_pointer(tmp_path, 3)
    config = OmegaConf.create({
        "trainer": {"resume_mode": "auto", "resume_from_path": None, "default_local_dir": str(tmp_path),
                    "nnodes": 1, "n_gpus_per_node": 1},
        "data": {"dataloader_num_workers": 0},
        "actor_rollout_ref": {"actor": {"checkpoint": {"load_contents": ["model", "optimizer", "extra"]}}},
    })
    resolve_resume(config)
    assert config.trainer.resume_mode == "resume_path"
    assert config.trainer.resume_from_path == str(tmp_path / "global_step_2")


def test_damaged_lora_record_is_skipped_by_resume(tmp_path: Path, make_step, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="strata.checkpoint")
    make_step(tmp_path, 1)
    (make_step(tmp_path, 2) / "actor/lora_train_meta.json").write_text('{"r": 8, "lora_al')
    write_latest_pointer(tmp_path, 2)
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"
    assert "lora_train_meta.json" in caplog.text


# --- the manifest ------------------------------------------------------------------------------------------

def test_manifest_records_every_file_and_verifies(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 4, world_size=2)
    write_manifest(step)
    files = read_manifest(step)
    assert sorted(files) == sorted(name for name in describe_checkpoint(step).files if name != MANIFEST_FILE)
    shard = "actor/model_world_size_2_rank_0.pt"
    assert files[shard]["size"] == (step / shard).stat().st_size
    assert json.loads((step / MANIFEST_FILE).read_text())["step"] == 4
    assert [p.name for p in step.iterdir() if p.name.startswith(".")] == []  # no temporary left
    info = describe_checkpoint(step, checksums=True)
    assert info.complete and info.has_manifest and info.checksums_verified


def test_a_shard_damaged_inside_a_valid_zip_is_caught_by_the_manifest(tmp_path: Path, make_step,
                                                                      caplog) -> None:
    caplog.set_level(logging.WARNING, logger="strata.checkpoint")
    write_manifest(make_step(tmp_path, 1))
    step2 = make_step(tmp_path, 2)
    write_manifest(step2)
    write_latest_pointer(tmp_path, 2)
    _flip_bytes_inside(step2 / SHARD)
    assert describe_checkpoint(step2).complete  # sizes match: only the checksum can tell
    info = describe_checkpoint(step2, checksums=True)
    assert info.missing == (f"{SHARD} (damaged: sha256 differs from {MANIFEST_FILE})",) == info.damaged
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"
    assert SHARD in caplog.text
    with pytest.raises(CheckpointError, match=f"incomplete .*{SHARD} .damaged"):
        check_resumable(step2, world_size=1)


def test_a_shard_of_another_size_than_the_save_wrote(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 1)
    write_manifest(step)
    size = (step / SHARD).stat().st_size
    _not_a_torch_archive(step / SHARD)
    info = describe_checkpoint(step)  # no checksum needed: the size differs
    assert info.missing == (f"{SHARD} ({(step / SHARD).stat().st_size} bytes, the save wrote {size})",)


def test_an_unreadable_manifest_makes_the_step_incomplete(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 1)
    write_manifest(step)
    (step / MANIFEST_FILE).write_text('{"format": 1, "fi')
    assert describe_checkpoint(step).missing[0].startswith(f"{MANIFEST_FILE} ({MANIFEST_FILE} is unreadable")


@pytest.mark.parametrize("tool", ["export", "reshard"])
def test_export_and_reshard_name_the_damaged_shard_in_one_line(tmp_path: Path, make_step, capsys,
                                                               tool: str) -> None:
    step = make_step(tmp_path / "run", 1)
    write_manifest(step)
    _flip_bytes_inside(step / SHARD)
    extra = ["--world-size", "2"] if tool == "reshard" else []
    code, out, err = _run_cli(capsys, tool, "--checkpoint", str(step), "--out", str(tmp_path / "out"), *extra)
    assert code == 2 and out == ""
    line = _error_line(err)
    assert SHARD in line and "damaged" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("tool", ["export", "reshard"])
def test_without_a_manifest_a_shard_torch_cannot_read_is_one_line(tmp_path: Path, make_step, capsys,
                                                                  tool: str) -> None:
    """An older run (no manifest): the structural check passes, torch's own error becomes one line."""
    step = make_step(tmp_path / "run", 1)
    (step / "actor/huggingface/config.json").write_text(json.dumps({"model_type": "qwen2"}))
    _not_a_torch_archive(step / SHARD)
    assert describe_checkpoint(step, checksums=True).complete  # what inspect-checkpoint can know
    extra = ["--world-size", "2"] if tool == "reshard" else []
    code, out, err = _run_cli(capsys, tool, "--checkpoint", str(step), "--out", str(tmp_path / "out"), *extra)
    assert code == 2 and out == ""
    line = _error_line(err)
    assert f"cannot load {step / SHARD}" in line and "hasRecord" in line


def test_reshard_writes_a_fresh_manifest_for_the_new_world_size(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path / "run", 1)
    write_manifest(step)
    out = reshard_checkpoint(step, 2, tmp_path / "out")
    info = describe_checkpoint(out, checksums=True)
    assert info.complete and info.checksums_verified and info.world_size == 2
    assert "actor/model_world_size_2_rank_1.pt" in read_manifest(out)
    assert json.loads((out / MANIFEST_FILE).read_text())["step"] == 1


def test_export_refuses_a_damaged_shard_before_reading_anything(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path / "run", 1)
    write_manifest(step)
    _flip_bytes_inside(step / SHARD)
    with pytest.raises(CheckpointError, match=f"is damaged: {SHARD}"):
        export_hf(step, tmp_path / "out")


def test_inspect_one_step_reports_the_checksum_result(tmp_path: Path, make_step, capsys) -> None:
    step = make_step(tmp_path, 1)
    assert _run_cli(capsys, "inspect-checkpoint", str(step))[1].splitlines()[0].endswith(
        "complete; no manifest (written by verl's own trainer or an older strata: shards checked as whole archives "
        "only)")
    write_manifest(step)
    assert _run_cli(capsys, "inspect-checkpoint", str(step))[1].splitlines()[0].endswith(
        "complete; checksums verified")
    _flip_bytes_inside(step / SHARD)
    code, out, _ = _run_cli(capsys, "inspect-checkpoint", str(step))
    assert code == 0 and f"  missing: {SHARD} (damaged: sha256 differs" in out
