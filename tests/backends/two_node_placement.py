"""Run by test_two_nodes.py in a fresh process: verl's rank placement on a 2-node Ray cluster, cpu platform.

Starts two Ray nodes on this machine (Ray's own cluster utilities: a head and a second raylet with its own
resources), asks verl's `RayResourcePool` for one rank on each node as the trainer does with
``trainer.nnodes=2 trainer.n_gpus_per_node=1``, schedules one actor into each bundle with the platform's
resource options, and prints JSON: the cluster's node ids, the node of each placement group's bundle, and
the node each actor ran on, and the machine's own checks as each node answered them
(`strata.trainer.checks.nodes.check_nodes`). Shuts the cluster down before it exits.
"""

from __future__ import annotations

import json
import os
import sys

os.environ["VERL_PLATFORM"] = "cpu"  # before verl fixes its platform

import ray  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402
from verl.plugin.platform import get_platform  # noqa: E402
from verl.single_controller.ray.base import RayResourcePool, ResourcePoolManager  # noqa: E402

import strata.backends.verl_plugin  # noqa: E402,F401  (registers the cpu platform)
from strata.trainer.checks.nodes import check_nodes  # noqa: E402

# A node as configs/platform/cpu.yaml makes a local one, and as `ray start --num-gpus` declares its slots.
NODE = {"num_cpus": 8, "num_gpus": 1}
CPU_RUN = {"trainer": {"device": "cpu", "nnodes": 2, "n_gpus_per_node": 1},
           "actor_rollout_ref": {"model": {"override_config": {"attn_implementation": "sdpa"}}},
           "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": {"VERL_PLATFORM": "cpu"}}}}}


@ray.remote
def node_of_this_task() -> str:
    return ray.get_runtime_context().get_node_id()


def main() -> int:
    cluster = Cluster(initialize_head=True, head_node_args=NODE)
    try:
        cluster.add_node(**NODE)
        ray.init(address=cluster.address, runtime_env={"env_vars": {"VERL_PLATFORM": "cpu"}})
        cluster.wait_for_nodes()
        # The machine's own checks on each node, as the task runner of a run that joined a cluster runs them: before
        # verl's placement groups take the nodes' GPU slots.
        node_checks = [[f.check, f.level.value] for f in check_nodes(OmegaConf.create(CPU_RUN), timeout_s=120)]
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
            "node_checks": node_checks,
        }
        print(json.dumps(result))
        return 0
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    sys.exit(main())
