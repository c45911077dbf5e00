"""describe_checkpoint's whole record and check_resumable's whole message, layout by layout.

tests/checkpoint/test_inspect.py checks the main facts and a phrase of each message; mutation testing
(scripts/mutation.sh) showed that a wrong older step suggested, a flag read from the wrong shard kind or
a message missing its hint all passed it. Here each record is compared whole and each message exactly.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from strata.checkpoint.inspect import (
    CheckpointError,
    CheckpointInfo,
    RoleInfo,
    check_resumable,
    describe_checkpoint,
    error_line,
    find_latest_checkpoint,
    saved_dataloader_num_workers,
)
from strata.checkpoint.layout import MANIFEST_FILE, POINTER_FILE
from strata.checkpoint.lora import LoraMeta
from strata.checkpoint.manifest import write_manifest
from strata.checkpoint.pointer import write_latest_pointer


def _message(call, *args, **kwargs) -> str:
    with pytest.raises(CheckpointError) as error:
        call(*args, **kwargs)
    return str(error.value)


def test_a_complete_two_rank_step_whole(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 7, world_size=2)
    (step / "actor/huggingface/pytorch_model.bin").write_bytes(b"x")
    (step / "actor/lora_train_meta.json").write_text(json.dumps({"r": 8, "lora_alpha": 16}))
    shards = [f"actor/{kind}_world_size_2_rank_{rank}.pt" for kind in ("extra_state", "model", "optim")
              for rank in (0, 1)]
    assert describe_checkpoint(step) == CheckpointInfo(
        path=step, step=7,
        roles=(RoleInfo("actor", 2, 2, True, True, True, True, True, (), LoraMeta(8, 16, "CAUSAL_LM")),),
        has_dataloader_state=True,
        files=tuple(sorted([*shards, "actor/fsdp_config.json", "actor/huggingface/config.json",
                            "actor/huggingface/pytorch_model.bin", "actor/lora_train_meta.json", "data.pt"])),
        missing=(), has_manifest=False, checksums_verified=False, damaged=(),
    )


def test_roles_are_listed_actor_first_and_each_judged_alone(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 2, world_size=2, kinds=("model", "extra_state"))
    critic = step / "critic"
    critic.mkdir()
    torch_file = step / "actor/model_world_size_2_rank_0.pt"
    (critic / "model_world_size_2_rank_1.pt").write_bytes(torch_file.read_bytes())  # rank 0 never written
    (step / "actor/extra_state_world_size_2_rank_1.pt").unlink()
    (step / "notes").mkdir()  # neither a role (no shard, no fsdp_config.json) nor counted
    info = describe_checkpoint(step)
    assert info.roles == (
        RoleInfo("actor", 2, 2, has_model=True, has_optimizer=False, has_extra_state=False, has_hf_config=True,
                 has_hf_weights=False, missing=("extra_state_world_size_2_rank_1.pt",)),
        RoleInfo("critic", 2, None, has_model=False, has_optimizer=False, has_extra_state=False,
                 has_hf_config=False, has_hf_weights=False,
                 missing=("fsdp_config.json", "model_world_size_2_rank_0.pt")),
    )
    assert info.missing == ("actor/extra_state_world_size_2_rank_1.pt", "critic/fsdp_config.json",
                            "critic/model_world_size_2_rank_0.pt")
    assert not info.complete and info.world_size == 2 and not info.has_optimizer


def test_a_step_without_actor_or_shards(tmp_path: Path) -> None:
    step = tmp_path / "global_step_3"
    (step / "critic").mkdir(parents=True)
    (step / "critic" / "fsdp_config.json").write_text('{"FSDP_version": 1, "world_size": true}')
    info = describe_checkpoint(step)
    assert info.roles == (RoleInfo("critic", None, None, False, False, False, False, False,
                                   ("fsdp_config.json (unreadable: no positive integer world_size)",
                                    "model_world_size_W_rank_R.pt (no model shard at all)")),)
    assert info.missing == ("actor/", "critic/fsdp_config.json (unreadable: no positive integer world_size)",
                            "critic/model_world_size_W_rank_R.pt (no model shard at all)", "data.pt")
    assert info.actor is None and info.world_size is None and not info.has_optimizer and not info.has_hf_weights


def test_a_truncated_data_file_is_missing(tmp_path: Path, make_step, truncate) -> None:
    step = make_step(tmp_path, 1)
    truncate(step / "data.pt")
    info = describe_checkpoint(step)
    assert info.missing == ("data.pt",) and info.has_dataloader_state is False


def test_resume_messages_word_for_word(tmp_path: Path, make_step) -> None:
    ok = make_step(tmp_path, 1)
    step = make_step(tmp_path, 2, kinds=("model", "optim"))
    assert _message(check_resumable, step, world_size=1) == (
        f"{step} has no extra_state shards (lr scheduler, RNG); resume with "
        "actor_rollout_ref.actor.checkpoint.load_contents=[model,optimizer]")
    check_resumable(step, world_size=1, load_contents=("model", "optimizer"))
    no_optimizer = make_step(tmp_path, 3, kinds=("model", "extra_state"))
    assert _message(check_resumable, no_optimizer, world_size=1) == (
        f"{no_optimizer} has no optimizer shards (saved without 'optimizer' in checkpoint.save_contents); "
        "resume with actor_rollout_ref.actor.checkpoint.load_contents=[model,extra] to start a fresh optimizer")
    assert _message(check_resumable, ok, world_size=4) == (
        f"{ok} was saved at world size 1 but this run has world size 4 (trainer.nnodes x trainer.n_gpus_per_node); "
        f"convert it first: strata reshard --checkpoint {ok} --world-size 4 --out NEW_DIR, "
        "then resume from NEW_DIR/global_step_1")
    workers = make_step(tmp_path, 4, num_workers=2)
    assert _message(check_resumable, workers, world_size=1, dataloader_num_workers=1) == (
        f"{workers} was saved with data.dataloader_num_workers=2 but this run uses 1; torchdata cannot restore a "
        "dataloader across worker counts, so resume with data.dataloader_num_workers=2")
    check_resumable(workers, world_size=1, dataloader_num_workers=2)
    check_resumable(workers, world_size=1)  # None skips the worker check
    bare = tmp_path / "global_step_5"
    (bare / "critic").mkdir(parents=True)
    assert _message(check_resumable, bare, world_size=1) == (
        f"{bare} has no actor/ folder, so it is not a verl trainer checkpoint; pass the global_step_N folder "
        "written by the trainer (it holds actor/ and data.pt)")


def test_an_incomplete_step_names_four_items_at_most_and_the_newest_complete_older_step(
        tmp_path: Path, make_step) -> None:
    make_step(tmp_path, 1)
    make_step(tmp_path, 2)
    make_step(tmp_path, 3, data=False)  # incomplete: not to be suggested
    step = make_step(tmp_path, 4, world_size=2, data=False)
    for name in ("model_world_size_2_rank_0.pt", "model_world_size_2_rank_1.pt", "optim_world_size_2_rank_1.pt",
                 "extra_state_world_size_2_rank_1.pt"):
        (step / "actor" / name).unlink()
    assert _message(check_resumable, step, world_size=2) == (
        f"{step} is incomplete (missing, truncated or damaged: actor/model_world_size_2_rank_0.pt, "
        "actor/model_world_size_2_rank_1.pt, actor/optim_world_size_2_rank_1.pt, "
        "actor/extra_state_world_size_2_rank_1.pt, ...), probably an interrupted save; "
        f"resume from {tmp_path / 'global_step_2'} instead")
    only = tmp_path / "alone"
    lone = make_step(only, 6, data=False)
    assert _message(check_resumable, lone, world_size=1) == (
        f"{lone} is incomplete (missing, truncated or damaged: data.pt), probably an interrupted save")


def test_the_newest_complete_sibling_is_the_one_suggested(tmp_path: Path, make_step) -> None:
    make_step(tmp_path, 1)
    make_step(tmp_path, 2, data=False)
    step = make_step(tmp_path, 3, data=False)
    assert _message(check_resumable, step, world_size=1).endswith(f"; resume from {tmp_path / 'global_step_1'} instead")


def test_a_root_is_refused_with_its_latest_complete_step(tmp_path: Path, make_step) -> None:
    make_step(tmp_path, 1, data=False)
    assert _message(check_resumable, tmp_path, world_size=1) == (
        f"{tmp_path} is a checkpoint root, not a step: pass one of its global_step_N folders (none is complete), "
        f"or use trainer.resume_mode=auto with trainer.default_local_dir={tmp_path}")
    make_step(tmp_path, 2)
    assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_2"
    assert f"(latest complete: {tmp_path / 'global_step_2'})" in _message(check_resumable, tmp_path, world_size=1)


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (ValueError(""), "ValueError"),
        (ValueError("first line\nsecond line"), "ValueError: first line"),
        (KeyError("MAX"), "KeyError: 'MAX'"),
        (RuntimeError("  cut at MAX\n"), "RuntimeError: cut at MAX"),
        (OSError("trailing colon:"), "OSError: trailing colon"),
    ],
)
def test_error_line_is_the_type_and_first_line(error: BaseException, line: str) -> None:
    assert error_line(error) == line


@pytest.mark.parametrize("content", ["[2]", '{"world_size": 0}', '{"world_size": -2}', '{"world_size": "2"}'])
def test_an_fsdp_config_without_a_positive_world_size_is_unreadable(tmp_path: Path, make_step, content) -> None:
    step = make_step(tmp_path, 1)
    (step / "actor/fsdp_config.json").write_text(content)
    assert describe_checkpoint(step).missing == ("actor/fsdp_config.json (unreadable: no positive integer world_size)",)


def test_a_damaged_lora_record_says_the_step_is_damaged(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 1)
    record = step / "actor/lora_train_meta.json"
    record.write_text('{"r": "eight"}')
    message = _message(describe_checkpoint, step)
    assert message.startswith(f"{record} does not hold verl's LoRA rank and alpha (")
    assert message.endswith("; verl writes it for a LoRA run, so the step is damaged")


def test_a_folder_that_is_no_step_names_the_newest_one_inside(tmp_path: Path, make_step) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    assert _message(describe_checkpoint, runs) == (
        f"{runs} is not a global_step_N folder (verl reads the step from that name)")
    for step in (3, 7, 12):  # the newest, not the second
        make_step(runs, step)
    assert _message(describe_checkpoint, runs) == (
        f"{runs} is not a global_step_N folder (verl reads the step from that name); it holds global_step_12")
    assert _message(describe_checkpoint, tmp_path / "absent") == (
        f"no checkpoint folder at {tmp_path / 'absent'}; pass an existing .../global_step_N folder")


def test_roles_sort_actor_first_then_by_name(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 1)
    for role in ("critic", "aaa_ref"):
        (step / role).mkdir()
        (step / role / "fsdp_config.json").write_text('{"FSDP_version": 2, "world_size": 1}')
    assert [role.name for role in describe_checkpoint(step).roles] == ["actor", "aaa_ref", "critic"]


def test_exactly_four_missing_items_need_no_ellipsis(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 1, world_size=2, data=False)
    for name in ("model_world_size_2_rank_0.pt", "model_world_size_2_rank_1.pt", "optim_world_size_2_rank_1.pt"):
        (step / "actor" / name).unlink()
    assert _message(check_resumable, step, world_size=2) == (
        f"{step} is incomplete (missing, truncated or damaged: actor/model_world_size_2_rank_0.pt, "
        "actor/model_world_size_2_rank_1.pt, actor/optim_world_size_2_rank_1.pt, data.pt), "
        "probably an interrupted save")


def test_resume_skips_a_step_it_cannot_describe_and_says_why(tmp_path: Path, make_step, caplog) -> None:
    make_step(tmp_path, 1)
    damaged = make_step(tmp_path, 2)
    (damaged / "actor/lora_train_meta.json").write_text("{}")
    why = _message(describe_checkpoint, damaged, checksums=True)
    assert why.startswith(f"{damaged / 'actor/lora_train_meta.json'} does not hold verl's LoRA")
    with caplog.at_level(logging.WARNING, logger="strata.checkpoint.inspect"):
        assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"
    assert _warnings(caplog) == [f"skipping {damaged}: {why}",
                                 f"resuming from {tmp_path / 'global_step_1'}, the newest complete checkpoint"]


def _warnings(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "strata.checkpoint.inspect"]


FOUR_SHARDS = tuple(f"model_world_size_4_rank_{rank}.pt" for rank in range(4))


def test_resume_warnings_word_for_word(tmp_path: Path, make_step, caplog) -> None:
    """The pointer names step 3; steps 3 and 2 each miss five items (four shards and data.pt, so the message's
    first four are the shards); step 1 is complete. Step 3 is judged once, as the pointer's step."""
    make_step(tmp_path, 1, world_size=4)
    for number in (2, 3):
        step = make_step(tmp_path, number, world_size=4, data=False)
        for name in FOUR_SHARDS:
            (step / "actor" / name).unlink()
    write_latest_pointer(tmp_path, 3)
    with caplog.at_level(logging.WARNING, logger="strata.checkpoint.inspect"):
        assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"
    four = ", ".join(f"actor/{name}" for name in FOUR_SHARDS)
    assert _warnings(caplog) == [
        f"{tmp_path / POINTER_FILE} names step 3 but that save is incomplete or damaged ({four}); "
        "looking for an older complete step",
        f"skipping {tmp_path / 'global_step_2'}: incomplete or damaged ({four})",
        f"resuming from {tmp_path / 'global_step_1'}, the newest complete checkpoint",
    ]


def test_a_pointer_to_a_step_that_is_not_there(tmp_path: Path, make_step, caplog) -> None:
    make_step(tmp_path, 1)
    write_latest_pointer(tmp_path, 5)
    with caplog.at_level(logging.WARNING, logger="strata.checkpoint.inspect"):
        assert find_latest_checkpoint(tmp_path) == tmp_path / "global_step_1"
    assert _warnings(caplog) == [
        f"{tmp_path / POINTER_FILE} names step 5 but {tmp_path / 'global_step_5'} does not exist",
        f"resuming from {tmp_path / 'global_step_1'}, the newest complete checkpoint",
    ]


def test_only_a_checksum_read_verifies_a_step(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 1)
    write_manifest(step)
    assert describe_checkpoint(step).checksums_verified is False  # sizes only: nothing was hashed
    assert describe_checkpoint(step, checksums=True).checksums_verified is True


def test_a_shard_missing_and_absent_from_the_manifest_is_listed_once(tmp_path: Path, make_step) -> None:
    step = make_step(tmp_path, 1)
    write_manifest(step)
    (step / "actor/model_world_size_1_rank_0.pt").unlink()
    info = describe_checkpoint(step)
    assert info.missing == ("actor/model_world_size_1_rank_0.pt",)
    assert info.damaged == (f"actor/model_world_size_1_rank_0.pt (listed in {MANIFEST_FILE}, absent)",)


def test_dataloader_state_messages_word_for_word(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(b"not a torch archive")
    with pytest.raises(Exception) as raw:  # what torch itself says about the file
        torch.load(damaged, weights_only=True, map_location="cpu")
    assert _message(saved_dataloader_num_workers, damaged) == (
        f"cannot read {damaged}: {error_line(raw.value)}; the file is damaged")
    listed = tmp_path / "list.pt"
    torch.save([1, 2], listed)
    assert _message(saved_dataloader_num_workers, listed) == f"{listed} holds a list, not a dataloader state dict"


def test_a_dataloader_state_holding_tensors_loads_on_the_cpu(tmp_path: Path) -> None:
    """A shuffling loader saves its generator's state as a tensor, which torch must map to a real device."""
    from torchdata.stateful_dataloader import StatefulDataLoader

    loader = StatefulDataLoader(list(range(8)), batch_size=2, shuffle=True, generator=torch.Generator().manual_seed(0))
    iterator = iter(loader)
    next(iterator)
    state = loader.state_dict()
    assert any(isinstance(v, torch.Tensor) for v in _leaves(state))
    torch.save(state, tmp_path / "data.pt")
    assert saved_dataloader_num_workers(tmp_path / "data.pt") == 0


def _leaves(tree):
    if isinstance(tree, dict):
        for value in tree.values():
            yield from _leaves(value)
    elif isinstance(tree, list | tuple):
        for value in tree:
            yield from _leaves(value)
    else:
        yield tree
