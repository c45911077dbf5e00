"""The episode rules every environment shares (`strata.envs.session`), on a scripted engine: each real
environment's session is tested on its real engine in test_engine, test_sciworld_pool and test_webshop_pool."""

from __future__ import annotations

import pytest

from strata.envs.records import EpisodeStart
from strata.envs.session import EpisodeSession, Outcome


class Counter:
    """A game that is won at ``count 3``, lost at ``count 9``; anything else is refused."""

    game_file = "counter"


class CounterSession(EpisodeSession):
    def begin(self, game_file: str, with_walkthrough: bool) -> EpisodeStart:
        return EpisodeStart(task_description="count", initial_observation="0", admissible_commands=("count 1",),
                            walkthrough=("count 1", "count 2", "count 3") if with_walkthrough else None)

    def apply(self, command: str) -> Outcome:
        known = command.startswith("count ")
        return Outcome(f"heard {command}", won=command == "count 3", lost=command == "count 9", admissible=known,
                       score=0.5 if known else None)

    def commands_after(self, observation: str) -> tuple[str, ...]:
        return () if self.done else (f"count {self.num_steps + 1}",)


def test_every_step_counts_and_the_cap_ends_the_episode() -> None:
    session = CounterSession(Counter(), max_steps=3)
    assert session.start("counter").admissible_commands == ("count 1",) and session.running
    results = [session.step(action) for action in ("hello", "count 1", "count 2")]
    assert [(r.done, r.admissible) for r in results] == [(False, False), (False, True), (True, True)]
    assert results[1].admissible_commands == ("count 3",) and results[2].admissible_commands == ()
    assert (session.num_steps, session.end_reason, session.running) == (3, "step_limit", False)
    with pytest.raises(RuntimeError, match="finished episode of counter"):
        session.step("count 3")


def test_a_win_or_a_loss_ends_the_episode_before_the_cap() -> None:
    session = CounterSession(Counter(), max_steps=10)
    session.start("counter")
    won = session.step("count 3")
    assert (won.won, won.done, won.score, session.end_reason) == (True, True, 0.5, "won")
    session.start("counter")  # a new episode starts from nothing
    assert (session.num_steps, session.won, session.running) == (0, False, True)
    lost = session.step("count 9")
    assert (lost.won, lost.done, session.end_reason) == (False, True, "lost")


def test_normalisation_strips_only_formatting_and_can_be_turned_off() -> None:
    session = CounterSession(Counter(), max_steps=5)
    session.start("counter")
    assert session.step('"Count 3."').command == "count 3"
    raw = CounterSession(Counter(), max_steps=5, normalize_actions=False)
    raw.start("counter")
    assert raw.step("Count 3.").command == "Count 3." and not raw.won


def test_a_session_refuses_a_step_before_its_start_and_a_cap_below_one() -> None:
    with pytest.raises(RuntimeError, match="no started episode"):
        CounterSession(Counter(), max_steps=1).step("count 1")
    with pytest.raises(ValueError, match="max_steps must be >= 1"):
        CounterSession(Counter(), max_steps=0)
