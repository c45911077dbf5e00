"""A strategy whose every episode failed in the environment is dropped alone; trajectory dumps record the group.

The rollouts here are written by hand (pure records, no engine), so every expected number is known.
"""

from __future__ import annotations

import gzip
import json
import logging
import re

import pytest

from strata.core.config import StrataConfig
from strata.envs.tasks import Task
from strata.workflow.dump import DumpSettings, DumpWriter, dump_path, task_record
from strata.workflow.records import Generation, Step, StrategyCandidate, StrategyRollout, TaskRollout, Trajectory
from strata.workflow.rows import ZeroVariance, group_advantages, rollout_stats, training_rows

TASK = Task(game_file="/games/heat-egg/game.tw-pddl", task_type="pick_heat_then_place_in_recep",
            split="train", index=7)
CONFIG = StrataConfig.from_dict({"num_stras_per_run": 3, "num_trajs_per_stra": 2, "num_cands_per_stra": 2,
                                 "max_tokens_per_response": 64})


def generation(text: str) -> Generation:
    return Generation(prompt_ids=[1, 2], token_ids=[3, 4, 5], logprobs=[-0.1] * 3, text=text, truncated=False)


def trajectory(won: bool, end_reason: str, steps: int = 2, flagged: tuple[int, ...] = ()) -> Trajectory:
    played = [Step(generation(f"<action>go to shelf {t}</action>"), f"go to shelf {t}", f"You see shelf {t}.",
                   command=f"go to shelf {t}", admissible=True) for t in range(1, steps + 1)]
    return Trajectory(prompt_ids=[1], steps=played, won=won, end_reason=end_reason, flagged_steps=list(flagged),
                      judge_parsed=True, judge=generation(f"<judgment>{list(flagged)}</judgment>"))


def candidate(text: str | None) -> StrategyCandidate:
    return StrategyCandidate(generation(f"<strategy>{text}</strategy>" if text else "no tags"), text)


@pytest.fixture
def rollout() -> TaskRollout:
    candidates = [candidate("heat it in the microwave"), candidate("look in the fridge"), candidate(None),
                  candidate("check the countertops"), candidate("try the sink"), candidate("open cabinets")]
    strategies = [
        StrategyRollout(candidates[0], [trajectory(True, "won", flagged=(2,)), trajectory(False, "step_limit")]),
        # every episode of this strategy was cut short by the environment: no score, no row
        StrategyRollout(candidates[3], [trajectory(False, "worker_lost", 1), trajectory(False, "timeout", 0)]),
        StrategyRollout(candidates[1], [trajectory(False, "step_limit"), trajectory(False, "step_limit")]),
    ]
    return TaskRollout(candidates, [0, 3, 1], strategies, 0.01, [0.4, 0.4, None, 0.2, 0.9, 0.3],
                       "heat some egg and put it in garbagecan", "You are in the middle of a room.")


def test_a_strategy_with_only_failed_episodes_is_dropped_alone(rollout):
    advantages = group_advantages(rollout, CONFIG)
    # The two scored strategies: S = [1 (best of won/lost, δ·M = 1), 0] -> Â(z) = ±0.7071.
    assert advantages.strategy_scores == [1.0, 0.0]
    assert advantages.strategy_base == pytest.approx([0.7071, -0.7071], abs=1e-4)
    rows = training_rows(rollout, advantages, ZeroVariance.of(rollout, CONFIG.delta_coef))
    assert [r.role for r in rows] == ["strategy", "strategy", "trajectory", "trajectory", "trajectory", "trajectory"]
    assert rows[1].response_ids == rollout.strategies[2].candidate.generation.token_ids
    stats = rollout_stats(rollout, TASK.subtask)
    assert stats["num_dropped_strategies"] == 1 and stats["num_env_failures"] == 2
    assert stats["subtask/heat/num_trajectories"] == 6 and stats["subtask/heat/num_won"] == 1


def test_task_record_holds_the_whole_group(rollout):
    advantages = group_advantages(rollout, CONFIG)
    record = json.loads(json.dumps(task_record("train", 3, "strata", TASK, rollout, advantages)))
    assert record["schema"] == 1 and record["kind"] == "train" and record["step"] == 3 and record["mode"] == "strata"
    assert record["task"] == {"index": 7, "game_file": TASK.game_file, "task_type": TASK.task_type,
                              "subtask": "heat", "split": "train"}
    candidates = record["candidates"]
    assert [c["kept_rank"] for c in candidates] == [0, 2, None, 1, None, None]
    assert candidates[2]["well_formed"] is False and candidates[2]["strategy"] is None
    assert candidates[4]["nearest_kept_cosine"] == 0.9
    kept, dropped, third = record["strategies"]
    assert kept["candidate"] == 0 and kept["strategy"] == "heat it in the microwave"
    assert kept["score"] == 1.0 and kept["advantage"] == pytest.approx(0.7071, abs=1e-4)
    assert kept["token_advantage"] == pytest.approx(advantages.strategy[0])
    assert dropped["dropped"] is True and dropped["score"] is None and dropped["advantage"] is None
    assert third["candidate"] == 1 and third["dropped"] is False
    won, lost = kept["trajectories"]
    assert won["won"] and won["end_reason"] == "won" and won["trained"]
    assert won["advantage"] == pytest.approx(0.7071, abs=1e-4) and lost["advantage"] == pytest.approx(-0.7071, abs=1e-4)
    assert won["judge"] == {"text": "<judgment>[2]</judgment>", "parsed": True, "flagged_steps": [2]}
    step_1, step_2 = won["steps"]
    assert step_1["action"] == step_1["command"] == "go to shelf 1" and step_1["admissible"] is True
    assert step_1["flagged"] is False and step_2["flagged"] is True
    assert step_2["advantage"] == pytest.approx(advantages.actions[0][0][1])
    failed = dropped["trajectories"][0]
    assert failed["environment_failure"] and not failed["trained"] and failed["advantage"] is None


def test_validation_and_grpo_records(rollout):
    chosen = rollout.candidates[0]
    single = TaskRollout([chosen], [0], [StrategyRollout(chosen, [trajectory(True, "won")])], task_description="egg")
    record = task_record("valid", 0, "strata", TASK, single, None)
    strategy = record["strategies"][0]
    assert strategy["score"] is None and strategy["dropped"] is False
    assert all(step["advantage"] is None for step in strategy["trajectories"][0]["steps"])
    flat = TaskRollout([], [], [StrategyRollout(None, [trajectory(True, "won"), trajectory(False, "step_limit")])])
    config = StrataConfig.from_dict({"algorithm": "grpo", "num_stras_per_run": 1, "num_cands_per_stra": 1,
                                     "judge": {"enable": False}, "prompts": {"preset": "alfworld_grpo"}})
    record = task_record("train", 1, "grpo", TASK, flat, group_advantages(flat, config))
    assert record["mode"] == "grpo" and record["candidates"] == []
    group = record["strategies"][0]
    assert group["candidate"] is None and group["strategy"] is None and group["advantage"] is None
    assert [t["advantage"] for t in group["trajectories"]] == pytest.approx([0.7071, -0.7071], abs=1e-4)


def test_writer_appends_one_line_per_task_to_its_own_file(tmp_path, rollout):
    writer = DumpWriter(DumpSettings(run_dir=tmp_path, train_every=2))
    record = task_record("train", 2, "strata", TASK, rollout, group_advantages(rollout, CONFIG))
    assert writer.maybe_write("train", 2, TASK, lambda: record)
    assert writer.maybe_write("train", 2, Task(TASK.game_file, TASK.task_type, "train", 8), lambda: record)
    assert not writer.maybe_write("train", 3, TASK, lambda: pytest.fail("step 3 is not dumped: not built"))
    path = dump_path(tmp_path, "train", 2, writer.writer)
    assert path.parent == tmp_path / "rollouts" / "train" and path.name.startswith("step_000002-")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle]
    assert len(lines) == 2 and lines[0] == record


def test_task_share_is_a_stable_fraction_of_tasks(tmp_path):
    settings = DumpSettings(run_dir=tmp_path, train_every=1, train_task_share=0.25)
    tasks = [Task(TASK.game_file, TASK.task_type, "train", i) for i in range(400)]
    chosen = [t.index for t in tasks if settings.wants("train", 5, t)]
    assert 60 < len(chosen) < 140
    assert chosen == [t.index for t in tasks if settings.wants("train", 5, t)]  # same choice after a resume
    assert DumpSettings(run_dir=None).wants("valid", 0, TASK) is False
    assert DumpSettings(run_dir=tmp_path, validation=False).wants("valid", 0, TASK) is False
    with pytest.raises(ValueError, match="train_task_share"):
        DumpSettings(run_dir=tmp_path, train_task_share=1.5)


def test_a_dump_that_cannot_be_written_does_not_stop_the_run(tmp_path, rollout, caplog):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    writer = DumpWriter(DumpSettings(run_dir=blocked))
    with caplog.at_level(logging.WARNING, logger="strata.workflow.dump"):
        assert writer.maybe_write("valid", 0, TASK, lambda: {"schema": 1}) is False
        assert writer.maybe_write("valid", 1, TASK, lambda: {"schema": 1}) is False
    assert writer.failures == 2  # counted, and each one said with its path and the reason
    warned = [record.getMessage() for record in caplog.records]
    assert len(warned) == 2 and all(re.fullmatch(
        rf"trajectory dump {re.escape(str(blocked))}/\S+ not written \({n} so far\): \[Errno \d+\] .+", line)
        for n, line in enumerate(warned, start=1)), warned
