"""Where an ALFWorld agent's actions are refused: admissible rate by verb and by whether the task's object is in view.

The tiny CPU agent's main mistake is a well-formed action the room does not admit: it takes the task's object
wherever it arrives ("take spraybottle 1 from sidetable 1" where the sidetable holds a hand towel). Counting each
step by its verb (``take``, ``go``, ``open``, ...) and by whether the task's object was named in the observation
the agent acted on separates "cannot find" from "does not look": an agent that conditions on what it sees admits
nearly every ``take`` when the object is in view and issues few when it is not.

Read from validation dumps (`strata.workflow.dump`), so the same table comes from any run folder; so is the share of
steps spent repeating a refused command (`refused_repeats`), the loop most lost episodes end in. From training dumps,
`credit_table` says which advantage each kind of step was trained with: whether the update separates a ``take``
with the object in view from one without it, or credits both alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from strata.workflow.records import count_refused_repeats, repeats_refusal

# ALFWorld's pick goals: "put a spraybottle in toilet." / "put some soapbar on countertop."
_GOAL = re.compile(r"\bput (?:a|an|some|two) (\w+) (?:in|on|in/on)\b")


def task_object(description: str) -> str | None:
    """The object a pick goal names (``spraybottle``), None for another kind of goal."""
    match = _GOAL.search(description.lower())
    return match.group(1) if match else None


AFTER_ADMITTED = "after an admitted step"
REPEAT = "repeating the refused command"
AFTER_REFUSAL = "after another refusal"
FOLLOWS = (AFTER_ADMITTED, REPEAT, AFTER_REFUSAL)
"""What a step follows: the episode's start or an admitted step; the same command, just refused (a loop,
`strata.workflow.records.count_refused_repeats`); another refused or malformed step."""


@dataclass(frozen=True)
class Situation:
    """One action step: its verb, whether the task's object was in the observation it answered, whether the
    environment admitted it (None: malformed, nothing was sent), the advantage it was trained with (None in a
    validation dump, or for a trajectory the update left out), and what it follows (`FOLLOWS`)."""

    verb: str
    object_in_view: bool
    admissible: bool | None
    advantage: float | None = None
    follows: str = AFTER_ADMITTED


def episode_situations(record: Mapping[str, Any]) -> Iterator[Situation]:
    """The steps of a dumped task's episodes, each with the observation it was chosen from."""
    target = task_object(record.get("task_description") or "")
    if target is None:
        return
    in_view = re.compile(rf"\b{re.escape(target)} \d+")
    for strategy in record["strategies"]:
        for trajectory in strategy["trajectories"]:
            observation, previous = record.get("initial_observation") or "", None
            for step in trajectory["steps"]:
                action = step["command"] or step["action"] or ""
                verb = action.split()[0].lower() if action.strip() else "(none)"
                advantage = step.get("advantage") if trajectory.get("trained") else None
                yield Situation(verb, bool(in_view.search(observation)), step["admissible"], advantage,
                                _follows(previous, step["command"]))
                observation, previous = step["observation"], step


def _follows(previous: Mapping[str, Any] | None, command: str | None) -> str:
    if previous is None or previous["admissible"] is True:
        return AFTER_ADMITTED
    if repeats_refusal(previous["command"], previous["admissible"], command):
        return REPEAT
    return AFTER_REFUSAL


def follows_table(records: Iterable[Mapping[str, Any]], verb: str, object_in_view: bool) -> dict[str, int]:
    """`FOLLOWS` -> how many ``verb`` steps (with the task's object in view or not) of ``records`` follow it: whether
    a mistake is made afresh or repeated in a loop."""
    counts = dict.fromkeys(FOLLOWS, 0)
    for record in records:
        for situation in episode_situations(record):
            if situation.verb == verb and situation.object_in_view == object_in_view:
                counts[situation.follows] += 1
    return counts


def situation_table(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, bool], tuple[int, int]]:
    """(verb, object in view) -> (admitted steps, steps), over every step of ``records``."""
    counts: dict[tuple[str, bool], list[int]] = {}
    for record in records:
        for situation in episode_situations(record):
            cell = counts.setdefault((situation.verb, situation.object_in_view), [0, 0])
            cell[0] += bool(situation.admissible)
            cell[1] += 1
    return {key: (admitted, total) for key, (admitted, total) in sorted(counts.items())}


@dataclass(frozen=True)
class Credit:
    """The advantages one kind of step was trained with."""

    steps: int
    mean_advantage: float
    positive_share: float


def credit_table(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, bool], Credit]:
    """(verb, object in view) -> the advantages of those steps, over every trained step of training ``records``."""
    advantages: dict[tuple[str, bool], list[float]] = {}
    for record in records:
        for situation in episode_situations(record):
            if situation.advantage is not None:
                advantages.setdefault((situation.verb, situation.object_in_view), []).append(situation.advantage)
    return {key: Credit(len(values), sum(values) / len(values), sum(value > 0 for value in values) / len(values))
            for key, values in sorted(advantages.items())}


def refused_repeats(records: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(steps that repeat a refused command, steps) over every episode of dumped ``records``
    (`strata.workflow.records.count_refused_repeats`): how much of the play is spent in loops."""
    repeats = steps = 0
    for record in records:
        for strategy in record["strategies"]:
            for trajectory in strategy["trajectories"]:
                repeats += count_refused_repeats((step["command"], step["admissible"]) for step in trajectory["steps"])
                steps += len(trajectory["steps"])
    return repeats, steps
