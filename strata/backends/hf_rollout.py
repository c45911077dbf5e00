"""The ``hf`` rollout backend: `HFGenerationServer` wired into verl as a rollout replica.

verl needs two pieces per backend:

* a `RolloutReplica` (registered with ``RolloutReplicaRegistry``) that launches the server actors the
  load balancer routes ``generate`` calls to;
* a worker-side `BaseRollout` adapter (registered in verl's rollout table) whose ``update_weights``
  receives the trained weights from the FSDP engine after every step and pushes them to the server.

Selected with ``actor_rollout_ref.rollout.name=hf``; nothing else in the configuration changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ray
import torch
from verl.utils.config import omega_conf_to_dataclass
from verl.workers.config import HFModelConfig
from verl.workers.rollout import base as rollout_base
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, RolloutReplicaRegistry

from strata.backends.hf_server import HFGenerationServer

ROLLOUT_NAME = "hf"


def server_actor_name(replica_rank: int) -> str:
    """The Ray name of a replica's server; the adapter on the training worker looks it up by name."""
    return f"strata_hf_rollout_server_{replica_rank}"


class HFReplica(RolloutReplica):
    """One `HFGenerationServer` per replica, running beside the training workers on CPU resources."""

    def rollout_worker_use_gpu(self) -> bool:
        return False

    async def launch_servers(self) -> None:
        # verl hands replicas the raw model config; HFModelConfig resolves the path (remote -> local copy).
        model = omega_conf_to_dataclass(self.model_config, dataclass_type=HFModelConfig)
        server_cls = ray.remote(num_cpus=0, max_concurrency=1)(HFGenerationServer)
        handle = server_cls.options(name=server_actor_name(self.replica_rank)).remote(
            model.local_path,
            self.config.response_length,
            seed=self.config.seed + self.replica_rank,
            attn_implementation=(model.override_config or {}).get("attn_implementation", "sdpa"),
        )
        # Fail here, with the server's own error, rather than on the first generate call.
        await handle.wake_up.remote()
        self.servers = [handle]
        self._server_handle = handle
        self._server_address = server_actor_name(self.replica_rank)


class HFServerAdapter(BaseRollout):
    """Lives in each training worker; forwards weights from the FSDP engine to the replica's server."""

    def __init__(self, config: Any, model_config: Any, device_mesh: Any, *args: Any, **kwargs: Any):
        super().__init__(config, model_config, device_mesh)
        self._server: ray.actor.ActorHandle | None = None

    def _rank(self) -> int:
        return torch.distributed.get_rank() if torch.distributed.is_initialized() else 0

    def _replica_world_size(self) -> int:
        c = self.config
        return c.tensor_model_parallel_size * c.data_parallel_size * c.pipeline_model_parallel_size

    def _server_handle(self) -> ray.actor.ActorHandle:
        if self._server is None:
            self._server = ray.get_actor(server_actor_name(self._rank() // self._replica_world_size()))
        return self._server

    async def resume(self, tags: list[str]) -> None:
        return None

    async def release(self) -> None:
        return None

    async def update_weights(
        self, weights: Iterable[tuple[str, torch.Tensor]], wire_format: str = "named_tensors", **kwargs: Any
    ) -> None:
        if wire_format != "named_tensors":
            raise ValueError(f"the hf rollout receives full named tensors, not {wire_format!r}")
        if kwargs.get("peft_config") is not None:  # verl sends a LoRA actor's adapter alone unless merging
            raise ValueError("the hf rollout loads full weights, not a LoRA adapter: train LoRA with verl's vLLM "
                             "rollout (+platform=cpu_vllm)")
        state_dict = {}
        for name, tensor in weights:
            # FSDP2 shards are DTensors: every rank must take part in gathering each full tensor.
            if hasattr(tensor, "full_tensor"):
                tensor = tensor.full_tensor()
            state_dict[name] = tensor.detach().to("cpu", copy=True)
        if self._rank() % self._replica_world_size() == 0:
            await self._server_handle().load_weights.remote(state_dict, kwargs.get("global_steps"))


# verl keeps its worker-side rollout classes in a module-level table keyed by (name, mode) and
# loads the class by dotted path; the replica registry takes a loader.
rollout_base._ROLLOUT_REGISTRY[(ROLLOUT_NAME, "async")] = f"{__name__}.HFServerAdapter"
RolloutReplicaRegistry.register(ROLLOUT_NAME, lambda: HFReplica)
