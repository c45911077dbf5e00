"""What a GPU node's host gives the run's processes besides GPUs: a C compiler and Python's headers, shared
memory, logical CPUs, and host memory for what the run offloads.

Each of these stops a GPU run at start-up (or kills it later, or hangs it without a word) on slim or
containerised nodes that otherwise look fine. The cpu platform needs none of them: its config turns compilation
off, sets Ray's CPUs itself (configs/platform/cpu.yaml) and offloads nothing.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from omegaconf import DictConfig

from strata.trainer.checks.base import (
    STATE_BYTES_PER_PARAM,
    Level,
    offloaded_parts,
    run_env,
    select,
    uses_cpu_platform,
)
from strata.trainer.checks.model import local_model_dir, parameter_count

GIB = 1024**3
SHM = Path("/dev/shm")
MIN_SHM_BYTES = 1 * GIB
# Logical CPUs a verl FSDP worker group reserves per GPU (or rank slot of the cpu platform): verl's
# placement-group bundles are {"CPU": max_colocate_count=3, "GPU": 1} (verl/single_controller/ray/base.py).
CPUS_PER_GPU = 3
# TransferQueue's storage units when the config leaves the default (verl's transfer_queue.yaml)
DEFAULT_STORAGE_UNITS = 8
# Compilers Triton tries, in its order, when CC is unset (triton/runtime/build.py)
TRITON_COMPILERS = ("gcc", "clang")


def compiler(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """Triton (vLLM's and verl's GPU kernels, the LoRA kernels) and torch.compile build C launchers at start-up."""
    if uses_cpu_platform(config):
        yield Level.OK, "cpu platform: nothing compiled at start-up (use_torch_compile=false, no Triton)"
        return
    env = run_env(config)
    if env.get("CC"):
        yield Level.OK, f"C compiler from CC={env['CC']}"
        return
    found = next((path for name in TRITON_COMPILERS if (path := shutil.which(name, path=env.get("PATH", os.defpath)))),
                 None)
    if found is None:
        yield Level.ERROR, (
            "no C compiler (CC unset, no gcc or clang on PATH): Triton and torch.compile build C code when the "
            "workers start (verl compiles its entropy function, vLLM captures graphs, the LoRA kernels are "
            "Triton), so they fail. Install one (apt-get install gcc, or build-essential) or set CC=."
        )
        return
    yield Level.OK, f"C compiler {found}"


def shm_bytes(path: Path = SHM) -> int:
    """The size of the shared-memory filesystem at ``path``; 0 when there is none."""
    try:
        stats = os.statvfs(path)
    except OSError:
        return 0
    return stats.f_frsize * stats.f_blocks


def shared_memory(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """NCCL's intra-node transport and vLLM's shared-memory queues live in /dev/shm."""
    if uses_cpu_platform(config):
        yield Level.OK, "cpu platform: no NCCL, no vLLM GPU workers"
        return
    size = shm_bytes()
    if size < MIN_SHM_BYTES:
        yield Level.ERROR, (
            f"{SHM} holds {size / 1024**2:.0f} MiB (Docker's default is 64 MiB): NCCL and vLLM's shared-memory "
            f"queues fail or hang with less than {MIN_SHM_BYTES / GIB:.0f} GiB. Start the container with "
            "--ipc=host (or --shm-size=16g; in Kubernetes, mount an emptyDir with medium: Memory at /dev/shm)."
        )
        return
    yield Level.OK, f"{SHM} holds {size / GIB:.1f} GiB"


def cpus_needed(config: DictConfig) -> tuple[int, str]:
    """Logical CPUs Ray must offer on this node, and the sum that gives it.

    Per GPU, verl's FSDP worker group reserves 3; TransferQueue's storage units and its controller hold 1
    each (verl's v1 trainer always starts them); and one more must stay free, since every other actor (the
    task runner, agent-loop and reward workers, vLLM servers) needs a CPU to be scheduled, though it holds
    none afterwards. Below that, start-up waits for resources forever without a message.
    """
    gpus = int(select(config, "trainer.n_gpus_per_node", 1))
    units = int(select(config, "transfer_queue.backend.SimpleStorage.num_data_storage_units", DEFAULT_STORAGE_UNITS))
    need = CPUS_PER_GPU * gpus + units + 1 + 1
    return need, (f"{CPUS_PER_GPU} per GPU x {gpus} + {units} TransferQueue storage units + its controller + "
                  "1 free to schedule the other actors")


def detected_cpus() -> int:
    """The logical CPUs Ray detects on this node (its own count, which honours cgroup limits)."""
    from ray._private.utils import get_num_cpus

    return int(get_num_cpus())


def ray_cpus(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """The same sum on the cpu platform, whose rank slots are bundled as GPUs are (`CPUPlatform.ray_resource_name`):
    configs/platform/cpu.yaml gives Ray 16 logical CPUs, enough for 4 ranks a node."""
    configured = select(config, "ray_kwargs.ray_init.num_cpus")
    have = int(configured) if configured is not None else detected_cpus()
    source = "ray_kwargs.ray_init.num_cpus" if configured is not None else "detected by Ray"
    need, why = cpus_needed(config)
    if have < need:
        yield Level.ERROR, (
            f"Ray gets {have} logical CPUs ({source}) but the run needs {need} ({why}): start-up hangs silently "
            f"waiting for them. Run on a node with more CPUs (or a larger CPU limit), set "
            f"ray_kwargs.ray_init.num_cpus={need} (logical CPUs may exceed physical cores), or lower "
            "transfer_queue.backend.SimpleStorage.num_data_storage_units."
        )
        return
    yield Level.OK, f"Ray gets {have} logical CPUs ({source}), {need} needed"


def python_headers(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """Triton builds its CUDA launcher against Python's C headers at start-up (``Python.h``), which slim images
    and some distribution Pythons leave out."""
    if uses_cpu_platform(config):
        yield Level.OK, "cpu platform: nothing built against Python's headers (no Triton)"
        return
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not header.is_file():
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        yield Level.ERROR, (
            f"no {header}: Triton compiles its launcher against Python's headers when the workers start, and fails "
            f"without them. Install them (apt-get install python{version}-dev, or your distribution's python3-devel), "
            "or use a Python that ships them (uv's, conda's, the official images').")
        return
    yield Level.OK, f"Python's headers at {header.parent}"


MEMINFO = Path("/proc/meminfo")
CGROUP_MEMORY_MAX = Path("/sys/fs/cgroup/memory.max")


def host_memory_bytes(meminfo: Path = MEMINFO, cgroup_max: Path = CGROUP_MEMORY_MAX) -> int | None:
    """This node's memory for the run: MemTotal, or the cgroup's limit when lower (a SLURM job's --mem, a
    container's); None when unreadable."""
    try:
        total = next(int(line.split()[1]) * 1024 for line in meminfo.read_text().splitlines()
                     if line.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    try:
        limit = cgroup_max.read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def offload_findings(params: int, parts: list[str], nnodes: int, have: int) -> Iterator[tuple[Level, str]]:
    """The host-memory line for ``params`` parameters with ``parts`` offloaded over ``nnodes`` nodes of ``have``
    bytes each (FSDP shards over every rank, so a node holds its share of the whole)."""
    per_param = sum(STATE_BYTES_PER_PARAM[p] for p in parts)
    need = params * per_param // nnodes
    what = (f"{', '.join(parts)} offloaded: {params / 1e9:.2f}B params x {per_param} B"
            f"{f' / {nnodes} nodes' if nnodes > 1 else ''} = ~{need / GIB:.0f} GiB of host memory a node")
    if need > have:
        yield Level.ERROR, (
            f"{what}, but this node has {have / GIB:.0f} GiB (MemTotal or the cgroup's limit): the workers are killed "
            "when the offloaded state is written. Give the job more memory (SLURM --mem=0 takes the whole node), "
            "more nodes, or offload less.")
    elif need > 0.85 * have:
        yield Level.WARNING, (f"{what} of {have / GIB:.0f} GiB: little is left for Ray, the environment workers and "
                              "the page cache")
    else:
        yield Level.OK, f"{what}; {have / GIB:.0f} GiB here"


def host_memory(config: DictConfig) -> Iterator[tuple[Level, str]]:
    parts = [] if uses_cpu_platform(config) else offloaded_parts(config)
    if not parts:
        yield Level.OK, "nothing offloaded to host memory"
        return
    folder = local_model_dir(str(select(config, "actor_rollout_ref.model.path", "")))
    params = parameter_count(folder) if folder is not None else None
    have = host_memory_bytes()
    if params is None or have is None:
        yield Level.OK, f"{', '.join(parts)} offloaded; model size or host memory unknown here: not estimated"
        return
    yield from offload_findings(params, parts, int(select(config, "trainer.nnodes", 1)), have)
