"""Combining seeds: per-subtask rows, mean ± sample std by hand, and refusals to mix evaluations."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from strata.cli import main
from strata.report.eval_table import EvalReport, combine_evaluations, read_evaluation_inputs
from strata.report.schema import EvalResult, EvalSchemaError, SubtaskResult, TaskOutcome

SEED0 = {"pick": 34, "look": 13, "clean": 25, "heat": 13, "cool": 22, "pick2": 21}  # 128 of 140
SEED1 = {"pick": 34, "look": 12, "clean": 25, "heat": 13, "cool": 23, "pick2": 22}  # 129 of 140


def test_rows_mean_and_sample_std(make_evaluation) -> None:
    report = combine_evaluations([make_evaluation(0, SEED0, length=13.2), make_evaluation(1, SEED1, length=14.2)])
    assert [row.name for row in report.success] == ["pick", "look", "clean", "heat", "cool", "pick2", "all"]
    pick2 = report.success[5]
    # 21/24 = 0.875 and 22/24 = 0.916667: mean 0.895833, sample std |a - b| / sqrt(2) = 0.029463
    assert pick2.per_seed == (21 / 24, 22 / 24)
    assert pick2.mean == pytest.approx(0.8958333333)
    assert pick2.std == pytest.approx((1 / 24) / 2**0.5)
    overall = report.overall
    assert (overall.num_tasks, overall.mean) == (140, pytest.approx(128.5 / 140))
    assert report.mean_episode_length.mean == pytest.approx(13.7)
    markdown = report.to_markdown()
    assert "| pick2 | 24 | 87.50 | 91.67 | 89.58 ± 2.95 |" in markdown  # as the reference table prints it
    assert "| all | 140 | 91.43 | 92.14 | 91.79 ± 0.51 |" in markdown
    assert "| episode length (steps) |  | 13.2 | 14.2 | 13.7 ± 0.7 |" in markdown
    assert "`valid_seen`" in markdown and "step 150" in markdown


def test_one_seed_has_no_std(make_evaluation) -> None:
    report = combine_evaluations([make_evaluation(0, SEED0)])
    assert report.overall.std is None
    assert "| all | 140 | 91.43 | 91.43 |" in report.to_markdown()


def test_json_round_trip(make_evaluation) -> None:
    report = combine_evaluations([make_evaluation(0, SEED0), make_evaluation(1, SEED1)])
    assert EvalReport.from_json(report.to_json()) == report
    data = json.loads(report.to_json())
    assert data["success_rate"]["all"]["per_seed"] == [128 / 140, 129 / 140]


def test_reads_seed_files_or_a_report(tmp_path: Path, make_evaluation) -> None:
    paths = [make_evaluation(s, wins).save(tmp_path / f"seed{s}.json") for s, wins in ((0, SEED0), (1, SEED1))]
    report = read_evaluation_inputs(paths)
    (tmp_path / "report.json").write_text(report.to_json())
    assert read_evaluation_inputs([tmp_path / "report.json"]) == report


@pytest.mark.parametrize("other, message", [
    (dict(seed=0), "seeds repeat"),
    (dict(step=100), "has step=100"),
])
def test_refuses_to_mix(make_evaluation, other, message) -> None:
    first = make_evaluation(0, SEED0)
    second = make_evaluation(other.get("seed", 1), SEED1, step=other.get("step", 150))
    with pytest.raises(EvalSchemaError, match=message):
        combine_evaluations([first, second])


def test_one_checkpoint_spelled_relative_and_absolute_is_one_checkpoint(make_evaluation, tmp_path, monkeypatch):
    step = tmp_path / "checkpoints" / "global_step_150"
    step.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    relative = dataclasses.replace(make_evaluation(0, SEED0), checkpoint="checkpoints/global_step_150")
    absolute = dataclasses.replace(make_evaluation(1, SEED1), checkpoint=str(step))
    assert combine_evaluations([relative, absolute]).seeds == (0, 1)
    other = dataclasses.replace(make_evaluation(1, SEED1), checkpoint=str(tmp_path / "elsewhere/global_step_150"))
    with pytest.raises(EvalSchemaError, match="has checkpoint="):
        combine_evaluations([relative, other])


def test_refuses_other_splits(make_evaluation) -> None:
    import dataclasses

    other = dataclasses.replace(make_evaluation(1, SEED1), split="valid_unseen")
    with pytest.raises(EvalSchemaError, match="split='valid_unseen'"):
        combine_evaluations([make_evaluation(0, SEED0), other])


def _with_outcomes(seed: int, won: set[int]) -> EvalResult:
    """Four tasks (0, 1: pick; 2, 3: look), ``won`` the indices this seed won."""
    subtasks = {0: "pick", 1: "pick", 2: "look", 3: "look"}
    per_subtask = {name: SubtaskResult(sum(i in won for i, s in subtasks.items() if s == name) / 2, 2)
                   for name in ("pick", "look")}
    return EvalResult(seed=seed, split="valid_seen", num_tasks=4, success_rate=len(won) / 4, per_subtask=per_subtask,
                      format_rate=1.0, mean_episode_length=5.0,
                      episodes=tuple(TaskOutcome(i, s, i in won) for i, s in subtasks.items()))


def test_two_seeds_with_outcomes_give_avg_and_pass_at_2(tmp_path: Path, capsys) -> None:
    # Seed 0 won tasks 0 and 2, seed 1 tasks 1 and 2: pick avg@2 = 50%, pass@2 = 2/2; look 50%, 1/2; all 50%, 3/4.
    paths = [_with_outcomes(0, {0, 2}).save(tmp_path / "seed0.json"),
             _with_outcomes(1, {1, 2}).save(tmp_path / "seed1.json")]
    assert main(["report-eval", *map(str, paths), "--out", str(tmp_path / "report")]) == 0
    printed = capsys.readouterr().out
    assert "| subtask | tasks | avg@2 | pass@2 |" in printed
    assert "| pick | 2 | 50.00 | 100.00 |" in printed and "| look | 2 | 50.00 | 50.00 |" in printed
    assert "| all | 4 | 50.00 | 75.00 |" in printed
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["pass_at_k"]["k"] == 2 and data["pass_at_k"]["all"]["passed"] == 0.75
    assert read_evaluation_inputs([tmp_path / "report.json"]).pass_at_k == read_evaluation_inputs(paths).pass_at_k


def test_pass_at_k_needs_two_seeds_with_outcomes_of_the_same_tasks(make_evaluation) -> None:
    assert combine_evaluations([_with_outcomes(0, {0})]).pass_at_k == ()  # k = 1: the success rate says it all
    assert combine_evaluations([make_evaluation(0, SEED0), make_evaluation(1, SEED1)]).pass_at_k == ()
    moved = dataclasses.replace(_with_outcomes(1, set()), episodes=(
        TaskOutcome(0, "pick", False), TaskOutcome(1, "pick", False), TaskOutcome(2, "look", False),
        TaskOutcome(7, "look", False)))
    with pytest.raises(EvalSchemaError, match="seed 1 evaluated other tasks than seed 0"):
        combine_evaluations([_with_outcomes(0, {0}), moved])


@pytest.mark.parametrize("episodes, message", [
    ((TaskOutcome(0, "pick", True),), "each of the 4 tasks once"),
    (tuple(TaskOutcome(i, "pick" if i < 2 else "look", True) for i in (0, 1, 2, 2)), "each of the 4 tasks once"),
    (tuple(TaskOutcome(i, "pick" if i < 2 else "look", i == 3) for i in range(4)), "episodes of pick: 0 won of 2"),
])
def test_outcomes_that_contradict_the_rates_are_refused(episodes, message) -> None:
    with pytest.raises(EvalSchemaError, match=message):
        dataclasses.replace(_with_outcomes(0, {0, 2}), episodes=episodes)
