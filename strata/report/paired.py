"""Paired comparisons of per-game outcomes: the learning benchmark's statistics.

A run evaluates the same games with the same per-game sampling seed at every validation
(`strata.core.seeding.task_sampling_seed`), so step 0 and step N differ only by the weights, game by game. The
paired difference of two steps is then far tighter than the difference of two independent rates: on 100 ALFWorld
games two independent evaluations of one agent differed with an SD of ~6 points, while a paired one repeats
exactly (benchmarks/RESULTS_alfworld_learning.md).

Every interval here is a percentile bootstrap over *games*: a game's value is first averaged over the runs
(seeds) that played it, so a game played by two seeds counts once and the interval is not made narrower by
treating the seeds' shared games as independent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 10_000
"""Bootstrap resamples: the 2.5% and 97.5% percentiles move by < 0.3 points between bootstrap seeds at this size."""


@dataclass(frozen=True)
class Interval:
    """A mean over ``games`` games and its 95% percentile-bootstrap interval [low, high]."""

    mean: float
    low: float
    high: float
    games: int

    def excludes_zero(self) -> bool:
        return self.low > 0.0 or self.high < 0.0

    def as_points(self) -> str:
        """``+4.3 [+0.7, +8.0]`` in percentage points."""
        return f"{100 * self.mean:+.1f} [{100 * self.low:+.1f}, {100 * self.high:+.1f}]"


def bootstrap_mean(values: Sequence[float], resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """The mean of ``values`` (one per game) and its 95% percentile-bootstrap interval.

    Raises:
        ValueError: for no values (a mean over no games is undefined, not 0).
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no games to average: the runs share no game at these steps")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(data.mean()), float(low), float(high), int(data.size))


def per_game(outcomes: Iterable[Mapping], step: int, split: str, field: str = "won") -> dict[str, float]:
    """Game -> ``field`` at ``step`` on ``split``, averaged over the runs (seeds) that played it there."""
    sums: dict[str, list[float]] = {}
    for row in outcomes:
        if row["step"] == step and row["split"] == split:
            sums.setdefault(row["game"], []).append(float(row[field]))
    return {game: sum(values) / len(values) for game, values in sums.items()}


def game_differences(outcomes: Sequence[Mapping], before: int, after: int, split: str,
                     field: str = "won") -> dict[str, float]:
    """Game -> (its value at ``after``) − (its value at ``before``), each averaged over the runs; per run the
    games are paired because every validation plays a game with the same seed. Games missing at one step
    are left out."""
    first, last = per_game(outcomes, before, split, field), per_game(outcomes, after, split, field)
    return {game: last[game] - first[game] for game in sorted(first.keys() & last.keys())}


def paired_difference(outcomes: Sequence[Mapping], before: int, after: int, split: str,
                      field: str = "won") -> Interval:
    """The mean paired change of ``field`` from step ``before`` to ``after`` on ``split``, bootstrapped over games."""
    return bootstrap_mean(list(game_differences(outcomes, before, after, split, field).values()))


def difference_in_differences(treated: Sequence[Mapping], control: Sequence[Mapping], before: int, after: int,
                              split: str, field: str = "won") -> Interval:
    """How much more ``treated`` changed than ``control`` on the games both played: per game, treated's paired
    change minus control's, bootstrapped over those games."""
    mine = game_differences(treated, before, after, split, field)
    theirs = game_differences(control, before, after, split, field)
    return bootstrap_mean([mine[game] - theirs[game] for game in sorted(mine.keys() & theirs.keys())])
