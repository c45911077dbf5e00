"""Prompt templates and builders, rendered through the real Qwen2.5 chat template."""

from __future__ import annotations

import logging
import string
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.core.parsing import extract_tag
from strata.core.prompting import (
    TEMPLATE_FIELDS,
    PromptTemplates,
    available_presets,
    build_action_messages,
    build_judge_messages,
    build_strategy_messages,
    load_prompt_templates,
    prompt_fits,
)

logger = logging.getLogger(__name__)

DEFAULT_PROMPT_BUDGET = 2048  # verl-agent / GiGPO ALFWorld: data.max_prompt_length=2048

# A typical ALFWorld kitchen: 29 receptacles in the room description, the task, a mid-episode state.
RECEPTACLES = (
    [f"cabinet {i}" for i in range(10, 0, -1)]
    + ["coffeemachine 1", "countertop 3", "countertop 2", "countertop 1", "diningtable 1"]
    + [f"drawer {i}" for i in range(4, 0, -1)]
    + ["fridge 1", "garbagecan 1", "microwave 1", "shelf 3", "shelf 2", "shelf 1", "sinkbasin 1"]
    + [f"stoveburner {i}" for i in range(4, 0, -1)]
    + ["toaster 1"]
)
TASK = "heat some egg and put it in garbagecan."
INITIAL_OBSERVATION = (
    "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, "
    f"you see {', '.join('a ' + r for r in RECEPTACLES[:-1])}, and a {RECEPTACLES[-1]}.\n\n"
    f"Your task is to: {TASK}"
)
STRATEGY = (
    "The egg is most likely in the fridge or on a countertop. Go to fridge 1, open it and take the egg; "
    "otherwise check countertops 1-3 and the diningtable. Heat the egg with microwave 1, then go to "
    "garbagecan 1 and put the egg in it."
)
HISTORY = [
    ("go to fridge 1", "You arrive at fridge 1. The fridge 1 is closed."),
    (
        "open fridge 1",
        "You open the fridge 1. The fridge 1 is open. In it, you see a bowl 1, a lettuce 2, "
        "a plate 2, a potato 3, and a tomato 1.",
    ),
    ("close fridge 1", "You close the fridge 1."),
    (
        "go to countertop 1",
        "You arrive at countertop 1. On the countertop 1, you see a apple 1, a bread 1, "
        "a butterknife 2, a cellphone 1, a creditcard 1, a fork 2, a houseplant 1, a knife 1, a ladle 1, "
        "a mug 1, a peppershaker 1, a saltshaker 1, a spatula 1, and a tomato 2.",
    ),
    (
        "go to countertop 2",
        "You arrive at countertop 2. On the countertop 2, you see a cup 1, a dishsponge 1, "
        "a glassbottle 3, a lettuce 1, a pan 2, a plate 1, a potato 1, a soapbottle 2, and a spoon 1.",
    ),
    (
        "go to countertop 3",
        "You arrive at countertop 3. On the countertop 3, you see a bowl 2, a cellphone 3, "
        "a egg 2, a knife 2, a pencil 1, a spatula 3, and a statue 1.",
    ),
    ("take egg 2 from countertop 3", "You pick up the egg 2 from the countertop 3."),
    ("go to microwave 1", "You arrive at microwave 1. The microwave 1 is closed."),
    ("heat egg 2 with microwave 1", "You heat the egg 2 using the microwave 1."),
    (
        "go to garbagecan 1",
        "You arrive at garbagecan 1. On the garbagecan 1, you see a papertowelroll 1, and a soapbottle 1.",
    ),
]
CURRENT_OBSERVATION = HISTORY[-1][1]
ADMISSIBLE_ACTIONS = [f"go to {r}" for r in RECEPTACLES if r != "garbagecan 1"] + [
    "examine garbagecan 1",
    "examine egg 2",
    "inventory",
    "look",
    "put egg 2 in/on garbagecan 1",
]


ALFWORLD = load_prompt_templates("alfworld")


@pytest.fixture
def templates() -> PromptTemplates:
    return ALFWORLD


def _count(tokenizer, messages: list[dict[str, str]]) -> int:
    ids = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True, return_dict=False
    )
    return len(ids)


def test_typical_state_is_realistic() -> None:
    assert len(RECEPTACLES) >= 20 and len(HISTORY) == 10 and len(ADMISSIBLE_ACTIONS) >= 30


def test_prompts_render_through_the_qwen_chat_template(templates: PromptTemplates, qwen_tokenizer) -> None:
    strategy = build_strategy_messages(templates, TASK, INITIAL_OBSERVATION)
    action = build_action_messages(
        templates, TASK, STRATEGY, HISTORY, CURRENT_OBSERVATION, ADMISSIBLE_ACTIONS
    )
    judge = build_judge_messages(templates, TASK, STRATEGY, HISTORY)
    for messages, tag in ((strategy, "<strategy>"), (action, "<action>"), (judge, "<judgment>")):
        text = qwen_tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        assert text.startswith("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud.")
        assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")
        assert f"<|im_start|>user\n{messages[0]['content']}<|im_end|>" in text
        assert tag in text and TASK in text

    action_text = action[0]["content"]
    assert STRATEGY in action_text
    assert all(f"- {a}\n" in action_text + "\n" for a in ADMISSIBLE_ACTIONS)  # one admissible action a line
    assert "[Step 1] Action: go to fridge 1" in action_text and "You are now at step 11." in action_text
    assert INITIAL_OBSERVATION in strategy[0]["content"]
    judge_text = judge[0]["content"]
    assert "took 10 step(s)" in judge_text and "Step 10. Action: go to garbagecan 1" in judge_text


def test_typical_alfworld_state_fits_the_default_prompt_budget(
    templates: PromptTemplates, qwen_tokenizer
) -> None:
    counts = {
        "strategy": _count(qwen_tokenizer, build_strategy_messages(templates, TASK, INITIAL_OBSERVATION)),
        "action": _count(
            qwen_tokenizer,
            build_action_messages(
                templates, TASK, STRATEGY, HISTORY, CURRENT_OBSERVATION, ADMISSIBLE_ACTIONS
            ),
        ),
        "judge": _count(qwen_tokenizer, build_judge_messages(templates, TASK, STRATEGY, HISTORY)),
    }
    logger.info("prompt tokens on a typical ALFWorld state (10 steps, 30+ actions): %s", counts)
    assert max(counts.values()) <= DEFAULT_PROMPT_BUDGET
    # The action prompt of a 10-step state is the largest; a sanity floor shows the state is not trivial.
    assert counts["action"] > 600


def test_templates_use_every_placeholder_they_may(templates: PromptTemplates) -> None:
    # The shipped prompts must actually show what they are given (e.g. the admissible actions).
    for name, allowed in TEMPLATE_FIELDS.items():
        used = {field for _, field, _, _ in string.Formatter().parse(getattr(templates, name)) if field}
        assert used == allowed, name


def test_first_step_shows_no_history(templates: PromptTemplates) -> None:
    content = build_action_messages(templates, TASK, STRATEGY, [], INITIAL_OBSERVATION, ["look"])[0][
        "content"
    ]
    assert templates.no_history in content and "You are now at step 1." in content


def test_window_keeps_the_last_k_steps_with_their_absolute_numbers(templates: PromptTemplates) -> None:
    content = build_action_messages(
        templates, TASK, STRATEGY, HISTORY, CURRENT_OBSERVATION, ADMISSIBLE_ACTIONS, window=3
    )[0]["content"]
    assert "You have taken 10 step(s) so far. The most recent 3 step(s)" in content
    assert [n for n in range(1, 11) if f"[Step {n}]" in content] == [8, 9, 10]
    zero = build_action_messages(templates, TASK, STRATEGY, HISTORY, CURRENT_OBSERVATION, ["look"], window=0)
    assert "[Step" not in zero[0]["content"]


def test_budget_truncation_drops_the_oldest_steps_first(templates: PromptTemplates, qwen_tokenizer) -> None:
    full = _count(
        qwen_tokenizer,
        build_action_messages(templates, TASK, STRATEGY, HISTORY, CURRENT_OBSERVATION, ADMISSIBLE_ACTIONS),
    )
    budget = full - 150  # too small for all 10 steps, large enough for most of them
    messages = build_action_messages(
        templates,
        TASK,
        STRATEGY,
        HISTORY,
        CURRENT_OBSERVATION,
        ADMISSIBLE_ACTIONS,
        fits=prompt_fits(qwen_tokenizer, budget),
    )
    content = messages[0]["content"]
    shown = [n for n in range(1, 11) if f"[Step {n}]" in content]
    assert _count(qwen_tokenizer, messages) <= budget
    assert shown and shown == list(range(shown[0], 11)) and shown[0] > 1  # a suffix: oldest dropped
    # Maximal: one more old step would not fit.
    one_more = build_action_messages(
        templates, TASK, STRATEGY, HISTORY, CURRENT_OBSERVATION, ADMISSIBLE_ACTIONS, window=len(shown) + 1
    )
    assert _count(qwen_tokenizer, one_more) > budget


@settings(deadline=None)
@given(
    num_steps=st.integers(0, 25),
    window=st.one_of(st.none(), st.integers(0, 30)),
    budget=st.integers(0, 4000),
)
def test_truncation_matches_a_linear_reference_scan(num_steps: int, window: int | None, budget: int) -> None:
    templates = ALFWORLD
    history = [(f"go to shelf {i}", f"You arrive at shelf {i}." + " x" * (i % 7)) for i in range(num_steps)]

    def fits(messages: list[dict[str, str]]) -> bool:  # characters stand in for tokens: same monotonicity
        return len(messages[0]["content"]) <= budget

    def render(shown: int) -> list[dict[str, str]]:
        return build_action_messages(templates, "t", "s", history, "o", ["look"], window=shown)

    most = num_steps if window is None else min(num_steps, window)
    expected = next((render(n) for n in range(most, -1, -1) if fits(render(n))), render(0))
    assert (
        build_action_messages(templates, "t", "s", history, "o", ["look"], window=window, fits=fits)
        == expected
    )


def test_long_episode_judge_prompt_omits_old_observations_to_fit(
    templates: PromptTemplates, qwen_tokenizer
) -> None:
    steps = HISTORY * 5  # a 50-step episode, the ALFWorld limit H
    assert (
        _count(qwen_tokenizer, build_judge_messages(templates, TASK, STRATEGY, steps)) > DEFAULT_PROMPT_BUDGET
    )
    messages = build_judge_messages(
        templates, TASK, STRATEGY, steps, fits=prompt_fits(qwen_tokenizer, DEFAULT_PROMPT_BUDGET)
    )
    content = messages[0]["content"]
    assert _count(qwen_tokenizer, messages) <= DEFAULT_PROMPT_BUDGET
    assert all(f"Step {n}. Action: {steps[n - 1][0]}\n" in content for n in range(1, 51))  # every action
    assert f"Step 1. Action: go to fridge 1\nObservation: {templates.omitted_observation}" in content
    assert f"Step 50. Action: go to garbagecan 1\nObservation: {steps[-1][1]}" in content


def test_over_budget_even_without_history_warns(templates: PromptTemplates, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="strata.core.prompting"):
        messages = build_action_messages(
            templates, TASK, STRATEGY, HISTORY, "o", ["look"], fits=lambda m: False
        )
    assert "[Step" not in messages[0]["content"]
    assert "exceeds the prompt budget" in caplog.text


def test_model_answers_in_the_prompted_format_parse(templates: PromptTemplates) -> None:
    # The examples the prompts give are answers the parsers accept.
    assert extract_tag(templates.action, "action") == "go to cabinet 1"
    assert extract_tag(templates.judge, "judgment") == "[]"


def test_presets_and_overrides(tmp_path: Path) -> None:
    assert "alfworld" in available_presets()
    custom = load_prompt_templates("alfworld", {"strategy": "Plan for {task}: <strategy>", "judge": None})
    assert custom.strategy == "Plan for {task}: <strategy>"
    assert custom.judge == load_prompt_templates().judge  # None keeps the preset's string
    assert "{{x}}" in load_prompt_templates(overrides={"no_history": "literal {{x}}"}).no_history

    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({name: getattr(custom, name) for name in TEMPLATE_FIELDS}))
    assert load_prompt_templates(str(path)) == custom


@pytest.mark.parametrize(
    ("preset", "overrides", "message"),
    [
        (
            "alfworld",
            {"strategy": "Plan {tsak}"},
            r"unknown placeholder\(s\) \['tsak'\]; valid: \{observation\}",
        ),
        ("alfworld", {"action": "{unclosed"}, "not a valid format string"),
        ("alfworld", {"stratgy": "x"}, "unknown templates \\['stratgy'\\]"),
        ("webarena", None, "unknown prompt preset 'webarena'; shipped: alfworld"),
        ("missing.yaml", None, "does not exist"),
    ],
)
def test_bad_templates_fail_with_actionable_errors(preset: str, overrides: dict | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_prompt_templates(preset, overrides)


def test_incomplete_preset_file_names_the_missing_templates(tmp_path: Path) -> None:
    path = tmp_path / "partial.yaml"
    path.write_text("strategy: 'Plan {task}'\n")
    with pytest.raises(ValueError, match="missing templates \\['action'"):
        load_prompt_templates(str(path))
