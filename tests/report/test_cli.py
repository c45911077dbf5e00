"""The report tools end to end through `strata.cli.main`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strata.cli import main

SEED0 = {"pick": 34, "look": 13, "clean": 25, "heat": 13, "cool": 22, "pick2": 21}
SEED1 = {"pick": 34, "look": 12, "clean": 25, "heat": 13, "cool": 23, "pick2": 22}


def test_report_eval_writes_markdown_and_json(tmp_path: Path, make_evaluation, capsys) -> None:
    paths = [str(make_evaluation(s, w).save(tmp_path / f"seed{s}.json")) for s, w in ((0, SEED0), (1, SEED1))]
    assert main(["report-eval", *paths, "--out", str(tmp_path / "out" / "report")]) == 0
    assert "| all | 140 | 91.43 | 92.14 | 91.79 ± 0.51 |" in (tmp_path / "out" / "report.md").read_text()
    assert json.loads((tmp_path / "out" / "report.json").read_text())["seeds"] == [0, 1]
    assert "91.79 ± 0.51" in capsys.readouterr().out


def test_report_eval_rejects_a_bad_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "bad.json").write_text('{"seed": 0}')
    assert main(["report-eval", str(tmp_path / "bad.json"), "--out", str(tmp_path / "r")]) == 2
    assert "bad.json: missing fields" in capsys.readouterr().err


def test_curve_from_a_jsonl_log(tmp_path: Path, capsys) -> None:
    log = tmp_path / "metrics.jsonl"
    log.write_text("".join(json.dumps({"step": s, "data": {"val/average/metrics/success_rate": v}}) + "\n"
                           for s, v in ((0, 0.1), (5, 0.5))))
    assert main(["curve", "--log", str(log), "--out", str(tmp_path / "curve")]) == 0
    assert "| 5 | 50.00 |" in capsys.readouterr().out
    assert (tmp_path / "curve" / "curve.png").is_file()
    assert main(["curve", "--log", str(log), "--out", str(tmp_path / "c2"), "--metric", "val/x"]) == 2


def test_curve_from_the_run_folder_alone(tmp_path: Path, capsys) -> None:
    (tmp_path / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": s, "data": {"val/average/metrics/success_rate": v}}) + "\n"
                for s, v in ((0, 0.25), (2, 0.75))))
    assert main(["curve", "--run-dir", str(tmp_path)]) == 0
    assert "| 2 | 75.00 |" in capsys.readouterr().out
    assert (tmp_path / "curve" / "curve.png").is_file()
    assert main(["curve"]) == 2 and "--run-dir" in capsys.readouterr().err


def test_model_card_without_an_evaluation_says_what_is_missing(tmp_path: Path, capsys) -> None:
    assert main(["model-card", "--run-dir", str(tmp_path)]) == 2
    assert "no evaluation in" in capsys.readouterr().err


def test_config_diff_prints_the_count(capsys) -> None:
    code = main(["config-diff", "smoke_grpo_cpu", "smoke_grpo_cpu",
                 "--overrides-b", "actor_rollout_ref.actor.optim.lr=2e-3", "trainer.save_freq=5"])
    assert code == 0
    out = capsys.readouterr().out
    assert "**2 differing keys out of " in out
    assert "algorithm/optimisation: 1 key(s)" in out and "infrastructure: 1 key(s)" in out
    assert main(["config-diff", "smoke_grpo_cpu", "smoke_grpo_cpu", "--overrides-b", "trainer.no_such=1"]) == 2
    assert "Unknown config key" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "content", "message"), [
    ("notes.json", "hello", "not JSON: Expecting value"),
    ("plot.png", b"\x89PNG\x00", "not JSON: 'utf-8' codec can't decode"),
    ("list.json", "[1, 2]", "an evaluation must be a JSON object, got list"),
    ("report.json", '{"results": 3}', "a report's results must be a list of evaluations"),
    ("missing.json", None, "cannot read it (No such file or directory)"),
    ("folder", "DIR", "cannot read it (Is a directory)"),
])
def test_report_eval_says_in_one_line_why_a_file_is_not_an_evaluation(
        tmp_path: Path, capsys, name: str, content: str | bytes | None, message: str) -> None:
    path = tmp_path / name
    if content == "DIR":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert main(["report-eval", str(path), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: {message}") and err.count("\n") == 1


def test_report_eval_cannot_write(tmp_path: Path, make_evaluation, capsys) -> None:
    evaluation = str(make_evaluation(0, SEED0).save(tmp_path / "seed0.json"))
    assert main(["report-eval", evaluation, "--out", f"{evaluation}/report"]) == 2  # a file as the folder
    assert capsys.readouterr().err == f"error: cannot write {evaluation}/report.md (File exists: {evaluation})\n"


def fake_recipe(path: Path, printed: str) -> str:
    """A script that answers ``DRY_RUN=1`` as a recipe does, with ``printed`` after the marker (no verl)."""
    from strata.trainer.main import RESOLVED_CONFIG_MARKER

    path.write_text(f"#!/usr/bin/env bash\n# strata-recipe: train\nset -euo pipefail\n"
                    f"echo '{RESOLVED_CONFIG_MARKER}'\n{printed}\n")
    return str(path)


def test_config_diff_passes_overrides_to_recipes_as_arguments(tmp_path: Path, capsys) -> None:
    recipe = fake_recipe(tmp_path / "r.sh", 'echo "trainer: {nnodes: ${1:-1}, lr: 0.1}"')
    assert main(["config-diff", recipe, recipe, "--overrides-b", "4"]) == 0
    out = capsys.readouterr().out
    assert "**1 differing keys out of 2**" in out and "| `trainer.nnodes` | `1` | `4` |" in out


@pytest.mark.parametrize(("name", "content", "message"), [
    ("not-a-recipe.sh", "#!/bin/bash\necho hello\n", "is not a strata recipe (no `# strata-recipe:` line"),
    ("launch", "#!/usr/bin/env bash\necho hello\n", "is not a strata recipe (no `# strata-recipe:` line"),
    ("no-config.sh", "#!/bin/bash\n# strata-recipe: train\necho hello\n",
     "printed no resolved config: not a strata recipe"),
    ("fails.sh", "# strata-recipe: train\necho 'Traceback (most recent call last):' >&2\necho 'OSError: no GPU' >&2\n"
                 "exit 1\n", "failed with exit status 1: OSError: no GPU"),
    ("list.yaml", "- a\n- b\n", "is not a config: it holds a list, not a mapping of config keys"),
    ("empty.yaml", "", "is not a config: it holds nothing"),
    ("empty.json", "{}", "is not a config: it holds an empty mapping"),
    ("scalar.yaml", "hello world\n", "is not a config: it holds a str"),
    ("broken.yaml", "a: [\n", "is not a YAML config: while parsing a flow node"),
    ("broken.json", "{", "is not a JSON config: Expecting property name"),
    ("plot.yaml", b"\x89PNG\x00", "is not a YAML config: 'utf-8' codec can't decode"),
    ("dangling.yaml", "a: ${b}\n", "Interpolation key 'b' not found"),
])
def test_config_diff_rejects_what_is_not_a_config_in_one_line(
        tmp_path: Path, capsys, name: str, content: str | bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    good = fake_recipe(tmp_path / "good.sh", "echo 'a: 1'")
    assert main(["config-diff", good, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}") and message in err and err.count("\n") == 1, err


def test_config_diff_of_the_two_gpu_recipes(capsys, monkeypatch) -> None:
    """The natural call: the recipes are resolved as DRY_RUN=1 runs them and differ in infrastructure only,
    the same keys as the recipe tests' own resolution finds. (The recipes' ``$PY`` is the recipe tests' warm
    interpreter, which resolves as the real one does: tests/recipes/test_warm_python.py.)"""
    from strata.report.config_diff import ALGORITHM, INFRASTRUCTURE, diff_configs
    from strata.report.config_resolve import flatten
    from tests.recipes import warm_python
    from tests.recipes.resolved import REPO, resolve

    monkeypatch.setenv("PY", warm_python.command())

    small, large = "train-strata-alfworld-text-qwen2.5-1.5b.sh", "train-strata-alfworld-text-qwen2.5-7b.sh"
    assert main(["config-diff", str(REPO / "recipes" / small), str(REPO / "recipes" / large), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = diff_configs(flatten(resolve(small)), flatten(resolve(large)))
    assert printed[ALGORITHM] == {} and "trainer.n_gpus_per_node" in printed[INFRASTRUCTURE]
    assert set(printed[INFRASTRUCTURE]) == {d.key for d in expected.deltas}
    assert printed["total_keys"] == expected.total_keys > 900


def test_config_diff_quotes_a_recipe_dry_run_error(capsys, monkeypatch) -> None:
    from tests.recipes import warm_python
    from tests.recipes.resolved import REPO

    monkeypatch.setenv("PY", warm_python.command())
    recipe = str(REPO / "recipes" / "train-strata-alfworld-text-qwen2.5-1.5b.sh")
    assert main(["config-diff", recipe, "strata_trainer", "--overrides-a", "strata.judge.kapa=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "failed with exit status 2: strata: Unknown config key 'strata.judge.kapa'" in err
