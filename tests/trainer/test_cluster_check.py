"""The doctor's multi-node line: a cluster to join, and shared storage for what every node reads or writes.

The mount table is a file written for each test (as ``/proc/mounts`` reads), so a path can be "on" NFS or on a
local ext4 disk whatever this machine has.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from strata.trainer.checks import Level
from strata.trainer.checks.cluster import filesystem_of, first_game_file, mount_table, multi_node


def write_mounts(path: Path, *entries: tuple[str, str]) -> Path:
    path.write_text("".join(f"dev{i} {point} {kind} rw 0 0\n" for i, (point, kind) in enumerate(entries)))
    return path


def two_node_run(tmp_path: Path) -> dict:
    shared, local = tmp_path / "shared", tmp_path / "local"
    for folder in (shared / "data", shared / "model", local / "ckpt"):
        folder.mkdir(parents=True)
    game = shared / "games/pick-1/game.tw-pddl"
    game.parent.mkdir(parents=True)
    game.touch()
    pd.DataFrame([{"extra_info": {"game_file": str(game), "split": "train"}}]).to_parquet(shared / "data/train.parquet")
    return {"trainer": {"nnodes": 2, "default_local_dir": str(local / "ckpt")},
            "run": {"dir": str(local / "ckpt")},
            "data": {"train_files": str(shared / "data/train.parquet"),
                     "val_files": [str(shared / "data/train.parquet")]},
            "actor_rollout_ref": {"model": {"path": str(shared / "model")}}}


def test_one_node_needs_nothing(tmp_path: Path) -> None:
    assert list(multi_node(OmegaConf.create({"trainer": {"nnodes": 1}}), env={})) == [
        (Level.OK, "one node: nothing to share")]


def test_several_nodes_without_a_cluster_to_join_is_an_error(tmp_path: Path) -> None:
    config = OmegaConf.create(two_node_run(tmp_path))
    mounts = write_mounts(tmp_path / "mounts", ("/", "ext4"))
    [first, *_] = multi_node(config, env={}, mounts=mounts)
    assert first[0] is Level.ERROR and "RAY_ADDRESS is not set" in first[1] and "scripts/ray-node.sh" in first[1]
    [first, *_] = multi_node(config, env={"RAY_ADDRESS": "local"}, mounts=mounts)
    assert first[0] is Level.ERROR


def test_each_shared_path_on_a_local_disk_is_a_warning_naming_it(tmp_path: Path) -> None:
    config = OmegaConf.create(two_node_run(tmp_path))
    mounts = write_mounts(tmp_path / "mounts", ("/", "ext4"), (str(tmp_path / "shared"), "nfs4"))
    found = list(multi_node(config, env={"RAY_ADDRESS": "10.0.0.1:6379"}, mounts=mounts))
    assert found[0] == (Level.OK, "joins the Ray cluster at 10.0.0.1:6379 (2 nodes)")
    warned = [message.split(" (")[0] for level, message in found if level is Level.WARNING]
    assert warned == ["trainer.default_local_dir", "run.dir"]  # the local ones; the NFS ones are fine
    fine = [message for level, message in found[1:-1] if level is Level.OK]
    assert [line.split(" on ")[0] for line in fine] == [
        "data.train_files", "data.val_files", "actor_rollout_ref.model.path", "the task lists' game files"]
    assert all(" on nfs4: " in line for line in fine)
    assert "MiniLM" in found[-1][1] and "env.num_workers" in found[-1][1]


def test_mount_points_match_whole_path_components(tmp_path: Path) -> None:
    table = mount_table(write_mounts(tmp_path / "mounts", ("/", "ext4"), ("/data", "nfs"), ("/data2", "lustre")))
    assert table[0][0] in ("/data2", "/data") and table[-1] == ("/", "ext4")  # longest first
    assert filesystem_of("/data/run", table) == "nfs" and filesystem_of("/data2/run", table) == "lustre"
    assert filesystem_of("/database", table) == "ext4" and filesystem_of("/data", table) == "nfs"
    assert mount_table(tmp_path / "absent") == [] and filesystem_of("/x", []) is None


def test_the_game_data_is_read_from_the_first_task(tmp_path: Path) -> None:
    config = two_node_run(tmp_path)
    assert first_game_file(config["data"]["train_files"]).endswith("games/pick-1/game.tw-pddl")
    assert first_game_file([config["data"]["train_files"]]).endswith("game.tw-pddl")
    assert first_game_file(str(tmp_path / "missing.parquet")) is None and first_game_file([]) is None
