"""LoRA in the rollout plug-ins, on the real classes: verl's adapter loading on vLLM 0.29
(`strata.backends.vllm_lora`) and the hf rollout's refusal of adapters. The adapter sync itself runs end to end
in tests/integration/test_sciworld_lora.py."""

from __future__ import annotations


def test_verl_finds_the_mapper_method_it_calls_on_qwen2():
    from vllm.model_executor.models.qwen2 import Qwen2ForCausalLM
    from vllm.model_executor.models.utils import WeightsMapper

    from strata.backends.vllm_lora import restore_unstacked_mapper

    # verl 0.9.1's _load_adapter calls hf_to_vllm_mapper.get_unstacked_mapper() when the model has a mapper.
    assert Qwen2ForCausalLM.hf_to_vllm_mapper is not None
    restore_unstacked_mapper()
    restore_unstacked_mapper()  # idempotent: one call per vLLM worker, tests may call it again
    stacked = WeightsMapper(orig_to_new_prefix={"model.": "language_model.model."},
                            orig_to_new_stacked={".q_proj": (".qkv_proj", "q")})
    unstacked = stacked.get_unstacked_mapper()
    # LoRA names its modules by their checkpoint names: renames apply, stacking does not.
    assert unstacked.orig_to_new_stacked == {}
    assert unstacked._map_name("model.layers.0.self_attn.q_proj.weight") == (
        "language_model.model.layers.0.self_attn.q_proj.weight")


def test_every_vllm_replica_starts_its_workers_with_the_lora_extension():
    from verl.workers.rollout.replica import RolloutReplicaRegistry
    from verl.workers.rollout.vllm_rollout.utils import vLLMColocateWorkerExtension
    from verl.workers.rollout.vllm_rollout.vllm_async_server import vLLMReplica

    import strata.backends.verl_plugin  # noqa: F401  (what verl's plug-in loading does)
    from strata.backends.vllm_lora import WORKER_EXTENSION, LoRAWorkerExtension, StrataVLLMHttpServer

    replica_class = RolloutReplicaRegistry.get("vllm")  # the cpu platform's subclass when VERL_PLATFORM=cpu
    assert issubclass(replica_class, vLLMReplica) and replica_class is not vLLMReplica
    assert "StrataVLLMReplica" in {cls.__name__ for cls in replica_class.__mro__}
    assert StrataVLLMHttpServer._get_worker_extension_cls(None) == WORKER_EXTENSION
    assert issubclass(LoRAWorkerExtension, vLLMColocateWorkerExtension)
    # vLLM rejects an extension whose non-dunder attributes clash with the worker's; ours adds none.
    assert {a for a in vars(LoRAWorkerExtension) if not a.startswith("__")} == set()


def test_the_hf_rollout_refuses_an_adapter_with_one_clear_line():
    """verl sends a LoRA actor's adapter tensors alone; the hf server would load them as model weights."""
    import asyncio

    import pytest
    import torch

    from strata.backends.hf_rollout import HFServerAdapter

    adapter = object.__new__(HFServerAdapter)  # the check comes before anything the instance holds
    weights = [("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", torch.zeros(8, 64))]
    with pytest.raises(ValueError, match="cpu_vllm"):
        asyncio.run(adapter.update_weights(weights, peft_config={"r": 8}, base_sync_done=True))
