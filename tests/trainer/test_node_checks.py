"""The doctor's lines for what stops a GPU node, each seen by faking its condition on this CPU machine: an old
driver's CUDA version, no C compiler on PATH, a 64 MB /dev/shm, too few CPUs for Ray, a GPU node without
nvidia-smi, the cpu platform on a node with GPUs. A GPU is faked by a ``nvidia0`` file in a folder standing
for ``/dev``; everything else the checks read (PATH, statvfs, Ray's CPU count, the CUDA probe) is replaced
for one test."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from omegaconf import OmegaConf

from strata.backends import cpu_platform
from strata.trainer.checks import Level, cuda, host, machine

pytestmark = pytest.mark.usefixtures("gpu_run_environment")  # these tests describe GPU runs

GPU_RUN = {"trainer": {"n_gpus_per_node": 2, "nnodes": 1, "device": "cuda"}}


def lines(check, config: dict) -> list[tuple[Level, str]]:
    return list(check(OmegaConf.create(config)))


def with_env(config: dict, **env_vars: str) -> dict:
    return {**config, "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": env_vars}}}}


@pytest.fixture
def gpu_node(monkeypatch, tmp_path):
    """A node whose /dev shows one GPU."""
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "nvidia0").touch()
    monkeypatch.setattr(cpu_platform, "DEVICE_FOLDER", dev)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return dev


# --- the CUDA driver -----------------------------------------------------------------------------

@pytest.mark.parametrize(("torch_cuda", "probe", "level", "says"), [
    ("13.0", cuda.CudaProbe("12.4", "RuntimeError: CUDA driver version is insufficient"), Level.ERROR,
     "torch is built for CUDA 13.0 but the driver supports CUDA 12.4"),
    ("13.0", cuda.CudaProbe("13.0", "RuntimeError: CUDA error: no kernel image"), Level.ERROR,
     "a CUDA operation failed (RuntimeError: CUDA error: no kernel image"),
    ("13.0", cuda.CudaProbe("13.0", None), Level.OK, "a CUDA operation ran"),
    ("13.2", cuda.CudaProbe("13.0", None), Level.OK, "the driver supports CUDA 13.0"),  # minor-version compatible
])
def test_the_driver_line_compares_torch_s_cuda_with_the_driver_s(torch_cuda, probe, level, says):
    found, line = cuda.driver_finding(torch_cuda, probe)
    assert found is level and says in line, line
    if level is Level.ERROR:
        assert "R580 or newer" in line and "cuda-compat" in line


def test_an_old_driver_under_a_cuda_13_torch_is_an_error(monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(cuda, "visible_gpus", lambda: (2, ""))
    monkeypatch.setattr(cuda, "probe_cuda", lambda env: cuda.CudaProbe("12.8", "RuntimeError: driver too old"))
    [(level, line)] = lines(cuda.driver, GPU_RUN)
    assert level is Level.ERROR and "CUDA 13.0 but the driver supports CUDA 12.8" in line
    assert lines(cuda.driver, with_env(GPU_RUN, VERL_PLATFORM="cpu"))[0][0] is Level.OK


@pytest.mark.skipif(torch.version.cuda is not None, reason="a CUDA build of torch")
def test_the_cuda_probe_runs_in_a_child_process_and_reports_why_cuda_failed():
    import os

    probe = cuda.probe_cuda(os.environ)
    assert probe.error is not None and "not compiled with CUDA" in probe.error


# --- nvidia-smi and the cpu platform on a GPU node -----------------------------------------------

def test_a_gpu_node_without_nvidia_smi_on_path_gets_its_line(gpu_node, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi in it
    monkeypatch.setattr(cuda, "SMI_FALLBACKS", ())
    [(level, line)] = lines(cuda.nvidia_smi, GPU_RUN)
    assert level is Level.WARNING and "nvidia-smi is not on PATH on a node with GPUs" in line
    assert "VERL_PLATFORM=nvidia" in line
    assert lines(cuda.nvidia_smi, with_env(GPU_RUN, VERL_PLATFORM="nvidia"))[0][0] is Level.OK
    (tmp_path / "nvidia-smi").touch(mode=0o755)
    [(level, line)] = lines(cuda.nvidia_smi, GPU_RUN)
    assert level is Level.OK and f"nvidia-smi at {tmp_path}/nvidia-smi" in line


def test_the_cpu_platform_on_a_node_with_gpus_is_refused(gpu_node):
    on_cpu = with_env(GPU_RUN, VERL_PLATFORM="cpu")
    [(level, line)] = lines(machine.gpus, on_cpu)
    assert level is Level.ERROR and "the cpu platform" in line and "/dev/nvidia0" in line
    assert lines(machine.gpus, with_env(GPU_RUN, VERL_PLATFORM="cpu", CUDA_VISIBLE_DEVICES=""))[0][0] is Level.OK


# --- compiler, /dev/shm, CPUs --------------------------------------------------------------------

def test_no_c_compiler_on_path_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    [(level, line)] = lines(host.compiler, GPU_RUN)
    assert level is Level.ERROR and "no C compiler" in line and "apt-get install gcc" in line and "CC=" in line
    assert lines(host.compiler, with_env(GPU_RUN, CC="/opt/bin/cc"))[0] == (Level.OK, "C compiler from CC=/opt/bin/cc")
    (tmp_path / "gcc").touch(mode=0o755)
    assert lines(host.compiler, GPU_RUN)[0] == (Level.OK, f"C compiler {tmp_path}/gcc")


def test_docker_s_64_mb_dev_shm_is_an_error(monkeypatch):
    monkeypatch.setattr(host.os, "statvfs", lambda path: SimpleNamespace(f_frsize=4096, f_blocks=64 * 256))
    [(level, line)] = lines(host.shared_memory, GPU_RUN)
    assert level is Level.ERROR and "/dev/shm holds 64 MiB" in line and "--ipc=host" in line and "--shm-size" in line
    assert lines(host.shared_memory, with_env(GPU_RUN, VERL_PLATFORM="cpu"))[0][0] is Level.OK


def test_too_few_cpus_for_ray_is_an_error(monkeypatch):
    monkeypatch.setattr(host, "detected_cpus", lambda: 12)
    [(level, line)] = lines(host.ray_cpus, GPU_RUN)
    # 3 per GPU x 2 + 8 storage units + 1 controller + 1 free = 16
    assert level is Level.ERROR and "Ray gets 12 logical CPUs (detected by Ray) but the run needs 16" in line
    assert "ray_kwargs.ray_init.num_cpus=16" in line
    assert lines(host.ray_cpus, {**GPU_RUN, "ray_kwargs": {"ray_init": {"num_cpus": 16}}})[0][0] is Level.OK
    fewer_units = {**GPU_RUN, "transfer_queue": {"backend": {"SimpleStorage": {"num_data_storage_units": 2}}}}
    assert lines(host.ray_cpus, fewer_units)[0] == (Level.OK, "Ray gets 12 logical CPUs (detected by Ray), 10 needed")


def test_the_cpu_platform_counts_its_rank_slots_as_gpus():
    # its bundles are {"CPU": 3, "GPU": 1} too: 5 ranks need 3 x 5 + 1 storage unit + 2 = 18 > cpu.yaml's 16
    cpu_run = with_env({"trainer": {"n_gpus_per_node": 5, "nnodes": 1, "device": "cpu"},
                        "transfer_queue": {"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}},
                       VERL_PLATFORM="cpu")
    cpu_run["ray_kwargs"]["ray_init"]["num_cpus"] = 16
    [(level, line)] = lines(host.ray_cpus, cpu_run)
    assert level is Level.ERROR and "the run needs 18" in line
    cpu_run["trainer"]["n_gpus_per_node"] = 2
    assert lines(host.ray_cpus, cpu_run) == [
        (Level.OK, "Ray gets 16 logical CPUs (ray_kwargs.ray_init.num_cpus), 9 needed")]
