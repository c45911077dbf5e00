"""``--dry-run`` (``DRY_RUN=1`` in the recipes) ends with a summary a reader can check at a glance: the
model, the task lists and whether they exist, the machine, the group sizes, the checkpoints. It is made of
YAML comments, so what follows the marker still parses as the resolved config."""

from __future__ import annotations

import yaml

from strata.assets.smoke_data import write_smoke_prompts
from strata.trainer.dry_run import HEADING
from strata.trainer.main import RESOLVED_CONFIG_MARKER, main

SMALL_BATCHES = ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
                 "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
                 "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1"]


def dry_run(capsys, monkeypatch, *overrides: str) -> tuple[dict, dict[str, str]]:
    monkeypatch.delenv("VERL_PLATFORM", raising=False)  # main() sets it from the config; undone after the test
    assert main(["--dry-run", "+platform=cpu", *SMALL_BATCHES, *overrides]) == 0
    printed = capsys.readouterr().out.split(RESOLVED_CONFIG_MARKER, 1)[1]
    summary = printed[printed.index(HEADING):].splitlines()[1:]
    assert printed.rstrip().endswith(summary[-1])  # the summary is the end of the output
    return yaml.safe_load(printed), {line[2:14].strip(): line[14:] for line in summary}


def test_the_dry_run_ends_with_what_the_run_would_use(capsys, monkeypatch, tmp_path, tiny_model_dir):
    write_smoke_prompts(tmp_path / "train.parquet", 3)
    config, summary = dry_run(
        capsys, monkeypatch, f"actor_rollout_ref.model.path={tiny_model_dir}",
        f"data.train_files={tmp_path}/train.parquet", f"data.val_files={tmp_path}/valid_seen.parquet",
        f"trainer.default_local_dir={tmp_path}/ckpt", "trainer.save_freq=10", "trainer.max_actor_ckpt_to_keep=2",
        "trainer.experiment_name=tiny")
    assert config["trainer"]["experiment_name"] == "tiny"  # the comments leave the YAML whole
    assert summary["model"] == f"{tiny_model_dir} (local folder)"
    assert summary["train data"] == f"{tmp_path}/train.parquet (present, 3 task(s))"
    assert summary["val data"].startswith(f"{tmp_path}/valid_seen.parquet (MISSING: strata prepare-data")
    assert "DATA=DIR" in summary["val data"]
    assert summary["machine"].startswith("cpu platform (VERL_PLATFORM=cpu)")
    assert summary["groups"] == ("StraTA on alfworld: N=4 strategies kept of σ·N=32 candidates (σ=8), M=8 "
                                 "trajectories each = 32 episodes per task, 16 task(s) per step")
    assert summary["steps"] == "150 (trainer.total_training_steps)"
    assert summary["checkpoints"] == (f"every 10 step(s) and at the last to {tmp_path}/ckpt; keeps the newest 2 "
                                      "(trainer.max_actor_ckpt_to_keep), 2 on disk at the end")
    assert summary["experiment"] == "strata/tiny"


def test_the_summary_names_a_missing_model_and_grpo(capsys, monkeypatch, tmp_path):
    _, summary = dry_run(capsys, monkeypatch, "+baseline=grpo", f"actor_rollout_ref.model.path={tmp_path}/nope",
                         "data.train_files=x", "data.val_files=y", "trainer.save_freq=-1")
    assert summary["model"] == f"{tmp_path}/nope (MISSING: no such folder, not a hub id; MODEL=)"
    assert summary["groups"] == "GRPO on alfworld: G=8 episodes per task, 16 task(s) per step"
    assert summary["checkpoints"].startswith("none saved (trainer.save_freq=-1)")


def test_the_summary_names_gigpo_and_its_credit(capsys, monkeypatch, tmp_path):
    _, summary = dry_run(capsys, monkeypatch, "+baseline=gigpo", "strata.gigpo.gamma=0.9",
                         f"actor_rollout_ref.model.path={tmp_path}", "data.train_files=x", "data.val_files=y")
    assert summary["groups"] == ("GiGPO on alfworld: G=8 episodes per task, 16 task(s) per step, step-level credit "
                                 "over shared anchors (γ=0.9, ω=1.0)")


def test_an_evaluation_says_what_it_evaluates_not_how_it_would_train(capsys, monkeypatch, tmp_path):
    _, summary = dry_run(capsys, monkeypatch, "trainer.val_only=true", "trainer.resume_mode=resume_path",
                         f"trainer.resume_from_path={tmp_path}/global_step_3",
                         f"actor_rollout_ref.model.path={tmp_path}", "data.train_files=x", "data.val_files=y")
    assert summary["evaluates"] == f"checkpoint {tmp_path}/global_step_3 (MISSING: no such folder), validation only"
    assert not {"groups", "steps", "checkpoints"} & set(summary)


def test_a_gpu_run_shows_gpus_times_nodes(monkeypatch):
    from omegaconf import OmegaConf

    from strata.trainer.dry_run import _machine_line

    monkeypatch.delenv("VERL_PLATFORM", raising=False)
    line = _machine_line(OmegaConf.create({"trainer": {"nnodes": 2, "n_gpus_per_node": 8, "device": "cuda"}}))
    assert line == "8 GPU(s) per node x 2 node(s) = 16 GPU(s)"
