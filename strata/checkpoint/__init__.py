"""Checkpoints as verl 0.9.1 writes them: inspect, resume safely, reshard, export.

Modules, one job each:
    layout      file and folder names of a verl checkpoint (one place to change if verl renames them)
    pointer     ``latest_checkpointed_iteration.txt`` written atomically (temp file + ``os.replace``)
    manifest    ``global_step_N/strata_manifest.json``: size and SHA-256 of every file a complete save wrote
    inspect     what a ``global_step_N`` holds, the step to resume from, and why a resume cannot work
    fsdp2       how FSDP2 splits a tensor over ranks (``Shard(0)``, ``torch.chunk``), without a process group
    reshard     world size W -> W' for model, optimizer and extra-state shards
    export      a Hugging Face folder (bf16 safetensors, tokenizer, chat template), optionally a release
    lora        a LoRA run's PEFT-wrapped shards: rank and alpha, merged weights, the adapter alone

How the trainer uses this (``strata.trainer``):

* Save. verl's ``_save_checkpoint`` writes the shards, then ``data.pt``, then the pointer with a plain
  ``open(path, "w")``, which can leave an empty pointer if the process dies in between. After verl's
  save returns, the trainer's ``_save_checkpoint`` override calls ``write_manifest(step_dir)`` (the step's
  last file, atomic) and then ``write_latest_pointer(default_local_dir, global_steps)`` so the pointer is
  rewritten atomically. Resume, export and reshard check the files against the manifest (a step without
  one, from an older run, gets the structural check only).
* Resume, ``resume_mode=auto``. Instead of verl's ``find_latest_ckpt_path`` (which trusts the pointer and
  fails on an empty one), use ``find_latest_checkpoint(default_local_dir)``: it returns the pointer's step
  when that save is complete, otherwise the newest complete step with a warning, never a half-written
  one; pass the result as ``resume_from_path`` (``resume_mode=resume_path``).
* Resume, before any worker starts: ``check_resumable(step, world_size=nnodes * n_gpus_per_node,
  dataloader_num_workers=data.dataloader_num_workers, load_contents=actor.checkpoint.load_contents)``
  raises :class:`CheckpointError` with one actionable line (reshard with ``strata reshard``, set the
  dataloader workers back, ...), instead of a ``FileNotFoundError`` inside a Ray worker.

Command-line tools: ``strata inspect-checkpoint``, ``strata reshard``, ``strata export``.
"""

from strata.checkpoint.inspect import (
    CheckpointError,
    CheckpointInfo,
    RoleInfo,
    check_resumable,
    describe_checkpoint,
    find_latest_checkpoint,
)
from strata.checkpoint.manifest import read_manifest, write_manifest
from strata.checkpoint.pointer import read_latest_pointer, write_latest_pointer

__all__ = [
    "CheckpointError",
    "CheckpointInfo",
    "RoleInfo",
    "check_resumable",
    "describe_checkpoint",
    "find_latest_checkpoint",
    "read_latest_pointer",
    "read_manifest",
    "write_latest_pointer",
    "write_manifest",
]
