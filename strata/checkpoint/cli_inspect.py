"""`strata inspect-checkpoint`: what a checkpoint holds and whether a run can resume from it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from strata.checkpoint.inspect import CheckpointError, check_resumable, describe_checkpoint, find_latest_checkpoint
from strata.checkpoint.layout import parse_step, step_dirs
from strata.checkpoint.pointer import read_latest_pointer
from strata.cli_types import non_negative_int, positive_int

EXAMPLE = ("strata inspect-checkpoint checkpoints/strata-alfworld-qwen2.5-1.5b "
           "--world-size 2 --dataloader-workers 8\n"
           "  # the 1.5B recipe's run: 2 GPUs, verl's default of 8 dataloader workers "
           "(the resuming run must match both)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a checkpoint root (trainer.default_local_dir) or one global_step_N folder")
    parser.add_argument("--world-size", type=positive_int,
                        help="check that a run with this many ranks can resume (the latest step of a root)")
    parser.add_argument("--dataloader-workers", type=non_negative_int,
                        help="check the resuming run's data.dataloader_num_workers against the checkpoint's "
                             "(verl's default and every recipe's: 8; configs/smoke_grpo_cpu.yaml: 0); "
                             "omitted: not checked")


def run(args: argparse.Namespace) -> int:
    path = Path(args.path)
    try:
        step = _describe_root(path) if parse_step(path) is None else path
        _describe_step(step)
        if args.world_size is not None:
            check_resumable(step, args.world_size, dataloader_num_workers=args.dataloader_workers)
            print(f"resumable at world size {args.world_size}: trainer.resume_mode=resume_path "
                  f"trainer.resume_from_path={step}")
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _describe_root(root: Path) -> Path:
    steps = step_dirs(root)
    if not steps:
        raise CheckpointError(f"{root} holds no global_step_N folder; pass trainer.default_local_dir of a run")
    print(f"{root}: pointer -> {read_latest_pointer(root)}")
    for step, folder in sorted(steps.items()):
        try:
            info = describe_checkpoint(folder)
        except CheckpointError as error:
            print(f"  global_step_{step}: DAMAGED ({error})")
            continue
        missing = ", ".join(info.missing[:3])
        state = "complete" if info.complete else f"INCOMPLETE (missing {missing}){_weights_note(info)}"
        print(f"  global_step_{step}: world size {info.world_size}, {state}{_manifest_note(info)}")
    latest = find_latest_checkpoint(root)
    if latest is None:
        raise CheckpointError(f"no complete step under {root}: resume_mode=auto would train from step 0")
    print(f"resume_mode=auto would load: {latest}")
    return latest


def _weights_note(info) -> str:
    """For an incomplete step: can `strata export` still write its weights (`CheckpointInfo.weights_problem`)?"""
    return " (cannot resume; its weights export)" if info.weights_problem is None else (
        f" (cannot resume or export: it {info.weights_problem})")


def _manifest_note(info) -> str:
    if not info.has_manifest:
        return "; no manifest (written by verl's own trainer or an older strata: shards checked as whole archives only)"
    return "; checksums verified" if info.checksums_verified else ""


def _describe_step(step: Path) -> None:
    info = describe_checkpoint(step, checksums=True)
    state = "complete" if info.complete else f"INCOMPLETE{_weights_note(info)}"
    print(f"{info.path}: step {info.step}, {state}{_manifest_note(info)}")
    for role in info.roles:
        print(f"  {role.name}: FSDP{role.fsdp_version or '?'} world size {role.world_size}; model {role.has_model}, "
              f"optimizer {role.has_optimizer}, extra state {role.has_extra_state}, "
              f"hf config {role.has_hf_config}, hf weights {role.has_hf_weights}")
        if role.lora:
            print(f"  {role.name}: LoRA adapter, rank {role.lora.rank}, alpha {role.lora.alpha} "
                  f"(strata export merges it and also writes it to lora_adapter/)")
    print(f"  dataloader state (data.pt): {info.has_dataloader_state}")
    for item in info.missing:
        print(f"  missing: {item}")
