"""The GRPO baseline through the same trainer, environment, task lists and evaluation protocol as StraTA.

`recipes/train-grpo-alfworld-text-tiny-cpu.sh` (the tiny StraTA recipe with ``+baseline=grpo``) for one
step on the `hf` rollout, with validation after it: per task G=4 episodes with no strategy (as
many trajectories per step as the StraTA tiny run's N=2 x M=2), no strategy row, no judge, and a
validation of one strategy-free episode per task.
"""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from strata.report.dumps import dump_files, load_step, rollouts_dir
from tests.integration.trainer_runs import REPO, metrics_by_step

pytestmark = pytest.mark.slow
RECIPE = REPO / "recipes/train-grpo-alfworld-text-tiny-cpu.sh"


@pytest.fixture(scope="module")
def grpo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("grpo") / "run"
    env = dict(os.environ, OUT=str(out), STEPS="1", VAL_SPLIT="valid_unseen", PLATFORM="cpu",
               PY=str(REPO / ".venv/bin/python"))
    result = subprocess.run(["bash", str(RECIPE), "trainer.val_before_train=false"], env=env, capture_output=True,
                            text=True, timeout=1200, cwd=REPO)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return out, metrics_by_step(out / "metrics.jsonl")


def test_grpo_trains_flat_groups(grpo_run):
    out, steps = grpo_run
    assert sorted(steps) == [1]
    metrics = steps[1]
    assert metrics["strata/num_strategy_rows"] == 0  # no strategy level
    assert metrics["strata/num_trajectory_rows"] == 8  # 2 tasks x G=4, as StraTA's 2 x N=2 x M=2
    assert metrics["strata/judge_format_rate"] == 0.0 and metrics["strata/judge_flag_rate"] == 0.0  # no judge
    assert metrics["actor/grad_norm"] > 0
    assert metrics["val/average/metrics/num_tasks"] == 6  # validation after the step, one episode per task
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["strata"]["algorithm"] == "grpo" and config["strata"]["prompts"]["preset"] == "alfworld_grpo"
    assert (out / "eval/eval_seed0.json").is_file()  # the evaluation protocol's table, as for StraTA


def test_grpo_dumps_show_no_strategy(grpo_run):
    out, steps = grpo_run
    tasks = load_step(dump_files(rollouts_dir(out), "train")[1])
    assert len(tasks) == 2
    for task in tasks:
        assert task["mode"] == "grpo" and task["candidates"] == []
        (group,) = task["strategies"]
        assert group["strategy"] is None and len(group["trajectories"]) == 4
        assert all(t["advantage"] is not None for t in group["trajectories"] if t["trained"])
    validation = load_step(dump_files(rollouts_dir(out), "valid")[1])
    assert len(validation) == 6 and all(v["candidates"] == [] for v in validation)
