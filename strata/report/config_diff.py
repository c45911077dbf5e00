"""Which keys two resolved configs disagree on, split into infrastructure and algorithm/optimisation.

The scaling rule of the recipes (docs/algorithm.md §5) is that a 2-GPU and an 8-GPU run differ only in
infrastructure: how many devices, how memory is saved, how a batch is cut into micro-batches, where
files go and where logs are sent. Those change speed and memory, not what is learned. Every other key
(learning rate, batch sizes, rollouts per prompt, StraTA's N/M/σ/δ/λ/κ, sampling) is
algorithm/optimisation: a difference there is a different experiment, and a release must say so.
The model path counts as infrastructure, like every path: the 1.5B and 7B recipes load different
weights with the same algorithm (docs/algorithm.md §5); the model card names the base model on its own.

``INFRASTRUCTURE_PATTERNS`` is that documented list. Patterns are ``fnmatch`` globs over the dotted key,
where ``*`` also spans dots.

A key whose two values name two existing files with the same bytes (a prompt preset file, ``strata.prompts.
preset=OUT/prompts.yaml``, written once per output folder) is the same input at another location: it
counts as infrastructure whatever the key. Files that differ stay in the key's own class.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from strata.report.markdown import markdown_table

INFRASTRUCTURE = "infrastructure"
ALGORITHM = "algorithm/optimisation"
ABSENT = "<absent>"

# (glob, why it is infrastructure)
INFRASTRUCTURE_PATTERNS: tuple[tuple[str, str], ...] = (
    ("*.n_gpus_per_node", "device count"),
    ("*.nnodes", "node count"),
    ("*.device", "device type (cpu/cuda/npu)"),
    ("*.device_name", "device type"),
    ("ray_kwargs.*", "Ray cluster start-up"),
    ("transfer_queue.*", "data transport between Ray actors"),
    ("*offload*", "CPU offload of parameters, optimizer or activations (memory)"),
    ("*micro_batch_size*", "micro-batches per device: gradient accumulation, same global batch"),
    ("*max_token_len_per_gpu", "token budget per device for dynamic micro-batches"),
    ("*use_dynamic_bsz", "dynamic micro-batching (same global batch)"),
    ("*parallel_size", "tensor/pipeline/expert/sequence/data parallel degree"),
    ("*.fsdp_size", "FSDP group size"),
    ("*.fsdp_config.*", "FSDP wrapping, dtype, prefetch, offload"),
    ("*.strategy", "distributed backend (fsdp, fsdp2, megatron)"),
    ("*.model_dtype", "parameter storage dtype"),
    ("*.rollout.dtype", "rollout engine dtype"),
    ("*.attn_implementation", "attention kernel (flash, sdpa)"),
    ("*.use_remove_padding", "padding-free kernels"),
    ("*.use_fused_kernels", "fused kernels"),
    ("*.use_torch_compile", "torch.compile"),
    ("*.use_liger", "Liger kernels"),
    ("*.use_shm", "shared-memory model loading"),
    ("*.enable_gradient_checkpointing", "activation recomputation (memory)"),
    ("*.entropy_checkpointing", "activation recomputation (memory)"),
    ("*.entropy_from_logits_with_chunking", "chunked entropy (memory)"),
    ("*.entropy_from_logits_chunk_size", "chunked entropy (memory)"),
    ("*.rollout.name", "rollout engine (vllm, sglang, hf)"),
    ("*.rollout.mode", "rollout engine mode"),
    ("*.agent.num_workers", "agent-loop worker processes"),
    ("*.gpu_memory_utilization", "rollout engine memory"),
    ("*.free_cache_engine", "rollout engine memory"),
    ("*.enforce_eager", "rollout engine CUDA graphs"),
    ("*.cudagraph_capture_sizes", "rollout engine CUDA graphs"),
    ("*.max_num_batched_tokens", "rollout engine batching"),
    ("*.max_num_seqs", "rollout engine batching"),
    ("*.enable_chunked_prefill", "rollout engine scheduling"),
    ("*.enable_prefix_caching", "rollout engine cache"),
    ("*.load_format", "rollout engine weight loading"),
    ("*.layered_summon", "weight sync memory"),
    ("*.engine_kwargs.*", "rollout engine options"),
    ("*.update_weights_bucket_megabytes", "weight sync bucket size"),
    ("*.multi_stage_wake_up", "rollout engine memory"),
    ("*.nccl_timeout", "collective timeout"),
    ("*.ray_wait_register_center_timeout", "Ray timeout"),
    ("*.balance_batch", "reorders rows across data-parallel ranks (same batch)"),
    ("*.dataloader_num_workers", "data loading processes"),
    ("*.filter_overlong_prompts_workers", "data loading processes"),
    ("*.path", "file-system location"),
    ("*_path", "file-system location"),
    ("*_dir", "file-system location"),
    ("run.dir", "file-system location of the run folder"),
    ("run.dump.*", "which trajectory dumps are written (inspection only)"),
    ("*.train_files", "file-system location of the data"),
    ("*.val_files", "file-system location of the data"),
    ("*.logger", "where metrics are sent"),
    ("*.project_name", "run naming"),
    ("*.experiment_name", "run naming"),
    ("*.log_val_generations", "logging"),
    ("trainer.val_before_train", "evaluation schedule"),
    ("trainer.test_freq", "evaluation schedule"),
    ("trainer.save_freq", "checkpoint schedule"),
    ("trainer.resume_mode", "checkpoint resume"),
    ("trainer.del_local_ckpt_after_load", "checkpoint housekeeping"),
    ("trainer.max_*_ckpt_to_keep", "checkpoint housekeeping"),
    ("trainer.esi_redundant_time", "checkpoint timing"),
    ("*.checkpoint.*", "what a checkpoint contains"),
    ("*profiler*", "profiling"),
    ("*.served_model_name", "name the rollout server reports (follows the model path)"),
    ("env.num_workers", "environment worker processes"),
    ("env.step_timeout_s", "environment fault handling"),
    ("strata.seeded_sampling", "per-request sampling seeds: reproducibility and sampler speed, same distribution"),
)
def classify_key(key: str) -> str:
    """``infrastructure`` or ``algorithm/optimisation`` for a dotted config key."""
    if any(fnmatchcase(key, pattern) for pattern, _ in INFRASTRUCTURE_PATTERNS):
        return INFRASTRUCTURE
    return ALGORITHM


@dataclass(frozen=True)
class KeyDelta:
    """One differing key: its value on each side (``<absent>`` where a side lacks it) and its class."""

    key: str
    a: Any
    b: Any
    kind: str


@dataclass(frozen=True)
class ConfigDiff:
    """The differing keys of two flat configs, and how many keys were compared (their union)."""

    label_a: str
    label_b: str
    total_keys: int
    deltas: tuple[KeyDelta, ...]

    def of_kind(self, kind: str) -> tuple[KeyDelta, ...]:
        return tuple(delta for delta in self.deltas if delta.kind == kind)

    @property
    def summary(self) -> str:
        """``K differing keys out of T`` (T: keys in either config)."""
        return f"{len(self.deltas)} differing keys out of {self.total_keys}"

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.label_a, "b": self.label_b, "total_keys": self.total_keys,
                "differing_keys": len(self.deltas), "summary": self.summary,
                INFRASTRUCTURE: {d.key: {"a": d.a, "b": d.b} for d in self.of_kind(INFRASTRUCTURE)},
                ALGORITHM: {d.key: {"a": d.a, "b": d.b} for d in self.of_kind(ALGORITHM)}}

    def to_markdown(self) -> str:
        """The summary line, then one table per class (algorithm first: it is what changes results)."""
        parts = [f"**{self.summary}** (A: `{self.label_a}`, B: `{self.label_b}`)."]
        for kind in (ALGORITHM, INFRASTRUCTURE):
            deltas = self.of_kind(kind)
            parts.append(f"{kind}: {len(deltas)} key(s)")
            if deltas:
                rows = [[f"`{d.key}`", _show(d.a), _show(d.b)] for d in deltas]
                parts.append(markdown_table(["key", "A", "B"], rows, align_right_from=3))
        return "\n\n".join(parts)


def diff_configs(a: dict[str, Any], b: dict[str, Any], label_a: str = "A", label_b: str = "B") -> ConfigDiff:
    """Compare two flat configs (see :func:`strata.report.config_resolve.resolve_config`); keys in A's order."""
    keys = list(a) + [key for key in b if key not in a]
    deltas = []
    for key in keys:
        value_a, value_b = a.get(key, ABSENT), b.get(key, ABSENT)
        if not _same(value_a, value_b):
            kind = classify_key(key)
            if kind == ALGORITHM and same_file_content(value_a, value_b):
                kind = INFRASTRUCTURE
            deltas.append(KeyDelta(key=key, a=value_a, b=value_b, kind=kind))
    return ConfigDiff(label_a=label_a, label_b=label_b, total_keys=len(keys), deltas=tuple(deltas))


def same_file_content(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are paths of two existing files with identical bytes (one file at two places)."""
    if not (isinstance(a, str) and isinstance(b, str)) or "/" not in a + b:
        return False
    try:
        first, second = Path(a), Path(b)
        return (first.is_file() and second.is_file() and first.stat().st_size == second.stat().st_size
                and first.read_bytes() == second.read_bytes())
    except OSError:
        return False


def _same(a: Any, b: Any) -> bool:
    """Equal values, with ints and floats compared as numbers (``1e-3`` equals ``0.001``), bools not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return f"`{text}`" if len(text) < 80 else f"`{text[:77]}...`"
