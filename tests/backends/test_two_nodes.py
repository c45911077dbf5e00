"""Two nodes, one rank each, on the cpu platform: verl's placement puts each node's rank on that node.

verl asks for one placement group per node, each of ``n_gpus_per_node`` bundles of
``{"CPU": 3, <platform resource>: 1}``. With Ray's ``CPU`` as the cpu platform's resource the bundle was
``{"CPU": 1}``, which any node holds many times over, so nothing kept two nodes' groups apart. The slot is now
Ray's logical ``GPU``, which each node declares once per rank slot (configs/platform/cpu.yaml for a local
cluster, ``ray start --num-gpus`` on a real one). The whole trainer across two nodes is
tests/integration/test_two_node_trainer.py (``make test-multinode``); this is the placement alone, ~20 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from strata.trainer.checks.nodes import NODE_CHECKS
from strata.trainer.config import ConfigError
from strata.trainer.main import join_running_cluster

HERE = Path(__file__).resolve().parent


def test_each_nodes_rank_is_placed_on_its_own_node() -> None:
    result = subprocess.run([sys.executable, str(HERE / "two_node_placement.py")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    placed = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(placed["nodes"]) == 2
    assert all(bundle == {"CPU": 3.0, "GPU": 1.0} for bundle in placed["bundles"])  # a slot only one node has
    assert sorted(placed["bundle_nodes"]) == placed["nodes"]  # one group on each node
    assert placed["actor_nodes"] == placed["bundle_nodes"]  # and a worker scheduled into it runs there
    assert placed["resource_options"] == {"num_cpus": 1 / 3}  # it claims CPUs, never the logical GPU
    # Each node ran the machine's own checks (both nodes are this machine, so they share an IP address).
    checks = placed["node_checks"]
    assert len(checks) == 2 * len(NODE_CHECKS) and all(level == "ok" for _, level in checks), checks
    assert sorted({name.split("@")[0] for name, _ in checks}) == sorted(NODE_CHECKS)


def test_a_driver_that_joins_a_cluster_leaves_the_machine_checks_to_the_nodes(tmp_path, gpu_run_environment) -> None:
    """A CPU login node asking for 2 GPUs a node: not its own business when it joins a cluster; missing task lists
    stay an error anywhere."""
    from strata.trainer.config import load_config
    from strata.trainer.preflight import preflight

    config = load_config("strata_trainer", [f"data.train_files={tmp_path}/t.parquet", "trainer.n_gpus_per_node=2"])
    with pytest.raises(ConfigError) as alone:
        preflight(config, {})
    assert any(line.startswith("gpus: ") for line in str(alone.value).splitlines())
    with pytest.raises(ConfigError) as joined:
        preflight(config, {"RAY_ADDRESS": "10.0.0.1:6379"})
    lines = str(joined.value).splitlines()
    assert not any(line.split(":")[0] in NODE_CHECKS for line in lines)
    assert any(line.startswith("tasks: ") for line in lines)


def test_joining_a_running_cluster_leaves_resources_to_its_nodes() -> None:
    config = OmegaConf.create({"ray_kwargs": {"ray_init": {
        "num_cpus": 16, "num_gpus": 2, "_system_config": {"task_events_max_num_task_in_gcs": 10000},
        "runtime_env": {"env_vars": {"VERL_PLATFORM": "cpu"}}}}})
    shell = {"VERL_FILE_LOGGER_PATH": "/runs/a/metrics.jsonl", "HF_HUB_OFFLINE": "1", "WANDB_API_KEY": "x",
             "VERL_PLATFORM": "nvidia", "HOME": "/root"}
    assert join_running_cluster(config, env=shell) is None  # a local cluster: nothing changes
    assert config.ray_kwargs.ray_init.num_cpus == 16 and len(config.ray_kwargs.ray_init.runtime_env.env_vars) == 1
    assert join_running_cluster(config, env={**shell, "RAY_ADDRESS": "local"}) is None
    assert join_running_cluster(config, env={**shell, "RAY_ADDRESS": "10.0.0.1:6379"}) == ("10.0.0.1:6379",
                                                                                           ["WANDB_API_KEY"])
    assert config.ray_kwargs.ray_init.num_cpus is None and config.ray_kwargs.ray_init.num_gpus is None
    assert config.ray_kwargs.ray_init._system_config is None  # the head's `ray start` set its own
    # What the workers read reaches them; the config's own value wins; a secret and unrelated names stay behind.
    assert dict(config.ray_kwargs.ray_init.runtime_env.env_vars) == {
        "VERL_PLATFORM": "cpu", "VERL_FILE_LOGGER_PATH": "/runs/a/metrics.jsonl", "HF_HUB_OFFLINE": "1"}
    by_key = OmegaConf.create({"ray_kwargs": {"ray_init": {"address": "auto", "num_cpus": 8}}})
    assert join_running_cluster(by_key, env={}) == ("auto", []) and by_key.ray_kwargs.ray_init.num_cpus is None
    assert config.ray_kwargs.ray_init.address == "10.0.0.1:6379"  # for the task runner, wherever it runs
