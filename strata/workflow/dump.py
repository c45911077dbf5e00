"""Trajectory dumps: everything one task's group did in a step, as compressed JSON Lines in the run folder.

Scalars say *that* success moved; reading the groups says *why*: which strategies were sampled and kept,
what each episode did step by step, what the judge flagged, and which advantage every response got.
`strata show RUN` renders them (terminal, or an HTML page of a whole step).

Layout: ``RUN/rollouts/<kind>/step_<NNNNNN>-<writer>.jsonl.gz``, ``kind`` being ``train`` or ``valid``
(validation before training is step 0). Every agent-loop worker process appends to its own file (one
gzip member per task), so writers never share a file; a resumed run that repeats a step writes new
files, and readers keep the newest line per task. One line is one task; the schema, with every key
always present (null where it does not apply), is :func:`task_record`'s output.

What is written is chosen by the ``run.dump`` config group (`DumpSettings`). A dump that cannot be
written (disk full, permissions) is logged and skipped: it never stops training.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strata.core.advantage import GroupAdvantages
from strata.core.gigpo import StepCredit
from strata.core.seeding import SEED_BITS, derive_seed
from strata.envs.tasks import Task
from strata.workflow.records import Step, StrategyRollout, TaskRollout, Trajectory
from strata.workflow.rows import is_environment_failure, scored_strategies, trained_trajectories

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
KINDS = ("train", "valid")


def dump_path(run_dir: str | Path, kind: str, step: int, writer: str) -> Path:
    """Where ``writer`` puts its ``kind`` dumps of ``step``."""
    return Path(run_dir) / "rollouts" / kind / f"step_{step:06d}-{writer}.jsonl.gz"


@dataclass(frozen=True)
class DumpSettings:
    """Which groups are dumped (the ``run`` config group).

    Args:
        run_dir: the run folder (``run.dir``); None turns dumps off.
        train_every: dump every k-th training step (0: no training dumps).
        train_task_share: share of a dumped step's tasks that are written, drawn per (step, task) by a
            seeded hash, so the same tasks are chosen again after a resume.
        validation: dump every validation episode.
        wandb_rows: with wandb among ``trainer.logger``, each dumped step's episodes (at most this many) are
            also logged as a ``wandb.Table`` (`strata.report.wandb_table`); 0: never.
    """

    run_dir: Path | None
    train_every: int = 10
    train_task_share: float = 1.0
    validation: bool = True
    wandb_rows: int = 64

    def __post_init__(self) -> None:
        for name in ("train_every", "wandb_rows"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"run.dump.{name} must be an integer >= 0, got {value!r}")
        if not 0.0 <= self.train_task_share <= 1.0:
            raise ValueError(f"run.dump.train_task_share must lie in [0, 1], got {self.train_task_share!r}")

    @classmethod
    def from_config(cls, run: Mapping[str, Any] | None) -> DumpSettings:
        run = run or {}
        dump = run.get("dump") or {}
        directory = run.get("dir")
        return cls(
            run_dir=Path(directory) if directory else None,
            train_every=int(dump.get("train_every", cls.train_every)),
            train_task_share=float(dump.get("train_task_share", cls.train_task_share)),
            validation=bool(dump.get("validation", cls.validation)),
            wandb_rows=int(dump.get("wandb_rows", cls.wandb_rows)),
        )

    def wants(self, kind: str, step: int, task: Task) -> bool:
        if self.run_dir is None:
            return False
        if kind == "valid":
            return self.validation
        if self.train_every == 0 or step % self.train_every:
            return False
        return derive_seed("dump", step, task.split, task.index) < self.train_task_share * 2**SEED_BITS


class DumpWriter:
    """Appends task records to this process's dump file of a step."""

    def __init__(self, settings: DumpSettings) -> None:
        self.settings = settings
        self.writer = f"{socket.gethostname()}-{os.getpid()}"
        self.failures = 0

    def maybe_write(self, kind: str, step: int, task: Task, record: Any) -> bool:
        """Write ``record()`` (built only when wanted) if the settings ask for this task; True if written."""
        if not self.settings.wants(kind, step, task):
            return False
        path = dump_path(self.settings.run_dir, kind, step, self.writer)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(path, "at", encoding="utf-8") as handle:
                handle.write(json.dumps(record(), ensure_ascii=False) + "\n")
        except OSError as error:
            self.failures += 1
            logger.warning("trajectory dump %s not written (%d so far): %s", path, self.failures, error)
            return False
        return True


def anchor_digest(observation: str) -> str:
    """A short, stable name of a GiGPO anchor (the first 12 hex digits of its SHA-256): equal anchors, equal names."""
    return hashlib.sha256(observation.encode("utf-8")).hexdigest()[:12]


def task_record(kind: str, step: int, algorithm: str, task: Task, rollout: TaskRollout,
                advantages: GroupAdvantages | None, credit_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """One task's group as a JSON-able dict (the dump schema). ``advantages`` is None for validation.

    GiGPO's training records carry ``credit_settings`` (γ, ω, mode, ... as the run used them) and every step
    its ``credit``: anchor digest, step group, step reward, discounted return, the two parts and the penalty,
    so its advantage can be recomputed from the dump alone (`strata.core.gigpo`). Both are null otherwise."""
    kept_rank = {index: rank for rank, index in enumerate(rollout.kept)}
    cosines = rollout.nearest_kept_cosine or [None] * len(rollout.candidates)
    candidates = [
        {"index": i, "text": c.generation.text, "strategy": c.strategy, "well_formed": c.well_formed,
         "kept": i in kept_rank, "kept_rank": kept_rank.get(i), "nearest_kept_cosine": cosines[i],
         "num_tokens": c.generation.num_tokens, "truncated": c.generation.truncated}
        for i, c in enumerate(rollout.candidates)
    ]
    scored = {id(s): k for k, s in enumerate(scored_strategies(rollout))}
    strategies = [
        _strategy_record(rollout.kept[i] if i < len(rollout.kept) else None, strategy,
                         scored.get(id(strategy)), advantages, rollout.initial_observation,
                         (credit_settings or {}).get("anchor") == "last_admitted")
        for i, strategy in enumerate(rollout.strategies)
    ]
    return {
        "schema": SCHEMA_VERSION, "kind": kind, "step": step, "mode": algorithm,
        "task": {"index": task.index, "game_file": task.game_file, "task_type": task.task_type,
                 "subtask": task.subtask, "split": task.split},
        "task_description": rollout.task_description,
        "initial_observation": rollout.initial_observation,
        "candidates": candidates,
        "strategies": strategies,
        "credit_settings": credit_settings if advantages is not None and advantages.step_credit is not None else None,
    }


def _strategy_record(candidate: int | None, strategy: StrategyRollout, scored: int | None,
                     advantages: GroupAdvantages | None, first_observation: str,
                     last_admitted: bool) -> dict[str, Any]:
    values = advantages is not None and scored is not None
    trained = {id(t): j for j, t in enumerate(trained_trajectories(strategy))} if values else {}
    trajectories = []
    for j, trajectory in enumerate(strategy.trajectories):
        position = trained.get(id(trajectory))
        base = advantages.trajectory_base[scored][position] if position is not None else None
        steps = advantages.actions[scored][position] if position is not None else None
        credit = (advantages.step_credit[scored][position]
                  if position is not None and advantages.step_credit is not None else None)
        trajectories.append(_trajectory_record(j, trajectory, base, steps, credit,
                                               trajectory.anchors(first_observation, last_admitted)))
    return {
        "candidate": candidate,
        "strategy": strategy.strategy,
        "score": advantages.strategy_scores[scored] if values else None,
        "advantage": advantages.strategy_base[scored] if values and strategy.candidate else None,
        "token_advantage": advantages.strategy[scored] if values and strategy.candidate else None,
        "dropped": advantages is not None and scored is None,
        "trajectories": trajectories,
    }


def _trajectory_record(index: int, trajectory: Trajectory, advantage: float | None,
                       step_advantages: list[float] | None, credit: list[StepCredit] | None,
                       anchors: list[str]) -> dict[str, Any]:
    flagged = set(trajectory.flagged_steps)
    judge = trajectory.judge
    return {
        "index": index, "won": trajectory.won, "reward": trajectory.reward, "end_reason": trajectory.end_reason,
        "score": trajectory.progress,
        "num_steps": trajectory.num_steps, "advantage": advantage, "trained": step_advantages is not None,
        "environment_failure": is_environment_failure(trajectory),
        "judge": None if judge is None else {
            "text": judge.text, "parsed": bool(trajectory.judge_parsed), "flagged_steps": sorted(flagged)},
        "steps": [_step_record(t, step, step_advantages[t - 1] if step_advantages is not None else None,
                               t in flagged, credit[t - 1] if credit is not None else None, anchor)
                  for t, (step, anchor) in enumerate(zip(trajectory.steps, anchors, strict=True), start=1)],
    }


def _step_record(number: int, step: Step, advantage: float | None, flagged: bool, credit: StepCredit | None,
                 anchor: str) -> dict[str, Any]:
    return {
        "step": number, "response": step.generation.text, "action": step.action,
        "command": step.command, "admissible": step.admissible, "observation": step.observation,
        "num_tokens": step.generation.num_tokens, "truncated": step.generation.truncated,
        "advantage": advantage, "flagged": flagged,
        "credit": None if credit is None else {
            "anchor": anchor_digest(anchor), "step_group": credit.step_group,
            "step_group_size": credit.step_group_size, "step_reward": credit.step_reward,
            "discounted_return": credit.discounted_return, "episode_part": credit.episode_part,
            "step_part": credit.step_part, "penalty": credit.penalty},
    }
