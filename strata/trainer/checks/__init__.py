"""The start-up checks: one list, run by `strata doctor` (all of them, one line each) and by the
trainer before Ray starts (stopping on errors, printing warnings).

A problem that would certainly fail the run is an ERROR: a missing rollout or attention package, fewer
GPUs than asked, a CUDA driver older than torch's CUDA, no C compiler, a 64 MB /dev/shm, too few logical
CPUs for Ray, the cpu platform on a node with GPUs, missing task lists or model, a checkpoint that cannot
resume, several nodes but no Ray cluster to join (RAY_ADDRESS), wandb without credentials (verl's tracker
calls ``wandb.init`` in a Ray actor with no terminal, which raises, after the workers have loaded the model),
a GPU in an exclusive compute mode or older than Ampere (bf16), a GPU too small for the recipe's memory split,
no Python headers (Triton's launcher), less host memory than the offloaded state, no Java for ScienceWorld.
Too little disk for the checkpoints is a WARNING: the size is an estimate and the run gets far before the disk
fills, so it should not refuse to start; so are a vLLM patch release other than the pin, a hub too slow to
answer, nvidia-smi missing from PATH, and, with several nodes, a shared path on a local file system.
"""

from __future__ import annotations

from omegaconf import DictConfig

from strata.trainer.checks import cluster, cuda, gpu, host, inputs, machine, model, packages
from strata.trainer.checks.base import Check, Finding, Level
from strata.trainer.config import ConfigError

__all__ = ["CHECKS", "Finding", "Level", "run_checks"]

CHECKS: dict[str, Check] = {
    "python": packages.interpreter,
    "strata": inputs.strata_keys,
    "verl": inputs.verl_validation,
    "gpus": machine.gpus,
    "driver": cuda.driver,
    "smi": cuda.nvidia_smi,
    "compute": gpu.compute,
    "gpumem": gpu.memory,
    "update": gpu.update,
    "compiler": host.compiler,
    "headers": host.python_headers,
    "shm": host.shared_memory,
    "cpus": host.ray_cpus,
    "ram": host.host_memory,
    "nodes": cluster.multi_node,
    "rollout": packages.rollout_engine,
    "runner": packages.vllm_runner,
    "attention": packages.attention,
    "model": model.model,
    "tasks": inputs.task_lists,
    "env": inputs.environment,
    "resume": inputs.resume,
    "wandb": machine.wandb_credentials,
    "disk": machine.disk,
}


def run_checks(config: DictConfig, checks: dict[str, Check] = CHECKS) -> list[Finding]:
    """Every check's findings, in order. A check that crashes is reported as an ERROR, never hidden."""
    findings: list[Finding] = []
    for name, check in checks.items():
        try:
            findings += [Finding(name, level, message) for level, message in check(config)]
        except ConfigError as err:
            findings.append(Finding(name, Level.ERROR, str(err)))
        except Exception as err:  # noqa: BLE001 - the doctor reports a broken check instead of stopping
            findings.append(Finding(name, Level.ERROR, f"the check itself failed: {type(err).__name__}: {err}"))
    return findings
