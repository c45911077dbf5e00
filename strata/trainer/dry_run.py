"""The few lines that end ``--dry-run`` (``DRY_RUN=1`` in the recipes): what the run would use, read off the
resolved config above them, so a reader need not search ~1,100 lines of YAML for the model, the data, the
machine, the group sizes and where checkpoints go.

They are YAML comments (``# ...``): the output after the marker stays one YAML document for the tools that
parse it (`strata config-diff`, the recipe tests). Nothing here starts a process or reaches the network: the
model is looked up on disk and in the local Hugging Face cache only (`strata doctor` probes the hub).
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from strata.trainer.checks.base import select, uses_cpu_platform
from strata.trainer.checks.machine import checkpoints_kept
from strata.trainer.checks.model import HUB_ID, local_model_dir

HEADING = "# --- dry run: what this run would use (nothing was started; `strata doctor` checks this machine) ---"


def _files(value) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in (value or [])]


def _data_line(config: DictConfig, key: str) -> str:
    files = _files(select(config, f"data.{key}"))
    if not files:
        return f"not set (data.{key})"
    described = []
    for path in files:
        if "://" in path:
            described.append(f"{path} (remote)")
        elif not Path(path).exists():
            described.append(f"{path} (MISSING: strata prepare-data --out DIR, then DATA=DIR)")
        else:
            described.append(f"{path} ({_rows(path)})")
    return ", ".join(described)


def _rows(path: str) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException) as error:
        return f"present but UNREADABLE as a task list: {error}"
    return f"present, {rows} task(s)" if rows else "present but EMPTY: 0 tasks"


def _model_line(config: DictConfig) -> str:
    path = str(select(config, "actor_rollout_ref.model.path", ""))
    if not path:
        return "not set (actor_rollout_ref.model.path, MODEL=)"
    if Path(path).is_dir():
        found = local_model_dir(path) is not None
        return f"{path} (local folder{'' if found else ', MISSING config.json: not a Hugging Face model'})"
    if HUB_ID.match(path):
        try:
            cached = local_model_dir(path) is not None
        except Exception:  # noqa: BLE001 - huggingface_hub's cache lookup: the line only informs
            cached = False
        return f"{path} (hub id, {'cached here' if cached else 'not cached here: downloaded at start-up'})"
    return f"{path} (MISSING: no such folder, not a hub id; MODEL=)"


def _machine_line(config: DictConfig) -> str:
    nodes = select(config, "trainer.nnodes", 1)
    per_node = select(config, "trainer.n_gpus_per_node", 1)
    if uses_cpu_platform(config):
        return f"cpu platform (VERL_PLATFORM=cpu): {per_node} worker process(es) x {nodes} node(s), no GPU"
    return f"{per_node} GPU(s) per node x {nodes} node(s) = {_product(per_node, nodes)} GPU(s)"


def _product(a, b) -> str:
    return str(a * b) if isinstance(a, int) and isinstance(b, int) else "?"


def _groups_line(config: DictConfig) -> str | None:
    if "strata" not in config:
        return None
    tasks = select(config, "data.train_batch_size", "?")
    n, m, sigma = (select(config, f"strata.{key}", "?") for key in
                   ("num_stras_per_run", "num_trajs_per_stra", "num_cands_per_stra"))
    env = select(config, "env.name", "?")
    if select(config, "strata.algorithm") == "grpo":
        return f"GRPO on {env}: G={m} episodes per task, {tasks} task(s) per step"
    if select(config, "strata.algorithm") == "gigpo":
        gamma, omega = (select(config, f"strata.gigpo.{key}", "?") for key in ("gamma", "step_weight"))
        return (f"GiGPO on {env}: G={m} episodes per task, {tasks} task(s) per step, step-level credit over "
                f"shared anchors (γ={gamma}, ω={omega})")
    episodes = _product(n, m)
    candidates = _product(sigma, n)
    return (f"StraTA on {env}: N={n} strategies kept of σ·N={candidates} candidates (σ={sigma}), M={m} "
            f"trajectories each = {episodes} episodes per task, {tasks} task(s) per step")


def _steps_line(config: DictConfig) -> str:
    steps = select(config, "trainer.total_training_steps")
    if steps:
        return f"{steps} (trainer.total_training_steps)"
    return f"{select(config, 'trainer.total_epochs', '?')} epoch(s) over the training tasks"


def _checkpoints_line(config: DictConfig) -> str:
    folder = Path(str(select(config, "trainer.default_local_dir", "checkpoints"))).absolute()
    save_freq = select(config, "trainer.save_freq", -1)
    if not isinstance(save_freq, int) or save_freq <= 0:
        return f"none saved (trainer.save_freq={save_freq}); run folder {folder}"
    keep = select(config, "trainer.max_actor_ckpt_to_keep")
    retention = (f"keeps the newest {keep} (trainer.max_actor_ckpt_to_keep)" if keep else
                 "keeps every one (trainer.max_actor_ckpt_to_keep unset)")
    try:
        kept = checkpoints_kept(config)
    except Exception:  # noqa: BLE001 - an estimate from the task lists: the line still says the rule
        kept = None
    at_most = f", {kept} on disk at the end" if kept else ""
    resumes = folder.is_dir() and select(config, "trainer.resume_mode") == "auto"
    exists = ", the folder exists: trainer.resume_mode=auto resumes from its newest checkpoint" if resumes else ""
    return f"every {save_freq} step(s) and at the last to {folder}; {retention}{at_most}{exists}"


def _evaluation_line(config: DictConfig) -> str:
    """What a validation-only run (the evaluation recipes) evaluates: a training step it resumes, or the model."""
    if select(config, "trainer.resume_mode") == "resume_path":
        step = str(select(config, "trainer.resume_from_path", ""))
        state = "present" if Path(step).is_dir() else "MISSING: no such folder"
        return f"checkpoint {step} ({state}), validation only"
    return "the model above, validation only"


def summary_lines(config: DictConfig) -> list[str]:
    """The summary, one ``# label  value`` line each, under `HEADING`. A validation-only run (an evaluation
    recipe) says what it evaluates instead of how it would train."""
    if select(config, "trainer.val_only"):
        training = [("evaluates", _evaluation_line(config))]
    else:
        training = [("groups", _groups_line(config)), ("steps", _steps_line(config)),
                    ("checkpoints", _checkpoints_line(config))]
    rows = [
        ("model", _model_line(config)),
        ("train data", _data_line(config, "train_files")),
        ("val data", _data_line(config, "val_files")),
        *([("interim val data", _data_line(config, "interim_val_files"))]
          if select(config, "data.interim_val_files") else []),
        ("machine", _machine_line(config)),
        *training,
        ("experiment", f"{select(config, 'trainer.project_name', '?')}/"
                       f"{select(config, 'trainer.experiment_name', '?')}"),
    ]
    return [HEADING, *(f"# {label:<12}{value}" for label, value in rows if value is not None)]
