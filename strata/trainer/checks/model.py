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


def _probe_hub(repo: str) -> tuple[Level, str] | None:
    """None when the hub serves ``repo``'s config.json; otherwise how bad that is and why.

    A timeout is only a WARNING: the hub (or a proxy) being slow to answer one request says little about
    whether the download at start-up will work, while a refused connection or a missing repo says it won't.
    """
    import httpx
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    try:
        get_hf_file_metadata(hf_hub_url(repo, "config.json"), timeout=HUB_TIMEOUT_S)
    except GatedRepoError:
        return Level.ERROR, "is gated: accept its licence on huggingface.co and `hf auth login`"
    except RepositoryNotFoundError:
        return Level.ERROR, "does not exist on the Hugging Face hub (or is private: `hf auth login`)"
    except (httpx.TimeoutException, TimeoutError) as err:
        why = f"{type(err).__name__} after {HUB_TIMEOUT_S:g} s"
        return Level.WARNING, f"is not cached here and the hub is slow: no answer in time ({why}), so not checked"
    except (httpx.HTTPError, OSError) as err:
        why = f"{type(err).__name__}: {err}, timeout {HUB_TIMEOUT_S:g} s"
        return Level.ERROR, f"is not cached here and the hub is unreachable ({why})"
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
        level, why = problem
        yield level, f"{key} {why}: {download}."
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


def _linear_shapes(cfg: dict) -> dict[str, tuple[int, int]] | None:
    """(in, out) features of each linear layer of one decoder layer (Llama/Qwen2 names), from config.json."""
    try:
        hidden, inter = cfg["hidden_size"], cfg["intermediate_size"]
    except KeyError:
        return None
    heads = cfg.get("num_attention_heads", 1)
    kv = (cfg.get("num_key_value_heads") or heads) * (cfg.get("head_dim") or hidden // heads)
    q = heads * (cfg.get("head_dim") or hidden // heads)
    return {"q_proj": (hidden, q), "k_proj": (hidden, kv), "v_proj": (hidden, kv), "o_proj": (q, hidden),
            "gate_proj": (hidden, inter), "up_proj": (hidden, inter), "down_proj": (inter, hidden)}


def _config_params(cfg: dict) -> int | None:
    """A decoder-only transformer's parameter count from its config.json (biases and norms ignored)."""
    shapes = _linear_shapes(cfg)
    if shapes is None or "num_hidden_layers" not in cfg or "vocab_size" not in cfg:
        return None
    embeddings = cfg["vocab_size"] * cfg["hidden_size"] * (1 if cfg.get("tie_word_embeddings", True) else 2)
    return cfg["num_hidden_layers"] * sum(a * b for a, b in shapes.values()) + embeddings


def lora_params(folder: Path, rank: int, target_modules: str | list[str]) -> int | None:
    """Trainable parameters of a rank-``rank`` LoRA adapter on ``target_modules`` of the model in ``folder``.

    Each adapted ``in x out`` linear layer gains A (rank x in) and B (out x rank). ``all-linear`` is every
    linear layer of the decoder, not the output layer (PEFT's meaning); names other than the seven decoder
    projections count nothing. For Qwen2.5-7B at rank 64 on all-linear: 161.5M.
    """
    cfg = json.loads((folder / "config.json").read_text())
    shapes = _linear_shapes(cfg)
    if shapes is None or "num_hidden_layers" not in cfg:
        return None
    names = list(shapes) if target_modules == "all-linear" else [n for n in target_modules if n in shapes]
    return cfg["num_hidden_layers"] * rank * sum(sum(shapes[n]) for n in names)


def parameter_count(folder: Path) -> int | None:
    """The model's parameter count from its local files: safetensors headers, else config.json; None if unknown."""
    cfg = json.loads((folder / "config.json").read_text())
    dtype_bytes = _DTYPE_BYTES.get(str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16"), 2)
    return _safetensors_params(folder, dtype_bytes) or _config_params(cfg)
