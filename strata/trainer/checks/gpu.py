"""Each GPU against what the run asks of it: its compute mode, its architecture, and its memory.

Read with one ``nvidia-smi --query-gpu`` call (no CUDA context in the driver). Three things pass verl's own
start-up and fail later, on a node that otherwise looks right:

* **compute mode.** verl's hybrid engine puts the FSDP actor and the vLLM server of a rank in two processes on
  the same GPU; in ``Exclusive_Process`` mode the second one's first CUDA call fails, in ``Prohibited`` the first.
* **architecture.** The recipes compute in bfloat16 (the rollout's and the actor's mixed precision), which needs
  compute capability 8.0 (Ampere) or newer; vLLM 0.29's CUDA 13 wheels have no kernels for Volta (7.0) either.
* **memory.** The recipes' ``gpu_memory_utilization`` assumes 80 GB GPUs (their headers give the arithmetic).
  vLLM claims that share of the *whole* GPU at start and refuses to start when less is free, and must fit the
  bf16 weights, ~3 GiB of activations and CUDA graphs, and a KV cache in it; what the actor and reference keep
  on the GPU during rollout (fp32 parameters, Adam's two moments, sharded over the ranks; none when offloaded)
  must fit the rest. And in the update, one micro-batch's output layer (logits, the logged entropy, the
  log-probs) and sdpa's mask over packed rows grow with the token budget times the vocabulary
  (`UpdateLogits`): ~38 GiB at the recipes' 32,768 tokens without flash-attn.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from omegaconf import DictConfig

from strata.trainer.checks.base import (
    STATE_BYTES_PER_PARAM,
    Level,
    offloaded_parts,
    run_env,
    select,
    uses_cpu_platform,
    uses_reference,
)
from strata.trainer.checks.model import local_model_dir, parameter_count

GIB = 1024**3
QUERY = "index,name,compute_mode,compute_cap,memory.total"
SMI_TIMEOUT_S = 30.0
SHARED_MODES = {"Default"}
BF16_CAPABILITY = (8, 0)
VLLM_OVERHEAD_BYTES = 3 * GIB  # activations and CUDA graphs (the recipes' headers: ~3 GiB)
CONTEXT_BYTES = 1 * GIB  # the actor's CUDA context beside vLLM's
MIN_KV_BYTES = 2 * GIB  # below this vLLM starts with a KV cache of a few sequences, or not at all


@dataclass(frozen=True)
class GpuReading:
    """One GPU as ``nvidia-smi --query-gpu`` describes it."""

    index: int
    name: str
    compute_mode: str
    capability: tuple[int, int] | None
    memory_bytes: int


def parse_gpus(text: str) -> list[GpuReading]:
    """``nvidia-smi --query-gpu=<QUERY> --format=csv,noheader,nounits`` output; a field a driver does not know
    (``compute_cap`` before R510: ``[N/A]``) reads as None."""
    readings = []
    for line in text.strip().splitlines():
        index, name, mode, capability, memory = (field.strip() for field in line.split(","))
        major, _, minor = capability.partition(".")
        cap = (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None
        readings.append(GpuReading(int(index), name, mode, cap, int(float(memory)) * 1024**2))
    return readings


def visible(readings: Sequence[GpuReading], env: Mapping[str, str]) -> list[GpuReading]:
    """The readings of the GPUs ``CUDA_VISIBLE_DEVICES`` (as indices) leaves to the run; all when unset or
    given as UUIDs."""
    given = env.get("CUDA_VISIBLE_DEVICES")
    if given is None or not all(part.strip().isdigit() for part in given.split(",") if part.strip()):
        return list(readings)
    chosen = [int(part) for part in given.split(",") if part.strip()]
    return [r for r in readings if r.index in chosen]


def read_gpus(env: Mapping[str, str]) -> list[GpuReading] | None:
    """This node's GPUs as the run sees them; None when nvidia-smi is missing or fails (the smi line says so)."""
    smi = shutil.which("nvidia-smi", path=env.get("PATH", os.defpath))
    if smi is None:
        return None
    try:
        result = subprocess.run([smi, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"], capture_output=True,
                                text=True, timeout=SMI_TIMEOUT_S, check=False, env=dict(env))
        return visible(parse_gpus(result.stdout), env) if result.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None


def _gpu_run(config: DictConfig) -> list[GpuReading] | None:
    return None if uses_cpu_platform(config) else read_gpus(run_env(config))


def compute_findings(readings: Sequence[GpuReading], dtype: str) -> Iterator[tuple[Level, str]]:
    """The compute-mode and architecture lines for ``readings`` and the rollout's ``dtype``."""
    exclusive = [r for r in readings if r.compute_mode not in SHARED_MODES]
    if exclusive:
        modes = ", ".join(f"GPU {r.index} {r.compute_mode}" for r in exclusive)
        yield Level.ERROR, (
            f"compute mode {modes}: the actor and vLLM share each GPU in two processes, which needs the Default "
            "mode. Set it with `sudo nvidia-smi -i <gpu> -c DEFAULT` (or ask the cluster's admins: SLURM sites "
            "may set it per job, e.g. --gpu-mode or a gres flag).")
        return
    old = [r for r in readings if r.capability is not None and r.capability < BF16_CAPABILITY]
    if old and dtype == "bfloat16":
        names = ", ".join(f"GPU {r.index} {r.name} ({r.capability[0]}.{r.capability[1]})" for r in old)
        yield Level.ERROR, (
            f"{names}: bfloat16 (the recipes' dtype) needs compute capability 8.0 (Ampere) or newer, and vLLM "
            "0.29's CUDA 13 wheels have no Volta kernels. Run on A100/A10/L4/H100-class GPUs.")
        return
    unknown = " (compute capability not reported by this driver)" if any(r.capability is None for r in readings) else ""
    caps = sorted({f"{r.capability[0]}.{r.capability[1]}" for r in readings if r.capability})
    yield Level.OK, f"{len(readings)} GPU(s) in Default compute mode, capability {', '.join(caps) or '?'}{unknown}"


def compute(config: DictConfig) -> Iterator[tuple[Level, str]]:
    readings = _gpu_run(config)
    if not readings:
        yield Level.OK, "no GPU readings here (cpu platform, or nvidia-smi missing: the smi line says which)"
        return
    yield from compute_findings(readings, str(select(config, "actor_rollout_ref.rollout.dtype", "bfloat16")))


@dataclass(frozen=True)
class MemoryPlan:
    """What one GPU must hold, from the model's size and the run's sharding and offload settings."""

    params: int
    utilization: float
    tensor_parallel: int
    ranks: int
    off_gpu: frozenset[str]  # parts of STATE_BYTES_PER_PARAM not on the GPU in rollout: offloaded, or no ref

    @classmethod
    def of(cls, config: DictConfig, params: int) -> MemoryPlan:
        off_gpu = {*offloaded_parts(config), *(() if uses_reference(config) else ("ref",))}
        return cls(params, float(select(config, "actor_rollout_ref.rollout.gpu_memory_utilization", 0.5)),
                   int(select(config, "actor_rollout_ref.rollout.tensor_model_parallel_size", 1)),
                   int(select(config, "trainer.n_gpus_per_node", 1)) * int(select(config, "trainer.nnodes", 1)),
                   frozenset(off_gpu))

    def vllm_share(self, memory: int) -> int:
        return int(self.utilization * memory)

    def weights(self) -> int:
        return self.params * 2 // self.tensor_parallel  # bf16, split over the tensor-parallel group

    def kv_cache(self, memory: int) -> int:
        return self.vllm_share(memory) - self.weights() - VLLM_OVERHEAD_BYTES

    def resident(self) -> int:
        per_param = sum(b for name, b in STATE_BYTES_PER_PARAM.items() if name not in self.off_gpu)
        return self.params * per_param // self.ranks + CONTEXT_BYTES


def memory_findings(plan: MemoryPlan, memory: int) -> Iterator[tuple[Level, str]]:
    """The memory line for a GPU of ``memory`` bytes."""
    share, kv, resident = plan.vllm_share(memory), plan.kv_cache(memory), plan.resident()
    gib = f"{memory / GIB:.0f} GiB GPU"
    if kv < MIN_KV_BYTES:
        yield Level.ERROR, (
            f"{gib}: vLLM gets {plan.utilization:g} x {memory / GIB:.0f} = {share / GIB:.1f} GiB for "
            f"{plan.weights() / GIB:.1f} GiB of bf16 weights + ~{VLLM_OVERHEAD_BYTES / GIB:.0f} GiB of activations, "
            f"leaving {kv / GIB:.1f} GiB of KV cache: raise actor_rollout_ref.rollout.gpu_memory_utilization, "
            "split the model (tensor_model_parallel_size) or use larger GPUs.")
        return
    if resident > memory - share:
        yield Level.ERROR, (
            f"{gib}: the actor and reference keep ~{resident / GIB:.1f} GiB per GPU during rollout "
            f"({plan.params / 1e9:.2f}B params x fp32 weights, Adam, reference over {plan.ranks} ranks, "
            f"off the GPU: {', '.join(sorted(plan.off_gpu)) or 'none'}) but vLLM leaves "
            f"{(memory - share) / GIB:.1f} GiB ({1 - plan.utilization:.2f} x {memory / GIB:.0f}): vLLM refuses to "
            "start with less free than its share. Lower gpu_memory_utilization, offload (fsdp_config.param_offload, "
            "optimizer_offload), or use more or larger GPUs.")
        return
    yield Level.OK, (f"{gib}: vLLM {share / GIB:.1f} GiB (weights {plan.weights() / GIB:.1f}, KV cache "
                     f"~{kv / GIB:.1f}), the actor and reference ~{resident / GIB:.1f} of the other "
                     f"{(memory - share) / GIB:.1f}")


def memory(config: DictConfig) -> Iterator[tuple[Level, str]]:
    readings = _gpu_run(config)
    if not readings:
        yield Level.OK, "no GPU readings here (cpu platform, or nvidia-smi missing: the smi line says which)"
        return
    folder = local_model_dir(str(select(config, "actor_rollout_ref.model.path", "")))
    params = parameter_count(folder) if folder is not None else None
    if params is None:
        yield Level.OK, "model size unknown here (not local): GPU memory not estimated"
        return
    yield from memory_findings(MemoryPlan.of(config, params), min(r.memory_bytes for r in readings))


@dataclass(frozen=True)
class UpdateLogits:
    """What one update micro-batch's output layer and attention mask hold on a GPU, by verl 0.9.1's FSDP engine
    (``verl/workers/engine/fsdp/transformer_impl.py``, ``verl/utils/torch_functional.py``), for ``tokens`` packed
    tokens and a vocabulary of ``vocab``, all bf16:

    * the logits, tokens x vocab x 2 B;
    * the entropy verl logs (softmax and its product with the logits, kept for backward): 2 x that, or nothing
      beyond the logits with ``entropy_checkpointing`` (recomputed in backward);
    * the log-probs: with flash-attn installed verl uses its Triton cross-entropy, in place; without it, a
      row-wise log-softmax keeps each row's output for backward, one more tokens x vocab x 2 B;
    * sdpa (the recipes' attention) on packed rows: transformers' dense mask, tokens^2 x 1 B; flash-attention's
      varlen kernel needs none.
    """

    tokens: int
    vocab: int
    flash_cross_entropy: bool
    dense_mask: bool
    entropy_checkpointing: bool

    def parts(self) -> dict[str, int]:
        logits = self.tokens * self.vocab * 2
        return {"logits": logits, "entropy": 0 if self.entropy_checkpointing else 2 * logits,
                "log-softmax": 0 if self.flash_cross_entropy else logits,
                "mask": self.tokens**2 if self.dense_mask else 0}

    def total(self) -> int:
        return sum(self.parts().values())


def update_findings(estimate: UpdateLogits, memory: int) -> Iterator[tuple[Level, str]]:
    """The update line: a warning when the micro-batch's output layer and mask take over half of a GPU's memory."""
    parts = ", ".join(f"{name} {size / GIB:.1f}" for name, size in estimate.parts().items() if size)
    what = (f"an update micro-batch of {estimate.tokens:,} tokens x {estimate.vocab:,} vocabulary holds "
            f"~{estimate.total() / GIB:.1f} GiB in its output layer and mask ({parts} GiB)")
    fixes = []
    if not estimate.flash_cross_entropy:
        fixes.append("install flash-attn (verl then computes log-probs with its in-place cross-entropy)")
    if not estimate.entropy_checkpointing:
        fixes.append("set actor_rollout_ref.actor.entropy_checkpointing=true")
    fixes.append("lower actor_rollout_ref.actor.ppo_max_token_len_per_gpu")
    if estimate.total() > memory // 2:
        yield Level.WARNING, (f"{what}, over half of the {memory / GIB:.0f} GiB GPU beside the model's weights, "
                              f"gradients and activations: {'; or '.join(fixes)}.")
    else:
        yield Level.OK, f"{what} of the {memory / GIB:.0f} GiB GPU"


def update(config: DictConfig) -> Iterator[tuple[Level, str]]:
    import importlib.util
    import json

    readings = _gpu_run(config)
    folder = local_model_dir(str(select(config, "actor_rollout_ref.model.path", "")))
    actor = "actor_rollout_ref.actor"
    if not readings or folder is None or not select(config, f"{actor}.use_dynamic_bsz", False):
        yield Level.OK, "no GPU readings, no local model or no token budget (use_dynamic_bsz): not estimated"
        return
    vocab = int(json.loads((folder / "config.json").read_text()).get("vocab_size", 0))
    implementation = str(select(config, "actor_rollout_ref.model.override_config.attn_implementation", "sdpa"))
    estimate = UpdateLogits(int(select(config, f"{actor}.ppo_max_token_len_per_gpu", 0)), vocab,
                            flash_cross_entropy=importlib.util.find_spec("flash_attn") is not None,
                            dense_mask=implementation in ("sdpa", "eager"),
                            entropy_checkpointing=bool(select(config, f"{actor}.entropy_checkpointing", False)))
    yield from update_findings(estimate, min(r.memory_bytes for r in readings))
