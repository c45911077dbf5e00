"""The ``alfworld_reasoning`` preset: ALFWorld's templates, except that actions come after a <think> block."""

from __future__ import annotations

import dataclasses

import pytest

from strata.core.parsing import extract_tag
from strata.core.prompting import available_presets, build_action_messages, load_prompt_templates

ADMISSIBLE = ("go to cabinet 1", "go to fridge 1", "look")


def test_it_differs_from_alfworld_only_in_the_action_prompts() -> None:
    assert "alfworld_reasoning" in available_presets()
    plain = dataclasses.asdict(load_prompt_templates("alfworld"))
    reasoning = dataclasses.asdict(load_prompt_templates("alfworld_reasoning"))
    changed = sorted(name for name in plain if plain[name] != reasoning[name])
    assert changed == ["action", "observation_turn"]
    for name in changed:
        assert "<think> </think>" in reasoning[name] and "<action> </action>" in reasoning[name]


def test_it_renders_the_think_then_act_request() -> None:
    templates = load_prompt_templates("alfworld_reasoning")
    (message,) = build_action_messages(templates, "cool some egg and put it in microwave", "fridge first", [],
                                       "You are in the middle of a room.", ADMISSIBLE)
    content = message["content"]
    assert "fridge first" in content and "- go to fridge 1" in content
    assert content.index("<think> </think>") < content.index("<action> </action>")
    turn = templates.observation_turn.format(step=2, observation="You arrive at fridge 1.",
                                             admissible_actions="- look")
    assert turn.index("<think> </think>") < turn.index("<action> </action>")


@pytest.mark.parametrize(
    ("response", "action"),
    [
        ("<think>The egg is probably in the fridge, which is closed.</think>\n<action>go to fridge 1</action>",
         "go to fridge 1"),
        # The think block names the tag in prose, unclosed: the real action after it is read.
        ("<think>I must answer with <action> tags. The fridge is the likely place.</think> "
         "<action>go to fridge 1</action>", "go to fridge 1"),
        # It restates the format with a complete example pair: the last pair (the answer) wins.
        ("<think>Format: <action>go to cabinet 1</action>. But the egg is cold food, so the fridge.</think>\n"
         "<action>go to fridge 1</action>", "go to fridge 1"),
        ("<think>Nothing here helps.</think>", None),  # thought, but no action: malformed
        # Cut off by the token limit while weighing an example: no answer yet, not the example.
        ("<think>Maybe <action>go to cabinet 1</action>? The egg is cold food, so", None),
        # A pair inside a closed think block is thinking too, even with no answer after it.
        ("<think>Say <action>look</action> first?</think> I am not sure.", None),
    ],
)
def test_the_action_is_read_after_the_thinking(response: str, action: str | None) -> None:
    assert extract_tag(response, "action") == action
