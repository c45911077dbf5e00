"""The evaluation JSON: round trips, and rejects files whose numbers do not add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.envs.alfworld.tasks import SUBTASKS
from strata.report.schema import EvalResult, EvalSchemaError, SubtaskResult


@settings(deadline=None)  # no wall-clock limit per example: a loaded CI machine is not a failure
@given(wins=st.lists(st.integers(0, 10), min_size=6, max_size=6), seed=st.integers(0, 2**31),
       format_rate=st.floats(0, 1), length=st.floats(0, 50))
def test_json_round_trip(wins: list[int], seed: int, format_rate: float, length: float) -> None:
    per_subtask = {name: SubtaskResult(w / 10, 10) for name, w in zip(SUBTASKS, wins, strict=True)}
    result = EvalResult(seed=seed, split="valid_unseen", num_tasks=60, success_rate=sum(wins) / 60,
                        per_subtask=per_subtask, format_rate=format_rate, mean_episode_length=length)
    assert EvalResult.from_json(result.to_json()) == result


def test_save_and_load(tmp_path: Path, make_evaluation) -> None:
    result = make_evaluation(0, {"pick": 34, "look": 13, "clean": 25, "heat": 13, "cool": 22, "pick2": 21})
    path = result.save(tmp_path / "eval" / "seed0.json")
    data = json.loads(path.read_text())
    assert list(data["per_subtask"]) == list(SUBTASKS)
    assert data["schema_version"] == 1 and data["step"] == 150
    assert EvalResult.load(path) == result


def _data(make_evaluation) -> dict:
    return make_evaluation(0, dict.fromkeys(SUBTASKS, 10)).to_dict()


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(success_rate=0.9), "task-weighted mean"),
    (lambda d: d.update(num_tasks=141), "add up to 140"),
    (lambda d: d.update(format_rate=1.2), r"format_rate must be a share in \[0, 1\]"),
    (lambda d: d["per_subtask"].update(pick3={"success_rate": 0.5, "num_tasks": 1}), "unknown subtasks"),
    (lambda d: d.pop("split"), r"missing fields \['split'\]"),
    (lambda d: d.update(notes="x"), r"unknown fields \['notes'\]"),
    (lambda d: d.update(schema_version=2), "schema_version 2 is not supported"),
    (lambda d: d["per_subtask"]["pick"].pop("num_tasks"), "success_rate and num_tasks"),
    (lambda d: d.update(seed=True), "seed must be an integer"),
    (lambda d: d.update(end_reasons={"won": 60, "step_limit": 70}), "add up to 130 episodes"),
    (lambda d: d.update(end_reasons={"won": 59, "step_limit": 81}), "end_reasons.won is 59"),
    (lambda d: d.update(end_reasons={"won": 60, "step_limit": 81, "lost": -1}), "end_reasons.lost must be"),
])
def test_rejects_inconsistent_files(make_evaluation, change, message) -> None:
    data = _data(make_evaluation)
    change(data)
    with pytest.raises(EvalSchemaError, match=message):
        EvalResult.from_dict(data)


def test_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "seed3.json"
    path.write_text("{not json")
    with pytest.raises(EvalSchemaError, match="seed3.json: not JSON"):
        EvalResult.load(path)


def test_end_reasons_are_optional_and_round_trip(make_evaluation) -> None:
    data = _data(make_evaluation)
    assert "end_reasons" not in data  # a file from before they were recorded still loads
    data["end_reasons"] = {"won": 60, "step_limit": 78, "environment_failure": 2}
    assert EvalResult.from_json(EvalResult.from_dict(data).to_json()).end_reasons == data["end_reasons"]
