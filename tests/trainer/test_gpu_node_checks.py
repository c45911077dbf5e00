"""The doctor's lines for a GPU's compute mode, architecture and memory, Python's headers, host memory for what a
recipe offloads, Java for ScienceWorld and the run's interpreter, each fed a faked reading on this CPU machine.
The GPU recipes' own configs, resolved, must pass on the 80 GB GPUs their headers assume."""

from __future__ import annotations

import sysconfig

import pytest
from omegaconf import OmegaConf

from strata.trainer.checks import Level, gpu, host, packages
from strata.trainer.checks.inputs import environment
from tests.recipes.resolved import resolve

GIB = 1024**3
SMI = """0, NVIDIA A100-SXM4-80GB, Default, 8.0, 81920
1, NVIDIA A100-SXM4-80GB, Exclusive_Process, 8.0, 81920
2, Tesla V100-SXM2-32GB, Default, 7.0, 32768
3, NVIDIA A100-SXM4-40GB, Default, [N/A], 40960
"""
QWEN_1_5B, QWEN_7B = 1_543_714_304, 7_615_616_512


def test_nvidia_smi_readings_and_the_gpus_the_run_sees():
    readings = gpu.parse_gpus(SMI)
    assert readings[0] == gpu.GpuReading(0, "NVIDIA A100-SXM4-80GB", "Default", (8, 0), 80 * GIB)
    assert readings[3].capability is None  # a driver that does not report it
    assert [r.index for r in gpu.visible(readings, {"CUDA_VISIBLE_DEVICES": "0,2"})] == [0, 2]
    assert len(gpu.visible(readings, {"CUDA_VISIBLE_DEVICES": "GPU-8a1b"})) == 4  # UUIDs: not matched, all kept


@pytest.mark.parametrize(("rows", "dtype", "level", "says"), [
    ([0], "bfloat16", Level.OK, "1 GPU(s) in Default compute mode, capability 8.0"),
    ([0, 1], "bfloat16", Level.ERROR, "compute mode GPU 1 Exclusive_Process: the actor and vLLM share each GPU"),
    ([2], "bfloat16", Level.ERROR, "GPU 2 Tesla V100-SXM2-32GB (7.0): bfloat16 (the recipes' dtype) needs"),
    ([2], "float16", Level.OK, "capability 7.0"),
    ([3], "bfloat16", Level.OK, "(compute capability not reported by this driver)"),
])
def test_compute_mode_and_architecture(rows, dtype, level, says):
    readings = [gpu.parse_gpus(SMI)[i] for i in rows]
    [(found, line)] = gpu.compute_findings(readings, dtype)
    assert found is level and says in line, line


def plan(recipe: str, params: int) -> gpu.MemoryPlan:
    return gpu.MemoryPlan.of(OmegaConf.create(resolve(recipe)), params)


def test_the_gpu_recipes_fit_the_80_gb_gpus_they_are_sized_for():
    small = plan("train-strata-alfworld-text-qwen2.5-1.5b.sh", QWEN_1_5B)
    assert (small.utilization, small.ranks, small.off_gpu) == (0.8, 2, frozenset())
    [(level, line)] = gpu.memory_findings(small, 80 * GIB)
    assert level is Level.OK and "vLLM 64.0 GiB (weights 2.9, KV cache ~58.1)" in line, line
    assert "the actor and reference ~12.5 of the other 16.0" in line, line
    large = plan("train-strata-alfworld-text-qwen2.5-7b.sh", QWEN_7B)
    assert large.off_gpu == frozenset({"actor", "optimizer", "ref"}) and large.tensor_parallel == 2
    [(level, line)] = gpu.memory_findings(large, 80 * GIB)
    assert level is Level.OK and "weights 7.1, KV cache ~57.9" in line, line


def test_a_smaller_gpu_gets_the_arithmetic_that_fails():
    small = plan("train-strata-alfworld-text-qwen2.5-1.5b.sh", QWEN_1_5B)
    [(level, line)] = gpu.memory_findings(small, 40 * GIB)  # an A100 40GB: the actor's state does not fit beside vLLM
    assert level is Level.ERROR and "keep ~12.5 GiB per GPU during rollout" in line and "leaves 8.0 GiB" in line
    large = plan("train-strata-alfworld-text-qwen2.5-7b.sh", QWEN_7B)
    [(level, line)] = gpu.memory_findings(large, 12 * GIB)  # weights fit, no KV cache does
    assert level is Level.ERROR and "leaving 0.1 GiB of KV cache" in line, line


def test_python_headers(monkeypatch, tmp_path, gpu_run_environment):
    gpu_run = OmegaConf.create({"trainer": {"device": "cuda"}})
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    [(level, line)] = host.python_headers(gpu_run)
    assert level is Level.ERROR and f"no {tmp_path}/Python.h" in line and "-dev" in line
    (tmp_path / "Python.h").touch()
    assert list(host.python_headers(gpu_run)) == [(Level.OK, f"Python's headers at {tmp_path}")]


def test_host_memory_reads_the_cgroup_limit_when_lower(tmp_path):
    meminfo, limit = tmp_path / "meminfo", tmp_path / "memory.max"
    meminfo.write_text("MemTotal:       263921656 kB\nMemFree:        1000 kB\n")
    assert host.host_memory_bytes(meminfo, limit) == 263921656 * 1024  # no cgroup file
    limit.write_text("max\n")
    assert host.host_memory_bytes(meminfo, limit) == 263921656 * 1024
    limit.write_text(f"{64 * GIB}\n")  # a SLURM job's --mem=64G
    assert host.host_memory_bytes(meminfo, limit) == 64 * GIB
    assert host.host_memory_bytes(tmp_path / "none", limit) is None


@pytest.mark.parametrize(("nnodes", "have", "level", "says"), [
    (1, 256 * GIB, Level.OK, "= ~113 GiB of host memory a node; 256 GiB here"),
    (1, 128 * GIB, Level.WARNING, "of 128 GiB: little is left"),
    (1, 64 * GIB, Level.ERROR, "but this node has 64 GiB"),
    (2, 128 * GIB, Level.OK, "/ 2 nodes = ~57 GiB"),
])
def test_the_7b_recipe_s_offloaded_state_against_host_memory(nnodes, have, level, says):
    parts = host.offloaded_parts(OmegaConf.create(resolve("train-strata-alfworld-text-qwen2.5-7b.sh")))
    assert parts == ["actor", "optimizer", "ref"]
    [(found, line)] = host.offload_findings(QWEN_7B, parts, nnodes, have)
    assert found is level and says in line, line


def test_sciworld_needs_java_on_the_run_s_path(tmp_path):
    no_java = {"env": {"name": "sciworld"},
               "ray_kwargs": {"ray_init": {"runtime_env": {"env_vars": {"PATH": str(tmp_path)}}}}}
    [(level, line)] = environment(OmegaConf.create(no_java))
    assert level is Level.ERROR and "no `java` on PATH" in line and "openjdk-17-jre-headless" in line
    java = tmp_path / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    assert list(environment(OmegaConf.create(no_java))) == [(Level.OK, f"sciworld: the simulator runs on {java}")]


def test_the_python_line_names_the_run_s_interpreter(monkeypatch):
    monkeypatch.delenv(packages.DOCTOR_PYTHON_ENV, raising=False)
    [(level, line)] = packages.interpreter(OmegaConf.create({}))
    assert level is Level.OK and "the run's interpreter" in line
    monkeypatch.setenv(packages.DOCTOR_PYTHON_ENV, "/opt/other/bin/python")
    [(level, line)] = packages.interpreter(OmegaConf.create({}))
    assert level is Level.WARNING and "not /opt/other/bin/python, which `strata doctor` runs in" in line


def test_the_update_s_output_layer_at_the_recipes_token_budget():
    """Qwen2.5's 151,936-entry vocabulary at the recipes' 32,768 tokens a micro-batch."""
    sdpa = gpu.UpdateLogits(32768, 151936, flash_cross_entropy=False, dense_mask=True, entropy_checkpointing=False)
    assert {k: round(v / GIB, 1) for k, v in sdpa.parts().items()} == {
        "logits": 9.3, "entropy": 18.5, "log-softmax": 9.3, "mask": 1.0}
    [(level, line)] = gpu.update_findings(sdpa, 80 * GIB)
    assert level is Level.OK and "holds ~38.1 GiB" in line, line
    [(level, line)] = gpu.update_findings(sdpa, 40 * GIB)
    assert level is Level.WARNING and "install flash-attn" in line and "entropy_checkpointing=true" in line, line
    lean = gpu.UpdateLogits(32768, 151936, flash_cross_entropy=True, dense_mask=True, entropy_checkpointing=True)
    assert round(lean.total() / GIB, 1) == 10.3
    [(level, line)] = gpu.update_findings(lean, 40 * GIB)
    assert level is Level.OK and "flash-attn" not in line, line
