"""The learning benchmark's statistics: outcome rows from real dumps, paired differences by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.core.seeding import task_sampling_seed
from strata.envs.tasks import Task
from strata.report.outcomes import read_outcomes, validation_outcomes, write_outcomes
from strata.report.paired import (
    Interval,
    bootstrap_mean,
    difference_in_differences,
    difference_in_differences_over_runs,
    game_differences,
    paired_difference,
    paired_difference_over_runs,
    per_game,
)
from strata.workflow.dump import DumpSettings, DumpWriter, task_record
from strata.workflow.records import Generation, Step, StrategyCandidate, StrategyRollout, TaskRollout, Trajectory

SPLITS = {"valid_seen": "held_out", "train": "train_fixed"}


def _episode(won: bool, admissible: list[bool | None]) -> TaskRollout:
    generation = Generation([1], [2], None, "<action>go</action>", False)
    steps = [Step(generation, None if a is None else "go", "obs", None if a is None else "go", a) for a in admissible]
    trajectory = Trajectory(prompt_ids=[0], steps=steps, won=won, end_reason="won" if won else "step_limit")
    candidate = StrategyCandidate(Generation([1], [3], None, "<strategy>s</strategy>", False), "s")
    return TaskRollout([candidate], [0], [StrategyRollout(candidate, [trajectory])])


def test_outcome_rows_come_from_the_dumped_validation_episodes(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    games = {("valid_seen", 0): agent / "valid/pick-Apple-1/trial_a/game.tw-pddl",
             ("train", 4): agent / "rl_data/train/pick-Mug-9/trial_b/game.tw-pddl",
             ("valid_unseen", 2): agent / "unseen/pick-Pen-2/trial_c/game.tw-pddl"}
    writer = DumpWriter(DumpSettings(run_dir=tmp_path / "run"))
    played = {("valid_seen", 0): _episode(True, [True, False, None, True]),
              ("train", 4): _episode(False, [False, False]),
              ("valid_unseen", 2): _episode(False, [True])}
    for step in (0, 5):
        for (split, index), rollout in played.items():
            task = Task(str(games[split, index]), "pick_and_place_simple", split, index)
            writer.maybe_write("valid", step, task, lambda t=task, r=rollout, s=step: task_record(
                "valid", s, "strata", t, r, None))
    rows = validation_outcomes(tmp_path / "run", 7, SPLITS, root=agent)
    assert rows[:2] == [
        {"step": 0, "split": "held_out", "game": "valid/pick-Apple-1/trial_a", "seed":
         task_sampling_seed(7, "valid_seen", 0, None), "won": True, "admissible_rate": 0.5},  # 2 of 4 steps
        {"step": 0, "split": "train_fixed", "game": "rl_data/train/pick-Mug-9/trial_b", "seed":
         task_sampling_seed(7, "train", 4, None), "won": False, "admissible_rate": 0.0},
    ]
    assert [row["step"] for row in rows] == [0, 0, 5, 5]  # valid_unseen is not one of the benchmark's sets
    assert rows[0]["seed"] == rows[2]["seed"] != rows[1]["seed"]  # the same game's seed at every validation
    assert read_outcomes(write_outcomes(rows, tmp_path / "o" / "outcomes.jsonl")) == rows


def _rows(seed: int, step: int, won: dict[str, bool], split: str = "held_out") -> list[dict]:
    return [{"step": step, "split": split, "game": g, "seed": seed, "won": w, "admissible_rate": 0.5}
            for g, w in won.items()]


# Two seeds of one algorithm on games a-d. Step 0 -> 10 per game and seed (won 1, lost 0):
#   a: 0->1, 0->1 (+1)   b: 1->1, 1->0 (-0.5)   c: 0->0, 0->1 (+0.5)   d: 0->1 (seed 0 only; seed 1 has no step 10)
RUNS = (_rows(0, 0, {"a": False, "b": True, "c": False, "d": False})
        + _rows(0, 10, {"a": True, "b": True, "c": False, "d": True})
        + _rows(1, 0, {"a": False, "b": True, "c": False})
        + _rows(1, 10, {"a": True, "b": False, "c": True})
        + _rows(0, 0, {"a": True}, split="train_fixed"))


def test_games_are_averaged_over_seeds_before_they_are_paired() -> None:
    assert per_game(RUNS, 0, "held_out") == {"a": 0.0, "b": 1.0, "c": 0.0, "d": 0.0}
    assert per_game(RUNS, 10, "held_out") == {"a": 1.0, "b": 0.5, "c": 0.5, "d": 1.0}
    assert game_differences(RUNS, 0, 10, "held_out") == {"a": 1.0, "b": -0.5, "c": 0.5, "d": 1.0}
    difference = paired_difference(RUNS, 0, 10, "held_out")
    assert difference.mean == pytest.approx(2.0 / 4) and difference.games == 4
    assert -0.5 <= difference.low <= difference.mean <= difference.high <= 1.0
    assert game_differences(RUNS, 0, 10, "train_fixed") == {}  # no game of that split at step 10


def test_the_interval_over_runs_holds_the_spread_between_seeds() -> None:
    games = [f"g{i}" for i in range(300)]
    lost = dict.fromkeys(games, False)
    # Seed 0 wins 60 more of the 300 games at step 10 (+20 points); seed 1 changes nothing.
    gains = _rows(0, 0, lost) + _rows(0, 10, {game: i < 60 for i, game in enumerate(games)})
    flat = _rows(1, 0, lost) + _rows(1, 10, lost)
    pooled = paired_difference(gains + flat, 0, 10, "held_out")  # games only: 60 games at +0.5, SE ~0.012
    over_runs = paired_difference_over_runs([gains, flat], 0, 10, "held_out")
    assert over_runs.mean == pooled.mean == pytest.approx(0.1) and over_runs.games == 300
    assert pooled.low > 0.07 and pooled.high < 0.13
    # A quarter of the resamples draw seed 1 twice (exactly 0), a quarter seed 0 twice (0.2 +- 0.023 each).
    assert over_runs.low == 0.0 and over_runs.high > 0.2
    # Seeds that agree: the games' noise is shared, not halved as if each seed had played other games.
    alone = paired_difference(gains, 0, 10, "held_out")
    twice = paired_difference_over_runs([gains, gains], 0, 10, "held_out")
    assert twice.mean == pytest.approx(0.2)
    assert twice.high - twice.low == pytest.approx(alone.high - alone.low, rel=0.1)
    # A run without some games counts those it played; a run without any cannot be paired.
    assert paired_difference_over_runs([gains, flat[:300] + flat[-100:]], 0, 10, "held_out").mean == \
        pytest.approx(60 / 400)
    with pytest.raises(ValueError, match="every run needs games of held_out at steps 0 and 10"):
        paired_difference_over_runs([gains, flat[:300]], 0, 10, "held_out")
    with pytest.raises(ValueError, match="every run needs"):
        paired_difference_over_runs([], 0, 10, "held_out")


def test_difference_in_differences_pairs_the_games_both_algorithms_played() -> None:
    control = _rows(0, 0, {"a": False, "b": True, "c": False}) + _rows(0, 10, {"a": False, "b": True, "c": True})
    # treated: a +1, b -0.5, c +0.5 (d: control never played it); control: a 0, b 0, c +1.
    result = difference_in_differences(RUNS, control, 0, 10, "held_out")
    assert result.mean == pytest.approx((1.0 - 0.5 - 0.5) / 3) and result.games == 3


def test_the_difference_of_two_settings_over_runs_holds_both_spreads() -> None:
    games = [f"g{i}" for i in range(300)]
    lost = dict.fromkeys(games, False)
    gains = _rows(0, 0, lost) + _rows(0, 10, {game: i < 60 for i, game in enumerate(games)})  # +20 points
    flat = _rows(1, 0, lost) + _rows(1, 10, lost)
    baseline = _rows(0, 0, lost) + _rows(0, 10, {game: i % 10 == 0 for i, game in enumerate(games)})  # +10 points
    # Treated seeds +20 and +0, the baseline's two seeds +10 each: equal on average, +-10 apart by run.
    over_runs = difference_in_differences_over_runs([gains, flat], [baseline, baseline], 0, 10, "held_out")
    pooled = difference_in_differences(gains + flat, baseline + baseline, 0, 10, "held_out")
    assert over_runs.mean == pooled.mean == pytest.approx(0.0) and over_runs.games == 300
    assert pooled.low > -0.05 and pooled.high < 0.05  # games only: as if the seeds' spread were not there
    assert over_runs.low < -0.09 and over_runs.high > 0.09  # a quarter of resamples draw either treated seed twice
    swapped = difference_in_differences_over_runs([baseline, baseline], [gains, flat], 0, 10, "held_out")
    assert (swapped.low, swapped.high) == pytest.approx((-over_runs.high, -over_runs.low), abs=0.01)
    # One run a setting: the games' interval of the per-game difference (the games are shared, not drawn apart).
    single = difference_in_differences_over_runs([gains], [baseline], 0, 10, "held_out")
    games_only = difference_in_differences(gains, baseline, 0, 10, "held_out")
    assert single.mean == pytest.approx(games_only.mean) == pytest.approx(0.1)
    assert single.high - single.low == pytest.approx(games_only.high - games_only.low, rel=0.1)
    with pytest.raises(ValueError, match="every run needs games of held_out at steps 0 and 10"):
        difference_in_differences_over_runs([gains], [], 0, 10, "held_out")


def test_the_bootstrap_interval_has_the_width_of_the_normal_one() -> None:
    constant = bootstrap_mean([1.0, 1.0, 1.0])
    assert (constant.mean, constant.low, constant.high) == (1.0, 1.0, 1.0)
    assert not Interval(0.05, -0.1, 0.2, 3).excludes_zero()
    half = bootstrap_mean([0.0, 1.0] * 150)  # 300 games at 50%: normal 95% half-width 1.96·0.5/√300 = 0.0566
    assert half.mean == 0.5 and half.high - half.mean == pytest.approx(0.0566, abs=0.008)
    assert half.low == pytest.approx(0.5 - 0.0566, abs=0.008) and half.excludes_zero()
    assert bootstrap_mean([0.0, 1.0] * 150) == half  # seeded: the same interval every time
    assert Interval(0.043, 0.007, 0.08, 300).as_points() == "+4.3 [+0.7, +8.0]"
    with pytest.raises(ValueError, match="no games"):
        bootstrap_mean([])
