"""The GRPO baseline through the same trainer, environment, task lists and evaluation protocol as StraTA.

`recipes/train-grpo-alfworld-text-tiny-cpu.sh` (the tiny StraTA recipe with ``+baseline=grpo``) for one
step on the `hf` rollout, with validation after it: per task G=4 episodes with no strategy (as
many trajectories per step as the StraTA tiny run's N=2 x M=2), no strategy row, no judge, and a
validation of one strategy-free episode per task. On the playing agent's model and games
(tests/integration/conftest.py) with the recipe's own settings: a cheap model (2,048-entry vocabulary) that
writes text under the GRPO prompts, which it was not trained on.
"""

from __future__ import annotations

import pytest
import yaml

from strata.report.dumps import dump_files, load_step, rollouts_dir
from tests.integration.trainer_runs import REPO, TEST_AGENT, metrics_by_step, run_recipe

pytestmark = pytest.mark.slow
RECIPE = REPO / "recipes/train-grpo-alfworld-text-tiny-cpu.sh"
VALID_GAMES = TEST_AGENT["valid_games"]


@pytest.fixture(scope="module")
def grpo_run(tmp_path_factory, playing_agent):
    out = tmp_path_factory.mktemp("grpo") / "run"
    run_recipe(out, playing_agent, "trainer.val_before_train=false", as_trained=False, recipe=RECIPE,
               platform="cpu", steps=1)
    return out, metrics_by_step(out / "metrics.jsonl")


def test_grpo_trains_flat_groups(grpo_run):
    out, steps = grpo_run
    assert sorted(steps) == [1]
    metrics = steps[1]
    assert metrics["strata/num_strategy_rows"] == 0  # no strategy level
    assert metrics["strata/num_trajectory_rows"] == 8  # 2 tasks x G=4, as StraTA's 2 x N=2 x M=2
    assert metrics["strata/judge_format_rate"] == 0.0 and metrics["strata/judge_flag_rate"] == 0.0  # no judge
    assert metrics["actor/grad_norm"] > 0
    assert metrics["val/average/metrics/num_tasks"] == VALID_GAMES  # validation after the step, one per task
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
    assert len(validation) == VALID_GAMES and all(v["candidates"] == [] for v in validation)
