"""The environment the rollout plays, chosen by ``env.name``.

``alfworld`` (default) is the real engine in worker processes (`strata.envs.pool.EnvPool`); ``sciworld`` is
ScienceWorld's simulator in the same pool (one JVM per worker, `strata.envs.sciworld`); ``webshop`` is WebShop's
text site on a catalogue each worker loads once (`strata.envs.webshop`).
``magic_word`` is a one-decision toy (`strata.envs.magic_word.game`) whose success a tiny model can reach
by chance; the learning check uses it to show that StraTA's advantages have the right sign.
Both give ``async with env.episode(task) as episode`` with the same episode interface, and both map an
action to the admissible command it means (``Go to cabinet 1.`` -> ``go to cabinet 1``) unless
``normalize_actions`` (``env.normalize_actions``) is false.
"""

from __future__ import annotations

import functools
from typing import Any

from strata.envs.registry import About

IN_PROCESS = "magic_word"  # played in the agent-loop worker itself, not in a pool of game processes


def environment_names() -> tuple[str, ...]:
    """Every ``env.name`` the rollout plays: the pool's registered environments and the magic-word game."""
    from strata.envs.registry import environment_names as registered

    return (*registered(), IN_PROCESS)


def about(name: str) -> About:
    """What a model card says of the environment ``name`` (an unknown name: only its name)."""
    if name == IN_PROCESS:
        from strata.envs.magic_word.game import ABOUT

        return ABOUT
    from strata.envs.registry import environment

    if name in environment_names() and environment(name).about:
        return environment(name).part("about")
    return About(name, name, name, f"{name} version")


@functools.cache
def make_environment(
    name: str, num_workers: int, step_timeout_s: float, max_steps: int, normalize_actions: bool = True
) -> Any:
    """One environment per agent-loop worker process, shared by all its concurrent episodes."""
    if name == IN_PROCESS:
        from strata.envs.magic_word.game import MagicWordEnv

        return MagicWordEnv(max_steps=max_steps, normalize_actions=normalize_actions)
    if name not in environment_names():
        raise ValueError(f"unknown env.name {name!r}; valid: {', '.join(environment_names())}")
    from strata.envs.pool import EnvPool

    return EnvPool(num_workers=num_workers, step_timeout_s=step_timeout_s, max_steps=max_steps,
                   normalize_actions=normalize_actions, engine=name)
