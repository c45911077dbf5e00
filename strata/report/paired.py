"""Paired comparisons of per-game outcomes: the learning benchmark's statistics.

A run evaluates the same games with the same per-game sampling seed at every validation
(`strata.core.seeding.task_sampling_seed`), so step 0 and step N differ only by the weights, game by game. The
paired difference of two steps is then far tighter than the difference of two independent rates: on 100 ALFWorld
games two independent evaluations of one agent differed with an SD of ~6 points, while a paired one repeats
exactly (benchmarks/RESULTS_alfworld_learning.md).

Every interval here but two is a percentile bootstrap over *games*: a game's value is first averaged over the runs
(seeds) that played it, so a game played by two seeds counts once and the interval is not made narrower by
treating the seeds' shared games as independent. `paired_difference_over_runs` and
`difference_in_differences_over_runs` resample the runs as well: the spread of RL itself, which one setting's seeds
show.
"""

from __future__ import annotations

import warnings
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


def paired_difference_over_runs(runs: Sequence[Sequence[Mapping]], before: int, after: int, split: str,
                                field: str = "won", resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """The mean paired change of several runs of one setting (its seeds), with an interval that holds the spread
    between runs as well as between games: each resample draws the runs with replacement and the games with
    replacement, the same games for every drawn run (the runs played the same games, so they share the games'
    noise; drawn apart per run, that noise would shrink as if the runs had played different games).

    Why: `paired_difference` over the runs' pooled rows averages each game over the seeds and resamples games
    only, which answers "would other games give this change" for these very runs. RL runs of one setting differ by
    more than that (two seeds of one ALFWorld setting: +7.3 and +2.3 held-out points, each interval about
    +-5.5), and whether a setting improves the agent is a question over runs. With few runs the run stage is
    coarse (of two runs, a quarter of the resamples hold only one, another quarter only the other), so the
    interval is wide; it is still too narrow where the runs seen happen to agree. A run that lacks a game counts
    the games it has.

    Raises:
        ValueError: for no runs, or a run with no game at both steps.
    """
    return _settings_over_runs([runs], before, after, split, field, resamples, seed)


def difference_in_differences_over_runs(treated: Sequence[Sequence[Mapping]], baseline: Sequence[Sequence[Mapping]],
                                        before: int, after: int, split: str, field: str = "won",
                                        resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """How much more the runs of ``treated`` changed than those of ``baseline`` (two settings, their seeds), with an
    interval over runs and games: each resample draws each setting's runs with replacement and one set of games
    for both (`paired_difference_over_runs`, per setting), and takes the difference of the two means.

    Why: `difference_in_differences` over pooled rows resamples games only; two settings whose seeds spread by ~5
    points each (ALFWorld, benchmarks/RESULTS_alfworld_learning.md) can differ by that much by chance. A setting
    with one run adds no run spread: the interval is then too narrow by that setting's spread.

    Raises:
        ValueError: for a setting without runs, or a run with no game at both steps.
    """
    return _settings_over_runs([treated, baseline], before, after, split, field, resamples, seed)


def _settings_over_runs(settings: Sequence[Sequence[Sequence[Mapping]]], before: int, after: int, split: str,
                        field: str, resamples: int, seed: int) -> Interval:
    """The first setting's mean paired change minus the second's (if any), bootstrapped over each setting's runs
    and over games shared by all (see `paired_difference_over_runs`)."""
    differences = [[game_differences(rows, before, after, split, field) for rows in runs] for runs in settings]
    if not all(runs and all(runs) for runs in differences):
        raise ValueError(f"every run needs games of {split} at steps {before} and {after} to pair")
    games = sorted(set().union(*(d for runs in differences for d in runs)))
    rng = np.random.default_rng(seed)
    run_counts = [rng.multinomial(len(runs), np.full(len(runs), 1.0 / len(runs)), size=resamples)
                  for runs in differences]
    game_counts = rng.multinomial(len(games), np.full(len(games), 1.0 / len(games)), size=resamples)
    points, resampled = [], []
    for runs, counts in zip(differences, run_counts, strict=True):
        change = np.array([[d.get(game, np.nan) for game in games] for d in runs])
        played = ~np.isnan(change)
        change = np.where(played, change, 0.0)
        points.append(change.sum() / played.sum())
        with np.errstate(invalid="ignore"):  # a resample whose drawn runs played none of its drawn games: left out
            resampled.append(((counts @ change) * game_counts).sum(axis=1)
                             / ((counts @ played) * game_counts).sum(axis=1))
    sign = np.array([1.0, -1.0][: len(settings)])
    means = sign @ np.array(resampled)
    low, high = np.nanpercentile(means, [2.5, 97.5])
    return Interval(float(sign @ np.array(points)), float(low), float(high), len(games))


def difference_in_differences(treated: Sequence[Mapping], control: Sequence[Mapping], before: int, after: int,
                              split: str, field: str = "won") -> Interval:
    """How much more ``treated`` changed than ``control`` on the games both played: per game, treated's paired
    change minus control's, bootstrapped over those games."""
    mine = game_differences(treated, before, after, split, field)
    theirs = game_differences(control, before, after, split, field)
    return bootstrap_mean([mine[game] - theirs[game] for game in sorted(mine.keys() & theirs.keys())])


def runs_as_one(runs: Sequence[tuple[Sequence[Mapping], Mapping[int, set[str]]]]) -> tuple[list[dict], dict]:
    """Several runs' ``(outcomes, trained)`` as one run's, every game named by its run (``<i>:<game>``), so that
    `trained_effect` over the result pools the runs: at each step it compares all runs' trained games with all
    their not-yet ones, and its bootstrap resamples (run, game) pairs. The same game in two runs counts as two
    units, as if the runs' changes of one game were independent: where they correlate, the interval is somewhat
    too narrow."""
    outcomes = [{**row, "game": f"{i}:{row['game']}"} for i, (rows, _) in enumerate(runs) for row in rows]
    trained: dict[int, set[str]] = {}
    for i, (_, games_by_step) in enumerate(runs):
        for step, games in games_by_step.items():
            trained.setdefault(step, set()).update(f"{i}:{game}" for game in games)
    return outcomes, trained


@dataclass(frozen=True)
class TrainedEffect:
    """`trained_effect`'s result: the mean changes of the two kinds of games and their difference."""

    steps: tuple[int, ...]
    trained: float
    not_yet: float
    difference: Interval


def trained_effect(outcomes: Sequence[Mapping], trained: Mapping[int, set[str]], split: str, before: int = 0,
                   resamples: int = RESAMPLES, seed: int = 0) -> TrainedEffect | None:
    """How much more a game's ``won`` changed from step ``before`` once RL had trained on it than while it had not.

    ``outcomes`` are one run's (each seed draws its games in its own order); ``trained`` maps a step k to the games
    trained on at steps 1..k (`strata.report.trained_games.trained_by_step`). At every validated step k after
    ``before`` whose games fall into both kinds, the mean change of the trained games minus that of the others;
    then the mean over those steps. The sampler's random order decides which games are trained on by step k, so
    at each step the two kinds differ by chance and by that training only. The interval bootstraps over games
    (all of a game's steps together). None when no step has games of both kinds.
    """
    steps = sorted(k for k in {row["step"] for row in outcomes if row["split"] == split} if k > before and k in trained)
    changes = {k: game_differences(outcomes, before, k, split) for k in steps}
    steps = [k for k in steps if 0 < len(changes[k].keys() & trained[k]) < len(changes[k])]
    if not steps:
        return None
    games = sorted(set().union(*(changes[k].keys() for k in steps)))
    change = np.array([[changes[k].get(game, np.nan) for k in steps] for game in games])
    was_trained = np.array([[game in trained[k] for k in steps] for game in games])

    def means(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per resample (rows of game indices): the two kinds' mean change, averaged over the steps."""
        values, kind = change[rows], was_trained[rows]
        present = ~np.isnan(values)
        with np.errstate(invalid="ignore", divide="ignore"):
            kinds = [np.where(mask, values, 0.0).sum(axis=-2) / mask.sum(axis=-2)
                     for mask in (kind & present, ~kind & present)]
        return kinds[0], kinds[1]

    trained_mean, not_yet_mean = means(np.arange(len(games)))
    rng = np.random.default_rng(seed)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample without one kind at some step: left out there
        first, second = means(rng.integers(0, len(games), size=(resamples, len(games))))
        resampled = np.nanmean(first - second, axis=-1)
    low, high = np.nanpercentile(resampled, [2.5, 97.5])
    difference = Interval(float(np.mean(trained_mean - not_yet_mean)), float(low), float(high), len(games))
    return TrainedEffect(tuple(steps), float(np.mean(trained_mean)), float(np.mean(not_yet_mean)), difference)
