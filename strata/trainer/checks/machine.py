"""This machine against what the run asks of it: GPUs, wandb credentials, disk for checkpoints."""

from __future__ import annotations

import configparser
import math
import netrc
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from omegaconf import DictConfig

from strata.trainer.checks.base import Level, run_env, select, uses_cpu_platform
from strata.trainer.checks.model import local_model_dir, lora_params, parameter_count

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
        return 0, (f" (torch {torch.__version__} is a CPU build: on a GPU node run `make install-gpu`, which "
                   "replaces it with the CUDA build)")
    return torch.cuda.device_count(), ""


def gpus(config: DictConfig) -> Iterator[tuple[Level, str]]:
    if uses_cpu_platform(config):
        from strata.backends.cpu_platform import gpu_node_refusal  # imports verl: only when asked

        refusal = gpu_node_refusal(run_env(config))
        if refusal:
            yield Level.ERROR, refusal
        else:
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


def _settings_have_key(path: Path) -> bool:
    """Whether wandb's own settings file (INI, section ``[default]``, which ``wandb.setup`` loads into every
    run's settings) holds an ``api_key``."""
    parser = configparser.ConfigParser()
    try:
        parser.read(path)
    except configparser.Error:
        return False
    return bool(parser.get("default", "api_key", fallback=""))


def wandb_credentials(config: DictConfig) -> Iterator[tuple[Level, str]]:
    """wandb's credentials as wandb finds them: the key in the environment, an identity token file, the
    netrc entry for its host, or ``api_key`` in its settings file."""
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
    settings = Path(env.get("WANDB_CONFIG_DIR") or Path.home() / ".config" / "wandb") / "settings"
    token_file = env.get("WANDB_IDENTITY_TOKEN_FILE")
    if env.get("WANDB_API_KEY"):
        yield Level.OK, "wandb key in WANDB_API_KEY"
    elif token_file and Path(token_file).is_file():
        yield Level.OK, f"wandb identity token in WANDB_IDENTITY_TOKEN_FILE={token_file}"
    elif _netrc_has(host, netrc_path):
        yield Level.OK, f"wandb key for {host} in {netrc_path}"
    elif _settings_have_key(settings):
        yield Level.OK, f"wandb key in wandb's settings file {settings}"
    else:
        token = f", WANDB_IDENTITY_TOKEN_FILE={token_file} does not exist" if token_file else ""
        yield Level.ERROR, (
            f"trainer.logger has wandb but no credentials: no WANDB_API_KEY, no {host} entry in {netrc_path}, no "
            f"api_key in {settings}{token}. Run `wandb login`, export WANDB_API_KEY, set WANDB_MODE=offline, "
            "or drop wandb from trainer.logger."
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


def checkpoints_written(config: DictConfig) -> int | None:
    """How many checkpoints the run saves: every ``save_freq`` steps and at the last step; None when the step
    count is unknown."""
    save_freq = int(select(config, "trainer.save_freq", -1))
    if save_freq <= 0 or select(config, "trainer.val_only", False):
        return 0
    steps = _training_steps(config)
    return math.ceil(steps / save_freq) if steps is not None else None


def checkpoints_kept(config: DictConfig) -> int | None:
    """How many checkpoints the run holds on disk at the end; None when the step count is unknown.

    verl deletes the oldest ones beyond ``max_actor_ckpt_to_keep``; with it unset every checkpoint stays.
    """
    written = checkpoints_written(config)
    keep = select(config, "trainer.max_actor_ckpt_to_keep")
    if written == 0 or not keep:
        return written
    return min(int(keep), written) if written is not None else int(keep)


def checkpoints_at_peak(config: DictConfig) -> int | None:
    """The most checkpoints on disk at once: those kept, and with ``max_actor_ckpt_to_keep=1`` the previous
    one too while the next is written (verl deletes it only once the new save completes, in
    ``CheckpointManager.register_checkpoint``; with 2 or more it makes room before saving)."""
    kept = checkpoints_kept(config)
    if kept != 1 or int(select(config, "trainer.max_actor_ckpt_to_keep", 0)) != 1:
        return kept
    written = checkpoints_written(config)
    return 2 if written is None or written > 1 else 1


def checkpoint_bytes(params: int, save_contents: list[str], adapter: int = 0, lora_only: bool = False) -> int:
    """One actor checkpoint's size on disk, for ``params`` base parameters and an ``adapter`` of LoRA ones.

    What verl 0.9.1's FSDP checkpoint manager writes per rank: the model shard is the whole state dict --
    with LoRA, the frozen base too, in the training dtype (fp32), unless ``checkpoint.save_lora_only`` keeps
    only the adapter -- and the optimizer shard holds Adam's two fp32 moments for the trainable parameters
    only (the adapter with LoRA; frozen parameters get no state).
    """
    trainable = adapter or params
    per_part = {"model": (adapter if adapter and lora_only else params + adapter) * CHECKPOINT_BYTES_PER_PARAM["model"],
                "optimizer": trainable * CHECKPOINT_BYTES_PER_PARAM["optimizer"],
                "hf_model": params * CHECKPOINT_BYTES_PER_PARAM["hf_model"]}
    return sum(per_part.get(part, 0) for part in save_contents)


def _free_bytes(path: Path) -> int:
    while not path.exists():  # the folder is created at the first save: measure where it will be
        path = path.parent
    return shutil.disk_usage(path).free


def disk(config: DictConfig) -> Iterator[tuple[Level, str]]:
    out = Path(str(select(config, "trainer.default_local_dir", "checkpoints"))).absolute()
    free = _free_bytes(out)
    kept = checkpoints_at_peak(config)
    if kept == 0:
        yield Level.OK, f"no checkpoints to write; {free / GIB:.1f} GiB free at {out}"
        return
    folder = local_model_dir(str(select(config, "actor_rollout_ref.model.path", "")))
    params = parameter_count(folder) if folder is not None else None
    if params is None or kept is None:
        yield Level.OK, f"{free / GIB:.1f} GiB free at {out} (checkpoint size unknown: model or step count not local)"
        return
    contents = list(select(config, "actor_rollout_ref.actor.checkpoint.save_contents", ["model", "optimizer"]))
    rank = int(select(config, "actor_rollout_ref.model.lora_rank", 0))
    targets = select(config, "actor_rollout_ref.model.target_modules", "all-linear")
    adapter = (lora_params(folder, rank, targets) or 0) if rank > 0 else 0
    lora_only = bool(select(config, "actor_rollout_ref.actor.checkpoint.save_lora_only", False))
    one = checkpoint_bytes(params, contents, adapter, lora_only)
    need = one * kept
    lora = f" + a {adapter / 1e6:.1f}M-param LoRA adapter, Adam for the adapter only" if adapter else ""
    summary = (f"{kept} checkpoint(s) of ~{one / GIB:.1f} GiB ({params / 1e9:.2f}B params{lora}; "
               f"{'+'.join(c for c in contents if c in CHECKPOINT_BYTES_PER_PARAM)}) need ~{need / GIB:.1f} GiB")
    if need > free:
        fits = free // one if one else 0
        yield Level.WARNING, (
            f"{summary} at {out}, {free / GIB:.1f} GiB free: set trainer.max_actor_ckpt_to_keep={max(fits, 1)} "
            "or fewer, raise trainer.save_freq, free space, or move trainer.default_local_dir (CKPT=)."
        )
    else:
        yield Level.OK, f"{summary}, {free / GIB:.1f} GiB free at {out}"
