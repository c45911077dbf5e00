"""This machine against what the run asks of it: GPUs, wandb credentials, disk for checkpoints."""

from __future__ import annotations

import math
import netrc
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from omegaconf import DictConfig

from strata.trainer.checks.base import Level, run_env, select, uses_cpu_platform
from strata.trainer.checks.model import local_model_dir, parameter_count

GIB = 1024**3
# bytes per parameter of each saved part: fp32 FSDP model shards, Adam's two fp32 moments, a bf16 HF copy
CHECKPOINT_BYTES_PER_PARAM = {"model": 4, "optimizer": 8, "hf_model": 2}
WANDB_OFF_MODES = {"offline", "disabled", "dryrun"}


def visible_gpus() -> tuple[int, str]:
    """The GPUs this process may use, and a note when torch cannot use any.

    ``torch.cuda.device_count()`` honours ``CUDA_VISIBLE_DEVICES`` (as Ray does) and counts through NVML
    without initialising CUDA (torch falls back to the driver only when NVML is missing); ``nvidia-smi -L``
    would list GPUs that ``CUDA_VISIBLE_DEVICES`` hides, and a CPU build of torch sees none even when
    there are some, which is what the run would see too.
    """
    import torch

    if torch.version.cuda is None:
        return 0, f" (torch {torch.__version__} is a CPU build: install a CUDA build of torch)"
    return torch.cuda.device_count(), ""


def gpus(config: DictConfig) -> Iterator[tuple[Level, str]]:
    if uses_cpu_platform(config):
        yield Level.OK, "cpu platform (VERL_PLATFORM=cpu): no GPU needed"
        return
    per_node, nnodes = int(select(config, "trainer.n_gpus_per_node", 1)), int(select(config, "trainer.nnodes", 1))
    if per_node < 1 or nnodes < 1:
        yield Level.ERROR, (
            f"trainer.n_gpus_per_node={per_node} x trainer.nnodes={nnodes}: a GPU run needs at least one GPU on "
            "each node. Set N_GPUS= (the GPU recipes' variable) to the GPUs per node, or run a CPU recipe "
            "(recipes/*-cpu.sh, +platform=cpu) to train without a GPU."
        )
        return
    visible, note = visible_gpus()
    where = f" on this node (each of the {nnodes} nodes needs {per_node})" if nnodes > 1 else ""
    if visible < per_node:
        yield Level.ERROR, (
            f"GPUs {visible} < {per_node}: {visible} visible{where}{note}, trainer.n_gpus_per_node={per_node} "
            "needed. Run on a machine with enough GPUs, lower trainer.n_gpus_per_node (N_GPUS= in the GPU "
            "recipes), check CUDA_VISIBLE_DEVICES, or use the CPU recipe (+platform=cpu)."
        )
        return
    yield Level.OK, f"{visible} GPU(s) visible{where}, {per_node} needed"


def _netrc_has(host: str, path: Path) -> bool:
    try:
        entry = netrc.netrc(str(path)).authenticators(host)
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False
    return bool(entry and entry[2])


def wandb_credentials(config: DictConfig) -> Iterator[tuple[Level, str]]:
    logger = select(config, "trainer.logger", []) or []
    if "wandb" not in ([logger] if isinstance(logger, str) else list(logger)):
        yield Level.OK, "trainer.logger has no wandb"
        return
    env = run_env(config)
    mode = env.get("WANDB_MODE", "").lower()
    if mode in WANDB_OFF_MODES:
        yield Level.OK, f"wandb in WANDB_MODE={mode}"
        return
    host = urlsplit(env.get("WANDB_BASE_URL", "https://api.wandb.ai")).netloc
    netrc_path = Path(env.get("NETRC") or Path.home() / ".netrc")
    if env.get("WANDB_API_KEY"):
        yield Level.OK, "wandb key in WANDB_API_KEY"
    elif _netrc_has(host, netrc_path):
        yield Level.OK, f"wandb key for {host} in {netrc_path}"
    else:
        yield Level.ERROR, (
            f"trainer.logger has wandb but no credentials: no WANDB_API_KEY, no {host} entry in {netrc_path}. "
            "Run `wandb login`, export WANDB_API_KEY, set WANDB_MODE=offline, or drop wandb from trainer.logger."
        )


def _training_steps(config: DictConfig) -> int | None:
    steps = select(config, "trainer.total_training_steps")
    if steps:
        return int(steps)
    files = select(config, "data.train_files")
    files = [files] if isinstance(files, str) else list(files or [])
    if not files or not all(Path(f).is_file() for f in files):
        return None
    import pyarrow.parquet as pq

    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    return rows // int(select(config, "data.train_batch_size", 1)) * int(select(config, "trainer.total_epochs", 1))


def checkpoints_kept(config: DictConfig) -> int | None:
    """How many checkpoints the run holds on disk at once; None when the step count is unknown.

    verl saves every ``save_freq`` steps and at the last one, and deletes the oldest before saving when
    ``max_actor_ckpt_to_keep`` is set; with it unset every checkpoint stays.
    """
    save_freq = int(select(config, "trainer.save_freq", -1))
    if save_freq <= 0 or select(config, "trainer.val_only", False):
        return 0
    steps = _training_steps(config)
    written = math.ceil(steps / save_freq) if steps is not None else None
    keep = select(config, "trainer.max_actor_ckpt_to_keep")
    if keep:
        return min(int(keep), written) if written is not None else int(keep)
    return written


def checkpoint_bytes(params: int, save_contents: list[str]) -> int:
    """One actor checkpoint's size on disk: ``params`` times the bytes of each saved part."""
    return params * sum(CHECKPOINT_BYTES_PER_PARAM.get(part, 0) for part in save_contents)


def _free_bytes(path: Path) -> int:
    while not path.exists():  # the folder is created at the first save: measure where it will be
        path = path.parent
    return shutil.disk_usage(path).free


def disk(config: DictConfig) -> Iterator[tuple[Level, str]]:
    out = Path(str(select(config, "trainer.default_local_dir", "checkpoints"))).absolute()
    free = _free_bytes(out)
    kept = checkpoints_kept(config)
    if kept == 0:
        yield Level.OK, f"no checkpoints to write; {free / GIB:.1f} GiB free at {out}"
        return
    folder = local_model_dir(str(select(config, "actor_rollout_ref.model.path", "")))
    params = parameter_count(folder) if folder is not None else None
    if params is None or kept is None:
        yield Level.OK, f"{free / GIB:.1f} GiB free at {out} (checkpoint size unknown: model or step count not local)"
        return
    contents = list(select(config, "actor_rollout_ref.actor.checkpoint.save_contents", ["model", "optimizer"]))
    one = checkpoint_bytes(params, contents)
    need = one * kept
    summary = (f"{kept} checkpoint(s) of ~{one / GIB:.1f} GiB ({params / 1e9:.2f}B params x "
               f"{'+'.join(c for c in contents if c in CHECKPOINT_BYTES_PER_PARAM)}) need ~{need / GIB:.1f} GiB")
    if need > free:
        fits = free // one if one else 0
        yield Level.WARNING, (
            f"{summary} at {out}, {free / GIB:.1f} GiB free: set trainer.max_actor_ckpt_to_keep={max(fits, 1)} "
            "or fewer, raise trainer.save_freq, free space, or move trainer.default_local_dir (CKPT=)."
        )
    else:
        yield Level.OK, f"{summary}, {free / GIB:.1f} GiB free at {out}"
