"""StraTA on WebShop through verl's real trainer on CPU: the tiny WebShop recipe
(recipes/train-strata-webshop-tiny-cpu.sh) for 2 steps and a validation after the second, on a catalogue the
recipe generates (`strata make-webshop`, WebShop's file layout) and task lists `strata prepare-data --env webshop`
writes from it.

What only a WebShop run shows: the goals reach Ray's game processes as game ids and come back as WebShop's search
page with the goal's instruction, the purchase's reward becomes the score the trainer logs and the evaluation
file reports (per subtask as well), and no process of the run outlives it. The model is the playing ALFWorld
agent's (tests/integration/conftest.py), cheap for its 2,048-entry vocabulary; it was never taught WebShop and
writes ALFWorld's tags, so its episodes end at the step limit (searching, clicking and buying through the pool
are tests/workflow/test_webshop_episode.py's checks). The `hf` rollout at world size 1 keeps
this the cheapest trainer start in `make test`; vLLM, resume, LoRA and advantages are the ALFWorld and ScienceWorld
runs' checks (the environment plays no part in them).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from strata.envs.webshop.tasks import GAME_IDS, TASK_TYPE
from strata.report.dumps import dump_files, load_step, rollouts_dir
from strata.report.schema import EvalResult
from tests.integration.trainer_runs import REPO, metrics_by_step, run_recipe_watching_processes

pytestmark = pytest.mark.slow
RECIPE = REPO / "recipes/train-strata-webshop-tiny-cpu.sh"
GOALS = 4  # per split: 4 training goals, 1 a step; validation plays the first 4 test goals once each
ONE_TASK_A_STEP = ("data.train_batch_size=1", "actor_rollout_ref.actor.ppo_mini_batch_size=1",
                   "trainer.val_before_train=false", "trainer.test_freq=2")


@pytest.fixture(scope="module")
def run(tmp_path_factory, playing_agent) -> tuple[Path, dict[int, dict], set[int]]:
    """The recipe for 2 steps (none of whose processes outlives it: `run_recipe`): its output folder, its metrics
    by step, the processes of the run seen while it went."""
    out = tmp_path_factory.mktemp("webshop") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOALS_PER_SPLIT", str(GOALS))
        seen = run_recipe_watching_processes(out, playing_agent, *ONE_TASK_A_STEP, as_trained=False,
                                                   recipe=RECIPE, platform="cpu")
    return out, metrics_by_step(out / "metrics.jsonl"), seen


def test_two_steps_and_a_validation_on_webshop(run):
    out, steps, _ = run
    assert sorted(steps) == [1, 2]
    for step in (1, 2):
        metrics = steps[step]
        # 1 goal x N=2 strategies x M=2 trajectories, one multi-turn row each (the recipe's rows)
        assert metrics["strata/num_strategy_rows"] == 2 and metrics["strata/num_trajectory_rows"] == 4
        assert metrics["env/failed_episodes"] == 0
        assert 0.0 <= metrics["strata/mean_score"] <= 1.0
        assert 0.0 <= metrics[f"train/{TASK_TYPE}/metrics/score"] <= 1.0
    metrics = steps[2]
    assert metrics["val/average/metrics/num_tasks"] == metrics[f"val/{TASK_TYPE}/metrics/num_tasks"] == GOALS
    assert metrics["val/env/failed_episodes"] == 0
    success, score = metrics["val/average/metrics/success_rate"], metrics["val/average/metrics/score"]
    # WebShop's reward is at most 1 and success is reward 1: the mean reward is never below the success rate.
    assert 0.0 <= success <= score <= 1.0
    result = EvalResult.load(out / "eval/eval_seed0.json")  # the recipe's closing evaluation
    assert set(result.per_subtask) == {TASK_TYPE} and result.score == pytest.approx(score)
    assert result.task_set == ("WebShop synthetic goals 0-3 (4), split test, of the 1,000-product files "
                               "(train 500-, test 0-499)")
    assert sum(result.end_reasons.values()) == GOALS and result.end_reasons["environment_failure"] == 0


def test_the_dumps_show_webshop_s_goals_and_scores(run):
    out, steps, _ = run
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["env"]["name"] == "webshop" and config["strata"]["prompts"]["preset"] == "webshop"
    dumps = {kind: dump_files(rollouts_dir(out), kind) for kind in ("train", "valid")}
    assert sorted(dumps["train"]) == [1, 2] and sorted(dumps["valid"]) == [2]
    valid = load_step(dumps["valid"][2])
    assert len({task["task"]["game_file"] for task in valid}) == len(valid) == GOALS
    tasks = valid + [task for step in (1, 2) for task in load_step(dumps["train"][step])]
    for task in tasks:
        assert GAME_IDS.matches(task["task"]["game_file"]) and task["task"]["subtask"] == TASK_TYPE
        # The game process served the goal's own search page: its instruction is the task description.
        page = f"WebShop [SEP] Instruction: [SEP] {task['task_description']} [SEP] Search"
        assert task["initial_observation"] == page
    scores = [task["strategies"][0]["trajectories"][0]["score"] for task in valid]
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert sum(scores) / GOALS == pytest.approx(steps[2]["val/average/metrics/score"])


def test_no_game_process_outlives_the_run(run):
    _, _, seen = run
    assert seen  # the run's processes were found while it went, so that none left after it means something
