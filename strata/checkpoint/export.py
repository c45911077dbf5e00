"""Export a verl checkpoint as a Hugging Face model folder, optionally laid out as a release repository.

The FSDP shards are the truth (``huggingface/`` holds weights only when ``checkpoint.save_contents`` had
``hf_model``): every parameter is reassembled from its per-rank rows, cast to bf16 as the Qwen2.5 release is
(or kept fp32, for further training), and written as ``model.safetensors`` (split with an index above
``max_shard_size``, as the Hub does).
With ``tie_word_embeddings`` the ``lm_head.weight`` key is omitted, exactly as in the Qwen2.5 release,
and transformers re-ties it on load. Config (its ``dtype`` the weights'), tokenizer, chat template and
generation config come from the checkpoint's ``huggingface/`` folder.

A LoRA run's shards hold the PEFT-wrapped model (`strata.checkpoint.lora`): the export merges the adapter
into the weights (``W + (alpha / r) B A`` in fp32, then bf16), so the folder is a plain model that vLLM and
the evaluation recipes load, and also writes the adapter alone to ``lora_adapter/`` as PEFT saves one.

``release=True`` adds ``training_state/``: a verl checkpoint root holding the step folder (every rank's
model, optimizer and extra-state shards, ``data.pt``) and its pointer, so
``trainer.resume_mode=auto trainer.default_local_dir=<release>/training_state`` continues the run.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import torch
from huggingface_hub import StateDictSplit, split_torch_state_dict_into_shards
from safetensors.torch import save_file

from strata.checkpoint.fsdp2 import full_tensor, load_shard
from strata.checkpoint.inspect import CheckpointError, describe_checkpoint, error_line
from strata.checkpoint.layout import ACTOR_DIR, HF_DIR, shard_file_name
from strata.checkpoint.lora import lora_adapter, merged_tensors, write_adapter
from strata.checkpoint.pointer import write_latest_pointer
from strata.staging import staged

logger = logging.getLogger(__name__)

TRAINING_STATE_DIR = "training_state"
LORA_ADAPTER_DIR = "lora_adapter"
TIED_HEAD_KEY = "lm_head.weight"
TIED_SOURCE_KEY = "model.embed_tokens.weight"


def export_hf(checkpoint: str | Path, out: str | Path, release: bool = False,
              max_shard_size: str | int = "5GB", dtype: torch.dtype = torch.bfloat16) -> Path:
    """Write the actor of ``checkpoint`` (a ``global_step_N`` folder) to ``out`` as a Hugging Face model.

    ``out`` must not exist or be empty. Returns ``out``. Loading it back:
    ``AutoModelForCausalLM.from_pretrained(out)`` and ``AutoTokenizer.from_pretrained(out)``. ``dtype``: the
    weights' (bf16, as a release; float32 keeps the shards' fp32 weights exactly, for a model trained further, as
    `strata.assets.dagger` does).
    """
    info = describe_checkpoint(checkpoint, checksums=True)
    actor = info.actor
    if info.weights_problem:
        raise CheckpointError(f"{info.path} {info.weights_problem}{_lacking_weights(info)}; export another step "
                              "written by verl's trainer (strata inspect-checkpoint lists them)")
    if release and not info.complete:
        raise CheckpointError(f"{info.path} is incomplete (missing {', '.join(info.missing[:4])}), so its "
                              f"training state cannot be released; export a complete step or drop --release")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise CheckpointError(f"{out} is not empty; pass a new folder to --out")
    started = time.perf_counter()
    actor_dir = info.path / ACTOR_DIR
    config = _load_config(actor_dir / HF_DIR)
    sources = [load_shard(actor_dir / shard_file_name("model", actor.world_size, rank))
               for rank in range(actor.world_size)]
    keys = list(sources[0])

    def tensor(key: str) -> torch.Tensor:
        return full_tensor([source[key] for source in sources], key)

    try:
        tensors = merged_tensors(keys, tensor, actor.lora) if actor.lora else ((key, tensor(key)) for key in keys)
        state = _cast_state_dict(tensors, _ties_embeddings(config), dtype)
    except ValueError as error:
        raise CheckpointError(f"{info.path}: {error}") from error
    split = split_torch_state_dict_into_shards(state, filename_pattern="model{suffix}.safetensors",
                                               max_shard_size=max_shard_size)
    adapter = lora_adapter(keys, tensor, actor.lora) if actor.lora else None
    # Written under a hidden name and renamed at the end: an interrupted export leaves no model folder.
    with staged(out) as staging:
        _save_safetensors(state, split, staging)
        if adapter:
            write_adapter(adapter, staging / LORA_ADAPTER_DIR)
        config.dtype = dtype
        config.save_pretrained(staging)
        for file in sorted((actor_dir / HF_DIR).iterdir()):
            if file.is_file() and not _written_by_export(file.name):
                shutil.copy2(file, staging / file.name)
        if release:
            training_state = staging / TRAINING_STATE_DIR
            shutil.copytree(info.path, training_state / info.path.name)
            write_latest_pointer(training_state, info.step)
    logger.debug("exported %s (world size %s%s) to %s in %.1f s", info.path, actor.world_size,
                f", LoRA rank {actor.lora.rank} merged" if actor.lora else "", out, time.perf_counter() - started)
    return out


def _lacking_weights(info) -> str:
    """`` (missing actor/model_world_size_1_rank_0.pt (truncated))``: the files of ``info`` (a `CheckpointInfo`)
    that the export needs and lacks, named so that the user sees which one is absent or damaged; empty when the
    weights problem already names them (a damaged file) or none is listed."""
    if info.weights_problem.startswith("is damaged"):
        return ""
    lacking = [item for item in info.missing if item == f"{ACTOR_DIR}/" or item.startswith(f"{ACTOR_DIR}/model_")]
    if info.actor is not None and not info.actor.has_hf_config:
        lacking.append(f"{ACTOR_DIR}/{HF_DIR}/config.json")
    return f" (missing {', '.join(lacking[:4])}{', ...' if len(lacking) > 4 else ''})" if lacking else ""


def _written_by_export(name: str) -> bool:
    """Config and weights (any ``huggingface/`` weights verl saved too) are written from the shards."""
    return name == "config.json" or name.endswith((".safetensors", ".bin", ".index.json"))


def _load_config(hf_dir: Path):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(hf_dir)
    except Exception as error:  # noqa: BLE001 - a damaged config.json is a JSONDecodeError, OSError, ValueError...
        raise CheckpointError(f"cannot read {hf_dir / 'config.json'}: {error_line(error)}") from error


def _ties_embeddings(config) -> bool:
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    return bool(getattr(text_config, "tie_word_embeddings", False))


def _cast_state_dict(tensors: Iterable[tuple[str, torch.Tensor]], tied: bool,
                     dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """The full tensors in ``dtype``, one at a time; the tied head is checked equal to the embedding, then left
    out."""
    state, head = {}, None
    for key, value in tensors:
        if tied and key == TIED_HEAD_KEY:
            head = value
            continue
        state[key] = value.to(dtype).contiguous()
    if head is not None and not torch.equal(head.to(dtype), state[TIED_SOURCE_KEY]):
        raise CheckpointError(f"config says tie_word_embeddings but {TIED_HEAD_KEY} differs from "
                              f"{TIED_SOURCE_KEY} in the shards; the export would change the model")
    return state


def _save_safetensors(state: dict[str, torch.Tensor], split: StateDictSplit, out: Path) -> None:
    """``model.safetensors``, or ``model-0000k-of-0000n.safetensors`` plus the index, as the Hub lays them out."""
    for filename, keys in split.filename_to_tensors.items():
        save_file({key: state[key] for key in keys}, out / filename, metadata={"format": "pt"})
        (out / filename).chmod(0o644)  # safetensors creates 0600 files; a release is meant to be read
    if split.is_sharded:
        index = {"metadata": split.metadata, "weight_map": split.tensor_to_filename}
        (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2, sort_keys=True))
