"""The real engine on generated games of every task type, in both grammar versions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from strata.envs.alfworld.discovery import load_split, task_description_of_game
from strata.envs.alfworld.engine import GameSession
from strata.envs.alfworld.tasks import SUBTASKS

INTRO = re.compile(
    r"-= Welcome to TextWorld, ALFRED! =-\n\n"
    r"You are in the middle of a room\. Looking quickly around you, you see (an? [a-z]+ \d+, )*and an? [a-z]+ \d+\.\n\n"
    r"Your task is to: (?P<task>[^\n]+)\.$"
)


def test_every_subtask_first_observation_commands_and_walkthrough(bundled_root: Path, engine) -> None:
    tasks = load_split(bundled_root, "valid_seen")
    assert sorted({t.subtask for t in tasks}) == sorted(SUBTASKS)
    session = GameSession(engine, max_steps=50)
    for task in tasks:
        start = session.start(task.game_file, with_walkthrough=True)
        match = INTRO.match(start.initial_observation)
        assert match, start.initial_observation
        assert match["task"] == start.task_description == task_description_of_game(task.game_file)
        assert {"look", "inventory"} <= set(start.admissible_commands)
        assert "help" not in start.admissible_commands  # alfworld 0.4.2 offers it; the engine hides it
        assert any(c.startswith("go to ") for c in start.admissible_commands)
        assert start.walkthrough, task.game_file
        admissible = start.admissible_commands
        for i, command in enumerate(start.walkthrough, 1):
            assert command in admissible, (task.game_file, command)
            result = session.step(command)
            assert (result.command, result.admissible) == (command, True)
            admissible = result.admissible_commands
            assert "help" not in admissible
            assert result.won == (i == len(start.walkthrough))
            assert result.reward == (1.0 if i == len(start.walkthrough) else 0.0)
        assert result.done and session.num_steps == len(start.walkthrough) and session.end_reason == "won"
        if task.subtask in ("pick", "clean", "heat", "cool", "pick2"):
            assert any(c.startswith("move ") and " to " in c for c in start.walkthrough)


def test_look_only_policy_stops_at_step_50(bundled_root: Path, engine) -> None:
    task = load_split(bundled_root, "valid_seen", ["look"])[0]
    session = GameSession(engine)
    session.start(task.game_file)
    results = [session.step("look") for _ in range(50)]
    assert [r.done for r in results] == [False] * 49 + [True]
    assert not any(r.won for r in results) and session.end_reason == "step_limit"
    with pytest.raises(RuntimeError, match="finished episode"):
        session.step("look")


def test_invalid_command_costs_a_step(bundled_root: Path, engine) -> None:
    task = load_split(bundled_root, "valid_seen", ["pick"])[0]
    session = GameSession(engine, max_steps=3)
    start = session.start(task.game_file)
    result = session.step("dance with the fridge")
    assert result.observation == "Nothing happens."
    assert (result.won, result.done, session.num_steps) == (False, False, 1)
    assert result.admissible_commands == start.admissible_commands
    session.step("look")
    assert session.step("xyzzy").done  # third step hits the cap of 3


def _written_like_a_person(command: str) -> str:
    return f"- {command[0].upper()}{command[1:]}."


def test_an_action_written_like_a_person_is_mapped_and_moves_the_agent(bundled_root: Path, engine) -> None:
    task = load_split(bundled_root, "valid_seen", ["pick"])[0]
    session = GameSession(engine, max_steps=5)
    start = session.start(task.game_file)
    command = next(c for c in start.admissible_commands if c.startswith("go to "))
    written = _written_like_a_person(command)  # "- Go to cabinet 1."
    result = session.step(written)
    assert (result.command, result.admissible) == (command, True)
    assert result.observation.startswith(f"You arrive at {command.removeprefix('go to ')}"), result.observation
    assert result.admissible_commands != start.admissible_commands
    unknown = session.step("Dance with the fridge.")
    assert (unknown.observation, unknown.command, unknown.admissible) == (
        "Nothing happens.", "Dance with the fridge.", False)
    hidden = session.step("help")  # still answered by the engine, but never offered
    assert (hidden.command, hidden.admissible) == ("help", False) and hidden.observation != "Nothing happens."


def test_normalising_switched_off_sends_the_text_as_written(bundled_root: Path, engine) -> None:
    task = load_split(bundled_root, "valid_seen", ["pick"])[0]
    session = GameSession(engine, max_steps=5, normalize_actions=False)
    start = session.start(task.game_file)
    command = next(c for c in start.admissible_commands if c.startswith("go to "))
    written = _written_like_a_person(command)
    result = session.step(written)
    assert (result.observation, result.command, result.admissible) == ("Nothing happens.", written, False)
    assert result.admissible_commands == start.admissible_commands and session.num_steps == 1
    assert session.step(command).admissible


def test_reset_returns_the_same_initial_state(bundled_root: Path, engine) -> None:
    task = load_split(bundled_root, "train", ["cool"])[0]
    session = GameSession(engine)
    first = session.start(task.game_file)
    session.step(sorted(first.admissible_commands)[0])
    again = session.start(task.game_file)  # same game: reset only
    assert again == first


def test_grammar_2_1_1_says_put_in_on(put_games_root: Path, engine) -> None:
    tasks = load_split(put_games_root, "valid_seen")
    assert sorted(t.subtask for t in tasks) == sorted(SUBTASKS)
    session = GameSession(engine)
    for task in tasks:
        start = session.start(task.game_file, with_walkthrough=True)
        assert "help" not in start.admissible_commands
        assert not any(c.startswith("move ") for c in start.walkthrough)
        for command in start.walkthrough:
            result = session.step(command)
            if command.startswith("put "):
                assert " in/on " in command and result.observation.startswith("You put the ")
        assert result.won
        if task.subtask != "look":
            assert any(c.startswith("put ") and " in/on " in c for c in start.walkthrough)
