"""The evaluation JSON: what one evaluation run (one seed, one split) writes, and every report reads.

The trainer's evaluation recipe writes one file per seed; ``strata report-eval`` combines them and
``strata model-card`` quotes them, so the numbers in a release come from this file and nothing else.
The file checks itself when read: rates in [0, 1], known subtasks, per-subtask counts that add up to
``num_tasks`` and a ``success_rate`` equal to the task-weighted mean of the subtasks', so a hand-edited
or truncated file fails loudly instead of producing a wrong table.

Example (``schema_version`` 1)::

    {"schema_version": 1, "seed": 0, "split": "valid_seen", "num_tasks": 140, "success_rate": 0.8643,
     "per_subtask": {"pick": {"success_rate": 0.9714, "num_tasks": 35}, ...},
     "format_rate": 1.0, "mean_episode_length": 13.2,
     "end_reasons": {"won": 121, "step_limit": 17, "lost": 0, "token_budget": 2, "environment_failure": 0},
     "checkpoint": "checkpoints/global_step_150", "step": 150}

``score`` (ScienceWorld, WebShop), ``end_reasons``, ``task_list_sha256``, ``task_set``, ``max_steps`` and ``episodes``
(each task's outcome, which pass@k over seeds needs: ``[{"task": 0, "subtask": "pick", "won": true}, ...]``) are
optional.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strata.envs.registry import environment_subtasks

# Every subtask an evaluation may hold, in table order: ALFWorld's six, ScienceWorld's 30 task types, then
# WebShop's one. The names do not overlap, so one evaluation's subtasks keep its environment's order.
ALL_SUBTASKS: tuple[str, ...] = tuple(name for subtasks in environment_subtasks().values() for name in subtasks)

SCHEMA_VERSION = 1
OPTIONAL_FIELDS = ("score", "end_reasons", "task_list_sha256", "task_set", "max_steps", "episodes")
"""Fields a file may leave out (older files, or what an evaluation could not know)."""
OVERALL = "all"
_CONSISTENCY_TOLERANCE = 1e-6


class EvalSchemaError(ValueError):
    """An evaluation file does not follow the schema; the message names the file and the field."""


@dataclass(frozen=True)
class SubtaskResult:
    """Success on the tasks of one subtask.

    Args:
        success_rate: share of the subtask's tasks won, in [0, 1].
        num_tasks: how many of the split's tasks belong to the subtask.
        score: mean progress score in [0, 1] where the environment has one (ScienceWorld), else None.
    """

    success_rate: float
    num_tasks: int
    score: float | None = None


@dataclass(frozen=True)
class TaskOutcome:
    """One evaluated task's episode: its index in the task list, its subtask and whether it was won."""

    task: int
    subtask: str
    won: bool


@dataclass(frozen=True)
class EvalResult:
    """One evaluation of one checkpoint with one seed on one split (docs/algorithm.md §3 protocol).

    Args:
        seed: sampling seed of this evaluation.
        split: ALFWorld split (``valid_seen``: 140 games, ``valid_unseen``: 134).
        num_tasks: tasks evaluated (one episode each).
        success_rate: share of tasks won (``val/average/metrics/success_rate``).
        per_subtask: per subtask, its success rate and task count; subtasks absent from the split are left out.
        format_rate: share of responses with a well-formed tag.
        mean_episode_length: mean environment steps per episode.
        end_reasons: how many episodes ended each way (``val/end_reason/*``: won, step_limit, lost,
            token_budget, environment_failure); they add up to ``num_tasks`` and ``won`` matches the success
            rate. None in files written before it was recorded.
        score: mean progress score in [0, 1] (``val/average/metrics/score``) where the environment has one
            (ScienceWorld), else None.
        checkpoint: the evaluated checkpoint (path or name), None when unknown.
        step: its training step, None when unknown.
        task_list_sha256: `strata.envs.task_list.task_list_digest` of the evaluated task list (which games, in
            which order), None when it was not given.
        task_set: which tasks these are, in words, where the environment says more than the split does (WebShop:
            its goal kind, catalogue and goal indices), else None.
        max_steps: the horizon H the episodes ran with (``env.max_steps`` of the run's config), None when unknown:
            ScienceWorld numbers at H = 50 and at AgentGym's 30 are not the same measurement.
        episodes: each task's outcome, by task index (from the run's validation dumps), None when they were
            not read; they must agree with the per-subtask counts and rates.
        schema_version: version of this format.
    """

    seed: int
    split: str
    num_tasks: int
    success_rate: float
    per_subtask: dict[str, SubtaskResult]
    format_rate: float
    mean_episode_length: float
    score: float | None = None
    end_reasons: dict[str, int] | None = None
    checkpoint: str | None = None
    step: int | None = None
    task_list_sha256: str | None = None
    task_set: str | None = None
    max_steps: int | None = None
    episodes: tuple[TaskOutcome, ...] | None = None
    schema_version: int = field(default=SCHEMA_VERSION)

    def __post_init__(self) -> None:
        _check_int(self.seed, "seed")
        _check_int(self.num_tasks, "num_tasks", minimum=1)
        _check_rate(self.success_rate, "success_rate")
        _check_rate(self.format_rate, "format_rate")
        if not isinstance(self.mean_episode_length, int | float) or not self.mean_episode_length >= 0:
            raise EvalSchemaError(f"mean_episode_length must be a number >= 0, got {self.mean_episode_length!r}")
        if self.schema_version != SCHEMA_VERSION:
            raise EvalSchemaError(f"schema_version {self.schema_version} is not supported (expected "
                                  f"{SCHEMA_VERSION}); regenerate the file with this version of strata")
        unknown = sorted(set(self.per_subtask) - set(ALL_SUBTASKS))
        if unknown:
            raise EvalSchemaError(f"per_subtask has unknown subtasks {unknown}; known: {', '.join(ALL_SUBTASKS)}")
        if self.score is not None:
            _check_rate(self.score, "score")
        if self.end_reasons is not None:
            self._check_end_reasons()
        if self.task_list_sha256 is not None and not re.fullmatch(r"[0-9a-f]{64}", str(self.task_list_sha256)):
            raise EvalSchemaError(f"task_list_sha256 must be 64 lowercase hex digits, got {self.task_list_sha256!r}")
        if self.max_steps is not None:
            _check_int(self.max_steps, "max_steps", minimum=1)
        if self.episodes is not None:
            self._check_episodes()
        for name, result in self.per_subtask.items():
            _check_rate(result.success_rate, f"per_subtask.{name}.success_rate")
            if result.score is not None:
                _check_rate(result.score, f"per_subtask.{name}.score")
            _check_int(result.num_tasks, f"per_subtask.{name}.num_tasks", minimum=1)
        if self.per_subtask:
            total = sum(result.num_tasks for result in self.per_subtask.values())
            if total != self.num_tasks:
                raise EvalSchemaError(f"per_subtask task counts add up to {total}, but num_tasks is "
                                      f"{self.num_tasks}")
            weighted = sum(r.success_rate * r.num_tasks for r in self.per_subtask.values()) / total
            if abs(weighted - self.success_rate) > _CONSISTENCY_TOLERANCE:
                raise EvalSchemaError(f"success_rate {self.success_rate} is not the task-weighted mean of the "
                                      f"per-subtask rates ({weighted:.6f})")

    def _check_end_reasons(self) -> None:
        if not isinstance(self.end_reasons, dict):
            raise EvalSchemaError(f"end_reasons must map reasons to episode counts, got {self.end_reasons!r}")
        for reason, count in self.end_reasons.items():
            _check_int(count, f"end_reasons.{reason}", minimum=0)
        if sum(self.end_reasons.values()) != self.num_tasks:
            raise EvalSchemaError(f"end_reasons add up to {sum(self.end_reasons.values())} episodes, but num_tasks "
                                  f"is {self.num_tasks}")
        won = self.end_reasons.get("won", 0)
        if abs(won - self.success_rate * self.num_tasks) > _CONSISTENCY_TOLERANCE * self.num_tasks:
            raise EvalSchemaError(f"end_reasons.won is {won} but success_rate x num_tasks is "
                                  f"{self.success_rate * self.num_tasks:.3f}")

    def _check_episodes(self) -> None:
        """One outcome per task, each task once, and per subtask as many tasks and wins as the rates say."""
        for episode in self.episodes:
            _check_int(episode.task, "episodes.task", minimum=0)
            if not isinstance(episode.won, bool):
                raise EvalSchemaError(f"episodes.won must be true or false, got {episode.won!r}")
        if len({e.task for e in self.episodes}) != len(self.episodes) or len(self.episodes) != self.num_tasks:
            raise EvalSchemaError(f"episodes must hold each of the {self.num_tasks} tasks once, got "
                                  f"{len(self.episodes)} outcomes of {len({e.task for e in self.episodes})} tasks")
        for name, result in self.per_subtask.items():
            mine = [e.won for e in self.episodes if e.subtask == name]
            if len(mine) != result.num_tasks or abs(sum(mine) - result.success_rate * result.num_tasks) > 1e-6:
                raise EvalSchemaError(f"episodes of {name}: {sum(mine)} won of {len(mine)}, but per_subtask says "
                                      f"{result.success_rate * result.num_tasks:.3f} of {result.num_tasks}")

    @property
    def outcomes(self) -> dict[int, TaskOutcome]:
        """Task index -> its outcome; empty when the file records none."""
        return {e.task: e for e in self.episodes or ()}

    def to_dict(self) -> dict[str, Any]:
        """The JSON object; the optional fields (`OPTIONAL_FIELDS`) appear only where they were recorded."""
        data = {name: value for name, value in asdict(self).items()
                if not (name in OPTIONAL_FIELDS and value is None)}
        data["per_subtask"] = {name: _without_missing_score(data["per_subtask"][name])
                               for name in ALL_SUBTASKS if name in self.per_subtask}
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalResult:
        if not isinstance(data, dict):
            raise EvalSchemaError(f"an evaluation must be a JSON object, got {type(data).__name__}")
        names = {f for f in cls.__dataclass_fields__}
        missing = sorted(name for name in names - set(data)
                         if name not in ("checkpoint", "step", "schema_version", *OPTIONAL_FIELDS))
        extra = sorted(set(data) - names)
        if missing or extra:
            raise EvalSchemaError(f"missing fields {missing} / unknown fields {extra}; expected "
                                  f"{', '.join(sorted(names))}")
        per_subtask = data["per_subtask"]
        if not isinstance(per_subtask, dict):
            raise EvalSchemaError("per_subtask must map subtask names to {success_rate, num_tasks}")
        try:
            subtasks = {name: SubtaskResult(**value) for name, value in per_subtask.items()}
        except TypeError as error:
            raise EvalSchemaError(f"per_subtask entries need success_rate and num_tasks (and an optional score): "
                                  f"{error}") from None
        episodes = data.get("episodes")
        if episodes is not None:
            try:
                episodes = tuple(TaskOutcome(**episode) for episode in episodes)
            except TypeError as error:
                raise EvalSchemaError(f"episodes entries need task, subtask and won: {error}") from None
        return cls(**{**data, "per_subtask": subtasks, "episodes": episodes})

    @classmethod
    def from_json(cls, text: str) -> EvalResult:
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as error:
            raise EvalSchemaError(f"not JSON: {error}") from None

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> EvalResult:
        """Read and validate an evaluation file; errors name the file."""
        data = read_json(path)
        try:
            return cls.from_dict(data)
        except EvalSchemaError as error:
            raise EvalSchemaError(f"{path}: {error}") from None


def read_json(path: str | Path) -> Any:
    """The JSON value a file holds; a file that cannot be read or is not JSON is an EvalSchemaError naming it."""
    try:
        return json.loads(Path(path).read_text())
    except OSError as error:
        raise EvalSchemaError(f"{path}: cannot read it ({error.strerror})") from None
    except ValueError as error:  # not UTF-8 text, or not JSON
        raise EvalSchemaError(f"{path}: not JSON: {error}") from None


def _without_missing_score(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if not (key == "score" and value is None)}


def _check_rate(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or not 0 <= value <= 1:
        raise EvalSchemaError(f"{name} must be a share in [0, 1], got {value!r}")


def _check_int(value: Any, name: str, minimum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise EvalSchemaError(f"{name} must be an integer{bound}, got {value!r}")
