"""Run by test_two_nodes.py in a fresh process: verl's rank placement on a 2-node Ray cluster, cpu platform.

Starts two Ray nodes on this machine (Ray's own cluster utilities: a head and a second raylet with its own
resources), asks verl's `RayResourcePool` for one rank on each node as the trainer does with
``trainer.nnodes=2 trainer.n_gpus_per_node=1``, schedules one actor into each bundle with the platform's
resource options, and prints JSON: the cluster's node ids, the node of each placement group's bundle, and
the node each actor ran on. Shuts the cluster down before it exits.
"""

from __future__ import annotations

import json
import os
import sys

os.environ["VERL_PLATFORM"] = "cpu"  # before verl fixes its platform

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402
from verl.plugin.platform import get_platform  # noqa: E402
from verl.single_controller.ray.base import RayResourcePool, ResourcePoolManager  # noqa: E402

import strata.backends.verl_plugin  # noqa: E402,F401  (registers the cpu platform)

# A node as configs/platform/cpu.yaml makes a local one, and as `ray start --num-gpus` declares its slots.
NODE = {"num_cpus": 8, "num_gpus": 1}


@ray.remote
def node_of_this_task() -> str:
    return ray.get_runtime_context().get_node_id()


def main() -> int:
    cluster = Cluster(initialize_head=True, head_node_args=NODE)
    try:
        cluster.add_node(**NODE)
        ray.init(address=cluster.address, runtime_env={"env_vars": {"VERL_PLATFORM": "cpu"}})
        cluster.wait_for_nodes()
        manager = ResourcePoolManager(resource_pool_spec={"pool": [1, 1]}, mapping={})
        manager.create_resource_pool()  # verl's own check of the GPU count runs here
        pool: RayResourcePool = manager.resource_pool_dict["pool"]
        groups = pool.get_placement_groups()
        table = {pg.id.hex(): ray.util.placement_group_table(pg) for pg in groups}
        options = get_platform().ray_resource_options(1 / pool.max_colocate_count)
        actors = [
            node_of_this_task.options(
                scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=pg,
                                                                     placement_group_bundle_index=0),
                **options,
            ).remote()
            for pg in groups
        ]
        result = {
            "nodes": sorted(node["NodeID"] for node in ray.nodes() if node["Alive"]),
            "bundle_nodes": [table[pg.id.hex()]["bundles_to_node_id"][0] for pg in groups],
            "bundles": [table[pg.id.hex()]["bundles"][0] for pg in groups],
            "actor_nodes": ray.get(actors, timeout=60),
            "resource_options": options,
        }
        print(json.dumps(result))
        return 0
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    sys.exit(main())
