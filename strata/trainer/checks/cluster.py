"""What a run over several nodes needs besides GPUs: a Ray cluster to join, and files every node can read.

With ``trainer.nnodes > 1`` the trainer joins a running cluster (``RAY_ADDRESS``; scripts/ray-node.sh); without
one, ``ray.init`` starts a one-node cluster here and verl stops with "Total available GPUs ... is less than
total desired GPUs". Ray places the task runner, the ranks, the rollout servers and the agent-loop workers on
any node, so every path the run reads or writes must be the same file on every node: checkpoints (each rank
writes its shard; a resume reads them all), the run folder (agent-loop workers write the trajectory dumps), the
task lists (the task runner reads them), the model and the game files (every agent-loop worker's game processes
open them). Per node, and nothing to share: the game processes (``env.num_workers`` beside each agent-loop
worker) and the MiniLM encoder for the diversity selection, which each agent-loop worker loads from its node's
Hugging Face cache. A path on a local file system (ext4, xfs, tmpfs, overlay, ...) is a warning, not an error:
the same files may have been copied to each node.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from omegaconf import DictConfig

from strata.trainer.checks.base import Level, select

MOUNTS = Path("/proc/mounts")
LOCAL_FILESYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "vfat",
                               "ramfs"})
SHARED_PATHS = (
    ("trainer.default_local_dir", "checkpoints: each rank writes its shard there, a resume reads them all"),
    ("run.dir", "the run folder: every node's agent-loop workers write trajectory dumps there"),
    ("data.train_files", "the task runner, on any node, reads the task lists"),
    ("data.val_files", "the task runner, on any node, reads the task lists"),
    ("data.interim_val_files", "the task runner, on any node, reads the task lists"),
    ("actor_rollout_ref.model.path", "every node's ranks and rollout servers load the model"),
)


def mount_table(mounts: Path = MOUNTS) -> list[tuple[str, str]]:
    """(mount point, file system type) of every mount, longest mount point first."""
    try:
        lines = mounts.read_text().splitlines()
    except OSError:
        return []
    table = [(fields[1].replace("\\040", " "), fields[2]) for line in lines if len(fields := line.split()) >= 3]
    return sorted(table, key=lambda entry: len(entry[0]), reverse=True)


def filesystem_of(path: str, table: list[tuple[str, str]]) -> str | None:
    """The type of the file system holding ``path`` (its nearest existing folder), or None when unknown."""
    target = os.path.realpath(path)
    for point, kind in table:
        if target == point or target.startswith(point.rstrip("/") + "/"):
            return kind
    return None


def first_game_file(task_lists: str | list) -> str | None:
    """The game file the first task of the first task list names (the game data every node must see)."""
    files = [task_lists] if isinstance(task_lists, str) else list(task_lists or [])
    if not files or not Path(files[0]).is_file():
        return None
    import pyarrow.parquet as pq

    table = pq.read_table(files[0], columns=["extra_info"]).slice(0, 1).to_pylist()
    return (table[0]["extra_info"] or {}).get("game_file") if table else None


def multi_node(config: DictConfig, env: dict[str, str] | None = None,
               mounts: Path = MOUNTS) -> Iterator[tuple[Level, str]]:
    nnodes = int(select(config, "trainer.nnodes", 1))
    if nnodes <= 1:
        yield Level.OK, "one node: nothing to share"
        return
    env = dict(os.environ) if env is None else env
    address = select(config, "ray_kwargs.ray_init.address") or env.get("RAY_ADDRESS")
    if not address or address == "local":
        yield Level.ERROR, (
            f"trainer.nnodes={nnodes} but RAY_ADDRESS is not set: ray.init would start a one-node cluster here and "
            "verl stops for want of the other nodes' GPUs. Start Ray on every node (bash scripts/ray-node.sh head, "
            "then worker HEAD:PORT; or sbatch scripts/slurm-multinode.sh) and export RAY_ADDRESS=HEAD:PORT "
            "RAY_AUTH_MODE=token."
        )
    else:
        yield Level.OK, f"joins the Ray cluster at {address} ({nnodes} nodes)"
    table = mount_table(mounts)
    paths = []
    for key, why in SHARED_PATHS:
        value = select(config, key)
        value = value if isinstance(value, str) or value is None else next(iter(value), None)  # a list: its first
        if value:
            paths.append((key, str(value), why))
    game = first_game_file(select(config, "data.train_files"))
    if game:
        paths.append(("the task lists' game files", game, "every node's game processes open them"))
    for key, path, why in paths:
        if "://" in path or not (Path(path).exists() or Path(path).parent.exists()):
            continue  # a hub id or a URL; a missing path is the tasks/model checks' business
        kind = filesystem_of(path, table)
        if kind in LOCAL_FILESYSTEMS:
            yield Level.WARNING, (
                f"{key} ({path}) is on a local {kind} file system, but with {nnodes} nodes {why}: put it on "
                "storage every node mounts at the same path (NFS, Lustre, ...), or copy it to each node."
            )
        else:
            yield Level.OK, f"{key} on {kind or 'an unknown file system'}: {path}"
    yield Level.OK, ("per node, nothing to share: the game processes (env.num_workers beside each agent-loop worker) "
                     "and the MiniLM encoder, loaded from each node's Hugging Face cache (download it on every node, "
                     "or set HF_HOME to shared storage)")
