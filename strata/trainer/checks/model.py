"""The model: a local Hugging Face folder, or a hub id that is cached here or reachable; and its size.

Workers load ``actor_rollout_ref.model.path`` minutes after start-up; a typo or an offline machine without
the model cached should fail here instead.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path

from omegaconf import DictConfig

from strata.trainer.checks.base import Level, select

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
HUB_TIMEOUT_S = 5.0
_TRUE = {"1", "on", "yes", "true"}
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` as huggingface_hub reads it."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def local_model_dir(path: str) -> Path | None:
    """The folder holding the model's config.json: ``path`` itself, or its hub snapshot if cached here."""
    if Path(path).is_dir():
        return Path(path) if (Path(path) / "config.json").is_file() else None
    if not HUB_ID.match(path):
        return None
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(path, "config.json")
    return Path(cached).parent if isinstance(cached, str) else None


def _probe_hub(repo: str) -> str | None:
    """None when the hub serves ``repo``'s config.json; otherwise why not."""
    import httpx
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    try:
        get_hf_file_metadata(hf_hub_url(repo, "config.json"), timeout=HUB_TIMEOUT_S)
    except GatedRepoError:
        return "is gated: accept its licence on huggingface.co and `hf auth login`"
    except RepositoryNotFoundError:
        return "does not exist on the Hugging Face hub (or is private: `hf auth login`)"
    except (httpx.HTTPError, OSError) as err:
        why = f"{type(err).__name__}: {err}, timeout {HUB_TIMEOUT_S:g} s"
        return f"is not cached here and the hub is unreachable ({why})"
    return None


def model(config: DictConfig) -> Iterator[tuple[Level, str]]:
    path = str(select(config, "actor_rollout_ref.model.path", ""))
    key = f"actor_rollout_ref.model.path={path}"
    if Path(path).is_dir():
        if local_model_dir(path) is None:
            yield Level.ERROR, f"{key} has no config.json: not a Hugging Face model."
        else:
            yield Level.OK, f"local model folder {path}"
        return
    if not HUB_ID.match(path):
        yield Level.ERROR, (
            f"{key} does not exist. Download the model there, or build a tiny test model with "
            "`strata build-tiny-model --out DIR`."
        )
        return
    if local_model_dir(path) is not None:
        yield Level.OK, f"hub id {path}, cached locally"
        return
    download = f"download it first (`hf download {path}`) and pass MODEL=/that/folder"
    if hub_offline():
        yield Level.ERROR, f"{key} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set: {download}."
        return
    problem = _probe_hub(path)
    if problem:
        yield Level.ERROR, f"{key} {problem}: {download}."
    else:
        yield Level.OK, f"hub id {path}, not cached: reachable on the hub, downloaded at start-up"


def _safetensors_params(folder: Path, dtype_bytes: int) -> int | None:
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        total = json.loads(index.read_text()).get("metadata", {}).get("total_size")
        return int(total) // dtype_bytes if total else None
    single = folder / "model.safetensors"
    if not single.is_file():
        return None
    with single.open("rb") as f:  # header: little-endian u64 length, then JSON {name: {shape, ...}}
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    return sum(math.prod(t["shape"]) for name, t in header.items() if name != "__metadata__")


def _config_params(cfg: dict) -> int | None:
    """A decoder-only transformer's parameter count from its config.json (biases and norms ignored)."""
    try:
        hidden, layers, inter, vocab = (cfg[k] for k in ("hidden_size", "num_hidden_layers",
                                                        "intermediate_size", "vocab_size"))
    except KeyError:
        return None
    heads = cfg.get("num_attention_heads", 1)
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or hidden // heads
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    embeddings = vocab * hidden * (1 if cfg.get("tie_word_embeddings", True) else 2)
    return layers * (attention + 3 * hidden * inter) + embeddings


def parameter_count(folder: Path) -> int | None:
    """The model's parameter count from its local files: safetensors headers, else config.json; None if unknown."""
    cfg = json.loads((folder / "config.json").read_text())
    dtype_bytes = _DTYPE_BYTES.get(str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16"), 2)
    return _safetensors_params(folder, dtype_bytes) or _config_params(cfg)
