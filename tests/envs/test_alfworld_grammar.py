"""The engine's memoized grammar changes nothing a player sees: the same games played with textworld's own
`PddlEnv` and with `strata.envs.alfworld.grammar.MemoizedPddlEnv` give the same observations, wins and command
lists at every step (random walks over the admissible commands, wrong commands included)."""

from __future__ import annotations

import random

import pytest

from strata.envs.alfworld.bundled import bundled_data_path
from strata.envs.alfworld.discovery import load_split
from strata.envs.alfworld.engine import AlfworldEngine


def textworld_engine():
    """What AlfredTWEnv builds, with textworld's `PddlEnv` as it is."""
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
    from textworld.envs import PddlEnv

    infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    return AlfredInfos(AlfredDemangler(PddlEnv(infos), shuffle=False))


def play(env, game_file: str, seed: int, steps: int) -> list[tuple]:
    """Observation, won and admissible commands after the reset and each of ``steps`` random commands."""
    rng = random.Random(seed)
    env.load(game_file)
    state = env.reset()
    seen = [(state.feedback, state["won"], tuple(state["admissible_commands"]))]
    for _ in range(steps):
        command = rng.choice([*state["admissible_commands"], "take the moon from the sky"])
        state, _, _ = env.step(command)
        seen.append((state.feedback, state["won"], tuple(state["admissible_commands"])))
    return seen


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> list[str]:
    data = bundled_data_path(cache_dir=tmp_path_factory.mktemp("bundled"))
    return [task.game_file for split in ("train", "valid_seen") for task in load_split(data, split)[:6]]


def test_memoized_grammar_plays_every_step_as_textworld_does(games):
    engine, reference = AlfworldEngine()._env, textworld_engine()
    for seed, game_file in enumerate(games):
        assert play(engine, game_file, seed, 25) == play(reference, game_file, seed, 25), game_file


def test_an_engine_reused_across_games_parses_each_game_s_own_grammar(games):
    """`load` replaces the grammar with the new game's: a second game never derives from the first one's."""
    engine, reference = AlfworldEngine()._env, textworld_engine()
    for game_file in (games[0], games[-1], games[0]):
        assert play(engine, game_file, 7, 10) == play(reference, game_file, 7, 10)
