"""The environment presets compose as documented: ScienceWorld at the spec's horizon, and AgentGym's 30-round
horizon for parity with AgentGym-RL's numbers (issue #40), differing in nothing else."""

from __future__ import annotations

from omegaconf import OmegaConf

from strata.trainer.config import load_config


def test_the_agentgym_preset_is_sciworld_with_thirty_rounds() -> None:
    spec = OmegaConf.to_container(load_config("strata_trainer", ["+environment=sciworld"]), resolve=False)
    parity = OmegaConf.to_container(load_config("strata_trainer", ["+environment=sciworld_agentgym"]), resolve=False)
    assert (spec["env"]["max_steps"], parity["env"]["max_steps"]) == (50, 30)
    parity["env"]["max_steps"] = 50
    assert parity == spec
