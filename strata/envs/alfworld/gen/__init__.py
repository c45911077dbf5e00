"""Offline generator of ALFWorld games, from the domain, grammar and ALFRED scene layouts in alfworld."""

from strata.envs.alfworld.gen.generate import generate_split
from strata.envs.alfworld.gen.grammar import GRAMMAR_VERSIONS, game_logic
from strata.envs.alfworld.gen.spec import GameSpec, sample_spec
from strata.envs.alfworld.gen.writer import GeneratedGame, verify_game, write_game

__all__ = [
    "GRAMMAR_VERSIONS",
    "GameSpec",
    "GeneratedGame",
    "game_logic",
    "generate_split",
    "sample_spec",
    "verify_game",
    "write_game",
]
