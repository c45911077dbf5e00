"""Every field of the training rows, rollout stats and dump record of one hand-written task.

Mutation testing (scripts/mutation.sh) found that the other tests compare roles, counts and a few
advantages, so a swapped field, a dropped weights version or a logprob filled with the wrong constant
went unnoticed. Here every value of the rollout is distinct and every output is compared whole.
The advantages themselves are tested in tests/core/test_advantage.py; this file pins the wiring: which
record field goes where, and which config key reaches which argument.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from strata.core.advantage import response_advantages
from strata.core.config import StrataConfig
from strata.core.rewards import response_shaping
from strata.envs.tasks import Task
from strata.workflow.dump import task_record
from strata.workflow.records import Generation, Step, StrategyCandidate, StrategyRollout, TaskRollout, Trajectory
from strata.workflow.rows import (
    Row,
    ZeroVariance,
    group_advantages,
    rollout_stats,
    rows_of_trajectory,
    step_rows,
    training_rows,
    trajectory_row,
)

TASK = Task(game_file="/games/cool-apple/game.tw-pddl", task_type="pick_cool_then_place_in_recep",
            split="train", index=3)
# Every knob away from its default, so that a knob read from the wrong key or not at all shows.
CONFIG_KEYS = {
    "num_stras_per_run": 2, "num_trajs_per_stra": 3, "num_cands_per_stra": 2, "max_tokens_per_response": 8,
    "delta_coef": 0.25, "format_penalty": 0.5, "penalty_mode": "post_norm",
    "length_penalty": {"threshold": 0.25}, "judge": {"kappa": 0.3},
}
CONFIG = StrataConfig.from_dict(CONFIG_KEYS)


def gen(first: int, n: int, text: str, *, truncated: bool = False, version: int | None = None,
        logprobs: bool = True) -> Generation:
    """A generation whose prompt, tokens and logprobs all differ from every other one."""
    return Generation(prompt_ids=[first, first + 1], token_ids=list(range(first + 10, first + 10 + n)),
                      logprobs=[-(first + t) / 100 for t in range(n)] if logprobs else None, text=text,
                      truncated=truncated, weights_version=version)


def make_rollout() -> TaskRollout:
    candidates = [
        StrategyCandidate(gen(100, 2, "<strategy>cool it</strategy>", version=7), "cool it"),
        StrategyCandidate(gen(200, 8, "rambling", truncated=True, logprobs=False), None),
        StrategyCandidate(gen(300, 3, "<strategy>fridge first</strategy>", version=8), "fridge first"),
    ]
    won = Trajectory(prompt_ids=[1000], steps=[
        Step(gen(1100, 2, "<action>open fridge</action>", version=8), "open fridge", "The fridge is open.",
             command="open fridge 1", admissible=True, env_tokens=[1190, 1191]),
        Step(gen(1200, 7, "<action>take apple</action>", version=9), "take apple", "You take the apple.",
             command="take apple 1 from fridge 1", admissible=False, env_tokens=[1290]),
    ], won=True, end_reason="won", flagged_steps=[2], judge_parsed=True, judge=gen(1300, 1, "judged [2]"))
    lost = Trajectory(prompt_ids=[2000], steps=[
        Step(gen(2100, 2, "no tags", logprobs=False), None, "Answer in tags.", env_tokens=[2190]),
    ], won=False, end_reason="step_limit", judge_parsed=False, judge=gen(2300, 1, "???"))
    failed = Trajectory(prompt_ids=[3000], steps=[
        Step(gen(3100, 1, "<action>look</action>"), "look", "", command="look", admissible=True),
    ], end_reason="timeout: the engine took more than 60 s")
    empty = Trajectory(prompt_ids=[4000], end_reason="token_budget")  # no step: trains nothing
    lost_too = Trajectory(prompt_ids=[5000], steps=[
        Step(gen(5100, 2, "<action>go to sink</action>", truncated=True, version=7), "go to sink", "You see a sink.",
             command="go to sinkbasin 1", admissible=True, env_tokens=[5190, 5191, 5192]),
    ], won=False, end_reason="lost", score=0.4)
    return TaskRollout(
        candidates=candidates, kept=[2, 0],
        strategies=[StrategyRollout(candidates[2], [won, lost, failed]),
                    StrategyRollout(candidates[0], [empty, lost_too])],
        selection_seconds=0.125, nearest_kept_cosine=[0.5, 0.75, 0.5],
        task_description="cool some apple and put it in countertop", initial_observation="You are in a kitchen.",
    )


def test_group_advantages_pass_each_knob_to_its_own_argument() -> None:
    rollout = make_rollout()
    # s(r) = clip(-f - ℓ, -1, 0), f = 0.5 when malformed, ℓ = 1 when truncated, else (L - 2) / 6 beyond 2 tokens.
    assert response_shaping(3, 8, 0.25, True, False, 0.5) == pytest.approx(-1 / 6)
    for mode in ("post_norm", "pre_norm"):
        expected = response_advantages(
            rewards=[[1.0, 0.0], [0.0]],  # the failed and the step-less trajectories are left out
            strategy_shaping=[-1 / 6, 0.0],  # "fridge first" (3 tokens), "cool it" (2 tokens)
            action_shaping=[[[0.0, -5 / 6], [-0.5]], [[-1.0]]],  # 7 tokens: -(7-2)/6; malformed: -f; truncated: -1
            judge_penalties=[[[0.0, -0.3], [0.0]], [[0.0]]],
            delta=0.25, norm_by_std=True, penalty_mode=mode,
        )
        got = group_advantages(rollout, StrataConfig.from_dict({**CONFIG_KEYS, "penalty_mode": mode}))
        assert got.strategy == pytest.approx(expected.strategy)
        assert got.strategy_scores == pytest.approx(expected.strategy_scores)
        assert _flat(got.actions) == pytest.approx(_flat(expected.actions))
    unscaled = group_advantages(rollout, CONFIG, norm_by_std=False)
    assert unscaled.trajectory_base[0] == pytest.approx([0.5, -0.5])  # mean-centred, not divided by std
    post = group_advantages(rollout, CONFIG)
    assert post.strategy_scores != got.strategy_scores  # pre_norm moved the penalties into S_i


def test_the_inadmissible_penalty_reaches_the_refused_step_and_is_nothing_at_zero() -> None:
    rollout = make_rollout()  # the won trajectory's second action was refused (admissible=False)
    penalised = group_advantages(rollout, StrataConfig.from_dict({**CONFIG_KEYS, "inadmissible_penalty": 0.4}))
    expected = response_advantages(
        rewards=[[1.0, 0.0], [0.0]], strategy_shaping=[-1 / 6, 0.0],
        action_shaping=[[[0.0, -5 / 6], [-0.5]], [[-1.0]]], judge_penalties=[[[0.0, -0.3], [0.0]], [[0.0]]],
        delta=0.25, inadmissible_penalties=[[[0.0, -0.4], [0.0]], [[0.0]]],  # the malformed step: no term
    )
    assert _flat(penalised.actions) == pytest.approx(_flat(expected.actions))
    plain = group_advantages(rollout, CONFIG)
    assert _flat(penalised.actions)[1] == pytest.approx(_flat(plain.actions)[1] - 0.4)
    # The key at its default (0) gives what the paper's formula without the term gives, bit for bit.
    paper = response_advantages(
        rewards=[[1.0, 0.0], [0.0]], strategy_shaping=[response_shaping(3, 8, 0.25, True, False, 0.5), 0.0],
        action_shaping=[[[0.0, response_shaping(7, 8, 0.25, True, False, 0.5)], [-0.5]], [[-1.0]]],
        judge_penalties=[[[0.0, -0.3], [0.0]], [[0.0]]], delta=0.25,
    )
    assert repr(plain) == repr(paper)


def _flat(actions: list[list[list[float]]]) -> list[float]:
    return [a for strategy in actions for trajectory in strategy for a in trajectory]


def test_training_rows_field_by_field() -> None:
    rollout = make_rollout()
    adv = group_advantages(rollout, CONFIG)
    (a_won, a_lost), (a_sink,) = adv.actions[0], adv.actions[1]
    rows = training_rows(rollout, adv, ZeroVariance.of(rollout, CONFIG.delta_coef))
    assert rows == [
        Row("strategy", [300, 301], [310, 311, 312], [1, 1, 1], [-3.0, -3.01, -3.02], [adv.strategy[0]] * 3,
            adv.strategy_scores[0], 2, (8,)),
        Row("strategy", [100, 101], [110, 111], [1, 1], [-1.0, -1.01], [adv.strategy[1]] * 2,
            adv.strategy_scores[1], 2, (7,)),
        Row("trajectory", [1000], [1110, 1111, 1190, 1191, *range(1210, 1217), 1290], [1, 1, 0, 0] + [1] * 7 + [0],
            [-11.0, -11.01, 0.0, 0.0, *[-(1200 + t) / 100 for t in range(7)], 0.0],
            [a_won[0]] * 2 + [0.0] * 2 + [a_won[1]] * 7 + [0.0], 1.0, 5, (8, 9)),
        Row("trajectory", [2000], [2110, 2111, 2190], [1, 1, 0], [0.0] * 3, [a_lost[0]] * 2 + [0.0], 0.0, 3, ()),
        Row("trajectory", [5000], [5110, 5111, 5190, 5191, 5192], [1, 1, 0, 0, 0], [-51.0, -51.01, 0.0, 0.0, 0.0],
            [a_sink[0]] * 2 + [0.0] * 3, 0.0, 3, (7,), zero_variance=True),  # its strategy's only trajectory
    ]
    assert a_won[0] != a_won[1] != 0.0 and a_lost[0] != 0.0  # so the advantages above are told apart


@pytest.mark.parametrize("per_step", [False, True])
def test_without_strategy_training_only_the_strategy_rows_go(per_step: bool) -> None:
    """`strata.train_strategies=false`: the same rows bit for bit, less the strategies' (the actions still see
    the strategy, and their advantages still come from its group)."""
    rollout = make_rollout()
    adv = group_advantages(rollout, CONFIG)
    constant = ZeroVariance.of(rollout, CONFIG.delta_coef)
    every = training_rows(rollout, adv, constant, per_step=per_step)
    actions_only = training_rows(rollout, adv, constant, per_step=per_step, train_strategies=False)
    assert [row.role for row in every[:2]] == ["strategy", "strategy"]
    assert repr(actions_only) == repr(every[2:])
    assert StrataConfig.from_dict({"train_strategies": False}).train_strategies is False
    assert StrataConfig().train_strategies is True  # the paper trains them


def test_step_rows_and_validation_rows() -> None:
    rollout = make_rollout()
    won = rollout.strategies[0].trajectories[0]
    assert step_rows(won, [0.25, -0.5]) == [
        Row("step", [1100, 1101], [1110, 1111], [1, 1], [-11.0, -11.01], [0.25, 0.25], 1.0, 2, (8,)),
        Row("step", [1200, 1201], list(range(1210, 1217)), [1] * 7, [-(1200 + t) / 100 for t in range(7)],
            [-0.5] * 7, 1.0, 2, (9,)),
    ]
    lost = rollout.strategies[0].trajectories[1]
    assert step_rows(lost, None) == [Row("step", [2100, 2101], [2110, 2111], [1, 1], [0.0] * 2, [0.0] * 2, 0.0, 2,
                                         ())]
    assert trajectory_row(won, None).advantages == [0.0] * 12
    assert rows_of_trajectory(won, [0.25, -0.5], per_step=True) == step_rows(won, [0.25, -0.5])
    assert rows_of_trajectory(won, [0.25, -0.5], per_step=False) == [trajectory_row(won, [0.25, -0.5])]
    adv = group_advantages(rollout, CONFIG)
    per_step = training_rows(rollout, adv, ZeroVariance.of(rollout, CONFIG.delta_coef), per_step=True)
    assert [r.role for r in per_step] == ["strategy", "strategy", "step", "step", "step", "step"]
    assert training_rows(rollout, adv, ZeroVariance.of(rollout, CONFIG.delta_coef)) != per_step


def test_rollout_stats_count_every_record() -> None:
    assert rollout_stats(make_rollout(), "cool") == {
        "num_candidates": 3, "candidate_format_ok": 2, "kept_format_ok": 2, "num_dropped_strategies": 0,
        "num_trajectories": 5, "num_won": 1, "num_env_failures": 1, "num_token_budget_ends": 1,
        "num_steps": 5, "action_format_ok": 4, "action_admissible": 3, "action_refused_repeats": 0,
        "action_truncated": 1,
        "num_judged": 2, "judge_parse_ok": 1, "judge_flagged_steps": 1, "selection_seconds": 0.125,
        "subtask/cool/num_trajectories": 5, "subtask/cool/num_won": 1, "subtask/cool/num_steps": 5,
        "num_scored": 1, "score_sum": 0.4, "subtask/cool/num_scored": 1, "subtask/cool/score_sum": 0.4,
    }


def test_zero_variance_counts_the_groups_that_carry_no_reward_signal() -> None:
    # Strategy 1: [won, lost] trained (the failed one is out), strategy 2: [lost_too] (the empty one is out).
    assert ZeroVariance.of(make_rollout(), 0.25).counts() == {
        "num_strategy_groups": 1, "zero_var_strategy_groups": 0,
        "num_trajectory_groups": 2, "zero_var_trajectory_groups": 1,
    }
    rollout = make_rollout()
    won, lost = rollout.strategies[0].trajectories[:2]
    split_and_sure = replace(rollout, strategies=[StrategyRollout(rollout.candidates[2], [won, lost]),
                                                  StrategyRollout(rollout.candidates[0], [won, won])])
    # S_i is the mean of the top max(1, ⌊δ·M⌋) rewards: with δ = 0.25 both strategies score 1 (no strategy
    # signal, though the first one's trajectories differ); with δ = 1 they score 0.5 and 1.
    assert ZeroVariance.of(split_and_sure, 0.25).counts() == {
        "num_strategy_groups": 1, "zero_var_strategy_groups": 1,
        "num_trajectory_groups": 2, "zero_var_trajectory_groups": 1,
    }
    assert ZeroVariance.of(split_and_sure, 1.0).counts()["zero_var_strategy_groups"] == 0
    # The GRPO baseline's one group has no strategy level.
    flat = TaskRollout([], [], [StrategyRollout(None, [won, lost, won])])
    assert ZeroVariance.of(flat, 0.25).counts() == {
        "num_strategy_groups": 0, "zero_var_strategy_groups": 0,
        "num_trajectory_groups": 1, "zero_var_trajectory_groups": 0,
    }


def test_dump_record_field_by_field() -> None:
    rollout = make_rollout()
    adv = group_advantages(rollout, CONFIG)
    record = task_record("train", 12, "strata", TASK, rollout, adv)
    assert {k: record[k] for k in ("schema", "kind", "step", "mode", "task", "task_description",
                                   "initial_observation")} == {
        "schema": 1, "kind": "train", "step": 12, "mode": "strata",
        "task": {"index": 3, "game_file": TASK.game_file, "task_type": TASK.task_type, "subtask": "cool",
                 "split": "train"},
        "task_description": "cool some apple and put it in countertop", "initial_observation": "You are in a kitchen.",
    }
    assert record["candidates"] == [
        {"index": 0, "text": "<strategy>cool it</strategy>", "strategy": "cool it", "well_formed": True,
         "kept": True, "kept_rank": 1, "nearest_kept_cosine": 0.5, "num_tokens": 2, "truncated": False},
        {"index": 1, "text": "rambling", "strategy": None, "well_formed": False, "kept": False, "kept_rank": None,
         "nearest_kept_cosine": 0.75, "num_tokens": 8, "truncated": True},
        {"index": 2, "text": "<strategy>fridge first</strategy>", "strategy": "fridge first", "well_formed": True,
         "kept": True, "kept_rank": 0, "nearest_kept_cosine": 0.5, "num_tokens": 3, "truncated": False},
    ]
    fridge, cool = record["strategies"]
    (a_won, a_lost), (a_sink,) = adv.actions
    won_steps = [
        {"step": 1, "response": "<action>open fridge</action>", "action": "open fridge", "command": "open fridge 1",
         "admissible": True, "observation": "The fridge is open.", "num_tokens": 2, "truncated": False,
         "advantage": a_won[0], "flagged": False, "credit": None},
        {"step": 2, "response": "<action>take apple</action>", "action": "take apple",
         "command": "take apple 1 from fridge 1", "admissible": False, "observation": "You take the apple.",
         "num_tokens": 7, "truncated": False, "advantage": a_won[1], "flagged": True, "credit": None},
    ]
    assert fridge == {
        "candidate": 2, "strategy": "fridge first", "score": adv.strategy_scores[0],
        "advantage": adv.strategy_base[0], "token_advantage": adv.strategy[0], "dropped": False,
        "trajectories": [
            {"index": 0, "won": True, "reward": 1.0, "end_reason": "won", "score": None, "num_steps": 2,
             "advantage": adv.trajectory_base[0][0], "trained": True, "environment_failure": False,
             "judge": {"text": "judged [2]", "parsed": True, "flagged_steps": [2]}, "steps": won_steps},
            {"index": 1, "won": False, "reward": 0.0, "end_reason": "step_limit", "score": None, "num_steps": 1,
             "advantage": adv.trajectory_base[0][1], "trained": True, "environment_failure": False,
             "judge": {"text": "???", "parsed": False, "flagged_steps": []},
             "steps": [{"step": 1, "response": "no tags", "action": None, "command": None, "admissible": None,
                        "observation": "Answer in tags.", "num_tokens": 2, "truncated": False,
                        "advantage": a_lost[0], "flagged": False, "credit": None}]},
            {"index": 2, "won": False, "reward": 0.0, "end_reason": "timeout: the engine took more than 60 s",
             "score": None, "num_steps": 1, "advantage": None, "trained": False, "environment_failure": True,
             "judge": None,
             "steps": [{"step": 1, "response": "<action>look</action>", "action": "look", "command": "look",
                        "admissible": True, "observation": "", "num_tokens": 1, "truncated": False,
                        "advantage": None, "flagged": False, "credit": None}]},
        ],
    }
    assert record["credit_settings"] is None
    assert cool["candidate"] == 0 and cool["score"] == adv.strategy_scores[1]
    assert cool["advantage"] == adv.strategy_base[1] and cool["token_advantage"] == adv.strategy[1]
    empty, sink = cool["trajectories"]
    assert empty["trained"] is False and empty["advantage"] is None and empty["steps"] == []
    assert sink["index"] == 1 and sink["score"] == 0.4 and sink["advantage"] == adv.trajectory_base[1][0]
    assert sink["steps"][0]["advantage"] == a_sink[0] and sink["steps"][0]["truncated"] is True
    # Validation: no advantages anywhere, nothing dropped; an empty cosine list means "not embedded".
    valid = task_record("valid", 0, "strata", TASK, TaskRollout(rollout.candidates, [2], rollout.strategies[:1]),
                        None)
    assert [c["nearest_kept_cosine"] for c in valid["candidates"]] == [None, None, None]
    assert [c["kept_rank"] for c in valid["candidates"]] == [None, None, 0]
    strategy = valid["strategies"][0]
    assert strategy["score"] is strategy["advantage"] is strategy["token_advantage"] is None
    assert strategy["dropped"] is False
    assert [t["trained"] for t in strategy["trajectories"]] == [False, False, False]


def test_a_group_without_strategy_has_no_strategy_shaping() -> None:
    # The GRPO baseline's one group: no candidate, so no strategy response and no s(z) (its score is dumped).
    rollout = make_rollout()
    flat = TaskRollout([], [], [StrategyRollout(None, rollout.strategies[0].trajectories)])
    adv = group_advantages(flat, StrataConfig.from_dict({**CONFIG_KEYS, "penalty_mode": "pre_norm"}))
    # pre_norm: S̃ = top-k mean of R + Σ(s + j) over [won: 1 + (0 + 0) + (-5/6 - 0.3), lost: 0 - 0.5] + s(z) = 0.
    assert adv.strategy_scores == pytest.approx([1 - 5 / 6 - 0.3])
    assert training_rows(flat, adv, ZeroVariance.of(flat, CONFIG.delta_coef))[0].role == "trajectory"


def test_advantages_of_another_shape_are_refused() -> None:
    # Rows must never pair a response with another one's advantage: every zip is strict.
    rollout = make_rollout()
    adv = group_advantages(rollout, CONFIG)
    (won, lost), sink = adv.actions
    for wrong in (replace(adv, strategy=adv.strategy[:1]), replace(adv, strategy_scores=adv.strategy_scores[:1]),
                  replace(adv, actions=adv.actions[:1]), replace(adv, actions=[[won], sink]),
                  replace(adv, actions=[[won, lost, won], sink])):
        with pytest.raises(ValueError, match="zip"):
            training_rows(rollout, wrong, ZeroVariance.of(rollout, CONFIG.delta_coef))


@pytest.mark.parametrize("per_step", [False, True])
def test_every_row_of_a_group_without_reward_variance_says_so(per_step: bool) -> None:
    """`strata.zero_variance_filter` masks rows by their flag: strategy rows carry their strategy group's, every
    trajectory or step row its trajectory group's (here δ = 0.25: both strategies score 1, no strategy signal;
    the first strategy's [won, lost] has trajectory signal, the second's [won, won] none)."""
    rollout = make_rollout()
    won, lost = rollout.strategies[0].trajectories[:2]
    split_and_sure = replace(rollout, strategies=[StrategyRollout(rollout.candidates[2], [won, lost]),
                                                  StrategyRollout(rollout.candidates[0], [won, won])])
    config = replace(CONFIG, delta_coef=0.25)
    rows = training_rows(split_and_sure, group_advantages(split_and_sure, config),
                         ZeroVariance.of(split_and_sure, 0.25), per_step=per_step)
    flags = [(row.role, row.zero_variance) for row in rows]
    per_trajectory = 2 if per_step else 1  # `won` has two steps, `lost` one
    role = "step" if per_step else "trajectory"
    lost_rows = 1
    assert flags == [("strategy", True), ("strategy", True),
                     *[(role, False)] * (per_trajectory + lost_rows), *[(role, True)] * (2 * per_trajectory)]
