"""The evaluation recipes' last step: validation metrics in a verl JSONL log -> the per-seed evaluation JSON."""

from __future__ import annotations

import json

import pytest

from strata.cli import main
from strata.report.schema import EvalResult, EvalSchemaError, TaskOutcome
from strata.trainer.metrics import validation_metrics


def test_eval_result_from_a_logged_validation(tmp_path, capsys):
    records = {"won": [1.0, 0.0, 1.0], "subtask": ["pick", "pick", "cool"], "episode_length": [5, 50, 9],
               "num_responses": [6, 51, 10], "num_well_formed": [6, 51, 10], "num_admissible": [5, 40, 9],
               "num_refused_repeats": [0, 0, 0],
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
    assert result.end_reasons == {"won": 2, "step_limit": 1, "lost": 0, "token_budget": 0, "environment_failure": 0}
    table = (tmp_path / "eval/eval_seed2.md").read_text()
    assert "pick" in table and "How the episodes ended (all seeds): won 2, step limit 1." in table


def test_a_log_without_validation_is_one_clear_error(tmp_path, capsys):
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 1, "data": {"actor/grad_norm": 1.0}}) + "\n")
    assert main(["eval-result", "--metrics", str(log), "--seed", "0", "--out", str(tmp_path)]) == 2
    assert "no validation metrics" in capsys.readouterr().err


def test_sciworld_validation_logs_make_evaluations_and_a_report(tmp_path, capsys):
    """ScienceWorld's task types are the subtasks, in the simulator's order, and its progress score is
    carried per subtask and overall into the per-seed files and the combined table."""
    paths = []
    for seed, scores in ((0, [1.0, 0.25, 0.5]), (1, [1.0, 0.75, 0.5])):
        records = {"won": [1.0, 0.0, 0.0], "subtask": ["find-plant", "boil", "boil"], "episode_length": [9, 50, 4],
                   "num_responses": [10, 51, 5], "num_well_formed": [10, 51, 5], "num_admissible": [9, 40, 4],
                   "num_refused_repeats": [0, 0, 0],
                   "end_reason": ["won", "step_limit", "lost"], "score": scores}
        log = tmp_path / f"metrics{seed}.jsonl"
        log.write_text(json.dumps({"step": 0, "data": validation_metrics(records)}) + "\n")
        assert main(["eval-result", "--metrics", str(log), "--seed", str(seed), "--split", "test",
                     "--out", str(tmp_path / "eval")]) == 0
        paths.append(str(tmp_path / f"eval/eval_seed{seed}.json"))
    result = EvalResult.load(paths[0])
    assert list(result.per_subtask) == ["boil", "find-plant"]  # ScienceWorld's order (TASK_TYPES)
    assert result.per_subtask["boil"].score == pytest.approx(0.375) and result.score == pytest.approx(1.75 / 3)
    assert main(["report-eval", *paths, "--out", str(tmp_path / "report")]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["score"]["boil"]["per_seed"] == pytest.approx([0.375, 0.625])
    assert report["score"]["all"]["mean"] == pytest.approx((1.75 / 3 + 2.25 / 3) / 2)
    markdown = (tmp_path / "report.md").read_text()
    # The number comparable to the paper's leads: AgentGym counts the lost episode (one of 3 per seed) as -100
    # where the project's score floors it at 0; both are named.
    assert markdown.startswith("**ScienceWorld score comparable to the paper's 63.5** (AgentGym's mean score, a lost "
                               "game counts -100): 33.33 ± 11.79 (seed(s) 0, 1: 25.00, 41.67). The project's mean "
                               "score, a lost game counting 0: 66.67 ± 11.79.")
    assert markdown.index("Mean score") < markdown.index("| all | 3 | 58.33 | 75.00 |") < markdown.index(
        "Success rate (%)")  # then the per-subtask scores, then success


def test_the_horizon_of_the_run_is_recorded_and_named_before_any_number(tmp_path, capsys):
    """ScienceWorld at H = 50 (the recipes') and at AgentGym's 30 are two measurements: eval-result reads the run's
    env.max_steps from the config.yaml the trainer saves, every table names it, and seeds of two horizons are
    not combined."""
    records = {"won": [1.0, 0.0], "subtask": ["boil", "boil"], "episode_length": [9, 30], "num_responses": [10, 31],
               "num_well_formed": [10, 31], "num_admissible": [9, 30],
               "num_refused_repeats": [0, 0], "end_reason": ["won", "lost"],
               "score": [1.0, 0.5]}
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 0, "data": validation_metrics(records)}) + "\n")
    seeds = []
    for seed, horizon in ((0, 30), (1, 30), (2, 50)):
        run = tmp_path / f"run{seed}"  # its config, no dumps (run.dump.validation=false): a warning, no outcomes
        run.mkdir()
        (run / "config.yaml").write_text(f"env:\n  name: sciworld\n  max_steps: {horizon}\n")
        capsys.readouterr()
        assert main(["eval-result", "--metrics", str(log), "--seed", str(seed), "--split", "test", "--dumps",
                     str(run), "--out", str(tmp_path / "eval")]) == 0
        seeds.append(str(tmp_path / f"eval/eval_seed{seed}.json"))
    assert EvalResult.load(seeds[0]).max_steps == 30
    markdown = (tmp_path / "eval/eval_seed0.md").read_text()
    assert markdown.startswith("Episodes of at most 30 steps (env.max_steps).\n\n**ScienceWorld score comparable to "
                               "the paper's 63.5** (AgentGym's mean score, a lost game counts -100; at most 30 steps "
                               "an episode, AgentGym's runs 30): ")
    assert main(["report-eval", *seeds[:2], "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report.md").read_text().startswith("Episodes of at most 30 steps (env.max_steps).")
    capsys.readouterr()
    assert main(["report-eval", *seeds, "--out", str(tmp_path / "mixed")]) == 2
    assert "seed 2 has max_steps=50 but seed 0 has 30" in capsys.readouterr().err
    # A run folder without config.yaml records no horizon; a file without the field still loads.
    (tmp_path / "run0/config.yaml").unlink()
    assert main(["eval-result", "--metrics", str(log), "--seed", "3", "--split", "test", "--dumps",
                 str(tmp_path / "run0"), "--out", str(tmp_path / "eval")]) == 0
    assert "max_steps" not in json.loads((tmp_path / "eval/eval_seed3.json").read_text())
    with pytest.raises(EvalSchemaError, match="max_steps"):
        EvalResult.from_dict({**json.loads((tmp_path / "eval/eval_seed3.json").read_text()), "max_steps": 0})


def test_alfworld_evaluations_carry_no_score(tmp_path):
    records = {"won": [1.0], "subtask": ["pick"], "episode_length": [5], "num_responses": [6],
               "num_well_formed": [6], "num_admissible": [5],
               "num_refused_repeats": [0], "end_reason": ["won"], "score": [None]}
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 0, "data": validation_metrics(records)}) + "\n")
    assert main(["eval-result", "--metrics", str(log), "--seed", "0", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "eval_seed0.json").read_text())
    assert "score" not in data and "score" not in data["per_subtask"]["pick"]


def test_an_unknown_split_is_one_usage_error(tmp_path, capsys):
    """A mistyped split (`valid_sen`) is refused before anything is read or written, naming the known ones."""
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 0, "data": {"val/average/metrics/success_rate": 1.0}}) + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["eval-result", "--metrics", str(log), "--seed", "0", "--split", "valid_sen",
              "--out", str(tmp_path / "eval")])
    assert exit_info.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("strata eval-result: error: argument --split: invalid choice: 'valid_sen'")
    assert "valid_seen" in last and "test" in last
    assert not (tmp_path / "eval").exists()


def test_the_evaluated_task_list_s_digest_is_recorded_and_checked(tmp_path, capsys):
    from strata.envs.alfworld.bundled import bundled_data_path
    from strata.envs.alfworld.discovery import load_split
    from strata.envs.task_list import task_list_digest, write_task_list

    games = bundled_data_path(cache_dir=tmp_path / "cache")
    tasks = load_split(games, "valid_seen")[:3]
    task_list = write_task_list(tasks, tmp_path / "valid_seen.parquet")
    records = {"won": [1.0, 0.0, 0.0], "subtask": ["pick"] * 3, "episode_length": [5, 50, 9],
               "num_responses": [6, 51, 10], "num_well_formed": [6, 51, 10], "num_admissible": [5, 40, 9],
               "num_refused_repeats": [0, 0, 0],
               "end_reason": ["won", "step_limit", "lost"]}
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 0, "data": validation_metrics(records)}) + "\n")
    assert main(["eval-result", "--metrics", str(log), "--seed", "0", "--task-list", str(task_list),
                 "--out", str(tmp_path / "eval")]) == 0
    saved = json.loads((tmp_path / "eval/eval_seed0.json").read_text())
    assert saved["task_list_sha256"] == task_list_digest(tasks)
    assert EvalResult.load(tmp_path / "eval/eval_seed0.json").task_list_sha256 == task_list_digest(tasks)
    # Without --task-list the field is absent, and files written before it existed still load.
    assert main(["eval-result", "--metrics", str(log), "--seed", "1", "--out", str(tmp_path / "eval")]) == 0
    assert "task_list_sha256" not in json.loads((tmp_path / "eval/eval_seed1.json").read_text())
    # A validation of part of the list (data.val_max_samples): a warning, and no digest that would not name it.
    longer = write_task_list(load_split(games, "valid_seen")[:4], tmp_path / "other.parquet")
    capsys.readouterr()
    assert main(["eval-result", "--metrics", str(log), "--seed", "2", "--task-list", str(longer),
                 "--out", str(tmp_path / "eval")]) == 0
    assert "lists 4 tasks but the validation evaluated 3; its digest is not recorded" in capsys.readouterr().err
    assert "task_list_sha256" not in json.loads((tmp_path / "eval/eval_seed2.json").read_text())
    assert main(["eval-result", "--metrics", str(log), "--seed", "3", "--task-list", str(tmp_path / "none.parquet"),
                 "--out", str(tmp_path / "eval")]) == 2
    assert "none.parquet does not exist" in capsys.readouterr().err
    with pytest.raises(EvalSchemaError, match="task_list_sha256 must be 64 lowercase hex digits"):
        EvalResult.from_dict({**saved, "task_list_sha256": "abc"})


def test_each_task_s_outcome_comes_from_the_validation_dumps(tmp_path, capsys):
    from tests.report.dump_fixture import simple_task, write_dump

    records = {"won": [1.0, 0.0], "subtask": ["heat", "heat"], "episode_length": [1, 50], "num_responses": [2, 51],
               "num_well_formed": [2, 51], "num_admissible": [1, 50],
               "num_refused_repeats": [0, 0], "end_reason": ["won", "step_limit"]}
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 150, "data": validation_metrics(records)}) + "\n")
    won, lost = simple_task("valid", 150, 4, "heat an egg"), simple_task("valid", 150, 1, "heat a mug")
    lost["strategies"][0]["trajectories"][0]["won"] = False
    run = tmp_path / "run"
    write_dump(run / "rollouts/valid/step_000000-w0.jsonl.gz", [simple_task("valid", 0, 1, "an earlier validation")])
    write_dump(run / "rollouts/valid/step_000150-w0.jsonl.gz", [won, lost])
    assert main(["eval-result", "--metrics", str(log), "--seed", "0", "--dumps", str(run),
                 "--out", str(tmp_path / "eval")]) == 0
    result = EvalResult.load(tmp_path / "eval/eval_seed0.json")
    assert result.outcomes == {1: TaskOutcome(1, "heat", False), 4: TaskOutcome(4, "heat", True)}
    # Dumps that disagree with the logged rates (another run's, or a validation of another step) are refused.
    lost["strategies"][0]["trajectories"][0]["won"] = True
    write_dump(run / "rollouts/valid/step_000150-w0.jsonl.gz", [won, lost])
    capsys.readouterr()
    assert main(["eval-result", "--metrics", str(log), "--seed", "1", "--dumps", str(run),
                 "--out", str(tmp_path / "eval")]) == 2
    assert "episodes of heat: 2 won of 2, but per_subtask says 1.000 of 2" in capsys.readouterr().err
    # A run without validation dumps (run.dump.validation=false) still gets its table, without the outcomes.
    assert main(["eval-result", "--metrics", str(log), "--seed", "2", "--dumps", str(tmp_path / "eval"),
                 "--out", str(tmp_path / "eval")]) == 0
    assert "no rollouts/ folder in" in capsys.readouterr().err
    assert EvalResult.load(tmp_path / "eval/eval_seed2.json").episodes is None


def test_webshop_evaluations_lead_with_webshop_s_score(tmp_path):
    """WebShop's score is its purchase reward x 100 (a wrong purchase keeps its partial credit): no AgentGym line."""
    records = {"won": [1.0, 0.0], "subtask": ["webshop", "webshop"], "episode_length": [5, 7], "num_responses": [5, 7],
               "num_well_formed": [5, 7], "num_admissible": [5, 6],
               "num_refused_repeats": [0, 0], "end_reason": ["won", "lost"], "score": [1.0, 0.5]}
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 0, "data": validation_metrics(records)}) + "\n")
    assert main(["eval-result", "--metrics", str(log), "--seed", "0", "--split", "test", "--out", str(tmp_path)]) == 0
    result = EvalResult.load(tmp_path / "eval_seed0.json")
    assert result.score == pytest.approx(0.75)
    assert list(result.per_subtask) == ["webshop"] and result.per_subtask["webshop"].score == pytest.approx(0.75)
    markdown = (tmp_path / "eval_seed0.md").read_text()
    assert markdown.startswith("Mean score (0-100, WebShop's purchase reward x 100, as the paper and verl-agent "
                               "report it) on `test`")
    assert "| all | 2 | 75.00 | 75.00 |" in markdown and "AgentGym" not in markdown


def test_a_webshop_evaluation_names_its_goals_before_any_number(tmp_path, capsys):
    """A WebShop number means little without its goal kind, catalogue and split: recorded from the task list."""
    from strata.envs.task_list import write_task_list
    from strata.envs.webshop.generate import write_catalog
    from strata.envs.webshop.prepare import webshop_tasks

    catalogue = write_catalog(tmp_path / "catalogue", num_products=300, seed=0)
    task_list = write_task_list(webshop_tasks(catalogue, "test", limit=2), tmp_path / "test.parquet")
    records = {"won": [1.0, 0.0], "subtask": ["webshop", "webshop"], "episode_length": [5, 7], "num_responses": [5, 7],
               "num_well_formed": [5, 7], "num_admissible": [5, 6],
               "num_refused_repeats": [0, 0], "end_reason": ["won", "lost"], "score": [1.0, 0.5]}
    log = tmp_path / "metrics.jsonl"
    log.write_text(json.dumps({"step": 0, "data": validation_metrics(records)}) + "\n")
    for seed in (0, 1):
        assert main(["eval-result", "--metrics", str(log), "--seed", str(seed), "--split", "test", "--task-list",
                     str(task_list), "--out", str(tmp_path / "eval")]) == 0
    named = ("WebShop synthetic goals 0-1 (2), split test, of the 1,000-product files (train 500-, test 0-499)")
    assert EvalResult.load(tmp_path / "eval/eval_seed0.json").task_set == named
    assert (tmp_path / "eval/eval_seed0.md").read_text().startswith(f"Tasks: {named}.\n\nMean score (0-100, WebShop's")
    capsys.readouterr()
    seeds = [str(tmp_path / f"eval/eval_seed{seed}.json") for seed in (0, 1)]
    assert main(["report-eval", *seeds, "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report.md").read_text().startswith(f"Tasks: {named}.")
    # Seeds of other goal sets are not combined into one number.
    other = json.loads((tmp_path / "eval/eval_seed1.json").read_text()) | {"task_set": named.replace("synthetic",
                                                                                                       "human")}
    (tmp_path / "eval/eval_seed1.json").write_text(json.dumps(other))
    capsys.readouterr()
    assert main(["report-eval", *seeds, "--out", str(tmp_path / "mixed")]) == 2
    assert "seed 1 has task_set='WebShop human goals" in capsys.readouterr().err
