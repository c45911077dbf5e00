"""Resharding real verl FSDP2 checkpoints: exact round trips, and verl's own loader accepts the result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.distributed.tensor import DTensor

from strata.checkpoint import reshard
from strata.checkpoint.fsdp2 import load_shard
from strata.checkpoint.inspect import CheckpointError, check_resumable, describe_checkpoint, find_latest_checkpoint
from strata.checkpoint.pointer import read_latest_pointer
from strata.checkpoint.reshard import reshard_checkpoint
from tests.checkpoint.interruptions import a_finished_process_id, interrupt_after

KINDS = ("model", "optim", "extra_state")


def _files(step: Path, kind: str) -> list[Any]:
    world_size = describe_checkpoint(step).world_size
    return [load_shard(step / "actor" / f"{kind}_world_size_{world_size}_rank_{rank}.pt")
            for rank in range(world_size)]


def _mesh_state(mesh) -> dict:
    return {key: (value.tolist() if isinstance(value, torch.Tensor) else value)
            for key, value in mesh.__dict__.items() if key not in ("_hash", "_pg_registry")}


def assert_same_tree(a: Any, b: Any, where: str = "") -> None:
    """Identical state: same keys, bit-equal local tensors, same DTensor spec and mesh."""
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            assert_same_tree(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_tree(x, y, f"{where}[{i}]")
    elif isinstance(a, DTensor):
        assert torch.equal(a._local_tensor, b._local_tensor), where
        assert a._local_tensor.dtype == b._local_tensor.dtype, where
        assert (a.shape, a.stride(), a.placements) == (b.shape, b.stride(), b.placements), where
        assert _mesh_state(a.device_mesh) == _mesh_state(b.device_mesh), where
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b), where
    elif isinstance(a, np.ndarray):  # numpy's RNG state
        assert np.array_equal(a, b), where
    else:
        assert a == b or (a != a and b != b), where  # NaN-safe


def assert_same_full_state(a: dict, b: dict) -> None:
    """Two dumps of what verl loaded (full tensors gathered across ranks) are bit-identical."""
    assert list(a["params"]) == list(b["params"])
    for name in a["params"]:
        assert torch.equal(a["params"][name], b["params"][name]), name
    assert list(a["optim_state"]) == list(b["optim_state"])
    for index, state in a["optim_state"].items():
        assert list(state) == ["step", "exp_avg", "exp_avg_sq"]
        for key, value in state.items():
            assert torch.equal(value, b["optim_state"][index][key]), (index, key)
    assert a["param_groups"] == b["param_groups"]
    assert a["lr_scheduler"] == b["lr_scheduler"]


@pytest.mark.slow
def test_round_trip_1_to_2_to_1_is_exact(fsdp_checkpoints, tmp_path: Path) -> None:
    original = fsdp_checkpoints[1]
    two = reshard_checkpoint(original, 2, tmp_path / "w2")
    back = reshard_checkpoint(two, 1, tmp_path / "w1")
    for kind in KINDS:
        assert_same_tree(_files(original, kind), _files(back, kind), kind)
    # the intermediate really is split in two along dim 0, as FSDP2 splits it
    halves = [shard["model.layers.0.mlp.up_proj.weight"] for shard in _files(two, "model")]
    assert [tuple(h._local_tensor.shape) for h in halves] == [(64, 64), (64, 64)]
    assert [list(h.device_mesh.get_coordinate()) for h in halves] == [[0], [1]]
    assert json.loads((two / "actor/fsdp_config.json").read_text()) == {"FSDP_version": 2, "world_size": 2}
    # data.pt, tokenizer and config come along; the output root points at the new step
    assert (two / "data.pt").read_bytes() == (original / "data.pt").read_bytes()
    assert sorted(p.name for p in (two / "actor/huggingface").iterdir()) == sorted(
        p.name for p in (original / "actor/huggingface").iterdir())
    assert find_latest_checkpoint(tmp_path / "w2") == two
    assert describe_checkpoint(two).complete


def _on_device_type(tree: Any, device_type: str) -> Any:
    """``tree`` with every DTensor's mesh saying ``device_type``: what a run on GPUs saves (locals loaded on CPU)."""
    if isinstance(tree, DTensor):
        tree.device_mesh._device_type = device_type  # what torch pickles as the mesh's device type
    elif isinstance(tree, dict):
        for value in tree.values():
            _on_device_type(value, device_type)
    elif isinstance(tree, list | tuple):
        for value in tree:
            _on_device_type(value, device_type)
    return tree


def test_a_checkpoint_saved_on_gpus_reshards_on_a_cpu_host(fsdp_checkpoints, tmp_path: Path) -> None:
    """The saved mesh says "cuda"; this host has no GPU. The new shards keep "cuda" in their mesh (what verl's loader
    on GPUs expects) and their tensors where they were loaded, with the rows the CPU-saved checkpoint gives."""
    import shutil

    original = fsdp_checkpoints[2]
    gpu = tmp_path / "gpu-run" / "global_step_1"
    shutil.copytree(original, gpu, ignore=shutil.ignore_patterns("strata_manifest.json"))
    for kind in ("model", "optim"):
        for rank in range(2):
            path = gpu / "actor" / f"{kind}_world_size_2_rank_{rank}.pt"
            torch.save(_on_device_type(torch.load(path, weights_only=False), "cuda"), path)
    resharded = reshard_checkpoint(gpu, 1, tmp_path / "w1")
    expected = reshard_checkpoint(original, 1, tmp_path / "cpu-w1")
    (model,), (want,) = _files(resharded, "model"), _files(expected, "model")
    for name, value in model.items():
        assert value.device_mesh.device_type == "cuda" and value._local_tensor.device.type == "cpu", name
        assert torch.equal(value._local_tensor, want[name]._local_tensor), name


@pytest.mark.slow
def test_tied_weights_stay_shared(fsdp_checkpoints, tmp_path: Path) -> None:
    original = fsdp_checkpoints[2]
    one = reshard_checkpoint(original, 1, tmp_path / "w1")
    (model,) = _files(one, "model")
    head, embedding = model["lm_head.weight"]._local_tensor, model["model.embed_tokens.weight"]._local_tensor
    assert head.data_ptr() == embedding.data_ptr()
    # so the file holds the 151680 x 64 fp32 embedding once (~39 MB), like verl's own world-size-1 file
    size = (one / "actor/model_world_size_1_rank_0.pt").stat().st_size
    assert 151680 * 64 * 4 < size < 1.05 * 151680 * 64 * 4


@pytest.mark.slow
def test_extra_state_keeps_scheduler_and_maps_rng(fsdp_checkpoints, tmp_path: Path) -> None:
    original = _files(fsdp_checkpoints[2], "extra_state")
    four = _files(reshard_checkpoint(fsdp_checkpoints[2], 4, tmp_path / "w4"), "extra_state")
    for rank, state in enumerate(four):
        assert list(state) == ["lr_scheduler", "rng"]
        assert state["lr_scheduler"] == original[0]["lr_scheduler"]
        donor = original[rank % 2]["rng"]  # new ranks 2 and 3 reuse the streams of old ranks 0 and 1
        assert torch.equal(state["rng"]["cpu"], donor["cpu"])
        assert state["rng"]["random"] == donor["random"]


@pytest.mark.slow
def test_verl_loads_a_2_to_1_reshard_exactly_and_saves_it_back_identically(
        fsdp_checkpoints, loaded_by_verl, fsdp_writer, tiny_model_dir, tmp_path: Path) -> None:
    one = reshard_checkpoint(fsdp_checkpoints[2], 1, tmp_path / "w1")
    # What verl's loader puts into the model and optimizer at world size 1 equals what it puts there from
    # the original files at world size 2 (full tensors gathered across ranks, bit for bit).
    assert_same_full_state(loaded_by_verl(one, 1), loaded_by_verl(fsdp_checkpoints[2], 2))
    # And verl, saving what it loaded, writes exactly the resharded files (layout, DTensor specs, meshes).
    resaved = tmp_path / "resaved" / "global_step_1"
    fsdp_writer(tiny_model_dir, 1, load=one, out=resaved, steps=0)
    for kind in ("model", "optim"):
        assert_same_tree(_files(one, kind), _files(resaved, kind), kind)


@pytest.mark.slow
def test_verl_loads_an_uneven_1_to_3_reshard(fsdp_checkpoints, loaded_by_verl, tmp_path: Path) -> None:
    """64 rows over 3 ranks are 22/22/20 and 32 rows 11/11/10: FSDP2's uneven split, loaded by verl."""
    three = reshard_checkpoint(fsdp_checkpoints[1], 3, tmp_path / "w3")
    shards = [shard["model.norm.weight"]._local_tensor.shape[0] for shard in _files(three, "model")]
    assert shards == [22, 22, 20]
    assert_same_full_state(loaded_by_verl(three, 3), loaded_by_verl(fsdp_checkpoints[1], 1))


def test_refuses_an_incomplete_checkpoint(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path / "run", 1, data=False)
    with pytest.raises(CheckpointError, match="incomplete.*data.pt"):
        reshard_checkpoint(step, 2, tmp_path / "out")


def test_refuses_to_overwrite(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path / "run", 1)
    (tmp_path / "out" / "global_step_1").mkdir(parents=True)
    with pytest.raises(CheckpointError, match="already exists"):
        reshard_checkpoint(step, 2, tmp_path / "out")


def test_refuses_fsdp1_and_leaves_nothing_behind(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path / "run", 1)
    (step / "actor/fsdp_config.json").write_text(json.dumps({"FSDP_version": 1, "world_size": 1}))
    with pytest.raises(CheckpointError, match="only FSDP2"):
        reshard_checkpoint(step, 2, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []  # the staging folder was removed


def test_refuses_a_non_fsdp2_layout(tmp_path: Path, make_step) -> None:
    """A plain tensor that differs between ranks is rank-local state: resharding it would be a guess."""
    step = make_step(tmp_path / "run", 1, world_size=2)
    for rank in range(2):
        torch.save({"w": torch.full((2,), float(rank))}, step / f"actor/model_world_size_2_rank_{rank}.pt")
    with pytest.raises(CheckpointError, match="differs between ranks"):
        reshard_checkpoint(step, 1, tmp_path / "out")


@pytest.mark.parametrize(("old", "new", "says"), [
    (1, 2, "saved by 1 GPU rank and the new run has 2: the new rank 1 has no saved random-number state, so it "
           "starts from a copy of rank 0's."),
    (2, 8, "the new ranks 2 to 7 have no saved random-number state, so each starts from a copy of an old rank's "
           "(rank 2 from rank 0, rank 3 from rank 1, and so on)."),
])
def test_the_rng_note_says_in_plain_words_which_rank_copies_which(old: int, new: int, says: str) -> None:
    from strata.checkpoint.reshard import rng_copy_note

    note = rng_copy_note(old, new)
    assert says in note and " mod " not in note and "did not exist" not in note
    assert "model and optimizer are split exactly" in note


# An interrupted reshard leaves nothing, and a killed one's partial folder goes with the next run
# (`strata.staging`).

def test_an_interrupted_reshard_leaves_nothing(fsdp_checkpoints, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(reshard, "_reshard_role", interrupt_after(reshard._reshard_role))
    with pytest.raises(KeyboardInterrupt):
        reshard_checkpoint(fsdp_checkpoints[2], 1, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []
    assert read_latest_pointer(tmp_path / "out") is None


def test_a_killed_reshard_s_partial_folder_is_removed_by_the_next(fsdp_checkpoints, tmp_path: Path) -> None:
    out = tmp_path / "out"
    killed = out / f".global_step_1.partial-{a_finished_process_id()}"
    (killed / "actor").mkdir(parents=True)
    (killed / "actor" / "model_world_size_1_rank_0.pt").write_bytes(b"half a shard")
    step = reshard_checkpoint(fsdp_checkpoints[2], 1, out)
    assert sorted(p.name for p in out.iterdir()) == ["global_step_1", "latest_checkpointed_iteration.txt"]
    check_resumable(step, world_size=1, dataloader_num_workers=0)
