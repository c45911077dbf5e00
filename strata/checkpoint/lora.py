"""LoRA in a verl checkpoint: recognise it, and turn its PEFT-wrapped shards into a plain model and an adapter.

A run with ``actor_rollout_ref.model.lora_rank > 0`` trains a PEFT-wrapped model, so its model shards name
every parameter under ``base_model.model.``: an adapted layer keeps its frozen weight as
``<layer>.base_layer.weight`` and its adapter as ``<layer>.lora_A.default.weight`` (r x in) and
``<layer>.lora_B.default.weight`` (out x r); verl also writes ``lora_train_meta.json`` (rank, alpha) next to
the shards. verl builds a plain ``LoraConfig`` (no rsLoRA, no DoRA), so an adapted layer computes
``W x + (alpha / r) B A x`` and its merged weight is ``W + (alpha / r) B A``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

LORA_META_FILE = "lora_train_meta.json"
PEFT_PREFIX = "base_model.model."
BASE_LAYER = ".base_layer."
_ADAPTER_KEY = re.compile(r"^(?P<layer>.+)\.lora_(?P<matrix>[AB])\.default\.weight$")


@dataclass(frozen=True)
class LoraMeta:
    """What verl records of the adapter (``lora_train_meta.json``)."""

    rank: int
    alpha: int
    task_type: str = "CAUSAL_LM"

    @property
    def scale(self) -> float:
        """PEFT's scaling of ``B A`` (alpha / r)."""
        return self.alpha / self.rank


def read_lora_meta(role_dir: Path) -> LoraMeta | None:
    """The adapter's rank and alpha from ``role_dir``, or None for a full fine-tune; ValueError when unreadable."""
    file = role_dir / LORA_META_FILE
    if not file.is_file():
        return None
    try:
        meta = json.loads(file.read_text())
        rank, alpha = int(meta["r"]), int(meta["lora_alpha"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{file} does not hold verl's LoRA rank and alpha ({error!r})") from error
    if rank < 1 or alpha < 1:
        raise ValueError(f"{file} records rank {rank} and alpha {alpha}; both must be >= 1")
    return LoraMeta(rank, alpha, str(meta.get("task_type") or "CAUSAL_LM"))


def plain_key(key: str) -> str:
    """The Hugging Face name of a PEFT-wrapped parameter: ``base_model.model.X.base_layer.weight`` -> ``X.weight``."""
    return key.removeprefix(PEFT_PREFIX).replace(BASE_LAYER, ".")


def adapted_layers(keys: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Each adapted layer's wrapped name (``base_model.model.model.layers.0.self_attn.q_proj``) -> its (A, B) keys.

    Raises ValueError for an adapter this merge does not understand (embedding LoRA, DoRA magnitudes, a
    second adapter), or a layer with one matrix only: a silently unmerged adapter would ship the base model.
    """
    found: dict[str, dict[str, str]] = {}
    for key in keys:
        if ".lora_" not in key:
            continue
        match = _ADAPTER_KEY.match(key)
        if match is None:
            raise ValueError(f"{key}: only linear LoRA layers of the default adapter can be merged")
        found.setdefault(match["layer"], {})[match["matrix"]] = key
    incomplete = sorted(layer for layer, matrices in found.items() if set(matrices) != {"A", "B"})
    if incomplete:
        raise ValueError(f"LoRA layers without both A and B: {', '.join(incomplete[:3])}")
    return {layer: (matrices["A"], matrices["B"]) for layer, matrices in found.items()}


def merged_tensors(keys: Iterable[str], tensor: Callable[[str], torch.Tensor],
                   meta: LoraMeta) -> Iterator[tuple[str, torch.Tensor]]:
    """Every model parameter under its Hugging Face name, each adapted weight merged in fp32.

    ``tensor(key)`` gives a full tensor of the shards; it is called once per key, so the caller decides what
    stays in memory.
    """
    keys = list(keys)
    layers = adapted_layers(keys)
    for key in keys:
        if ".lora_" in key:
            continue
        value = tensor(key)
        layer = key.removesuffix(f"{BASE_LAYER}weight")
        if layer != key:
            if layer not in layers:
                raise ValueError(f"{key} is wrapped by PEFT but has no lora_A / lora_B weights to merge")
            lora_a, lora_b = (tensor(name).float() for name in layers[layer])
            value = value.float() + meta.scale * (lora_b @ lora_a)
        yield plain_key(key), value


@dataclass(frozen=True)
class Adapter:
    """A LoRA adapter as PEFT saves one: its ``LoraConfig`` and its weights under PEFT's names."""

    config: Any  # peft.LoraConfig (PEFT is imported only when an adapter is built)
    weights: dict[str, torch.Tensor]


def lora_adapter(keys: Iterable[str], tensor: Callable[[str], torch.Tensor], meta: LoraMeta) -> Adapter:
    """The adapter of a PEFT-wrapped model's shards, in its trained dtype. Built before a staged write starts
    (`strata.staging`), so that the write imports nothing."""
    from peft import LoraConfig

    layers = adapted_layers(keys)
    weights = {name.replace(".default.weight", ".weight"): tensor(name).contiguous()
               for pair in layers.values() for name in pair}
    modules = sorted({layer.rsplit(".", 1)[1] for layer in layers})
    config = LoraConfig(r=meta.rank, lora_alpha=meta.alpha, target_modules=modules, task_type=meta.task_type,
                        bias="none")
    return Adapter(config, weights)


def write_adapter(adapter: Adapter, out: Path) -> Path:
    """``adapter_config.json`` and ``adapter_model.safetensors`` in ``out``:
    ``PeftModel.from_pretrained(base_model, out)`` puts the adapter back on the base model."""
    out.mkdir(parents=True, exist_ok=True)
    adapter.config.save_pretrained(str(out))
    save_file(adapter.weights, out / "adapter_model.safetensors", metadata={"format": "pt"})
    (out / "adapter_model.safetensors").chmod(0o644)  # safetensors creates 0600 files; an adapter is meant to be read
    return out
