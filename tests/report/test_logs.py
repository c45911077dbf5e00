"""Reading metrics back from verl's own loggers: the JSONL file logger and the console logger."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest

from strata.report.logs import is_jsonl_log, parse_console_line, read_metrics

STEPS = {
    0: {"val/average/metrics/success_rate": np.float64(0.25), "val/pick/metrics/success_rate": 0.5},
    1: {"actor/grad_norm": 0.125, "actor/lr": 1e-06, "strata/num_strategy_rows": np.int64(64)},
    2: {"val/average/metrics/success_rate": 0.3333333333333333, "val/pick/metrics/success_rate": 2 / 3,
        "actor/pg_loss": -0.0123, "timing_s/step": float("nan"), "flag": True},
}


def write_with_verl(tmp_path: Path, monkeypatch, capsys) -> tuple[Path, Path]:
    """Both logs written by verl's own logger classes, as the trainer writes them."""
    from verl.utils.logger.aggregate_logger import LocalLogger
    from verl.utils.tracking import FileLogger

    jsonl = tmp_path / "metrics.jsonl"
    monkeypatch.setenv("VERL_FILE_LOGGER_PATH", str(jsonl))
    file_logger, console = FileLogger("strata", "test"), LocalLogger()
    for step, data in STEPS.items():
        file_logger.log(data=data, step=step)
        console.log(data=data, step=step)
    file_logger.finish()
    console_log = tmp_path / "train.log"
    # Ray prefixes every line of the driver's task runner and colours the prefix
    console_log.write_text("".join(f"\x1b[36m(TaskRunnerV1 pid=42)\x1b[0m {line}\n"
                                   for line in capsys.readouterr().out.splitlines()))
    return jsonl, console_log


def test_jsonl_and_console_give_the_same_numbers(tmp_path: Path, monkeypatch, capsys) -> None:
    jsonl, console = write_with_verl(tmp_path, monkeypatch, capsys)
    assert is_jsonl_log(jsonl) and not is_jsonl_log(console)
    from_file, from_console = read_metrics([jsonl]), read_metrics([console])
    assert sorted(from_file) == [0, 1, 2]
    assert from_file[2]["val/average/metrics/success_rate"] == 1 / 3  # full precision survives
    assert from_file[1]["strata/num_strategy_rows"] == 64.0
    assert "flag" not in from_file[2]  # booleans are not metrics
    assert math.isnan(from_file[2]["timing_s/step"])
    for step in from_file:
        assert from_file[step].keys() == from_console[step].keys()
        for key, value in from_file[step].items():
            assert value == from_console[step][key] or (math.isnan(value) and math.isnan(from_console[step][key]))


def test_later_parts_override_earlier(tmp_path: Path) -> None:
    """A resumed run logs the resuming step's validation again; later files win, other keys merge."""
    first, second = tmp_path / "part1.jsonl", tmp_path / "part2.jsonl"
    first.write_text('{"step": 1, "data": {"a": 1.0, "b": 1.0}}\n{"step": 2, "data": {"a": 2.0}}\n')
    second.write_text('{"step": 2, "data": {"a": 2.5, "c": 3.0}}\n{"step": 3, "data": {"a": 3.0}}\n')
    assert read_metrics([first, second]) == {1: {"a": 1.0, "b": 1.0}, 2: {"a": 2.5, "c": 3.0}, 3: {"a": 3.0}}


def test_partial_last_line_is_skipped(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="strata.report")
    log = tmp_path / "killed.jsonl"
    log.write_text('{"step": 1, "data": {"a": 1.0}}\n{"step": 2, "data": {"a"')
    assert read_metrics([log]) == {1: {"a": 1.0}}
    assert "killed.jsonl:2 is not JSON" in caplog.text


@pytest.mark.parametrize("line, expected", [
    ("step:3 - a/b:-1.5 - c:1e-05", (3, {"a/b": -1.5, "c": 1e-05})),
    ("\x1b[36m(TaskRunner pid=7)\x1b[0m step:12 - val/x:np.float64(0.5) - n:np.int64(4)",
     (12, {"val/x": 0.5, "n": 4.0})),
    ("(TaskRunner pid=7) step:2 - a:1.0\x1b[32m [repeated 2x across cluster]\x1b[0m", (2, {"a": 1.0})),
    ("step:5", (5, {})),
    ("Training step:5 of 10", None),
    ("INFO: global_step: 3 - a:1", None),
])
def test_console_lines(line: str, expected) -> None:
    assert parse_console_line(line) == expected


def test_missing_file_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="trainer.logger"):
        read_metrics([tmp_path / "nope.jsonl"])
