"""verl's vLLM server and worker extension, with verl's LoRA adapter loading working on vLLM 0.29.

verl syncs a LoRA-trained actor into vLLM as an adapter (``model.lora_rank > 0``, ``lora.merge=false``): the
base weights once, then after every step the adapter tensors, which vLLM loads through verl's replacement of
its ``_load_adapter`` (``verl.utils.vllm.VLLMHijack``, installed by verl's worker extension in every vLLM
worker). On vLLM >= 0.25 that replacement calls ``model.hf_to_vllm_mapper.get_unstacked_mapper()``; vLLM
0.29.0 has the same method as ``get_rename_mapper`` ("keeping only the renames", for LoRA name parsing) and
Qwen2 models now carry an ``hf_to_vllm_mapper``, so verl 0.9.1's first adapter sync into Qwen2.5 fails with
``AttributeError: 'WeightsMapper' object has no attribute 'get_unstacked_mapper'`` (and the trainer then hangs
in verl's bucket clean-up). `LoRAWorkerExtension` restores the old name before verl's extension starts;
`StrataVLLMHttpServer` is verl's server naming that extension. Full fine-tuning never reaches this code.

Imports vLLM; `strata.backends.vllm_rollout` imports it only where verl builds a vLLM replica.
"""

from __future__ import annotations

from typing import Any

from verl.workers.rollout.vllm_rollout.utils import vLLMColocateWorkerExtension
from verl.workers.rollout.vllm_rollout.vllm_async_server import vLLMHttpServer

WORKER_EXTENSION = "strata.backends.vllm_lora.LoRAWorkerExtension"


def restore_unstacked_mapper() -> None:
    """Give vLLM's ``WeightsMapper`` the ``get_unstacked_mapper`` name verl calls (idempotent)."""
    from vllm.model_executor.models.utils import WeightsMapper

    if not hasattr(WeightsMapper, "get_unstacked_mapper"):
        WeightsMapper.get_unstacked_mapper = WeightsMapper.get_rename_mapper


class LoRAWorkerExtension(vLLMColocateWorkerExtension):
    """verl's colocated worker extension, built after `restore_unstacked_mapper` (in the vLLM worker)."""

    def __new__(cls, **kwargs: Any):
        restore_unstacked_mapper()
        return super().__new__(cls, **kwargs)


class StrataVLLMHttpServer(vLLMHttpServer):
    """verl's vLLM server, starting its engine with `LoRAWorkerExtension`."""

    def _get_worker_extension_cls(self) -> str:
        return WORKER_EXTENSION
