"""The cpu platform runs only where it was chosen and no GPU is: on a GPU node it refuses with one line, and
when verl's auto-detection merely probes it (a GPU node without nvidia-smi on PATH) it leaves torch alone.
A visible GPU is faked with a ``nvidia0`` file in a folder standing for ``/dev``."""

from __future__ import annotations

import pytest
import torch

from strata.backends import cpu_platform
from strata.backends.cpu_platform import CPUPlatform, gpu_node_refusal, node_gpus


@pytest.fixture
def gpu_node(monkeypatch, tmp_path):
    """This process on a node with one GPU, its torch ``pin_memory`` restored afterwards."""
    (tmp_path / "nvidia0").touch()
    (tmp_path / "nvidiactl").touch()  # the driver's control file, not a GPU
    monkeypatch.setattr(cpu_platform, "DEVICE_FOLDER", tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(torch.Tensor, "pin_memory", torch.Tensor.pin_memory)
    return tmp_path


def test_gpus_are_the_device_files_unless_cuda_visible_devices_hides_them(gpu_node):
    assert node_gpus({}) == ["nvidia0"]
    assert node_gpus({"CUDA_VISIBLE_DEVICES": "0,1"}) == ["nvidia0"]
    assert node_gpus({"CUDA_VISIBLE_DEVICES": ""}) == [] and node_gpus({"CUDA_VISIBLE_DEVICES": "-1"}) == []
    assert gpu_node_refusal({"CUDA_VISIBLE_DEVICES": ""}) is None


def test_the_cpu_platform_chosen_on_a_gpu_node_refuses_in_one_line(gpu_node, monkeypatch):
    monkeypatch.setenv("VERL_PLATFORM", "cpu")
    with pytest.raises(RuntimeError) as err:
        CPUPlatform()
    [line] = str(err.value).splitlines()
    assert "chosen on a node with GPUs (/dev/nvidia0)" in line and "CUDA_VISIBLE_DEVICES=" in line
    assert not getattr(torch.Tensor.pin_memory, "_strata_cpu_shim", False)


def test_probing_the_cpu_platform_on_a_gpu_node_leaves_pin_memory_alone(gpu_node, monkeypatch):
    monkeypatch.delenv("VERL_PLATFORM", raising=False)  # verl's auto-detection builds it to ask
    assert CPUPlatform().is_platform_available(use_smi_check=True) is False
    assert not getattr(torch.Tensor.pin_memory, "_strata_cpu_shim", False)


def test_the_cpu_platform_chosen_with_the_gpus_hidden_runs(gpu_node, monkeypatch):
    monkeypatch.setenv("VERL_PLATFORM", "cpu")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    CPUPlatform()
    t = torch.zeros(2)
    assert t.pin_memory() is t  # the shim: no accelerator to page-lock for
