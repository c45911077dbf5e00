"""The tiny StraTA recipe on a 2-node Ray cluster started on this machine, one rank per node, through a checkpoint
and a resume (``make test-multinode``; not part of ``make test``: ~9 min, measured in
benchmarks/RESULTS_multinode.md; tests/backends/test_two_nodes.py checks the placement in ``make test``).

The cluster is what a user starts on two machines: `scripts/ray-node.sh` ``head`` and ``worker`` with the cpu
platform's resources (one rank slot each), each node with its own Ray temporary folder, and its own token. The
recipe joins it through ``RAY_ADDRESS`` with ``trainer.nnodes=2 trainer.n_gpus_per_node=1`` and two agent-loop
workers (verl puts one on each node, each with its own game process). Step 1 is trained and saved at world size
2; a second run resumes it and trains step 2. Afterwards the cluster's actor table says where every actor ran, and no
process of either node is left once they are stopped.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from strata.checkpoint.inspect import describe_checkpoint, find_latest_checkpoint
from tests.integration.trainer_runs import RECIPE, REPO, metrics_by_step

pytestmark = [pytest.mark.slow, pytest.mark.multinode]
NODE_SCRIPT = REPO / "scripts/ray-node.sh"
NODE_ENV = {"PLATFORM": "cpu", "SLOTS": "1", "CPUS": "8", "RAY_AUTH_MODE": "token"}
TWO_NODES = ("trainer.nnodes=2", "trainer.n_gpus_per_node=1", "actor_rollout_ref.rollout.agent.num_workers=2",
             "trainer.val_before_train=false", "data.val_max_samples=2")
ACTOR_TABLE = """
import json, ray
ray.init()
nodes = {n["NodeID"]: n["Alive"] for n in ray.nodes()}
actors = [{"class": a["ActorClassName"], "node": a["Address"]["NodeID"]} for a in ray._private.state.actors().values()]
print(json.dumps({"nodes": sorted(nodes), "actors": actors}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_processes(folders: list[Path]) -> list[psutil.Process]:
    """Every process whose command line names one of the nodes' Ray folders (raylet, GCS, workers, agents)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        if any(str(folder) in line for folder in folders):
            found.append(process)
    return found


class MemorySampler(threading.Thread):
    """The machine's peak used memory while the runs go (/proc/meminfo every 2 s), for the results file."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_gib = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(2.0):
            memory = psutil.virtual_memory()
            self.peak_gib = max(self.peak_gib, (memory.total - memory.available) / 2**30)


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict]:
    root = Path(tempfile.mkdtemp(prefix="s2n-", dir="/tmp"))  # short: Ray's socket paths must fit 107 characters
    folders = [root / "head", root / "worker"]
    address = f"127.0.0.1:{_free_port()}"
    # The cluster's own token (Ray 2.60 authenticates by default), so ~/.ray/auth_token is neither read nor written.
    env = dict(os.environ, **NODE_ENV, RAY_AUTH_TOKEN=secrets.token_hex(32), PY=sys.executable)
    try:
        for role, folder, argument in (("head", folders[0], address.split(":")[1]), ("worker", folders[1], address)):
            started = subprocess.run(["bash", str(NODE_SCRIPT), role, argument], env=dict(env, RAY_TMPDIR=str(folder)),
                                     capture_output=True, text=True, timeout=180, cwd=REPO)
            assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        yield {"address": address, "env": dict(env, RAY_ADDRESS=address), "root": root}
    finally:
        processes = _node_processes(folders)
        for process in processes:
            with _gone():
                process.send_signal(signal.SIGTERM)
        _, alive = psutil.wait_procs(processes, timeout=20)
        for process in alive:
            with _gone():
                process.kill()
        psutil.wait_procs(alive, timeout=10)
        left = [process.pid for process in _node_processes(folders)]
        assert not left, f"Ray processes of the test's nodes outlived them: {left}"  # fails the module's teardown


class _gone:
    """Ignore a process that exited between listing and signalling it."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, *_) -> bool:
        return kind is not None and issubclass(kind, psutil.NoSuchProcess)


def _train(cluster: dict, out: Path, steps: int) -> float:
    started = time.perf_counter()
    env = dict(cluster["env"], OUT=str(out), STEPS=str(steps), PLATFORM="cpu", VAL_SPLIT="valid_unseen")
    result = subprocess.run(["bash", str(RECIPE), *TWO_NODES], env=env, capture_output=True, text=True,
                            timeout=1500, cwd=REPO)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    return time.perf_counter() - started


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("two-nodes") / "run"
    memory = MemorySampler()
    memory.start()
    try:
        first = _train(cluster, out, steps=1)
        step_1 = describe_checkpoint(out / "checkpoints/global_step_1")
        first_metrics = metrics_by_step(out / "metrics.jsonl")  # verl's file logger starts the file afresh
        second = _train(cluster, out, steps=2)  # resume_mode=auto finds global_step_1
    finally:
        memory.done.set()
    table = subprocess.run([sys.executable, "-c", ACTOR_TABLE], env=cluster["env"], capture_output=True, text=True,
                           timeout=120)
    assert table.returncode == 0, table.stderr[-3000:]
    timing = {"first_run_s": round(first), "resumed_run_s": round(second),
              "peak_used_gib": round(memory.peak_gib, 1)}
    print(f"\ntwo-node runs: {json.dumps(timing)}")
    placed = json.loads(table.stdout.strip().splitlines()[-1])
    return {"out": out, "step_1": step_1, "first": first_metrics, "placed": placed, "timing": timing}


def test_two_nodes_train_save_and_resume(runs) -> None:
    out, step_1 = runs["out"], runs["step_1"]
    assert step_1.complete and step_1.world_size == 2  # each node's rank wrote its shard
    assert find_latest_checkpoint(out / "checkpoints") == out / "checkpoints/global_step_2"
    assert describe_checkpoint(out / "checkpoints/global_step_2").world_size == 2
    first, resumed = runs["first"], metrics_by_step(out / "metrics.jsonl")
    assert sorted(first) == [1] and sorted(resumed) == [2]  # the resumed run trained step 2 only
    for step in (first[1], resumed[2]):  # 2 tasks x N=2 x M=2 episodes, split over the two ranks
        assert step["actor/grad_norm"] > 0 and step["strata/num_trajectory_rows"] == 8


def test_both_nodes_hosted_ranks_and_game_processes(runs) -> None:
    placed = runs["placed"]
    assert len(placed["nodes"]) == 2
    by_class: dict[str, set[str]] = {}
    for actor in placed["actors"]:
        by_class.setdefault(actor["class"], set()).add(actor["node"])
    ranks = {node for name, nodes in by_class.items() if "WorkerDict" in name for node in nodes}
    loops = {node for name, nodes in by_class.items() if name.startswith("AgentLoopWorker") for node in nodes}
    assert ranks == set(placed["nodes"]), by_class  # the actor/reference ranks of both runs, on both nodes
    assert loops == set(placed["nodes"]), by_class  # the agent-loop workers, each with its game process

