"""The release README: a model card written only from the run's own files.

Every number on the card is read, at the time the card is written, from the run's metric logs (training
curve), the evaluation JSONs (final table), the run's resolved config (hyperparameters, protocol) and the
release folder itself (files, training state). Nothing is typed by hand, so a card cannot drift from
the run it describes; re-running the command after a new evaluation updates it.

The YAML front matter carries what the Hugging Face Hub reads: ``license`` (given, else the base model's
own when its local folder says, else ``apache-2.0``: `DEFAULT_LICENSE`) and ``base_model`` (a Hub id: the
run's model path when it is one, the ``models--org--name`` of a Hub cache folder, or ``--base-model``). The
loading snippet is printed only when the card's folder holds the weights; otherwise the card says where
the run's checkpoints are and how to export them next to it.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strata.checkpoint.export import TRAINING_STATE_DIR
from strata.checkpoint.inspect import CheckpointInfo, describe_checkpoint, find_latest_checkpoint
from strata.envs.registry import About
from strata.report.config_diff import ConfigDiff, diff_configs
from strata.report.config_resolve import ConfigSource, resolve_config
from strata.report.curve import SUCCESS_KEY, Curve, extract_curve, plot_curve
from strata.report.eval_table import PERCENT, EvalReport, read_evaluations_by_split
from strata.report.logs import read_metrics
from strata.report.markdown import markdown_table
from strata.report.run_files import discover_run
from strata.workflow.environments import about

logger = logging.getLogger(__name__)

CURVE_IMAGE = "training_curve.png"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_HUB_CACHE_FOLDER = re.compile(r"^models--([A-Za-z0-9][\w.-]*)--([\w.-]+)$")  # huggingface_hub's cache layout
# The license of Qwen2.5-1.5B-Instruct and Qwen2.5-7B-Instruct, the base models of the recipes.
DEFAULT_LICENSE = "apache-2.0"
_WEIGHT_FILES = ("*.safetensors", "pytorch_model*.bin")
SHIPPED_PRESETS = "strata/core/prompts"
# StraTA's keys and the symbols the paper uses for them (docs/algorithm.md §1); other strata.* keys get none.
STRATA_SYMBOLS: dict[str, str] = {
    "strata.num_stras_per_run": "N",
    "strata.num_trajs_per_stra": "M",
    "strata.num_cands_per_stra": "σ",
    "strata.delta_coef": "δ",
    "strata.length_penalty.threshold": "λ",
    "strata.judge.kappa": "κ",
    "strata.format_penalty": "f",
    "strata.max_tokens_per_response": "L_max",
}
# verl keys that, with StraTA's, define what was optimised (shown when the config has them).
OPTIMISATION_KEYS: tuple[str, ...] = (
    "algorithm.adv_estimator",
    "data.train_batch_size",
    "actor_rollout_ref.actor.ppo_mini_batch_size",
    "actor_rollout_ref.actor.ppo_epochs",
    "actor_rollout_ref.actor.optim.lr",
    "actor_rollout_ref.actor.optim.weight_decay",
    "actor_rollout_ref.actor.clip_ratio",
    "actor_rollout_ref.actor.loss_agg_mode",
    "actor_rollout_ref.actor.use_kl_loss",
    "actor_rollout_ref.actor.kl_loss_coef",
    "actor_rollout_ref.actor.kl_loss_type",
    "actor_rollout_ref.actor.entropy_coeff",
    "actor_rollout_ref.rollout.n",
    "actor_rollout_ref.rollout.temperature",
    "data.max_prompt_length",
    "data.max_response_length",
    "env.max_steps",
    "trainer.total_training_steps",
    "trainer.test_freq",
    "trainer.nnodes",
    "trainer.n_gpus_per_node",
)


def environment_of(config: dict[str, Any]) -> About:
    """How the card speaks of the environment the run played (``env.name``): what the environment says of itself."""
    return about(str(config.get("env.name", "alfworld")))


@dataclass(frozen=True)
class Algorithm:
    """How the card names the algorithm that trained the model (``strata.algorithm``)."""

    name: str  # the title's
    training: str  # the summary table's
    method: str  # the opening sentence's
    tag: str  # the front matter's
    flat: bool  # no strategy level: one trajectory per evaluated task


ALGORITHMS = {
    "strata": Algorithm("StraTA", "StraTA", "StraTA (hierarchical GRPO over strategies and trajectories)", "strata",
                        flat=False),
    "grpo": Algorithm("GRPO", "GRPO (flat baseline)",
                      "the flat GRPO baseline (one group of episodes per task, no strategy)", "grpo", flat=True),
    "gigpo": Algorithm("GiGPO", "GiGPO (flat baseline, step-level credit)",
                       "GiGPO (one group of episodes per task, no strategy; episode-level and step-level credit over "
                       "steps taken on the same observation)", "gigpo", flat=True),
}


def algorithm_of(config: dict[str, Any]) -> Algorithm:
    """The algorithm the run trained (``strata.algorithm``, StraTA when unset)."""
    return ALGORITHMS[str(config.get("strata.algorithm", "strata"))]


@dataclass(frozen=True)
class CardInputs:
    """Everything the card shows, already read from the run's files.

    Args:
        name: the model's name (card title).
        config: the run's resolved config, flat.
        curve: the validation curve from the logs.
        evaluations: the final evaluation across seeds, one report per split (the first leads the summary).
        diff: the run's config against the recipe it claims to follow (None: no recipe given).
        release_files: (relative path, bytes) of every file in the release folder.
        training_state: the step folder under ``training_state/`` of the release, if there is one.
        curve_image: the plot's file name next to the README, if written.
        license: the front matter's ``license`` (a Hub license id).
        base_model: the base model's Hub id for the front matter; None when it is not on the Hub.
        release_path: the card's folder as the user named it (the loading snippet's path).
        has_weights: whether that folder holds a loadable model (config.json and weights).
        latest_checkpoint: the run's newest complete ``global_step_N``, for the export hint; None if none.
        zero_variance: per level (``strategy``, ``trajectory``), the mean over the logged training steps of the
            share of advantage groups without reward variance (``strata/zero_var_<level>_groups``); empty when the
            logs hold none.
    """

    name: str
    config: dict[str, Any]
    curve: Curve
    evaluations: tuple[EvalReport, ...]
    diff: ConfigDiff | None
    release_files: tuple[tuple[str, int], ...]
    training_state: CheckpointInfo | None
    curve_image: str | None
    license: str = DEFAULT_LICENSE
    base_model: str | None = None
    release_path: str = "."
    has_weights: bool = False
    latest_checkpoint: str | None = None
    zero_variance: dict[str, float] = field(default_factory=dict)


def render_model_card(inputs: CardInputs) -> str:
    """The README text (Markdown with a YAML front matter the Hugging Face Hub reads)."""
    sections = [
        _front_matter(inputs),
        _summary(inputs),
        _evaluation(inputs),
        _training_curve(inputs),
        _hyperparameters(inputs.config),
        _differences(inputs.diff),
        _usage(inputs),
        _files(inputs.release_files),
    ]
    return "\n\n".join(section.strip() for section in sections if section) + "\n"


def write_model_card(
    run_dir: str | Path,
    evaluations: Sequence[str | Path],
    out: str | Path,
    recipe: ConfigSource | None = None,
    name: str | None = None,
    metric: str = SUCCESS_KEY,
    logs: Sequence[str | Path] = (),
    config: str | Path | None = None,
    license_id: str | None = None,
    base_model: str | None = None,
) -> Path:
    """Read the run's files, plot the curve next to ``out`` and write the card to ``out`` (a README.md).

    ``name`` defaults to the run's ``trainer.experiment_name``; ``license`` to the base model's (read from its
    local folder) or `DEFAULT_LICENSE` (``license_id``); ``base_model`` (a Hub id) to what the run's model path says.
    """
    run = discover_run(run_dir, config=config, logs=tuple(logs))
    run_config = resolve_config(ConfigSource(str(run.config)))
    if not any(key.startswith("strata.") for key in run_config):
        raise ValueError(f"{run.config} has no `strata.*` keys: not the config of a run of strata's trainer, which "
                         "writes RUN/config.yaml when it starts (pass the run's own with --config)")
    metrics = read_metrics(run.logs)
    curve = extract_curve(metrics, metric)
    reports = read_evaluations_by_split(evaluations)
    diff = None
    if recipe is not None:
        diff = diff_configs(resolve_config(recipe), run_config, label_a=f"recipe {recipe.label}",
                            label_b=f"this run ({run.config})")
    out = Path(out)
    release = out.parent
    release.mkdir(parents=True, exist_ok=True)
    name = name or str(run_config.get("trainer.experiment_name") or release.resolve().name)
    plot_curve(curve, release / CURVE_IMAGE, title=f"{name}: {algorithm_of(run_config).name} on "
                                                   f"{environment_of(run_config).title}")
    training_state = find_latest_checkpoint(release / TRAINING_STATE_DIR)
    model_path = str(run_config.get("actor_rollout_ref.model.path") or "")
    checkpoints = run_config.get("trainer.default_local_dir")
    latest = find_latest_checkpoint(checkpoints) if checkpoints and Path(str(checkpoints)).is_dir() else None
    inputs = CardInputs(
        name=name,
        config=run_config,
        curve=curve,
        evaluations=reports,
        diff=diff,
        release_files=_list_files(release, skip=out),
        training_state=describe_checkpoint(training_state) if training_state else None,
        curve_image=CURVE_IMAGE,
        license=license_id or base_model_license(model_path) or DEFAULT_LICENSE,
        base_model=base_model or hub_id_of(model_path),
        release_path=str(release),
        has_weights=holds_weights(release),
        latest_checkpoint=str(latest) if latest else None,
        zero_variance=_zero_variance_means(metrics),
    )
    out.write_text(render_model_card(inputs))
    return out


def hub_id_of(model_path: str) -> str | None:
    """The Hub id a model path stands for: the path itself when it is an id (not a local folder), the
    ``models--org--name`` folder of a Hugging Face cache snapshot, else None (a local model of its own)."""
    if not model_path:
        return None
    if _HUB_ID.match(model_path) and not Path(model_path).exists():
        return model_path
    for part in reversed(Path(model_path).parts):
        match = _HUB_CACHE_FOLDER.match(part)
        if match:
            return f"{match.group(1)}/{match.group(2)}"
    return None


def base_model_license(model_path: str) -> str | None:
    """The ``license:`` of the base model's own README front matter, when its folder is here."""
    readme = Path(model_path) / "README.md" if model_path else None
    if readme is None or not readme.is_file():
        return None
    text = readme.read_text(encoding="utf-8", errors="replace")
    front = text.split("---", 2)[1] if text.startswith("---") and text.count("---") >= 2 else ""
    match = re.search(r"^license:\s*([\w.-]+)\s*$", front, flags=re.M)
    return match.group(1) if match else None


def holds_weights(folder: Path) -> bool:
    """Whether ``folder`` is a loadable Hugging Face model: a config.json and weight files."""
    return (folder / "config.json").is_file() and any(any(folder.glob(pattern)) for pattern in _WEIGHT_FILES)


def is_cpu_run(config: dict[str, Any]) -> bool:
    """The run used verl's cpu platform (``+platform=cpu``), where ``n_gpus_per_node`` counts worker processes."""
    return (config.get("ray_kwargs.ray_init.runtime_env.env_vars.VERL_PLATFORM") == "cpu"
            or config.get("trainer.device") == "cpu")


def platform_line(config: dict[str, Any]) -> str:
    per_node, nodes = config.get("trainer.n_gpus_per_node", "?"), config.get("trainer.nnodes", 1)
    if is_cpu_run(config):
        return f"CPU (verl's cpu platform, no GPU): {per_node} worker process(es) x {nodes} node(s)"
    return f"{per_node} GPU(s) per node x {nodes} node(s)"


def prompts_source(preset: str) -> str:
    """Where the run's prompt templates are: a shipped preset's file, or the run's own preset file."""
    if "/" in preset or preset.endswith((".yaml", ".yml")):
        return f"`{preset}` (the run's own preset file)"
    return f"`{SHIPPED_PRESETS}/{preset}.yaml`"


def _front_matter(inputs: CardInputs) -> str:
    tags = ["reinforcement-learning", "llm-agent", environment_of(inputs.config).tag,
            algorithm_of(inputs.config).tag, "verl"]
    lines = ["---", "library_name: transformers", "pipeline_tag: text-generation", f"license: {inputs.license}"]
    if inputs.base_model:
        lines.append(f"base_model: {inputs.base_model}")  # a Hub id (org/name), never a local path
    else:
        model = inputs.config.get("actor_rollout_ref.model.path")
        lines.append(f"# base_model: none on the Hub: the run started from the local folder {model} "
                     "(strata model-card --base-model ORG/NAME names one)")
    lines += [f"tags: [{', '.join(tags)}]", "---"]
    return "\n".join(lines)


def _base_model_cell(inputs: CardInputs) -> str:
    path = str(inputs.config.get("actor_rollout_ref.model.path"))
    hub = inputs.base_model
    link = f"[{hub}](https://huggingface.co/{hub})" if hub else None
    if hub and path == hub:
        return link
    folder = Path(path)
    if not folder.is_dir():
        where = "a local path not present on this machine"
    else:
        from strata.trainer.checks.model import parameter_count

        described = []
        config_file = folder / "config.json"
        if config_file.is_file():
            architectures = json.loads(config_file.read_text()).get("architectures") or []
            described += [str(a) for a in architectures[:1]]
            params = parameter_count(folder)
            if params:
                described.append(f"{params / 1e9:.2f}B parameters" if params >= 1e8 else f"{params / 1e6:.2f}M "
                                                                                          "parameters")
        where = "a local folder" + (f" ({', '.join(described)})" if described else "")
    if link:
        return f"{link}, loaded from {where}: `{path}`"
    return f"{where}, not a Hub model: `{path}`"


def _summary(inputs: CardInputs) -> str:
    config, report = inputs.config, inputs.evaluations[0]
    last_step = inputs.curve.steps[-1]
    total = config.get("trainer.total_training_steps")
    environment = environment_of(config)
    algorithm = algorithm_of(config)
    rows = [
        ["base model", _base_model_cell(inputs)],
        ["training", f"{algorithm.training} on {environment.title}, {last_step} logged steps"
                     + (f" of {total} configured" if total is not None else "")],
        ["platform", platform_line(config)],
        ["prompts", prompts_source(str(config.get("strata.prompts.preset", "alfworld")))],
        *([f"success rate on `{split.split}`", f"{PERCENT.mean_std(split.overall)} % ({len(split.seeds)} "
                                               f"seed(s), {split.overall.num_tasks} tasks)"]
          for split in inputs.evaluations),
        ["format rate", _plain(report.format_rate.mean, 3)],
        ["mean episode length", f"{_plain(report.mean_episode_length.mean, 1)} steps"],
    ]
    rank = config.get("actor_rollout_ref.model.lora_rank") or 0
    if rank > 0:
        rows.append(["adapter", f"LoRA rank {rank}, alpha {config.get('actor_rollout_ref.model.lora_alpha')} on "
                                f"`{config.get('actor_rollout_ref.model.target_modules')}`, merged into these "
                                f"weights by `strata export` (alone in `lora_adapter/`)"])
    if inputs.zero_variance:
        rows.append(["groups without reward variance (training, mean over steps)",
                     ", ".join(f"{level} {PERCENT(share)} %" for level, share in inputs.zero_variance.items())])
    if report.step is not None:
        rows.append(["evaluated checkpoint", f"step {report.step}"])
    title = f"{inputs.name}: {algorithm.name} on {environment.title}"
    text = (f"# {title}\n\nA language-model agent for {environment.description} trained with {algorithm.method} "
            f"on verl.\n\n" + markdown_table(["", ""], rows, align_right_from=2))
    if inputs.training_state and report.step is not None and inputs.training_state.step != report.step:
        text += (f"\n\n> Note: the evaluated checkpoint is step {report.step} but `training_state/` holds step "
                 f"{inputs.training_state.step}.")
    return text


def _zero_variance_means(metrics: dict[int, dict[str, float]]) -> dict[str, float]:
    means = {}
    for level in ("strategy", "trajectory"):
        shares = [values[f"strata/zero_var_{level}_groups"] for values in metrics.values()
                  if f"strata/zero_var_{level}_groups" in values]
        if shares:
            means[level] = sum(shares) / len(shares)
    return means


def _evaluation(inputs: CardInputs) -> str:
    config = inputs.config
    sampling = ", ".join(f"{name} {config[key]}" for name, key in (
        ("temperature", "actor_rollout_ref.rollout.val_kwargs.temperature"),
        ("top_p", "actor_rollout_ref.rollout.val_kwargs.top_p"),
        ("top_k", "actor_rollout_ref.rollout.val_kwargs.top_k"),
    ) if key in config)
    horizon = config.get("env.max_steps")
    splits = [f"Split `{report.split}`, {report.overall.num_tasks} tasks "
              f"({', '.join(f'{row.name} {row.num_tasks}' for row in report.success[:-1])}); one episode per task "
              f"and seed (seeds {', '.join(map(str, report.seeds))})." for report in inputs.evaluations]
    caveats = [
        f"One trajectory per task, straight from the task ({algorithm_of(config).name} has no strategy)."
        if algorithm_of(config).flat
        else "One strategy, then one trajectory conditioned on it, per task: no oversampling, no diverse "
        "selection and no self-judgment at evaluation (those are training-time only).",
        f"Sampling as in the run's config: {sampling or 'see actor_rollout_ref.rollout.val_kwargs'}"
        + (f"; at most {horizon} environment steps per episode." if horizon is not None else "."),
        *splits,
        "Success is the environment's own `won` flag; format rate counts responses with a well-formed tag.",
        f"Compare only with results on the same split, protocol and {environment_of(config).comparable}.",
    ]
    if len(inputs.evaluations) == 1:
        tables = inputs.evaluations[0].to_markdown()
    else:
        tables = "\n\n".join(f"### `{report.split}`\n\n{report.to_markdown()}" for report in inputs.evaluations)
    return ("## Evaluation\n\n" + tables + "\n\n### Protocol and caveats\n\n"
            + "\n".join(f"- {line}" for line in caveats))


def _training_curve(inputs: CardInputs) -> str:
    curve = inputs.curve
    best_step, best = curve.best
    final_step, final = curve.final
    image = f"![validation success rate per step]({inputs.curve_image})\n\n" if inputs.curve_image else ""
    return (f"## Training curve\n\n{image}Validation `{curve.key}` (%) during training, as logged by the "
            f"trainer: best {100 * best:.2f} at step {best_step}, last {100 * final:.2f} at step {final_step}.\n\n"
            + curve.to_markdown())


def _hyperparameters(config: dict[str, Any]) -> str:
    """StraTA's keys and the optimisation keys; on the cpu platform ``n_gpus_per_node`` says it counts processes."""
    strata_keys = [key for key in config if key.startswith("strata.")]
    parts = ["## Hyperparameters"]
    rows = [[f"`{key}`", STRATA_SYMBOLS.get(key, ""), _value(config[key])] for key in strata_keys]
    parts.append("StraTA (`strata.*` of the run's config):\n\n"
                 + markdown_table(["key", "symbol", "value"], rows, align_right_from=2))
    rows = [[f"`{key}`", _value(config[key]) + (" (worker processes: CPU run, no GPU)"
                                                if key == "trainer.n_gpus_per_node" and is_cpu_run(config) else "")]
            for key in OPTIMISATION_KEYS if key in config]
    parts.append("Optimisation and rollout (verl):\n\n" + markdown_table(["key", "value"], rows, align_right_from=1))
    return "\n\n".join(parts)


def _differences(diff: ConfigDiff | None) -> str:
    if diff is None:
        return ("## Differences from the recipe\n\nNo recipe was given when this card was written "
                "(`strata model-card --recipe ...`), so differences are not listed.")
    return ("## Differences from the recipe\n\nInfrastructure keys change speed and memory only; "
            "algorithm/optimisation keys change what is learned.\n\n" + diff.to_markdown())


def _usage(inputs: CardInputs) -> str:
    if not inputs.has_weights:
        return _no_weights(inputs)
    preset = str(inputs.config.get("strata.prompts.preset", "alfworld"))
    prompts = prompts_source(preset).replace("`", "")
    text = f"""## Usage

```python
from transformers import AutoModelForCausalLM, AutoTokenizer

path = "{inputs.release_path}"  # this folder, or its Hub id once uploaded
tokenizer = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path, dtype="auto")
messages = [{{"role": "user", "content": "..."}}]  # the run's prompts: {prompts}
inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
output = model.generate(**inputs, max_new_tokens=512, do_sample=True, temperature=0.7, top_p=0.8, top_k=20)
print(tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True))
```"""
    state = inputs.training_state
    if state is not None:
        text += (f"\n\nTo continue training, `training_state/` is a verl checkpoint root (step {state.step}, "
                 f"saved at world size {state.world_size}):\n\n```bash\npython -m strata.trainer.main "
                 f"trainer.resume_mode=auto trainer.default_local_dir=<this folder>/training_state ...\n"
                 f"# on another number of GPUs, first: strata reshard --checkpoint "
                 f"<this folder>/training_state/global_step_{state.step} --world-size W --out NEW_ROOT\n```")
    return text


def _no_weights(inputs: CardInputs) -> str:
    """What to do when the card's folder holds no model: where the run's weights are and how to export them."""
    text = ("## Weights\n\nThis folder holds the card and its curve only, not the model's weights, so there is "
            "nothing to load from it.")
    save_freq = inputs.config.get("trainer.save_freq")
    if inputs.latest_checkpoint:
        text += (f" The run's newest checkpoint is `{inputs.latest_checkpoint}`; export it as a Hugging Face "
                 f"model and write the card beside it:\n\n```bash\nstrata export --checkpoint "
                 f"{inputs.latest_checkpoint} --out RELEASE --release\nstrata model-card --run-dir RUN_DIR "
                 f"--out RELEASE/README.md\n```")
    elif isinstance(save_freq, int) and save_freq <= 0:
        text += f" The run saved no checkpoint (`trainer.save_freq={save_freq}`), so its weights were not kept."
    else:
        where = inputs.config.get("trainer.default_local_dir")
        text += (f" No complete checkpoint was found in the run's checkpoint folder `{where}` when this card was "
                 "written; once there is one, `strata export --checkpoint .../global_step_N --out RELEASE` writes "
                 "the model, and `strata model-card --out RELEASE/README.md` the card beside it.")
    return text


def _files(files: tuple[tuple[str, int], ...]) -> str:
    """One row per file; the training state (many per-rank shards) as one row per step folder."""
    rows: list[list[str]] = []
    state: dict[str, list[int]] = {}
    for name, size in files:
        parts = Path(name).parts
        if parts[0] == TRAINING_STATE_DIR and len(parts) > 2:
            state.setdefault(f"{parts[0]}/{parts[1]}/", []).append(size)
        else:
            rows.append([f"`{name}`", _size(size)])
    for folder, sizes in state.items():
        rows.append([f"`{folder}`", f"{_size(sum(sizes))} in {len(sizes)} files (FSDP shards, data.pt, config)"])
    rows.append(["`README.md`", "this card"])
    return "## Files\n\n" + markdown_table(["file", "size"], rows)


def _list_files(folder: Path, skip: Path) -> tuple[tuple[str, int], ...]:
    return tuple((str(path.relative_to(folder)), path.stat().st_size) for path in sorted(folder.rglob("*"))
                 if path.is_file() and path.resolve() != skip.resolve())


def _size(size: int) -> str:
    """Bytes in binary units: 512 B, 1.5 KiB, 18.7 MiB, 3.1 GiB."""
    if size < 1024:
        return f"{size} B"
    exponent = min(3, int(math.log(size, 1024)))
    return f"{size / 1024 ** exponent:.1f} {('KiB', 'MiB', 'GiB')[exponent - 1]}"


def _plain(value: float, digits: int) -> str:
    return f"{value:.{digits}f}"


def _value(value: Any) -> str:
    return f"`{value}`"
