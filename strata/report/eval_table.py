"""The evaluation table: per subtask and overall, each seed and mean ± std, as the paper reports it.

Seeds are combined only when they evaluated the same thing: same split, same task counts per subtask
and the same checkpoint, otherwise the mean would mix different experiments. The spread is the sample
standard deviation across seeds (n − 1 in the denominator); with one seed it is not reported.

With k ≥ 2 seeds whose files record each task's outcome (``episodes``), the k seeds are k samples per task,
and the table adds avg@k (the mean success over the k samples, the seeds' mean) and pass@k (the share of tasks
won by at least one of the k samples), per subtask and overall, as peers publish them.
"""

from __future__ import annotations

import functools
import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from strata.report.markdown import markdown_table
from strata.report.schema import ALL_SUBTASKS, OVERALL, EvalResult, EvalSchemaError, read_json

AGENTGYM_ENVIRONMENT = Path(__file__).resolve().parents[2] / "configs/environment/sciworld_agentgym.yaml"
WEBSHOP = "webshop"  # its one subtask: a report of only WebShop goals scores WebShop's way


@functools.cache
def agentgym_max_steps() -> int:
    """AgentGym's ScienceWorld horizon, read from the config that runs ScienceWorld its way (one place to change)."""
    import yaml

    return int(yaml.safe_load(AGENTGYM_ENVIRONMENT.read_text(encoding="utf-8"))["env"]["max_steps"])


@dataclass(frozen=True)
class Row:
    """One line of the table: a value per seed, their mean, and their sample std (None with one seed)."""

    name: str
    num_tasks: int | None
    per_seed: tuple[float, ...]
    mean: float
    std: float | None


@dataclass(frozen=True)
class Number:
    """How a metric is printed: ``scale`` (100 for percent) and decimal ``digits``."""

    scale: float
    digits: int

    def __call__(self, value: float) -> str:
        return f"{self.scale * value:.{self.digits}f}"

    def mean_std(self, row: Row) -> str:
        return self(row.mean) if row.std is None else f"{self(row.mean)} ± {self(row.std)}"


PERCENT, SHARE, STEPS, SCORE = Number(100, 2), Number(1, 3), Number(1, 1), Number(100, 2)


@dataclass(frozen=True)
class PassAtK:
    """avg@k and pass@k of one subtask (or ``all``) over k samples per task (one per seed)."""

    name: str
    num_tasks: int
    avg: float
    passed: float


@dataclass(frozen=True)
class EvalReport:
    """Several seeds of one evaluation combined.

    Args:
        split: the evaluated split.
        seeds: the seeds, in input order (columns of the table).
        checkpoint / step: what was evaluated (same for every seed).
        success: rows for pick, look, clean, heat, cool, pick2 present in the split, then ``all``.
        format_rate / mean_episode_length: rows of the two other metrics.
        results: the input evaluations.
        score: rows of the mean progress score like ``success`` where every seed has one (ScienceWorld), else
            empty.
        pass_at_k: avg@k and pass@k per subtask then ``all``, k being the number of seeds, where k ≥ 2 and every
            seed recorded each task's outcome; else empty.
    """

    split: str
    seeds: tuple[int, ...]
    checkpoint: str | None
    step: int | None
    success: tuple[Row, ...]
    format_rate: Row
    mean_episode_length: Row
    results: tuple[EvalResult, ...]
    score: tuple[Row, ...] = ()
    pass_at_k: tuple[PassAtK, ...] = ()

    @property
    def overall(self) -> Row:
        return self.success[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "seeds": list(self.seeds),
            "checkpoint": self.checkpoint,
            "step": self.step,
            "std": "sample standard deviation across seeds (n - 1); null with one seed",
            "success_rate": {row.name: _row_dict(row) for row in self.success},
            "format_rate": _row_dict(self.format_rate),
            "mean_episode_length": _row_dict(self.mean_episode_length),
            **({"score": {row.name: _row_dict(row) for row in self.score}} if self.score else {}),
            **({"pass_at_k": {"k": len(self.seeds), **{row.name: asdict(row) for row in self.pass_at_k}}}
               if self.pass_at_k else {}),
            "results": [result.to_dict() for result in self.results],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> EvalReport:
        """Rebuild a report from its JSON (the ``results`` it embeds are the source of truth)."""
        data = json.loads(text)
        return combine_evaluations([EvalResult.from_dict(result) for result in data["results"]])

    def to_markdown(self) -> str:
        """Success in percent with two decimals, format rate in [0, 1], episode length in steps."""
        header = ["subtask", "tasks", *(f"seed {seed}" for seed in self.seeds), "mean ± std"]
        rows = [[row.name, str(row.num_tasks), *map(PERCENT, row.per_seed), PERCENT.mean_std(row)]
                for row in self.success]
        rows.append(["format rate", "", *map(SHARE, self.format_rate.per_seed), SHARE.mean_std(self.format_rate)])
        rows.append(["episode length (steps)", "", *map(STEPS, self.mean_episode_length.per_seed),
                     STEPS.mean_std(self.mean_episode_length)])
        what = f"`{self.checkpoint}`" if self.checkpoint else "the checkpoint"
        step = f" (step {self.step})" if self.step is not None else ""
        caption = (f"Success rate (%) on `{self.split}` of {what}{step}, {len(self.seeds)} seed(s); "
                   f"± is the sample standard deviation across seeds.")
        table = caption + "\n\n" + markdown_table(header, rows)
        if self.score:  # ScienceWorld and WebShop: the paper reports the mean score, so it leads
            scores = [[row.name, str(row.num_tasks), *map(SCORE, row.per_seed), SCORE.mean_std(row)]
                      for row in self.score]
            webshop = all(set(result.per_subtask) <= {WEBSHOP} for result in self.results)
            meaning = ("WebShop's purchase reward x 100, as the paper and verl-agent report it" if webshop else
                       "the environment's progress score; a win scores 100, a lost game 0")
            table = (f"Mean score (0-100, {meaning}) on `{self.split}` of {what}{step}, {len(self.seeds)} seed(s).\n\n"
                     + markdown_table(header, scores) + "\n\n" + table)
            agentgym = None if webshop else self.agentgym_score()
            if agentgym is not None:
                seeds = ", ".join(map(str, self.seeds))
                horizon = self.results[0].max_steps
                horizon = (f"; at most {horizon} steps an episode, AgentGym's runs {agentgym_max_steps()}"
                           if horizon else "")
                table = (f"**ScienceWorld score comparable to the paper's 63.5** (AgentGym's mean score, a lost game "
                         f"counts -100{horizon}): {SCORE.mean_std(agentgym)} (seed(s) {seeds}: "
                         f"{', '.join(map(SCORE, agentgym.per_seed))}). The project's mean score, a lost game counting "
                         f"0: {SCORE.mean_std(self.score[-1])}.\n\n" + table)
        if self.pass_at_k:
            k = len(self.seeds)
            table += (f"\n\nThe {k} seeds as {k} samples per task: avg@{k} (mean success over the samples) and "
                      f"pass@{k} (share of tasks won by at least one), in %.\n\n"
                      + markdown_table(["subtask", "tasks", f"avg@{k}", f"pass@{k}"],
                                       [[row.name, str(row.num_tasks), PERCENT(row.avg), PERCENT(row.passed)]
                                        for row in self.pass_at_k]))
        ends = self.end_reasons
        if ends:
            table += ("\n\nHow the episodes ended (all seeds): "
                      + ", ".join(f"{reason.replace('_', ' ')} {count}" for reason, count in ends.items()) + ".")
        setting = []  # which tasks and which horizon a number is on, before any number
        if self.results[0].task_set:
            setting.append(f"Tasks: {self.results[0].task_set}.")
        if self.results[0].max_steps:
            setting.append(f"Episodes of at most {self.results[0].max_steps} steps (env.max_steps).")
        if setting:
            table = " ".join(setting) + "\n\n" + table
        return table

    def agentgym_score(self) -> Row | None:
        """The overall mean score as AgentGym computes it (a lost game scores -100, not 0), per seed: ours less the
        seed's lost share; None when a seed's file does not record how its episodes ended."""
        if any(result.end_reasons is None for result in self.results):
            return None
        values = [row - result.end_reasons.get("lost", 0) / result.num_tasks
                  for row, result in zip(self.score[-1].per_seed, self.results, strict=True)]
        return _row("agentgym", self.score[-1].num_tasks, values)

    @property
    def end_reasons(self) -> dict[str, int]:
        """Episodes per end reason summed over the seeds (reasons no episode had left out); empty when a seed's
        file does not record them."""
        if any(result.end_reasons is None for result in self.results):
            return {}
        total: dict[str, int] = {}
        for result in self.results:
            for reason, count in result.end_reasons.items():
                total[reason] = total.get(reason, 0) + count
        return {reason: count for reason, count in total.items() if count}


def combine_evaluations(results: Sequence[EvalResult]) -> EvalReport:
    """Combine evaluations of one checkpoint on one split with different seeds."""
    if not results:
        raise EvalSchemaError("no evaluation given; pass one evaluation JSON per seed")
    first = results[0]
    seeds = tuple(result.seed for result in results)
    if len(set(seeds)) != len(seeds):
        raise EvalSchemaError(f"seeds repeat ({list(seeds)}); pass each seed's evaluation once")
    for result in results[1:]:
        if _checkpoint(result.checkpoint) != _checkpoint(first.checkpoint):
            raise EvalSchemaError(f"seed {result.seed} has checkpoint={result.checkpoint!r} but seed {first.seed} has "
                                  f"{first.checkpoint!r}; combine one evaluation only")
        for name in ("split", "step", "task_set", "max_steps"):
            if getattr(result, name) != getattr(first, name):
                raise EvalSchemaError(f"seed {result.seed} has {name}={getattr(result, name)!r} but seed "
                                      f"{first.seed} has {getattr(first, name)!r}; combine one evaluation only")
        counts = {name: r.num_tasks for name, r in result.per_subtask.items()}
        if counts != {name: r.num_tasks for name, r in first.per_subtask.items()}:
            raise EvalSchemaError(f"seed {result.seed} evaluated other tasks than seed {first.seed} "
                                  f"(per-subtask counts differ); combine runs on the same task list")
    present = [name for name in ALL_SUBTASKS if name in first.per_subtask]
    success = [
        _row(name, first.per_subtask[name].num_tasks, [r.per_subtask[name].success_rate for r in results])
        for name in present
    ]
    success.append(_row(OVERALL, first.num_tasks, [r.success_rate for r in results]))
    score = []
    if all(r.score is not None for r in results):
        score = [_row(name, first.per_subtask[name].num_tasks, [r.per_subtask[name].score for r in results])
                 for name in present if all(r.per_subtask[name].score is not None for r in results)]
        score.append(_row(OVERALL, first.num_tasks, [r.score for r in results]))
    return EvalReport(
        split=first.split,
        seeds=seeds,
        checkpoint=first.checkpoint,
        step=first.step,
        success=tuple(success),
        format_rate=_row("format_rate", None, [r.format_rate for r in results]),
        mean_episode_length=_row("mean_episode_length", None, [r.mean_episode_length for r in results]),
        results=tuple(results),
        score=tuple(score),
        pass_at_k=_pass_at_k(results, present),
    )


def _checkpoint(value: str | None) -> str | None:
    """What a recorded checkpoint names: a path that exists here, wherever it was written from (relative or
    absolute, through a link), else the text as recorded (a Hub id, a path on another machine)."""
    if value is None or not Path(value).exists():
        return value
    return str(Path(value).resolve())


def _pass_at_k(results: Sequence[EvalResult], subtasks: list[str]) -> tuple[PassAtK, ...]:
    """avg@k and pass@k with the seeds as the k samples (see the module docstring); empty below 2 seeds or when
    a seed's file has no per-task outcomes. The seeds must have evaluated the same tasks."""
    if len(results) < 2 or any(r.episodes is None for r in results):
        return ()
    tasks = {index: outcome.subtask for index, outcome in results[0].outcomes.items()}
    for result in results[1:]:
        if {index: outcome.subtask for index, outcome in result.outcomes.items()} != tasks:
            raise EvalSchemaError(f"seed {result.seed} evaluated other tasks than seed {results[0].seed} (the "
                                  f"episodes' task indices or subtasks differ); pass@k needs the same task list")
    wins = {index: [r.outcomes[index].won for r in results] for index in tasks}
    rows = []
    for name in [*subtasks, OVERALL]:
        mine = [index for index, subtask in tasks.items() if name in (subtask, OVERALL)]
        rows.append(PassAtK(name, len(mine), statistics.fmean(statistics.fmean(wins[i]) for i in mine),
                            statistics.fmean(any(wins[i]) for i in mine)))
    return tuple(rows)


def read_evaluation_inputs(paths: Sequence[str | Path]) -> EvalReport:
    """One report from per-seed evaluation JSONs, or from a report JSON written by ``strata report-eval``."""
    return combine_evaluations(_read_results(paths))


def read_evaluations_by_split(paths: Sequence[str | Path]) -> tuple[EvalReport, ...]:
    """One report per evaluated split (e.g. ALFWorld's ``valid_seen`` and ``valid_unseen``), in the order the
    splits first appear in ``paths``; each split's seeds are combined as `combine_evaluations` does."""
    by_split: dict[str, list[EvalResult]] = {}
    for result in _read_results(paths):
        by_split.setdefault(result.split, []).append(result)
    return tuple(combine_evaluations(results) for results in by_split.values())


def _read_results(paths: Sequence[str | Path]) -> list[EvalResult]:
    results: list[EvalResult] = []
    for path in paths:
        data = read_json(path)
        entries = data["results"] if isinstance(data, dict) and "results" in data else [data]
        try:
            if not isinstance(entries, list):
                raise EvalSchemaError("a report's results must be a list of evaluations")
            results += [EvalResult.from_dict(entry) for entry in entries]
        except EvalSchemaError as error:
            raise EvalSchemaError(f"{path}: {error}") from None
    return results


def _row(name: str, num_tasks: int | None, values: list[float]) -> Row:
    std = statistics.stdev(values) if len(values) > 1 else None
    return Row(name=name, num_tasks=num_tasks, per_seed=tuple(values), mean=statistics.fmean(values), std=std)


def _row_dict(row: Row) -> dict[str, Any]:
    data = asdict(row)
    data["per_seed"] = list(row.per_seed)
    return data
