"""A ``cpu`` platform for verl 0.9.1, which ships only nvidia/npu/rocm platforms.

verl asks its platform for the device name, the collective backend, the Ray resource that
workers reserve and a ``torch.cuda``-like module for memory and stream calls. On CPU the answers are
``cpu``, ``gloo``, Ray's logical ``GPU`` resource as the rank slot (see `CPUPlatform.ray_resource_name`),
and a module whose memory/stream calls are no-ops.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

logger = logging.getLogger(__name__)

_ZERO_MEMORY_CALLS = ("max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved")
_NO_OP_CALLS = (
    "empty_cache", "reset_peak_memory_stats", "synchronize", "set_device", "ipc_collect",
    "reset_max_memory_allocated",
)


class CPUDeviceModule(ModuleType):
    """``torch.cpu`` extended with the ``torch.cuda`` calls verl makes on its device module.

    Memory queries report 0 (verl only logs them), cache/stream calls do nothing, seeding and RNG
    state go to the CPU generator. Anything else raises ``AttributeError`` as a module would.
    """

    def __init__(self) -> None:
        super().__init__("strata_cpu_device")

    def __getattr__(self, name: str) -> Any:
        if hasattr(torch.cpu, name):
            return getattr(torch.cpu, name)
        if name in _ZERO_MEMORY_CALLS:
            return lambda *args, **kwargs: 0
        if name in _NO_OP_CALLS:
            return lambda *args, **kwargs: None
        simple = {
            "is_available": lambda: True,
            "device_count": lambda: 1,
            "current_device": lambda: torch.device("cpu"),
            "mem_get_info": lambda *args, **kwargs: (0, 0),
            "memory_stats": lambda *args, **kwargs: {},
            "get_device_name": lambda *args, **kwargs: "CPU",
            "manual_seed": lambda seed: torch.manual_seed(seed),
            "manual_seed_all": lambda seed: torch.manual_seed(seed),
            "get_rng_state": lambda *args, **kwargs: torch.get_rng_state(),
            "set_rng_state": lambda state, *args, **kwargs: torch.set_rng_state(state),
        }
        if name in simple:
            return simple[name]
        raise AttributeError(f"the cpu device module has no attribute {name!r}")


CPU_DEVICE_MODULE = CPUDeviceModule()
DEVICE_FOLDER = Path("/dev")  # where the NVIDIA driver puts one file per GPU: nvidia0, nvidia1, ...
HIDDEN = {"", "-1"}  # CUDA_VISIBLE_DEVICES values that hide every GPU from a process


def node_gpus(env: Mapping[str, str] = os.environ) -> list[str]:
    """The GPU device files of this node that a process with environment ``env`` may use.

    Read from ``/dev`` rather than asked of torch or NVML: the cpu platform is built in every verl process,
    GPU workers included, and a CUDA query there before Ray assigns GPUs would pin every rank to GPU 0.
    ``CUDA_VISIBLE_DEVICES`` set empty (or ``-1``) hides them all: that is how to run the CPU recipes on a
    GPU machine on purpose.
    """
    if env.get("CUDA_VISIBLE_DEVICES", "x").strip() in HIDDEN:
        return []
    return sorted(p.name for p in DEVICE_FOLDER.glob("nvidia[0-9]*"))


def gpu_node_refusal(env: Mapping[str, str] = os.environ) -> str | None:
    """Why the cpu platform must not run in a process with environment ``env``; None when it may.

    On a node with GPUs it would run verl's workers on the CPU and, through its ``pin_memory`` shim, slow
    every host-to-device copy of the GPU processes beside them, without an error.
    """
    gpus = node_gpus(env)
    if not gpus:
        return None
    return (f"the cpu platform (VERL_PLATFORM=cpu, +platform=cpu) was chosen on a node with GPUs "
            f"({', '.join(f'/dev/{name}' for name in gpus)}): run a GPU recipe (recipes/train-*-qwen2.5-*.sh), "
            "or hide the GPUs on purpose with CUDA_VISIBLE_DEVICES= (empty) to run a CPU recipe here.")


@PlatformRegistry.register(platform="cpu")
class CPUPlatform(PlatformBase):
    """verl platform for CPU-only machines: gloo collectives, Ray ``CPU`` resources."""

    def __init__(self) -> None:
        super().__init__()
        # verl's auto-detection builds every registered platform to probe it, this one included whenever the
        # CUDA platform says no -- which it does on a GPU node without nvidia-smi on PATH. Only a platform
        # that VERL_PLATFORM=cpu selected may change torch, and never on a node with GPUs.
        if os.environ.get("VERL_PLATFORM", "").strip().lower() != "cpu":
            return
        refusal = gpu_node_refusal()
        if refusal:
            raise RuntimeError(refusal)
        _allow_pin_memory_without_accelerator()

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return CPU_DEVICE_MODULE

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        # Never auto-detected: "no CUDA visible" is also what a CPU-only Ray actor on a GPU machine sees.
        # The platform is chosen by VERL_PLATFORM=cpu only (configs/platform/cpu.yaml sets it).
        return False

    def current_device(self) -> torch.device:
        # verl uses the answer in `x.to(...)`, `torch.device(...)` and FSDP's `device_id`; the int 0
        # would mean "accelerator 0", so answer with the cpu device itself.
        return torch.device("cpu")

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextlib.contextmanager
    def nvtx_range(self, msg: str) -> Iterator[None]:
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        """The resource one rank slot is: Ray's logical ``GPU``, which no CPU worker ever claims.

        verl builds one placement group per node of ``n_gpus_per_node`` bundles, each
        ``{"CPU": max_colocate_count, <this resource>: 1}``, and before that counts Ray's ``GPU`` resource
        per node; configs/platform/cpu.yaml (``ray_init.num_gpus``) and `scripts/ray-node.sh` give each node
        as many logical GPUs as it has rank slots. Answering ``CPU`` here made the bundle ``{"CPU": 1}``, which
        every node has, so with ``trainer.nnodes=2`` both nodes' groups could land on one node. The bundles
        ask for the slot, so each node's group holds its own node's slots; the workers themselves reserve
        CPUs (`ray_resource_options`), so Ray never sets ``CUDA_VISIBLE_DEVICES`` for them.
        """
        return "GPU"

    def ray_noset_envvars(self) -> list[str]:
        return []

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        # Each "GPU" share a verl worker asks for becomes the same share of logical CPUs in its bundle.
        return {"num_cpus": num_gpus}

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def _install_gloo_process_group() -> None:
    """Make verl's worker process groups valid on CPU.

    verl builds the backend string ``f"cpu:gloo,{device}:{backend}"``, which on this platform reads
    ``cpu:gloo,cpu:gloo`` and torch rejects ("Duplicate device type cpu"). verl offers no hook for the
    string, so the one function that builds it is wrapped to pass plain ``gloo`` when -- and only
    when -- the active platform is this one. It must run before ``verl.workers.engine_workers`` binds
    the name, which the plug-in entry point guarantees (verl loads plug-ins in its ``__init__``).
    """
    import verl.utils.distributed as verl_distributed
    from verl.utils.device import get_device_name

    original = verl_distributed.initialize_global_process_group_ray
    if getattr(original, "_strata_cpu_wrapper", False):
        return

    def initialize_global_process_group_ray(timeout_second: int | None = None, backend: str | None = None):
        if backend is None and get_device_name() == "cpu":
            backend = "gloo"
        return original(timeout_second=timeout_second, backend=backend)

    initialize_global_process_group_ray._strata_cpu_wrapper = True
    verl_distributed.initialize_global_process_group_ray = initialize_global_process_group_ray


def _allow_pin_memory_without_accelerator() -> None:
    """Let ``Tensor.pin_memory()`` return the tensor itself in a process running on the cpu platform.

    Page-locking exists to speed host-to-device copies; with no device there is nothing to speed up,
    yet torch raises "Cannot access accelerator device". verl's FSDP2 engine pins the reference
    model's parameters (``CPUOffloadPolicy(pin_memory=True)`` for forward-only engines), so without
    this the KL reference policy could not be built on CPU. Called when ``VERL_PLATFORM=cpu`` has selected a
    `CPUPlatform` on a node without GPUs, not at import: the plug-in is imported in every verl process, GPU
    ones included, and asking torch about accelerators there would initialise CUDA before Ray assigns the
    process its GPUs.
    """
    if getattr(torch.Tensor.pin_memory, "_strata_cpu_shim", False):
        return

    def pin_memory(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self

    pin_memory._strata_cpu_shim = True
    torch.Tensor.pin_memory = pin_memory


_install_gloo_process_group()
