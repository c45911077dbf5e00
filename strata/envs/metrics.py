"""Success tables from episode records: overall and per StraTA subtask (docs/algorithm.md §3).

Pure functions over records, so the scripted-policy evaluation here and the trainer's validation
compute the same numbers. Any record with ``subtask``, ``won`` and ``num_steps`` works (`EpisodeOutcome`,
or the trainer's own trajectory records).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from strata.envs.alfworld.tasks import SUBTASKS
from strata.envs.errors import UnknownNameError
from strata.envs.records import EpisodeOutcome
from strata.envs.registry import environment_subtasks

AVERAGE = "average"


class EpisodeRecord(Protocol):
    subtask: str
    won: bool
    num_steps: int


@dataclass(frozen=True)
class SubtaskStats:
    """Counts and rates for one subtask (or ``"average"``: all episodes).

    ``success_rate`` and ``mean_steps`` are None when there were no episodes.
    """

    subtask: str
    episodes: int
    wins: int
    success_rate: float | None
    mean_steps: float | None


@dataclass(frozen=True)
class SuccessTable:
    """Overall and per-subtask results, in the order pick, look, clean, heat, cool, pick2 (ScienceWorld:
    its 30 task types in the simulator's order)."""

    overall: SubtaskStats
    by_subtask: tuple[SubtaskStats, ...]

    def rows(self) -> tuple[SubtaskStats, ...]:
        return (*self.by_subtask, self.overall)

    def to_metrics(self, prefix: str = "val") -> dict[str, float]:
        """Logger keys as the paper reports them: ``val/average/metrics/success_rate``,
        ``val/<subtask>/metrics/success_rate``, and ``.../episode_length``; subtasks without episodes
        are left out rather than logged as 0."""
        metrics = {}
        for row in self.rows():
            if row.success_rate is not None and row.mean_steps is not None:
                metrics[f"{prefix}/{row.subtask}/metrics/success_rate"] = row.success_rate
                metrics[f"{prefix}/{row.subtask}/metrics/episode_length"] = row.mean_steps
        return metrics

    def to_dict(self) -> dict[str, Any]:
        return {row.subtask: asdict(row) for row in self.rows()}

    def format(self, played_only: bool = False) -> str:
        """A plain-text table, one line per subtask and a final average line; ``played_only`` leaves out the
        subtasks without episodes (`strata play --task-types`: the asked ones, not ScienceWorld's 30)."""
        rows = [row for row in self.by_subtask if row.episodes or not played_only] + [self.overall]
        width = max(8, *(len(row.subtask) for row in rows))
        lines = [f"{'subtask':<{width}} {'episodes':>8} {'wins':>6} {'success':>8} {'steps':>7}"]
        for row in rows:
            rate = "-" if row.success_rate is None else f"{100 * row.success_rate:7.1f}%"
            steps = "-" if row.mean_steps is None else f"{row.mean_steps:7.1f}"
            lines.append(f"{row.subtask:<{width}} {row.episodes:>8} {row.wins:>6} {rate:>8} {steps:>7}")
        return "\n".join(lines)


def _stats(name: str, records: list[EpisodeRecord]) -> SubtaskStats:
    if not records:
        return SubtaskStats(name, 0, 0, None, None)
    wins = sum(bool(r.won) for r in records)
    return SubtaskStats(
        subtask=name,
        episodes=len(records),
        wins=wins,
        success_rate=wins / len(records),
        mean_steps=sum(r.num_steps for r in records) / len(records),
    )


def success_table(records: Iterable[EpisodeRecord]) -> SuccessTable:
    """Success rate and mean episode length, overall and per subtask, from what the episodes did."""
    records = list(records)
    names = {r.subtask for r in records}
    # One environment's subtasks, in its order: ALFWorld's six, ScienceWorld's 30 task types, or WebShop's one.
    subtasks = next((s for s in environment_subtasks().values() if names and names <= set(s)), SUBTASKS)
    unknown = sorted(names - set(subtasks))
    if unknown:
        raise UnknownNameError(f"records with unknown subtasks {unknown}; known: {', '.join(subtasks)}")
    by_subtask = tuple(_stats(sub, [r for r in records if r.subtask == sub]) for sub in subtasks)
    return SuccessTable(overall=_stats(AVERAGE, records), by_subtask=by_subtask)


def end_reasons(outcomes: Iterable[EpisodeOutcome]) -> dict[str, int]:
    """How many episodes ended for each reason (won, step_limit, timeout, worker_lost, engine_error: ...)."""
    return dict(sorted(Counter(o.reason for o in outcomes).items()))
