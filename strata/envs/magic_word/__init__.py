"""The magic-word game: a one-decision toy environment for the learning check (`strata.envs.magic_word.game`)."""
