from __future__ import annotations

import pytest

from strata.envs.errors import UnknownNameError
from strata.envs.metrics import end_reasons, success_table
from strata.envs.records import EpisodeOutcome


def outcome(subtask: str, won: bool, steps: int, reason: str | None = None) -> EpisodeOutcome:
    return EpisodeOutcome("/g", "t", subtask, won, steps, reason or ("won" if won else "step_limit"))


def test_table_by_hand() -> None:
    records = [
        outcome("pick", True, 4),
        outcome("pick", False, 50),
        outcome("pick", True, 6),
        outcome("clean", False, 50),
        outcome("heat", True, 10, "won"),
        outcome("heat", False, 3, "timeout"),
    ]
    table = success_table(records)
    by = {row.subtask: row for row in table.rows()}
    # pick: 2 of 3 won, steps (4 + 50 + 6) / 3 = 20
    assert (by["pick"].episodes, by["pick"].wins, by["pick"].success_rate, by["pick"].mean_steps) == (3, 2, 2 / 3, 20)
    assert by["clean"].success_rate == 0.0
    # heat: 1 of 2, steps (10 + 3) / 2 = 6.5
    assert (by["heat"].success_rate, by["heat"].mean_steps) == (0.5, 6.5)
    # no look/cool/pick2 episodes: no rate at all rather than a fake 0
    assert by["look"].success_rate is None and by["look"].episodes == 0
    # overall: 3 wins of 6, steps 123 / 6 = 20.5
    assert (table.overall.subtask, table.overall.success_rate, table.overall.mean_steps) == ("average", 0.5, 20.5)
    metrics = table.to_metrics("val")
    assert metrics["val/average/metrics/success_rate"] == 0.5
    assert metrics["val/pick/metrics/success_rate"] == 2 / 3
    assert metrics["val/heat/metrics/episode_length"] == 6.5
    assert "val/look/metrics/success_rate" not in metrics
    assert end_reasons(records) == {"step_limit": 2, "timeout": 1, "won": 3}
    text = table.format()
    assert text.splitlines()[-1].split() == ["average", "6", "3", "50.0%", "20.5"]
    assert table.to_dict()["pick"]["wins"] == 2
    played = [line.split()[0] for line in table.format(played_only=True).splitlines()[1:]]
    assert played == ["pick", "clean", "heat", "average"]


def test_a_sciworld_table_of_two_task_types_shows_those_two() -> None:
    from strata.envs.sciworld.tasks import TASK_TYPES

    table = success_table([outcome(TASK_TYPES[3], True, 5), outcome(TASK_TYPES[7], False, 30)])
    assert len(table.format().splitlines()) == 1 + len(TASK_TYPES) + 1  # the full table: every task type
    played = [line.split()[0] for line in table.format(played_only=True).splitlines()[1:]]
    assert played == [TASK_TYPES[3], TASK_TYPES[7], "average"]


def test_unknown_subtask_rejected() -> None:
    with pytest.raises(UnknownNameError, match="slice"):
        success_table([outcome("slice", True, 1)])
