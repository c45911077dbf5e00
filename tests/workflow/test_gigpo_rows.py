"""GiGPO on StraTA's rows: which record field becomes which anchor, reward and penalty, what the dump keeps, and
that the dump alone gives back every advantage. The formulas are tests/core/test_gigpo.py's; the numbers below
were worked out by hand."""

from __future__ import annotations

import pytest

from strata.core.config import StrataConfig
from strata.envs.tasks import Task
from strata.report.credit import recomputed_advantages
from strata.report.show import task_tree, to_text
from strata.workflow.dump import anchor_digest, task_record
from strata.workflow.records import Generation, Step, StrategyRollout, TaskRollout, Trajectory
from strata.workflow.rows import (
    ZeroVariance,
    credit_counts,
    credit_settings,
    group_advantages,
    training_rows,
)

TASK = Task(game_file="/games/apple/game.tw-pddl", task_type="pick_and_place_simple", split="train", index=5)
CONFIG_KEYS = {
    "algorithm": "gigpo", "num_stras_per_run": 1, "num_cands_per_stra": 1, "num_trajs_per_stra": 3,
    "judge": {"enable": False}, "prompts": {"preset": "alfworld_grpo"}, "format_penalty": 0.5,
    "penalty_mode": "post_norm", "length_penalty": {"threshold": 1.0}, "inadmissible_penalty": 0.25,
    "gigpo": {"gamma": 0.5, "step_weight": 2.0, "mode": "mean_norm", "episode_stats": "steps", "reward_scale": 10.0},
}
CONFIG = StrataConfig.from_dict(CONFIG_KEYS)


def gen(text: str) -> Generation:
    return Generation(prompt_ids=[1], token_ids=[2, 3], logprobs=[-0.1, -0.2], text=text, truncated=False)


def step(action: str | None, observation: str, admissible: bool | None) -> Step:
    return Step(gen(f"<action>{action}</action>" if action else "no tags"), action, observation,
                command=action, admissible=admissible)


def make_rollout(won: bool = True) -> TaskRollout:
    """A wins at the fridge; B reaches the fridge, takes what is not there twice; C answers without tags."""
    a = Trajectory([10], [step("go to fridge 1", "At the fridge.", True), step("take apple", "Done.", True)],
                   won=won, end_reason="won" if won else "step_limit")
    b = Trajectory([20], [step("go to fridge 1", "At the fridge.", True),
                          step("take mug", "Nothing happens.", False), step("take mug", "Nothing happens.", False)],
                   end_reason="step_limit")
    c = Trajectory([30], [step(None, "Answer in tags.", None)], end_reason="step_limit")
    return TaskRollout([], [], [StrategyRollout(None, [a, b, c])], initial_observation="In a kitchen.")


def test_anchors_rewards_and_penalties_reach_the_credit():
    adv = group_advantages(make_rollout(), CONFIG)
    (a, b, c), = adv.step_credit
    # Episode part: rows 10, 10, 0, 0, 0, 0 (mean 10/3). Returns (γ = 0.5): A [5, 10], B and C 0.
    # Step groups: "In a kitchen." {5, 0, 0}, "At the fridge." {10, 0}, "Nothing happens." alone.
    assert [x.step_group for x in a + b + c] == [0, 1, 0, 1, 2, 0]
    assert [x.step_group_size for x in a + b + c] == [3, 2, 3, 2, 1, 3]
    assert [x.discounted_return for x in a + b + c] == [5.0, 10.0, 0.0, 0.0, 0.0, 0.0]
    assert [x.step_part for x in a + b + c] == pytest.approx([10 / 3, 5, -5 / 3, -5, 0, -5 / 3])
    assert [x.penalty for x in a + b + c] == [0.0, 0.0, 0.0, -0.25, -0.25, -0.5]
    # A = episode part + 2·step part + penalty (post_norm).
    expected = [[20 / 3 + 20 / 3, 20 / 3 + 10], [-10 / 3 - 10 / 3, -10 / 3 - 10 - 0.25, -10 / 3 - 0.25],
                [-10 / 3 - 10 / 3 - 0.5]]
    assert [pytest.approx(row) for row in expected] == adv.actions[0]
    assert adv.trajectory_base == [[pytest.approx(20 / 3), pytest.approx(-10 / 3), pytest.approx(-10 / 3)]]
    rows = training_rows(make_rollout(), adv, ZeroVariance.of(make_rollout(), 1.0, None, adv.step_credit),
                         per_step=True)
    assert [r.advantages[0] for r in rows] == [pytest.approx(x) for row in expected for x in row]


def test_the_dump_keeps_every_term_and_gives_the_advantages_back():
    rollout = make_rollout()
    adv = group_advantages(rollout, CONFIG)
    record = task_record("train", 4, "gigpo", TASK, rollout, adv, credit_settings(CONFIG))
    assert record["credit_settings"] == {"gamma": 0.5, "step_weight": 2.0, "mode": "mean_norm",
                                         "episode_stats": "steps", "reward_scale": 10.0,
                                         "similarity_threshold": None, "anchor": "observation",
                                         "penalty_mode": "post_norm"}
    b_steps = record["strategies"][0]["trajectories"][1]["steps"]
    assert b_steps[2]["credit"] == {
        "anchor": anchor_digest("Nothing happens."), "step_group": 2, "step_group_size": 1, "step_reward": 0.0,
        "discounted_return": 0.0, "episode_part": pytest.approx(-10 / 3), "step_part": 0.0, "penalty": -0.25}
    assert [s["credit"]["anchor"] for s in b_steps] == [anchor_digest(o) for o in
                                                        ("In a kitchen.", "At the fridge.", "Nothing happens.")]
    assert recomputed_advantages(record) == [[pytest.approx(row, abs=1e-12) for row in adv.actions[0]]]


def test_recomputation_refuses_a_record_without_credit():
    record = task_record("valid", 0, "gigpo", TASK, make_rollout(), None, credit_settings(CONFIG))
    assert record["credit_settings"] is None
    with pytest.raises(ValueError, match="no GiGPO credit"):
        recomputed_advantages(record)


def test_equal_wins_of_different_lengths_still_carry_a_signal():
    # Every episode lost: nothing to learn, the group is flat. Equal rewards alone do not make it flat under GiGPO.
    lost = make_rollout(won=False)
    adv = group_advantages(lost, CONFIG)
    assert ZeroVariance.of(lost, 1.0, None, adv.step_credit).trajectory_groups == (True,)
    both = TaskRollout([], [], [StrategyRollout(None, [make_rollout().trajectories[0],
                                                       Trajectory([40], [step("look", "In a kitchen.", True),
                                                                         *make_rollout().trajectories[0].steps],
                                                                  won=True, end_reason="won")])],
                       initial_observation="In a kitchen.")
    credit = group_advantages(both, CONFIG).step_credit
    assert ZeroVariance.of(both, 1.0).trajectory_groups == (True,)
    assert ZeroVariance.of(both, 1.0, None, credit).trajectory_groups == (False,)


def test_credit_counts_and_settings_only_for_gigpo():
    adv = group_advantages(make_rollout(), CONFIG)
    assert credit_counts(adv) == {"gigpo_steps": 6, "gigpo_step_group_size_sum": 3 + 2 + 3 + 2 + 1 + 3,
                                  "gigpo_grouped_steps": 5, "gigpo_nonzero_step_parts": 5}
    grpo = StrataConfig.from_dict({**CONFIG_KEYS, "algorithm": "grpo"})
    assert credit_counts(group_advantages(make_rollout(), grpo)) == {}
    assert credit_settings(grpo) is None


def test_strata_show_spells_out_the_terms_of_each_step():
    rollout = make_rollout()
    record = task_record("train", 4, "gigpo", TASK, rollout, group_advantages(rollout, CONFIG), credit_settings(CONFIG))
    text = to_text(task_tree(record))
    # B's second step: episode -10/3, step -5 (G 0 against A's 10 at the fridge), penalty -0.25; -3.33 - 10 - 0.25.
    assert (f"step 2  > take mug  NOT ADMISSIBLE  2 tok  adv -13.58  = episode -3.33, step -5.00 (G 0.00, anchor "
            f"{anchor_digest('At the fridge.')} shared by 2), penalty -0.25") in text


def test_last_admitted_anchors_keep_the_room_after_a_refusal():
    """B's third step follows a refused "take mug": the game is still at the fridge, so with
    ``strata.gigpo.anchor=last_admitted`` it joins A's and B's fridge steps instead of standing alone."""
    config = StrataConfig.from_dict({**CONFIG_KEYS, "gigpo": {**CONFIG_KEYS["gigpo"], "anchor": "last_admitted"}})
    rollout = make_rollout()
    adv = group_advantages(rollout, config)
    (a, b, c), = adv.step_credit
    assert [x.step_group for x in a + b + c] == [0, 1, 0, 1, 1, 0]
    # Fridge: A's 10 against B's two 0s (mean 10/3); the kitchen as before.
    assert [x.step_part for x in a + b + c] == pytest.approx([10 / 3, 20 / 3, -5 / 3, -10 / 3, -10 / 3, -5 / 3])
    record = task_record("train", 4, "gigpo", TASK, rollout, adv, credit_settings(config))
    b_steps = record["strategies"][0]["trajectories"][1]["steps"]
    assert [s["credit"]["anchor"] for s in b_steps] == [anchor_digest(o) for o in
                                                        ("In a kitchen.", "At the fridge.", "At the fridge.")]
    assert recomputed_advantages(record) == [[pytest.approx(row, abs=1e-12) for row in adv.actions[0]]]


def test_refused_repeats_count_a_refused_command_sent_again():
    """Only a command sent again right after the environment refused it counts: not a repeat of an admitted
    one, not a different command after a refusal, not a malformed reply (nothing was sent)."""
    steps = [step("take mug", "Nothing happens.", False), step("take mug", "Nothing happens.", False),
             step("take mug", "Nothing happens.", False), step(None, "Answer in tags.", None),
             step("take mug", "Nothing happens.", False), step("go to fridge", "At the fridge.", True),
             step("go to fridge", "Nothing happens.", True), step("look", "Nothing happens.", False),
             step("open fridge", "The fridge is open.", True)]
    assert Trajectory(prompt_ids=[1], steps=steps).refused_repeats == 2
    assert Trajectory(prompt_ids=[1]).refused_repeats == 0
