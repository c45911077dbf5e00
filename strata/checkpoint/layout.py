"""File names of a verl 0.9.1 checkpoint, in one place.

verl writes, under ``trainer.default_local_dir``::

    latest_checkpointed_iteration.txt           the step to resume from (plain integer, no newline)
    global_step_N/data.pt                        dataloader state, written after every shard
    global_step_N/<role>/fsdp_config.json        {"FSDP_version": 2, "world_size": W}
    global_step_N/<role>/{model,optim,extra_state}_world_size_W_rank_R.pt
    global_step_N/<role>/huggingface/            config, tokenizer, chat template (+ weights if asked)
    global_step_N/strata_manifest.json           strata's record of every file's size and SHA-256, written
                                                 by the trainer after verl's save (`strata.checkpoint.manifest`)

``<role>`` is ``actor`` (and ``critic`` for PPO). Every tool here derives paths from these helpers so a
change in verl's naming is a one-line fix.
"""

from __future__ import annotations

import re
from pathlib import Path

POINTER_FILE = "latest_checkpointed_iteration.txt"
DATALOADER_FILE = "data.pt"
FSDP_CONFIG_FILE = "fsdp_config.json"
HF_DIR = "huggingface"
MANIFEST_FILE = "strata_manifest.json"
ACTOR_DIR = "actor"
SHARD_KINDS = ("model", "optim", "extra_state")

_STEP_DIR = re.compile(r"^global_step_(\d+)$")
_SHARD_FILE = re.compile(r"^(model|optim|extra_state)_world_size_(\d+)_rank_(\d+)\.pt$")


def step_dir_name(step: int) -> str:
    """``global_step_N``: verl parses the step back out of this name when it resumes."""
    return f"global_step_{step}"


def parse_step(path: str | Path) -> int | None:
    """The step of a ``global_step_N`` folder, or None for any other name."""
    match = _STEP_DIR.match(Path(path).name)
    return int(match.group(1)) if match else None


def shard_file_name(kind: str, world_size: int, rank: int) -> str:
    """The per-rank file verl's ``FSDPCheckpointManager`` reads for ``kind`` (model, optim, extra_state)."""
    if kind not in SHARD_KINDS:
        raise ValueError(f"unknown shard kind {kind!r}; valid kinds: {', '.join(SHARD_KINDS)}")
    return f"{kind}_world_size_{world_size}_rank_{rank}.pt"


def parse_shard_file(name: str) -> tuple[str, int, int] | None:
    """``(kind, world_size, rank)`` for a shard file name, or None for any other file."""
    match = _SHARD_FILE.match(name)
    if not match:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


def step_dirs(root: str | Path) -> dict[int, Path]:
    """Every ``global_step_N`` folder directly under ``root``, keyed by step."""
    root = Path(root)
    if not root.is_dir():
        return {}
    found = {parse_step(child): child for child in root.iterdir() if child.is_dir()}
    return {step: path for step, path in found.items() if step is not None}
