"""GiGPO through the same trainer, environment, task lists and evaluation protocol as StraTA, and the user story on
it end to end: train at world size 2, find that world size 1 cannot resume it, reshard it to 1, export the resharded
step as a release and write its model card from the run's own log and the recipe's evaluation.

`recipes/train-gigpo-alfworld-text-tiny-cpu.sh` (the tiny StraTA recipe with ``+baseline=gigpo``) on the `hf`
rollout, validating before training and after the step: per task G=4 episodes with no strategy (as many trajectories
per step as the StraTA tiny run's N=2 x M=2), no strategy row, no judge, one strategy-free episode per validation
task. Real verl (v1 trainer, FSDP2 actor and reference over gloo, Ray, the project's `cpu` platform and `hf` rollout
plug-ins), on the playing agent's model and games with the settings it was warm-started with and its strategy-free
prompts (tests/integration/conftest.py), so episodes are won and lost and GiGPO's step groups carry returns that
differ. This run also stands for the flat GRPO baseline, which shares everything with it but the advantage
(GRPO is GiGPO's episode part over trajectories with ω = 0: tests/core/test_gigpo.py), so `make test` holds one
flat-baseline trainer run, not two. (It replaced the GRPO run of this release workflow, which had replaced one on
verl's own entry point with `make smoke`'s config. A second run here that resumed the resharded step at world size 1
went too, another 3-5 min: verl's loader restoring a 2 -> 1 reshard bit for bit is
tests/checkpoint/test_reshard.py's check, and a resumed step repeating the uninterrupted one is
test_strata_trainer.py's.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

from strata.checkpoint.export import export_hf
from strata.checkpoint.fsdp2 import load_shard
from strata.checkpoint.inspect import CheckpointError, check_resumable, describe_checkpoint, find_latest_checkpoint
from strata.checkpoint.reshard import reshard_checkpoint
from strata.report.credit import recomputed_advantages
from strata.report.curve import SUCCESS_KEY
from strata.report.dumps import dump_files, load_step, rollouts_dir
from strata.report.logs import read_metrics
from strata.report.model_card import write_model_card
from tests.integration.trainer_runs import REPO, TEST_AGENT, metrics_by_step, run_recipe

pytestmark = pytest.mark.slow
RECIPE = REPO / "recipes/train-gigpo-alfworld-text-tiny-cpu.sh"
VALID_GAMES = TEST_AGENT["valid_games"]


def run_gigpo(out: Path, agent: Path, world_size: int, steps: int, *overrides: str) -> dict[int, dict]:
    """The GiGPO recipe at ``world_size`` ranks for ``steps`` steps, with the agent's settings and strategy-free
    prompts and validating before and after the last step; its metrics by step."""
    # The agent's settings warm the learning rate up from 0 over more steps than this run has: at full rate from
    # the first step instead, so that one step moves the weights the release must carry.
    run_recipe(out, agent, f"trainer.n_gpus_per_node={world_size}", "++strata.prompts.preset=alfworld_compact_grpo",
               f"trainer.test_freq={steps}", "actor_rollout_ref.actor.optim.lr_warmup_steps=0", *overrides,
               recipe=RECIPE, platform="cpu", steps=steps)
    return metrics_by_step(out / "metrics.jsonl")


def optimizer_steps(step_dir: Path) -> float:
    world_size = describe_checkpoint(step_dir).world_size
    optim = load_shard(step_dir / f"actor/optim_world_size_{world_size}_rank_0.pt")
    return float(optim["state"][0]["step"])


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, playing_agent) -> tuple[Path, dict[int, dict]]:
    """One step at world size 2, validating before and after it."""
    out = tmp_path_factory.mktemp("gigpo") / "run-w2"
    return out, run_gigpo(out, playing_agent, 2, 1)


def test_gigpo_trains_flat_groups_with_step_credit(first_run):
    out, steps = first_run
    assert sorted(steps) == [0, 1]
    metrics = steps[1]
    assert metrics["strata/num_strategy_rows"] == 0  # no strategy level
    # One row per step of 2 tasks x G=4 episodes (as StraTA's 2 x N=2 x M=2).
    assert metrics["strata/num_step_rows"] >= 8 and metrics["strata/num_trajectory_rows"] == 0
    # Every episode's first step shares the task's first observation: step groups exist, and some step parts moved.
    assert metrics["strata/gigpo/grouped_step_rate"] > 0 and metrics["strata/gigpo/step_group_size"] > 1
    assert metrics["strata/gigpo/nonzero_step_part_rate"] > 0
    assert metrics["strata/judge_format_rate"] == 0.0 and metrics["strata/judge_flag_rate"] == 0.0  # no judge
    assert metrics["actor/grad_norm"] > 0
    for step in (0, 1):  # validation before and after the step, one episode per task
        assert steps[step]["val/average/metrics/num_tasks"] == VALID_GAMES
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["strata"]["algorithm"] == "gigpo" and config["strata"]["gigpo"]["gamma"] == 0.95
    assert config["strata"]["prompts"]["preset"] == "alfworld_compact_grpo"
    assert config["trainer"]["n_gpus_per_node"] == 2
    assert (out / "eval/eval_seed0.json").is_file()  # the evaluation protocol's table, as for StraTA


def test_gigpo_dumps_give_back_every_advantage(first_run):
    out, _ = first_run
    tasks = load_step(dump_files(rollouts_dir(out), "train")[1])
    assert len(tasks) == 2
    step_parts = []
    for task in tasks:
        assert task["mode"] == "gigpo" and task["candidates"] == [] and task["credit_settings"]["step_weight"] == 1.0
        (group,) = task["strategies"]
        assert group["strategy"] is None and len(group["trajectories"]) == 4
        trained = [t for t in group["trajectories"] if t["trained"]]
        dumped = [[s["advantage"] for s in t["steps"]] for t in trained]
        # What the run trained on, recomputed from the dump alone.
        assert recomputed_advantages(task) == [[pytest.approx(row, abs=1e-9) for row in dumped]]
        step_parts += [s["credit"]["step_part"] for t in trained for s in t["steps"]
                       if s["credit"]["step_group_size"] > 1]
    assert any(part != 0 for part in step_parts)
    validation = load_step(dump_files(rollouts_dir(out), "valid")[1])
    assert len(validation) == VALID_GAMES and all(v["candidates"] == [] for v in validation)


def test_reshard_to_world_size_1_export_and_card(first_run, playing_agent, tmp_path_factory):
    first, _ = first_run
    workers = yaml.safe_load((first / "config.yaml").read_text())["data"]["dataloader_num_workers"]
    step1 = find_latest_checkpoint(first / "checkpoints")
    assert step1 == first / "checkpoints" / "global_step_1" and describe_checkpoint(step1).world_size == 2
    with pytest.raises(CheckpointError, match="strata reshard"):
        check_resumable(step1, world_size=1, dataloader_num_workers=workers)

    work = tmp_path_factory.mktemp("release")
    resharded = reshard_checkpoint(step1, 1, work / "w1")
    check_resumable(resharded, world_size=1, dataloader_num_workers=workers)
    assert describe_checkpoint(resharded).world_size == 1
    # AdamW's state came along: one update's step counter (that verl's loader restores a 2 -> 1 reshard bit for
    # bit, and that the trainer resumes a step exactly, are tests/checkpoint/test_reshard.py's and
    # test_strata_trainer.py's checks).
    assert optimizer_steps(step1) == optimizer_steps(resharded) == 1

    # The parameters moved: the trained embedding is not the initial one.
    initial = load_file(playing_agent / "model/model.safetensors")["model.embed_tokens.weight"]
    trained = load_shard(resharded / "actor/model_world_size_1_rank_0.pt")["model.embed_tokens.weight"]
    assert not torch.equal(initial, getattr(trained, "_local_tensor", trained).to(initial.dtype))

    # The release of the resharded step holds exactly the weights of the step the two ranks saved.
    release = export_hf(resharded, work / "release", release=True)
    direct = export_hf(step1, work / "direct")
    exported, expected = load_file(release / "model.safetensors"), load_file(direct / "model.safetensors")
    assert exported.keys() == expected.keys()
    assert all(torch.equal(exported[name], expected[name]) for name in expected)

    evaluation = first / "eval/eval_seed0.json"  # the recipe's own, from step 1's validation
    card = write_model_card(first, [evaluation], release / "README.md", name="strata-gigpo-release").read_text()
    curve = {step: values[SUCCESS_KEY] for step, values in read_metrics([first / "metrics.jsonl"]).items()
             if SUCCESS_KEY in values}
    assert sorted(curve) == [0, 1]
    rows = dict(re.findall(r"^\| (\d+) \| ([\d.]+) \|", card.split("## Training curve")[1], flags=re.M))
    assert rows == {str(step): f"{100 * value:.2f}" for step, value in curve.items()}
    assert "`training_state/global_step_1/`" in card and "saved at world size 1" in card
    assert "# strata-gigpo-release: GiGPO on ALFWorld" in card  # the card names the algorithm that trained it
