"""The flat baseline's prompt presets: each environment's StraTA prompts minus the strategy, nothing else."""

from __future__ import annotations

import dataclasses
import re

import pytest

from strata.core.config import StrataConfig
from strata.core.prompting import available_presets, load_prompt_templates

GRPO = {"algorithm": "grpo", "num_stras_per_run": 1, "num_cands_per_stra": 1, "judge": {"enable": False}}


def sentences(text: str) -> list[str]:
    return [s for line in text.splitlines() for s in re.split(r"(?<=[.:])\s+", line.strip()) if s]


@pytest.mark.parametrize("environment", ["alfworld", "sciworld", "webshop", "alfworld_compact"])
def test_a_grpo_preset_is_its_environment_s_without_the_strategy(environment):
    assert f"{environment}_grpo" in available_presets()
    strata = dataclasses.asdict(load_prompt_templates(environment))
    grpo = dataclasses.asdict(load_prompt_templates(f"{environment}_grpo"))
    assert {name for name in strata if strata[name] != grpo[name]} == {"action"}
    assert "{strategy}" in strata["action"] and "{strategy}" not in grpo["action"]
    assert "strategy" not in grpo["action"].lower()
    # What is left is the StraTA action prompt's text, in the same order.
    assert sentences(grpo["action"]) == [s for s in sentences(strata["action"]) if "strategy" not in s.lower()]
    StrataConfig.from_dict({**GRPO, "prompts": {"preset": f"{environment}_grpo"}})


def test_the_strata_preset_under_grpo_names_the_grpo_presets():
    with pytest.raises(ValueError, match="alfworld_grpo, sciworld_grpo or webshop_grpo"):
        StrataConfig.from_dict({**GRPO, "prompts": {"preset": "sciworld"}})
