"""The CUDA driver against torch's CUDA build, and the ``nvidia-smi`` verl's platform probe runs.

Counting GPUs goes through NVML, which answers on any driver; the first CUDA call in a worker is what fails
when the driver is older than the CUDA torch was built for (vLLM 0.29.0's GPU wheel pins torch 2.13.0, a
CUDA 13 build: driver R580 or newer, or cuda-compat). So a tiny CUDA operation runs here -- in a child
process, since a CUDA context in the driver would hold memory on GPU 0 for the whole run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from omegaconf import DictConfig

from strata.trainer.checks.base import Level, run_env, uses_cpu_platform
from strata.trainer.checks.machine import visible_gpus

PROBE_TIMEOUT_S = 120.0
# The driver's CUDA version comes from libcuda itself (no context needed); the operation makes the context.
PROBE = """
import ctypes, json, torch
out = {"driver_cuda": None, "error": None}
try:
    version = ctypes.c_int()
    if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
        out["driver_cuda"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
except (OSError, AttributeError) as err:
    out["error"] = f"no CUDA driver library: {err}"
try:
    assert (torch.ones(2, device="cuda") * 2).sum().item() == 4.0
except Exception as err:
    out["error"] = f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0]}"
print(json.dumps(out))
"""
# Where verl's CUDA platform looks for nvidia-smi when it is not on PATH (verl/plugin/platform/platform_cuda.py)
SMI_FALLBACKS = ("/usr/bin/nvidia-smi", "/usr/local/bin/nvidia-smi", "/usr/local/cuda/bin/nvidia-smi")
DRIVER_FIX = ("upgrade the NVIDIA driver (R580 or newer for CUDA 13), or install the cuda-compat package of "
              "torch's CUDA and put its lib folder first on LD_LIBRARY_PATH (data-centre GPUs)")


@dataclass(frozen=True)
class CudaProbe:
    """What a child process found: the CUDA version the driver supports, and why a CUDA operation failed."""

    driver_cuda: str | None
    error: str | None


def probe_cuda(env: Mapping[str, str]) -> CudaProbe:
    """Run one CUDA operation in a child process with the run's environment ``env``."""
    try:
        result = subprocess.run([sys.executable, "-c", PROBE], env=dict(env), capture_output=True, text=True,
                                timeout=PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return CudaProbe(None, f"a CUDA operation did not finish in {PROBE_TIMEOUT_S:g} s")
    lines = result.stdout.strip().splitlines()
    if result.returncode or not lines:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        return CudaProbe(None, f"the probe process failed (exit {result.returncode}): {tail}")
    return CudaProbe(**json.loads(lines[-1]))


def _major(version: str) -> int:
    return int(version.split(".")[0])


def driver_finding(torch_cuda: str, probe: CudaProbe) -> tuple[Level, str]:
    """The line for torch built for CUDA ``torch_cuda`` on a driver as ``probe`` found it.

    A driver runs CUDA builds of its own major version and older (minor-version compatibility covers a newer
    minor); an older major fails at the first CUDA call, which the probe's operation makes.
    """
    driver = f"the driver supports CUDA {probe.driver_cuda}" if probe.driver_cuda else "no driver version"
    if probe.driver_cuda and _major(probe.driver_cuda) < _major(torch_cuda):
        return Level.ERROR, (f"torch is built for CUDA {torch_cuda} but {driver}, so the first CUDA call in a "
                             f"worker fails ({probe.error or 'an error'}): {DRIVER_FIX}.")
    if probe.error:
        return Level.ERROR, (f"a CUDA operation failed ({probe.error}; torch built for CUDA {torch_cuda}, {driver}): "
                             f"{DRIVER_FIX}, or check the GPU with nvidia-smi.")
    return Level.OK, f"a CUDA operation ran; torch built for CUDA {torch_cuda}, {driver}"


def driver(config: DictConfig) -> Iterator[tuple[Level, str]]:
    import torch

    if uses_cpu_platform(config):
        yield Level.OK, "cpu platform: no CUDA driver needed"
        return
    if torch.version.cuda is None or visible_gpus()[0] == 0:
        yield Level.OK, "no GPU for torch to use here (the gpus line says why): nothing to run a CUDA operation on"
        return
    yield driver_finding(torch.version.cuda, probe_cuda(run_env(config)))


def nvidia_smi(config: DictConfig) -> Iterator[tuple[Level, str]]:
    from strata.backends.cpu_platform import node_gpus  # imports verl: only when asked

    env = run_env(config)
    if uses_cpu_platform(config) or not node_gpus(env):
        yield Level.OK, "no GPU on this node for verl's platform probe to find"
        return
    if env.get("VERL_PLATFORM"):
        yield Level.OK, f"VERL_PLATFORM={env['VERL_PLATFORM']}: verl's platform probe is skipped"
        return
    found = shutil.which("nvidia-smi", path=env.get("PATH", os.defpath)) or next(
        (path for path in SMI_FALLBACKS if os.access(path, os.X_OK)), None)
    if found is None:
        yield Level.WARNING, (
            "nvidia-smi is not on PATH on a node with GPUs: verl's platform probe then rejects CUDA, tries every "
            "other platform and falls back to CUDA with a warning in every process. Put nvidia-smi's folder on "
            "PATH, or skip the probe: +ray_kwargs.ray_init.runtime_env.env_vars.VERL_PLATFORM=nvidia."
        )
        return
    yield Level.OK, f"nvidia-smi at {found}"
