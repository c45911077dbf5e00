"""Refused actions by verb and by whether the task's object was in view, and loops, from hand-written dump records."""

from __future__ import annotations

from strata.report.situations import (
    AFTER_ADMITTED,
    AFTER_REFUSAL,
    REPEAT,
    Credit,
    Situation,
    credit_table,
    episode_situations,
    follows_table,
    refused_repeats,
    situation_table,
    task_object,
)


def _step(action: str | None, admissible: bool | None, observation: str) -> dict:
    return {"action": action, "command": action, "admissible": admissible, "observation": observation}


RECORD = {
    "task_description": "Your task is to: put some spraybottle on toilet.",
    "initial_observation": "You are in the middle of a room. You see a sidetable 1, a toilet 1.",
    "strategies": [{"trajectories": [{"steps": [
        _step("go to sidetable 1", True, "On the sidetable 1, you see a handtowel 1."),
        _step("take spraybottle 1 from sidetable 1", False, "Nothing happens."),  # not in view: the mistake
        _step(None, None, "Answer with <action>."),  # malformed
        _step("go to cabinet 1", True, "On the cabinet 1, you see a spraybottle 2."),
        _step("take spraybottle 2 from cabinet 1", True, "You pick up the spraybottle 2."),
    ]}]}],
}


def test_the_goal_names_the_object() -> None:
    assert task_object("Your task is to: put a spraybottle in toilet.") == "spraybottle"
    assert task_object("Your task is to: put some soapbar on countertop.") == "soapbar"
    assert task_object("Your task is to: heat some egg and put it in garbagecan.") is None


def test_each_step_is_judged_on_the_observation_it_answered() -> None:
    assert list(episode_situations(RECORD)) == [
        Situation("go", False, True), Situation("take", False, False),
        Situation("(none)", False, None, follows=AFTER_REFUSAL), Situation("go", False, True, follows=AFTER_REFUSAL),
        Situation("take", True, True),
    ]
    assert situation_table([RECORD, RECORD]) == {
        ("(none)", False): (0, 2), ("go", False): (4, 4), ("take", False): (0, 2), ("take", True): (2, 2)}
    assert situation_table([{**RECORD, "task_description": "heat some egg and put it in garbagecan."}]) == {}


def test_refused_repeats_are_counted_over_every_dumped_episode() -> None:
    """The refused take is not sent again (a malformed reply follows it): no loop. Sent twice more: two."""
    loop = [_step("take spraybottle 1 from sidetable 1", False, "Nothing happens.")] * 3
    looping = {**RECORD, "strategies": [{"trajectories": [{"steps": loop}]}]}
    assert refused_repeats([RECORD]) == (0, 5)
    assert refused_repeats([RECORD, looping]) == (2, 8)


def test_credit_is_read_per_situation_from_trained_steps_only() -> None:
    """A won trajectory's in-view take and a lost one's out-of-view take get their own mean and positive share; a
    trajectory the update left out and a validation record (no advantages) count nowhere."""
    def trajectory(trained: bool, advantages: list[float | None]) -> dict:
        steps = [{**step, "advantage": a} for step, a in zip(RECORD["strategies"][0]["trajectories"][0]["steps"],
                                                             advantages, strict=True)]
        return {"trained": trained, "steps": steps}

    training = {**RECORD, "strategies": [{"trajectories": [
        trajectory(True, [0.5, 0.5, 0.5, 0.5, 0.5]),
        trajectory(True, [-1.0, -1.0, -1.0, -1.0, -1.0]),
        trajectory(False, [9.0] * 5),
    ]}]}
    table = credit_table([training, RECORD])
    assert set(table) == {("go", False), ("take", False), ("(none)", False), ("take", True)}
    assert table[("take", True)] == Credit(steps=2, mean_advantage=-0.25, positive_share=0.5)
    assert table[("go", False)] == Credit(steps=4, mean_advantage=-0.25, positive_share=0.5)
    assert credit_table([RECORD]) == {}


def test_a_take_is_told_apart_as_fresh_repeated_or_after_another_refusal() -> None:
    """Out-of-view takes: one on arrival, two repeats of it (a loop), one after a refused go, one after a malformed
    reply (nothing was sent: not a repeat); the admitted in-view take is counted in its own cell."""
    take = "take spraybottle 1 from sidetable 1"
    steps = [_step("go to sidetable 1", True, "On the sidetable 1, you see a handtowel 1."),
             _step(take, False, "Nothing happens."), _step(take, False, "Nothing happens."),
             _step(take, False, "Nothing happens."), _step("go to moon 1", False, "Nothing happens."),
             _step(take, False, "Nothing happens."), _step(None, None, "Answer with <action>."),
             _step(take, False, "Nothing happens.")]
    record = {**RECORD, "strategies": [{"trajectories": [{"steps": steps}]}]}
    assert follows_table([record], "take", False) == {AFTER_ADMITTED: 1, REPEAT: 2, AFTER_REFUSAL: 2}
    assert follows_table([record], "take", True) == {AFTER_ADMITTED: 0, REPEAT: 0, AFTER_REFUSAL: 0}
    assert follows_table([RECORD], "take", True) == {AFTER_ADMITTED: 1, REPEAT: 0, AFTER_REFUSAL: 0}
