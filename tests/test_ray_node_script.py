"""scripts/ray-node.sh binds Ray (and NCCL, gloo) to the network the nodes share when told which (NET_IFACE), and
says so in one line when that interface has no address; without it, Ray's own choice stands (issue #37 §4)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def ray_node(*args: str, **env: str) -> subprocess.CompletedProcess:
    # RAY=echo: the `ray start` command line is printed instead of run.
    return subprocess.run(["bash", "scripts/ray-node.sh", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "RAY": "echo", **env}, timeout=30)


@pytest.mark.skipif(shutil.which("ip") is None, reason="iproute2's `ip` reads the interface's address")
def test_an_interface_gives_the_address_ray_binds_and_the_join_line() -> None:
    head = ray_node("head", "6399", NET_IFACE="lo")
    assert head.returncode == 0
    join, start = head.stdout.splitlines()
    assert join == "other nodes join with: bash scripts/ray-node.sh worker 127.0.0.1:6399"
    assert start == "start --head --port 6399 --include-dashboard false --node-ip-address 127.0.0.1"
    worker = ray_node("worker", "10.0.0.1:6399", NODE_IP="10.0.0.2")
    assert worker.stdout.strip() == "start --address 10.0.0.1:6399 --node-ip-address 10.0.0.2"
    assert ray_node("worker", "10.0.0.1:6399").stdout.strip() == "start --address 10.0.0.1:6399"


def test_an_interface_without_an_address_is_one_error_line() -> None:
    done = ray_node("worker", "10.0.0.1:6399", NET_IFACE="nope0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: NET_IFACE=nope0 has no IPv4 address on ") and done.stderr.count("\n") == 1


def test_the_head_caps_the_task_events_its_gcs_keeps(tmp_path: Path) -> None:
    """Ray's default (100,000 tasks' events, ~3.3 KB each) grows the head's GCS by ~330 MB over a run; the head is
    started with the cap configs/strata_trainer.yaml gives a local cluster, unless the user chose one."""
    show = tmp_path / "ray"
    show.write_text('#!/bin/sh\necho "cap=${RAY_task_events_max_num_task_in_gcs:-unset}"\n')
    show.chmod(0o755)
    assert ray_node("head", RAY=str(show)).stdout.splitlines()[-1] == "cap=10000"
    chosen = ray_node("head", RAY=str(show), RAY_task_events_max_num_task_in_gcs="500")
    assert chosen.stdout.splitlines()[-1] == "cap=500"
