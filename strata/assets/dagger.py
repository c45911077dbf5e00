"""DAgger for a built ALFWorld agent: it plays its training games, the expert labels every state it reached, and it
is trained further on its warm-start examples and those labels together.

Why: the warm start shows only the expert's states, so the tiny agent has never been shown what to do where it
goes wrong; RL then has to discover it from episode rewards, and on new layouts it did not (held-out success flat
in every run, benchmarks/RESULTS_alfworld_learning.md). `strata.assets.relabel` turns the agent's own episodes
into examples of exactly those states.

The new agent is a folder of its own, next to its base (never written over): ``model/``, ``agent.json`` and the
task lists, whose games are those of the base (``data`` and ``rl_data`` link to the base's folders), so the
benchmark and the recipes take it like any built agent. Each round plays every warm-start training game once with
StraTA's prompts and once with the flat baseline's, at the trainer's validation sampling (where the agent's loops
happen), and never touches the RL games or the held-out ones. ``agent.json`` keeps the base's recipe and adds
``dagger``: each round's label counts, the fixed RL games' success before and after, and their paired change with
its 95% interval: the training-side reading by which DAgger is kept or not.

``checkpoint`` starts DAgger from an RL run's ``global_step_N`` instead of the base's own model (its actor's fp32
weights, exported by `strata.checkpoint.export`), on the base's games: the policy RL left is labelled where it
goes wrong, for instance where RL taught it to take the task's object on arrival whether or not it is there
(benchmarks/RESULTS_alfworld_learning.md). ``dagger.start`` records the step.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from strata.assets.alfworld_agent import (
    GAME_FOLDERS,
    MANIFEST,
    VALIDATION_SAMPLING,
    AgentRecipe,
    evaluate_agent,
    expert_traces,
    machine,
    tokenize_dialogues,
    trace_dialogues,
    training_mixture,
)
from strata.assets.relabel import relabel
from strata.assets.warm_start import Example
from strata.envs.pool import EnvPool
from strata.envs.tasks import Task
from strata.workflow.chat import ChatTokens

logger = logging.getLogger(__name__)

ROUND_KINDS = (("action", "strata"), ("action_grpo", "grpo"))
"""(example kind, algorithm whose prompts the agent plays with): StraTA's and the flat baseline's action prompts."""


class AgentFolderError(ValueError):
    """``--agent`` is not a folder that `strata build-alfworld-agent` completed."""


def read_agent(base: Path) -> tuple[dict[str, Any], AgentRecipe]:
    """A built agent's ``agent.json`` and the recipe it records.

    Raises:
        AgentFolderError: no folder, no ``agent.json`` (a build that did not finish), or one without a recipe.
    """
    if not base.is_dir():
        raise AgentFolderError(f"--agent {base} is not a folder: give one that strata build-alfworld-agent wrote")
    path = base / MANIFEST
    if not path.exists():
        raise AgentFolderError(f"{base} holds no built agent ({MANIFEST}): build one with strata build-alfworld-agent")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise AgentFolderError(f"{path} is not an agent's manifest: {error}") from None
    fields = manifest.get("recipe") if isinstance(manifest, dict) else None
    known = {f.name for f in dataclasses.fields(AgentRecipe)}
    if not isinstance(fields, dict) or not set(fields) <= known:
        raise AgentFolderError(f"{path} records no recipe strata build-alfworld-agent writes; rebuild the agent")
    try:
        return manifest, AgentRecipe(**fields)
    except (TypeError, ValueError) as error:
        raise AgentFolderError(f"{path} records a recipe strata build-alfworld-agent cannot build: {error}") from None


def linked_task_lists(base: Path, out: Path) -> dict[str, list[Task]]:
    """Link the base's game folders into ``out`` and write ``out``'s task lists, each game under ``out``."""
    from strata.envs.task_list import read_task_list, write_task_list

    for folder in sorted(set(GAME_FOLDERS.values())):
        if (base / folder).is_dir():
            (out / folder).symlink_to(base / folder, target_is_directory=True)
    splits = {}
    for name in GAME_FOLDERS:
        if (base / f"{name}.parquet").is_file():
            splits[name] = [dataclasses.replace(task, game_file=str(out / Path(task.game_file).relative_to(base)))
                            for task in read_task_list(base / f"{name}.parquet")]
            write_task_list(splits[name], out / f"{name}.parquet")
    return splits


def labelled_examples(chat: ChatTokens, labels: list[tuple[list[int], str]]) -> list[Example]:
    """Each (prompt, command) label as the rollout tokenises a reply: ``<action>command</action>``, then EOS."""
    eos = chat.tokenizer.eos_token_id
    return [Example(prompt, chat.tokenizer.encode(f"<action>{command}</action>", add_special_tokens=False) + [eos])
            for prompt, command in labels]


def paired_change(before: list[int], after: list[int]) -> str:
    """The mean per-game change of ``after`` over ``before`` and its 95% bootstrap interval, in points."""
    from strata.report.paired import bootstrap_mean

    return bootstrap_mean([b - a for a, b in zip(before, after, strict=True)]).as_points()


def dagger_alfworld_agent(base: str | Path, out: str | Path, rounds: int = 1, steps: int = 500,
                          checkpoint: str | Path | None = None) -> Path:
    """Write to ``out`` the agent of ``base`` (or of ``checkpoint``, an RL step from it) after ``rounds`` DAgger
    rounds of ``steps`` optimizer steps each (see the module docstring); return ``out``.

    Raises:
        AgentFolderError: ``base`` is not a built agent.
        CheckpointError: ``checkpoint`` is not a step whose weights can be read.
    """
    base, out = Path(base).resolve(), Path(out).resolve()
    manifest, recipe = read_agent(base)
    with tempfile.TemporaryDirectory(prefix="dagger-start-") as scratch:
        start = base / "model" if checkpoint is None else exported_actor(checkpoint, Path(scratch) / "model")
        dagger, after = run_rounds(base, start, out, recipe, rounds, steps)
    if checkpoint is not None:
        dagger["start"] = str(Path(checkpoint).resolve())
    (out / MANIFEST).write_text(json.dumps({**manifest, **after, "dagger": dagger, "machine": machine()}, indent=1)
                                + "\n", encoding="utf-8")
    return out


def exported_actor(checkpoint: str | Path, out: Path) -> Path:
    """The actor of an RL ``global_step_N`` as a model folder in fp32, the weights RL trained, not a bf16 copy."""
    import torch

    from strata.checkpoint.export import export_hf

    return export_hf(checkpoint, out, dtype=torch.float32)


def run_rounds(base: Path, start: Path, out: Path, recipe: AgentRecipe, rounds: int,
               steps: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The rounds from the model in ``start`` into ``out``: what ``agent.json`` records of them as ``dagger``, and
    the new agent's evaluation."""
    from transformers import AutoTokenizer

    from strata.assets.local_policy import play_evaluation
    from strata.assets.warm_start import fit_responses

    out.mkdir(parents=True, exist_ok=True)
    splits = linked_task_lists(base, out)
    train, train_fixed = splits["train"], splits.get("rl_train", [])[:recipe.rl_eval_games]
    chat = ChatTokens(AutoTokenizer.from_pretrained(start))
    began = time.perf_counter()
    with EnvPool(num_workers=recipe.workers, max_steps=recipe.max_steps) as pool:
        traces = asyncio.run(expert_traces(pool, train, recipe.orders_per_game, recipe.seed, recipe.slip_rate,
                                           recipe.search_order, recipe.misplaced_take_rate))
        examples = tokenize_dialogues(chat, trace_dialogues(
            recipe.strata_config().prompts.templates(), recipe.strata_config("grpo").prompts.templates(), traces,
            recipe.history_window))
        before = evaluate_agent(start, recipe, [], train_fixed, pool)
        model, relabelled, rounds_done = start, {kind: [] for kind, _ in ROUND_KINDS}, []
        for number in range(1, rounds + 1):
            counts = {}
            for kind, algorithm in ROUND_KINDS:
                config = recipe.strata_config(algorithm)
                rollouts = asyncio.run(play_evaluation(model, train, config, pool, recipe.max_steps,
                                                       VALIDATION_SAMPLING, seed=recipe.seed + number))
                labels = asyncio.run(relabel(pool, train, rollouts))
                relabelled[kind] += labelled_examples(chat, labels.labels)
                counts[kind] = labels.summary()
                logger.info("round %d, %s: %s", number, kind, counts[kind])
            model = fit_responses(model, out / "model", training_mixture(examples, recipe, relabelled),
                                  steps, recipe.lr, recipe.seed + number, recipe.negatives)
            rounds_done.append(counts)
        after = evaluate_agent(out / "model", recipe, splits["valid_seen"], train_fixed, pool)
    dagger = {"base": str(base), "rounds": rounds_done, "steps": steps,
              "before": {key: value for key, value in before.items() if not key.endswith("_situations")},
              "seconds": round(time.perf_counter() - began, 1)}
    if train_fixed:
        dagger["train_fixed_change"] = paired_change(before["train_fixed_won"], after["train_fixed_won"])
    return dagger, after
