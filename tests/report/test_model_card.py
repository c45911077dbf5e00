"""The model card: every number comes from the run's files (logs, config, evaluation, release folder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from strata.report.config_resolve import ConfigSource
from strata.report.logs import read_metrics
from strata.report.model_card import write_model_card

SEED0 = {"pick": 34, "look": 13, "clean": 25, "heat": 13, "cool": 22, "pick2": 21}
SEED1 = {"pick": 34, "look": 12, "clean": 25, "heat": 13, "cool": 23, "pick2": 22}
RUN_OVERRIDES = ["trainer.n_gpus_per_node=2", "actor_rollout_ref.actor.optim.lr=2e-6", "strata.judge.kappa=0.01"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("run"), RUN_OVERRIDES)


def make_run(run: Path, overrides: list[str]) -> Path:
    """A run folder as Hydra and verl leave it: .hydra/config.yaml and the file logger's JSONL."""
    import random

    from omegaconf import OmegaConf
    from verl.utils.tracking import FileLogger

    from strata.trainer.config import load_config

    (run / ".hydra").mkdir(parents=True)
    OmegaConf.save(load_config("strata_trainer", overrides), run / ".hydra" / "config.yaml")
    rng = random.Random(0)
    import os

    os.environ["VERL_FILE_LOGGER_PATH"] = str(run / "metrics.jsonl")
    try:
        file_logger = FileLogger("strata", "alfworld")
    finally:
        del os.environ["VERL_FILE_LOGGER_PATH"]
    for step in range(0, 31):
        data = {"actor/grad_norm": rng.random()}
        if step:  # training steps: shares of groups without reward variance, 0.25 and 0.5 on average
            data |= {"strata/zero_var_strategy_groups": 0.5 if step % 2 else 0.0,
                     "strata/zero_var_trajectory_groups": 0.5}
        if step % 10 == 0:
            data["val/average/metrics/success_rate"] = rng.random()
            for subtask in ("pick", "look", "clean", "heat", "cool", "pick2"):
                data[f"val/{subtask}/metrics/success_rate"] = rng.random()
        file_logger.log(data=data, step=step)
    file_logger.finish()
    return run


@pytest.fixture(scope="module")
def card(run_dir: Path, tmp_path_factory: pytest.TempPathFactory, make_evaluation) -> tuple[Path, str]:
    tmp_path = tmp_path_factory.mktemp("card")
    evaluations = [make_evaluation(s, wins, step=30).save(tmp_path / f"seed{s}.json")
                   for s, wins in ((0, SEED0), (1, SEED1))]
    release = tmp_path / "release"
    release.mkdir()
    (release / "model.safetensors").write_bytes(b"\0" * 3000)
    (release / "config.json").write_text("{}")
    out = write_model_card(run_dir, evaluations, release / "README.md", recipe=ConfigSource("strata_trainer"),
                           name="strata-tiny")
    return out, out.read_text()


def test_curve_numbers_are_the_logged_ones(card, run_dir: Path) -> None:
    out, text = card
    logged = read_metrics([run_dir / "metrics.jsonl"])
    validated = {step: data for step, data in logged.items() if "val/average/metrics/success_rate" in data}
    assert sorted(validated) == [0, 10, 20, 30]
    rows = dict(re.findall(r"^\| (\d+) \| ([\d.]+) \|", text, flags=re.M))
    for step, data in validated.items():
        assert rows[str(step)] == f"{100 * data['val/average/metrics/success_rate']:.2f}"
        pick = f"{100 * data['val/pick/metrics/success_rate']:.2f}"
        assert re.search(rf"^\| {step} \| [\d.]+ \| {re.escape(pick)} \|", text, flags=re.M)
    best = max(validated, key=lambda s: validated[s]["val/average/metrics/success_rate"])
    best_value = 100 * validated[best]["val/average/metrics/success_rate"]
    assert f"best {best_value:.2f} at step {best}" in text
    assert (out.parent / "training_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_evaluation_and_summary(card) -> None:
    _, text = card
    assert "| all | 140 | 91.43 | 92.14 | 91.79 ± 0.51 |" in text
    assert "| success rate on `valid_seen` | 91.79 ± 0.51 % (2 seed(s), 140 tasks) |" in text
    assert "temperature 0.7, top_p 0.8, top_k 20; at most 50 environment steps" in text
    assert "pick 35, look 13, clean 27, heat 16, cool 25, pick2 24" in text
    assert "| training | StraTA on ALFWorld, 30 logged steps of 150 configured |" in text
    assert ("| groups without reward variance (training, mean over steps) | strategy 25.00 %, trajectory 50.00 % |"
            in text)


def test_hyperparameters_come_from_the_config(card) -> None:
    _, text = card
    assert "| `strata.num_stras_per_run` | N | `4` |" in text
    assert "| `strata.judge.kappa` | κ | `0.01` |" in text  # the run's value, not the default
    assert "| `strata.length_penalty.threshold` | λ | `0.5` |" in text
    assert "| `actor_rollout_ref.actor.optim.lr` | `2e-06` |" in text


def test_differences_from_the_recipe(card) -> None:
    _, text = card
    section = text.split("## Differences from the recipe")[1].split("## Usage")[0]
    # n_gpus_per_node (verl's default 8) also sets the rollout's through an interpolation: 4 keys
    assert re.search(r"\*\*4 differing keys out of \d+\*\*", section)
    algorithm, infrastructure = section.split("infrastructure: ")
    assert "`actor_rollout_ref.actor.optim.lr` | `1e-06` | `2e-06`" in algorithm
    assert "`strata.judge.kappa` | `0.1` | `0.01`" in algorithm
    assert "`trainer.n_gpus_per_node` | `8` | `2`" in infrastructure


def test_files_and_usage(card) -> None:
    _, text = card
    assert "| `model.safetensors` | 2.9 KiB |" in text and "| `training_curve.png` |" in text
    assert 'AutoModelForCausalLM.from_pretrained(path, dtype="auto")' in text
    assert "training_state" not in text.split("## Usage")[1]  # nothing to resume from in this release


def test_no_recipe_is_said(run_dir: Path, tmp_path: Path, make_evaluation) -> None:
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    text = write_model_card(run_dir, [evaluation], tmp_path / "release" / "README.md").read_text()
    assert "No recipe was given" in text
    assert text.startswith("---\nlibrary_name: transformers")


def test_the_card_names_the_environment_algorithm_and_adapter_the_run_used(tmp_path: Path, make_evaluation) -> None:
    run = make_run(tmp_path / "run", ["+environment=sciworld", "+baseline=grpo", "actor_rollout_ref.model.lora_rank=64",
                                      "actor_rollout_ref.model.lora_alpha=32"])
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    text = write_model_card(run, [evaluation], tmp_path / "release" / "README.md").read_text()
    assert "tags: [reinforcement-learning, llm-agent, scienceworld, grpo, verl]" in text
    assert "A language-model agent for ScienceWorld science experiments trained with the flat GRPO baseline" in text
    assert "| training | GRPO (flat baseline) on ScienceWorld, 30 logged steps of 150 configured |" in text
    assert "| adapter | LoRA rank 64, alpha 32 on `all-linear`" in text
    assert "One trajectory per task, straight from the task" in text and "ALFWorld" not in text
    assert "strata/core/prompts/sciworld_grpo.yaml" in text


def test_a_strata_card_on_alfworld_has_no_adapter_row(card) -> None:
    _, text = card
    assert "tags: [reinforcement-learning, llm-agent, alfworld, strata, verl]" in text
    assert "| adapter |" not in text and "strata/core/prompts/alfworld.yaml" in text


# --- what a stranger reads: title, front matter, base model, platform, weights or not ----------------------------

def magic_word_run(tmp_path: Path, model: Path, preset: Path) -> Path:
    """A CPU run of the magic-word game as recipes/train-strata-magic-word-tiny-cpu.sh configures it: a local
    warm-started model, its own preset file, no checkpoints."""
    preset.parent.mkdir(parents=True, exist_ok=True)
    preset.write_text("# the game's prompts\n")
    return make_run(tmp_path / "run", ["+platform=cpu", "env.name=magic_word", f"+strata.prompts.preset={preset}",
                                       f"actor_rollout_ref.model.path={model}", "trainer.n_gpus_per_node=1",
                                       "trainer.experiment_name=strata-magic-word-tiny-cpu", "trainer.save_freq=-1",
                                       f"trainer.default_local_dir={tmp_path}/run/checkpoints"])


def front_matter(text: str) -> dict:
    import yaml

    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_a_cpu_run_s_card_says_what_it_is_and_that_its_folder_has_no_weights(
        tmp_path: Path, tiny_model_dir: Path, make_evaluation, capsys) -> None:
    from strata.cli import main

    run = magic_word_run(tmp_path, tiny_model_dir, tmp_path / "assets" / "prompts.yaml")
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    capsys.readouterr()  # make_run's file logger says where it writes
    assert main(["model-card", "--run-dir", str(run), "--eval", str(evaluation)]) == 0
    out = capsys.readouterr()
    card = run / "model-card" / "README.md"
    assert out.out == f"model card written to {card}\n" and "written" not in out.err  # once
    text = card.read_text()
    assert front_matter(text)["license"] == "apache-2.0" and "base_model" not in front_matter(text)
    assert f"# base_model: none on the Hub: the run started from the local folder {tiny_model_dir}" in text
    # the title is the run's experiment, algorithm and environment, not the output folder ("model-card")
    assert "\n# strata-magic-word-tiny-cpu: StraTA on the magic-word game\n" in text
    assert "| base model | a local folder (Qwen2ForCausalLM, " in text
    assert f"not a Hub model: `{tiny_model_dir}` |" in text
    assert "| platform | CPU (verl's cpu platform, no GPU): 1 worker process(es) x 1 node(s) |" in text
    assert "| `trainer.n_gpus_per_node` | `1` (worker processes: CPU run, no GPU) |" in text
    preset = tmp_path / "assets" / "prompts.yaml"
    assert f"| prompts | `{preset}` (the run's own preset file) |" in text and "prompts//" not in text
    # the folder holds the card and curve only: no loading snippet, and the card says so
    assert "from_pretrained" not in text and "## Usage" not in text
    assert "This folder holds the card and its curve only" in text
    assert "The run saved no checkpoint (`trainer.save_freq=-1`)" in text


def test_the_front_matter_names_a_hub_base_model_and_the_given_license(tmp_path: Path, make_evaluation) -> None:
    cache = tmp_path / "hub" / "models--Qwen--Qwen2.5-1.5B-Instruct" / "snapshots" / "abc123"
    cache.mkdir(parents=True)
    (cache / "README.md").write_text("---\nlicense: apache-2.0\nlicense_link: x\n---\n# Qwen\n")
    run = make_run(tmp_path / "run", [f"actor_rollout_ref.model.path={cache}"])
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    text = write_model_card(run, [evaluation], tmp_path / "a" / "README.md").read_text()
    assert front_matter(text)["base_model"] == "Qwen/Qwen2.5-1.5B-Instruct"  # from the Hub cache folder
    assert front_matter(text)["license"] == "apache-2.0"  # the base model's own
    assert ("| base model | [Qwen/Qwen2.5-1.5B-Instruct](https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct), "
            "loaded from a local folder") in text
    text = write_model_card(run, [evaluation], tmp_path / "b" / "README.md", license_id="mit",
                            base_model="org/other").read_text()
    assert front_matter(text)["license"] == "mit" and front_matter(text)["base_model"] == "org/other"
    hub = make_run(tmp_path / "hub-run", ["actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct"])
    text = write_model_card(hub, [evaluation], tmp_path / "c" / "README.md").read_text()
    assert front_matter(text)["base_model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert "| base model | [Qwen/Qwen2.5-7B-Instruct](https://huggingface.co/Qwen/Qwen2.5-7B-Instruct) |" in text


def test_a_release_folder_with_weights_gets_the_loading_snippet_with_its_path(card) -> None:
    out, text = card
    assert f'path = "{out.parent}"  # this folder, or its Hub id once uploaded' in text
    assert "## Weights" not in text


def test_the_preset_file_of_another_output_folder_is_no_algorithm_difference(
        tmp_path: Path, tiny_model_dir: Path, make_evaluation) -> None:
    run = magic_word_run(tmp_path, tiny_model_dir, tmp_path / "demo" / "prompts.yaml")
    recipe_preset = tmp_path / "assets" / "prompts.yaml"  # the recipe's default ASSETS folder, same prompts
    recipe_preset.parent.mkdir()
    recipe_preset.write_text((tmp_path / "demo" / "prompts.yaml").read_text())
    recipe = ConfigSource("strata_trainer", ("+platform=cpu", "env.name=magic_word",
                                             f"+strata.prompts.preset={recipe_preset}",
                                             f"actor_rollout_ref.model.path={tiny_model_dir}",
                                             "trainer.n_gpus_per_node=1", "trainer.save_freq=-1"))
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    text = write_model_card(run, [evaluation], tmp_path / "card" / "README.md", recipe=recipe).read_text()
    algorithm, infrastructure = text.split("## Differences from the recipe")[1].split("## ")[0].split(
        "infrastructure: ")
    assert "strata.prompts.preset" not in algorithm and "`strata.prompts.preset`" in infrastructure


def test_export_says_it_once(tmp_path: Path, monkeypatch, capsys) -> None:
    from strata.checkpoint import cli_export
    from strata.cli import main

    monkeypatch.setattr(cli_export, "export_hf", lambda checkpoint, out, **options: Path(out))
    assert main(["export", "--checkpoint", str(tmp_path / "global_step_2"), "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr()
    assert printed.out.count("\n") == 1 and printed.out.startswith(f"exported {tmp_path}/global_step_2 to ")
    assert printed.err == ""


def test_the_card_lists_each_evaluated_split(run_dir: Path, tmp_path: Path, make_evaluation) -> None:
    import dataclasses

    seen = make_evaluation(0, SEED0).save(tmp_path / "seen0.json")
    unseen = [dataclasses.replace(make_evaluation(s, wins), split="valid_unseen").save(tmp_path / f"unseen{s}.json")
              for s, wins in ((0, SEED1), (1, SEED0))]
    text = write_model_card(run_dir, [seen, *unseen], tmp_path / "release" / "README.md").read_text()
    assert "| success rate on `valid_seen` | 91.43 % (1 seed(s), 140 tasks) |" in text
    assert "| success rate on `valid_unseen` | 91.79 ± 0.51 % (2 seed(s), 140 tasks) |" in text
    assert text.index("### `valid_seen`") < text.index("### `valid_unseen`") < text.index("### Protocol")
    assert "Split `valid_unseen`, 140 tasks" in text and "(seeds 0, 1)" in text


def test_a_config_without_strata_keys_is_refused_before_anything_is_written(run_dir: Path, tmp_path: Path,
                                                                           make_evaluation) -> None:
    evaluation = make_evaluation(0, SEED0).save(tmp_path / "seed0.json")
    plain_verl = "trainer:\n  experiment_name: plain-verl\n"
    for text, why in (("{}\n", "it holds an empty mapping"), (plain_verl, r"has no `strata\.\*` keys: not the config")):
        config = tmp_path / "config.yaml"
        config.write_text(text)
        with pytest.raises(ValueError, match=why):
            write_model_card(run_dir, [evaluation], tmp_path / "release" / "README.md", config=config)
        assert not (tmp_path / "release").exists()
