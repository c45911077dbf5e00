"""The evaluation recipes' last step: validation metrics in a verl JSONL log -> the per-seed evaluation JSON."""

from __future__ import annotations

import json

import pytest

from strata.cli import main
from strata.report.schema import EvalResult
from strata.trainer.metrics import validation_metrics


def test_eval_result_from_a_logged_validation(tmp_path, capsys):
    records = {"won": [1.0, 0.0, 1.0], "subtask": ["pick", "pick", "cool"], "episode_length": [5, 50, 9],
               "num_responses": [6, 51, 10], "num_well_formed": [6, 51, 10],
               "end_reason": ["won", "step_limit", "won"]}
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 150, "data": validation_metrics(records)}) + "\n")

    assert main(["eval-result", "--metrics", str(log), "--seed", "2", "--checkpoint", "ckpt/global_step_150",
                 "--out", str(tmp_path / "eval")]) == 0
    result = EvalResult.load(tmp_path / "eval/eval_seed2.json")
    assert result.seed == 2 and result.step == 150 and result.num_tasks == 3
    assert result.success_rate == pytest.approx(2 / 3)
    assert result.per_subtask["pick"].success_rate == pytest.approx(0.5)
    assert result.per_subtask["pick"].num_tasks == 2
    assert result.per_subtask["cool"].success_rate == 1.0
    assert result.mean_episode_length == pytest.approx(64 / 3)
    assert result.format_rate == 1.0
    assert "pick" in (tmp_path / "eval/eval_seed2.md").read_text()


def test_a_log_without_validation_is_one_clear_error(tmp_path, capsys):
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 1, "data": {"actor/grad_norm": 1.0}}) + "\n")
    assert main(["eval-result", "--metrics", str(log), "--seed", "0", "--out", str(tmp_path)]) == 2
    assert "no validation metrics" in capsys.readouterr().err
