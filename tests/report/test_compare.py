"""`strata compare`: runs side by side only on the same games, every number from the runs' own files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from strata.cli import main
from strata.report.compare import compare_reports
from strata.report.eval_table import combine_evaluations
from strata.report.schema import EvalSchemaError, TaskOutcome

GAMES = "a" * 64
STRATA = [{"pick": 34, "look": 13, "clean": 25, "heat": 13, "cool": 22, "pick2": 21},
          {"pick": 34, "look": 12, "clean": 25, "heat": 13, "cool": 23, "pick2": 22}]
GIGPO = [{"pick": 30, "look": 10, "clean": 20, "heat": 12, "cool": 20, "pick2": 18},
         {"pick": 32, "look": 11, "clean": 21, "heat": 12, "cool": 20, "pick2": 20}]


def evaluations(make_evaluation, wins, digest=GAMES):
    return [replace(make_evaluation(seed, w), task_list_sha256=digest) for seed, w in enumerate(wins)]


def test_side_by_side_with_mean_and_std(make_evaluation):
    comparison = compare_reports({"strata": combine_evaluations(evaluations(make_evaluation, STRATA)),
                                  "gigpo": combine_evaluations(evaluations(make_evaluation, GIGPO))})
    text = comparison.to_markdown()
    # strata all: 128/140 and 129/140 -> 91.43, 92.14; gigpo: 110 and 116 -> 78.57, 82.86.
    assert "| all | 91.79 ± 0.51 | 80.71 ± 3.03 |" in text
    assert "| pick | 97.14 ± 0.00 | 88.57 ± 4.04 |" in text
    assert f"Task list sha256 {GAMES}" in text
    assert json.loads(comparison.to_json())["runs"]["gigpo"]["seeds"] == [0, 1]


def test_pass_at_k_where_seeds_record_each_game(make_evaluation):
    def with_episodes(result, won):
        return replace(result, episodes=tuple(TaskOutcome(i, "pick", w) for i, w in enumerate(won)),
                       num_tasks=3, success_rate=sum(won) / 3, per_subtask={"pick": replace(
                           result.per_subtask["pick"], success_rate=sum(won) / 3, num_tasks=3)})
    base = evaluations(make_evaluation, STRATA)
    a = [with_episodes(base[0], [True, False, False]), with_episodes(base[1], [False, True, False])]
    b = [with_episodes(base[0], [True, True, False]), with_episodes(base[1], [True, True, False])]
    text = compare_reports({"a": combine_evaluations(a), "b": combine_evaluations(b)}).to_markdown()
    assert "| a | 2 | 33.33 | 66.67 |" in text and "| b | 2 | 66.67 | 66.67 |" in text


def test_different_or_unrecorded_task_lists_are_refused(make_evaluation):
    strata = combine_evaluations(evaluations(make_evaluation, STRATA))
    other = combine_evaluations(evaluations(make_evaluation, GIGPO, digest="b" * 64))
    with pytest.raises(EvalSchemaError, match="different task lists"):
        compare_reports({"strata": strata, "gigpo": other})
    unrecorded = combine_evaluations([make_evaluation(0, GIGPO[0])])
    with pytest.raises(EvalSchemaError, match="run 'gigpo' seed 0 does not record its task list"):
        compare_reports({"strata": strata, "gigpo": unrecorded})
    with pytest.raises(EvalSchemaError, match="at least two runs"):
        compare_reports({"strata": strata})


def test_runs_of_different_horizons_are_refused(make_evaluation):
    """ScienceWorld at H = 50 beside AgentGym's 30 would compare two measurements; an unrecorded horizon is not
    held against a run."""
    def at(horizon, wins):
        return combine_evaluations([replace(result, max_steps=horizon)
                                    for result in evaluations(make_evaluation, wins)])
    with pytest.raises(EvalSchemaError, match=r"different horizons \(env.max_steps: \{'strata': 50, 'gigpo': 30\}\)"):
        compare_reports({"strata": at(50, STRATA), "gigpo": at(30, GIGPO)})
    unknown = compare_reports({"strata": at(50, STRATA), "gigpo": at(None, GIGPO)})
    assert [report.results[0].max_steps for report in unknown.runs.values()] == [50, None]


def test_the_command_writes_both_files_and_refuses_in_one_line(tmp_path: Path, make_evaluation, capsys):
    paths = {}
    for name, wins in (("strata", STRATA), ("gigpo", GIGPO)):
        paths[name] = [str(e.save(tmp_path / f"{name}{e.seed}.json")) for e in evaluations(make_evaluation, wins)]
    out = tmp_path / "cmp" / "compare"
    assert main(["compare", "--run", "strata", *paths["strata"], "--run", "gigpo", *paths["gigpo"],
                 "--out", str(out)]) == 0
    assert "80.71 ± 3.03" in (tmp_path / "cmp" / "compare.md").read_text()
    assert set(json.loads((tmp_path / "cmp" / "compare.json").read_text())["runs"]) == {"strata", "gigpo"}
    capsys.readouterr()
    assert main(["compare", "--run", "strata", *paths["strata"], "--run", "strata", *paths["gigpo"],
                 "--out", str(out)]) == 2
    assert capsys.readouterr().err == "error: --run strata is given twice\n"
