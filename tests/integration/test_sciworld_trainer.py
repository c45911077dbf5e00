"""StraTA on ScienceWorld end to end through verl's real trainer on CPU: the tiny ScienceWorld recipe
(recipes/train-strata-sciworld-tiny-cpu.sh) for 1 step, validating on 6 dev variations before and after it.
(Multi-step runs, resume and the step after a restored optimizer step are the ALFWorld runs' checks: the
environment plays no part in them.)

Real verl (v1 trainer, FSDP2 actor + reference, TransferQueue, Ray, the `hf` rollout server), the real
ScienceWorld simulator (one JVM per game process), N=2 strategies of σ·N=4 candidates, M=2 trajectories each,
the judge on. The model is the playing ALFWorld agent's (tests/integration/conftest.py), cheap for its 2,048-entry
vocabulary; it was never taught ScienceWorld and rarely writes a well-formed action there, so the numbers checked
are the plumbing's: counts, ranges, the score metrics and the dumps, and that no Java process outlives the run.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from strata.envs.sciworld.tasks import is_game_id
from strata.report.dumps import dump_files, load_step, rollouts_dir
from strata.report.schema import EvalResult
from tests.integration.trainer_runs import REPO, metrics_by_step, use_agent_model

pytestmark = pytest.mark.slow

RECIPE = REPO / "recipes/train-strata-sciworld-tiny-cpu.sh"
TASK_TYPES = ("find-living-thing", "find-non-living-thing", "find-plant")  # the recipe's, 2 variations each


def java_pids() -> set[int]:
    """Process ids of every running java process on the machine (zombies excluded)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "java" and \
                        (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory, playing_agent) -> tuple[Path, dict[int, dict], set[int]]:
    """The recipe for 1 step: its output folder, its metrics by step, and the java processes left after it."""
    before = java_pids()
    out = tmp_path_factory.mktemp("sciworld") / "run"
    use_agent_model(out, playing_agent)
    env = dict(os.environ, OUT=str(out), STEPS="1", PLATFORM="cpu", PY=str(REPO / ".venv/bin/python"))
    result = subprocess.run(["bash", str(RECIPE)], env=env, capture_output=True, text=True, timeout=900, cwd=REPO)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    deadline = time.monotonic() + 30  # Ray's workers and their game processes wind down after the driver
    while java_pids() - before and time.monotonic() < deadline:
        time.sleep(0.5)
    return out, metrics_by_step(out / "metrics.jsonl"), java_pids() - before


def test_a_strata_step_on_sciworld_with_validation(run):
    out, steps, _ = run
    assert sorted(steps) == [0, 1]
    for step in (0, 1):  # validation before training and after the step (test_freq=1)
        metrics = steps[step]
        assert metrics["val/average/metrics/num_tasks"] == 6  # the whole split, one episode per variation
        assert all(metrics[f"val/{name}/metrics/num_tasks"] == 2 for name in TASK_TYPES)
        assert 0.0 <= metrics["val/average/metrics/success_rate"] <= 1.0
        assert 0.0 <= metrics["val/average/metrics/score"] <= 1.0
        assert all(0.0 <= metrics[f"val/{name}/metrics/score"] <= 1.0 for name in TASK_TYPES)
        assert metrics["val/env/failed_episodes"] == 0
        assert sum(metrics[f"val/end_reason/{reason}"] for reason in
                   ("won", "step_limit", "lost", "token_budget", "environment_failure")) == 6
    metrics = steps[1]
    # 2 tasks x N=2 strategy rows; 2 tasks x N·M=4 trajectory rows (no environment failures)
    assert metrics["strata/num_strategy_rows"] == 4
    assert metrics["strata/num_trajectory_rows"] == 8
    assert metrics["env/failed_episodes"] == 0
    assert 0.0 <= metrics["strata/mean_score"] <= 1.0
    trained = [name for name in TASK_TYPES if f"train/{name}/metrics/score" in metrics]
    assert trained and all(0.0 <= metrics[f"train/{name}/metrics/score"] <= 1.0 for name in trained)
    assert metrics["actor/grad_norm"] > 0
    result = EvalResult.load(out / "eval/eval_seed0.json")  # the recipe's closing evaluation
    assert set(result.per_subtask) == set(TASK_TYPES) and result.score is not None
    assert sum(result.end_reasons.values()) == 6 and result.end_reasons["environment_failure"] == 0


def test_the_run_folder_holds_the_config_and_the_dumps(run):
    out, steps, _ = run
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["env"]["name"] == "sciworld" and config["strata"]["prompts"]["preset"] == "sciworld"
    dumps = {kind: dump_files(rollouts_dir(out), kind) for kind in ("train", "valid")}
    assert sorted(dumps["train"]) == [1] and sorted(dumps["valid"]) == [0, 1]
    valid = load_step(dumps["valid"][1])
    assert len(valid) == 6 and all(is_game_id(task["task"]["game_file"]) for task in valid)
    scores = [task["strategies"][0]["trajectories"][0]["score"] for task in valid]
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert sum(scores) / 6 == pytest.approx(steps[1]["val/average/metrics/score"])
    for task in load_step(dumps["train"][1]):
        assert task["task"]["subtask"] in TASK_TYPES and task["task_description"].startswith("Your task is to")


def test_no_java_process_outlives_the_run(run):
    _, _, left = run
    assert not left, f"java processes left behind: {sorted(left)}"
