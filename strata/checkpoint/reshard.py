"""Convert a verl FSDP2 checkpoint from world size W to W' (model, optimizer and extra state).

verl resumes only at the world size it saved with: it opens ``model_world_size_{W'}_rank_{r}.pt`` and
fails. A run trained on 2 GPUs that must continue on 1 or 8 goes through this module first. Model
parameters and AdamW moments are re-split on dim 0 (see :mod:`strata.checkpoint.fsdp2`), step counters,
param groups and the lr scheduler are copied, and each new rank r' takes the RNG state of old rank
``r' mod W`` (there is no "right" RNG stream for a rank that did not exist). ``data.pt``, the Hugging Face
config and tokenizer are copied as they are.

The source's checksums are verified first when it has a manifest (`strata.checkpoint.manifest`). The new
step folder is assembled under a hidden name, gets its own manifest, and is renamed into place at the
end (`strata.staging`), and the output root's pointer is written last, so an interrupted reshard never
looks like a checkpoint and leaves nothing a later one keeps.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import torch

from strata.checkpoint.fsdp2 import load_shard, reshard_tree
from strata.checkpoint.inspect import CheckpointError, describe_checkpoint
from strata.checkpoint.layout import FSDP_CONFIG_FILE, MANIFEST_FILE, parse_shard_file, shard_file_name
from strata.checkpoint.manifest import write_manifest
from strata.checkpoint.pointer import read_latest_pointer, write_latest_pointer
from strata.staging import staged

logger = logging.getLogger(__name__)


def reshard_checkpoint(checkpoint: str | Path, world_size: int, out_root: str | Path) -> Path:
    """Write ``checkpoint`` (a ``global_step_N`` folder) for ``world_size`` ranks: ``out_root/global_step_N``.

    ``out_root`` plays the role of ``trainer.default_local_dir``: its pointer is set to N unless it already
    names a later step, so ``trainer.resume_mode=auto trainer.default_local_dir=out_root`` picks it up.
    Returns the new step folder.
    """
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be a positive integer, got {world_size!r}")
    info = describe_checkpoint(checkpoint, checksums=True)
    if not info.complete:
        raise CheckpointError(f"{info.path} is incomplete or damaged (missing {', '.join(info.missing[:4])}); "
                              f"reshard a complete step instead (strata inspect-checkpoint lists them)")
    out_root = Path(out_root)
    destination = out_root / info.path.name
    if destination.exists():
        raise CheckpointError(f"{destination} already exists; pass another --out or remove it first")
    started = time.perf_counter()
    role_names = {role.name for role in info.roles}
    with staged(destination) as staging:
        shutil.copytree(info.path, staging, ignore=_skip_fsdp_files(info.path, role_names), dirs_exist_ok=True)
        for role in info.roles:
            _reshard_role(info.path / role.name, staging / role.name, role.world_size, world_size)
        write_manifest(staging, step=info.step)
    pointed = read_latest_pointer(out_root)
    if pointed is None or pointed < info.step:
        write_latest_pointer(out_root, info.step)
    logger.info("resharded %s from world size %s to %d in %.1f s -> %s", info.path, info.world_size,
                world_size, time.perf_counter() - started, destination)
    return destination


def _skip_fsdp_files(step_dir: Path, role_names: set[str]) -> Callable[[str, list[str]], set[str]]:
    """copytree filter leaving out the per-rank shards and fsdp_config.json of role folders and the manifest
    (all rewritten)."""

    def skip(folder: str, names: list[str]) -> set[str]:
        if Path(folder) == step_dir:
            return {MANIFEST_FILE} & set(names)
        if Path(folder).parent != step_dir or Path(folder).name not in role_names:
            return set()
        return {name for name in names if name == FSDP_CONFIG_FILE or parse_shard_file(name)}

    return skip


def _reshard_role(source: Path, target: Path, old_size: int, new_size: int) -> None:
    config = json.loads((source / FSDP_CONFIG_FILE).read_text())
    if config.get("FSDP_version") != 2:
        raise CheckpointError(
            f"{source} was saved by FSDP version {config.get('FSDP_version')}; only FSDP2 "
            f"(actor.strategy=fsdp2) shards are per-parameter DTensors that can be resharded"
        )
    target.mkdir(parents=True, exist_ok=True)
    for kind in ("model", "optim"):
        files = [source / shard_file_name(kind, old_size, rank) for rank in range(old_size)]
        if not files[0].is_file():
            continue  # not saved (checkpoint.save_contents); describe_checkpoint vouched for consistency
        sources = [load_shard(file) for file in files]
        for rank in range(new_size):
            torch.save(reshard_tree(sources, new_size, rank), target / shard_file_name(kind, new_size, rank))
        del sources
    extra_files = [source / shard_file_name("extra_state", old_size, rank) for rank in range(old_size)]
    if extra_files[0].is_file():
        _reshard_extra_state([load_shard(file) for file in extra_files], target, new_size)
    config["world_size"] = new_size
    (target / FSDP_CONFIG_FILE).write_text(json.dumps(config, indent=4))


def rng_copy_note(old_size: int, new_size: int) -> str:
    """What resharding to more ranks does to the random-number state, in plain words (one line)."""
    added = new_size - old_size
    ranks = f"{old_size} GPU rank{'s' if old_size > 1 else ''}"
    saved = f"the checkpoint was saved by {ranks} and the new run has {new_size}"
    if added == 1:
        new = f"the new rank {old_size} has no saved random-number state, so it starts from a copy of rank 0's"
    elif old_size == 1:
        new = (f"the new ranks 1 to {new_size - 1} have no saved random-number state, so each starts from a copy "
               "of rank 0's")
    else:
        new = (f"the new ranks {old_size} to {new_size - 1} have no saved random-number state, so each starts from "
               f"a copy of an old rank's (rank {old_size} from rank 0, rank {old_size + 1} from rank 1, and so on)")
    return (f"note: {saved}: {new}. The model and optimizer are split exactly; only the copies' random draws "
            "(e.g. dropout) repeat the original ranks' at first.")


def _reshard_extra_state(sources: list[dict], target: Path, new_size: int) -> None:
    """lr scheduler state is global (checked equal across ranks); RNG state goes to rank ``r' mod W``."""
    old_size = len(sources)
    if new_size > old_size:
        logger.warning("%s", rng_copy_note(old_size, new_size))
    shared = [{key: value for key, value in source.items() if key != "rng"} for source in sources]
    for rank in range(new_size):
        state = reshard_tree(shared, new_size, rank)
        donor = sources[rank % old_size]
        if "rng" in donor:
            state["rng"] = donor["rng"]
        state = {key: state[key] for key in donor}  # verl's key order
        torch.save(state, target / shard_file_name("extra_state", new_size, rank))
