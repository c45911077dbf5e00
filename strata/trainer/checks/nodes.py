"""The checks that read the machine they run on, run on every node of the Ray cluster a multi-node run joins.

The driver of a multi-node run is often not where it computes: a CPU head node (KubeRay), a SLURM login node, a
laptop with ``RAY_ADDRESS`` set. Its own GPUs, driver, shared memory or packages say nothing about the nodes that
will host the ranks, so when the run joins a cluster, `NODE_CHECKS` are not enforced on the driver
(`strata.trainer.preflight`) and run instead as one Ray task on each alive node, pinned there
(``NodeAffinitySchedulingStrategy``) and holding all of the node's GPUs so that it sees them as a rank would (a
task without GPUs gets ``CUDA_VISIBLE_DEVICES=""`` from Ray). The task runner does this before any worker starts
(`strata.trainer.task_runner`); `strata doctor` does it when ``RAY_ADDRESS`` names a running cluster.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, OmegaConf

from strata.trainer.checks.base import Finding, Level, select

NODE_CHECKS = ("python", "gpus", "driver", "smi", "compute", "gpumem", "update", "compiler", "headers", "shm", "ram",
               "rollout", "runner", "attention", "env")
"""Names in `strata.trainer.checks.CHECKS` whose answer depends on the machine they run on."""
NODE_TIMEOUT_S = 300.0


def joins_cluster(config: DictConfig, environ: Mapping[str, str]) -> bool:
    """Whether the run joins a running Ray cluster (``RAY_ADDRESS`` or ``ray_kwargs.ray_init.address``)."""
    address = select(config, "ray_kwargs.ray_init.address") or environ.get("RAY_ADDRESS")
    return bool(address) and address != "local"


def node_findings(config: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    """`NODE_CHECKS` run here: (this node's IP, [(check, level, message)]). Plain types, to cross Ray."""
    import ray

    from strata.trainer.checks import CHECKS, run_checks

    findings = run_checks(OmegaConf.create(config), {name: CHECKS[name] for name in NODE_CHECKS})
    ip = ray.util.get_node_ip_address() if ray.is_initialized() else "this node"
    return ip, [(f.check, f.level.value, f.message) for f in findings]


def check_nodes(config: DictConfig, timeout_s: float = NODE_TIMEOUT_S) -> list[Finding]:
    """`NODE_CHECKS` on every alive node of the cluster this process is connected to (``ray.init`` done), each
    finding's check named ``<check>@<node IP>``; a node that does not answer in ``timeout_s`` is an ERROR."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(num_cpus=0)(node_findings)
    container = OmegaConf.to_container(config, resolve=False)
    nodes = sorted((n for n in ray.nodes() if n["Alive"]), key=lambda n: (n["NodeManagerAddress"], n["NodeID"]))
    pending = [(node["NodeManagerAddress"], task.options(
        num_gpus=node["Resources"].get("GPU", 0),
        scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote(container))
        for node in nodes]
    findings: list[Finding] = []
    for address, ref in pending:
        try:
            ip, lines = ray.get(ref, timeout=timeout_s)
        except (ray.exceptions.GetTimeoutError, ray.exceptions.RayError) as err:
            findings.append(Finding(f"node@{address}", Level.ERROR,
                                    f"the node's checks did not run ({type(err).__name__}): is strata installed "
                                    "there at the same path, and are its GPUs free?"))
            continue
        findings += [Finding(f"{check}@{ip}", Level(level), message) for check, level, message in lines]
    _wait_until_free(sum(n["Resources"].get("GPU", 0) for n in ray.nodes() if n["Alive"]))
    return findings


def _wait_until_free(gpus: float, timeout_s: float = 60.0) -> None:
    """Until the cluster's view shows the tasks' GPUs free again: verl counts the free GPUs right after, when it
    builds its resource pools, and the view lags the tasks' ends by a moment."""
    import ray

    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("GPU", 0) < gpus and time.monotonic() < deadline:
        time.sleep(0.2)
